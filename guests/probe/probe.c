// SPDX-License-Identifier: Apache-2.0
/*
 * probe: isolation probes; each must be contained by the hypervisor.
 *
 *  1. data_abort:    a store to bad_ipa (outside the VM's memory) must come
 *                    back as a data abort injected into the VM (EC 0x25);
 *  2. foreign_irq:   setting GICD_ISENABLER for an SPI the VM does not own
 *                    (foreign_irq) must have no effect (reads back 0);
 *  3. impdef_sysreg: an IMPLEMENTATION DEFINED system register access
 *                    (s3_1_c15_c2_1) must be UNDEFINED (EC 0x0);
 *  4. console_bad_ipa: BH_HC_CONSOLE_WRITE of bad_ipa must return -3;
 *     unknown_hvc:   hypercall 0xC600FFFF must return -1;
 *  6. host_addresses: BH_HC_IPA_INFO of its own RAM and BH_HC_S2_INFO of
 *                    its first table page must return BH_E_DENIED (-4): no
 *                    VM learns host physical addresses without
 *                    `introspection: true` in its config;
 *  5. foreign_sgi:   (if foreign_sgi > 0) SGI foreign_sgi_id sent
 *                    foreign_sgi times, 1 ms apart, to every other CPU and
 *                    to CPUs 1-7 by number: the VM has one vCPU, so they must
 *                    reach nobody (the test checks the other VMs' counts).
 *
 * Params: bad_ipa (default 0x80000000), foreign_irq (default 34),
 * foreign_sgi (default 0), foreign_sgi_id (default 1).
 * Lines: "probe: abort caught esr=0x<esr> far=0x<far>",
 *        "probe: foreign irq <n> isenabler=<0|1>",
 *        "probe: undef caught esr=0x<esr>",
 *        "probe: console write bad ipa -> <ret>, unknown hvc -> <ret>",
 *        "probe: host addresses: ipa_info -> <ret>, s2_info -> <ret>",
 *        "probe: sent <n> x SGI <id> to other CPUs" (foreign_sgi > 0),
 *        then "probe: PASS" or "probe: FAIL <name>[,<name>...]".
 */
#include "runtime.h"

#define UNKNOWN_HVC 0xC600FFFFu

static volatile bool armed;
static volatile u32 caught;
static volatile u64 caught_esr, caught_far;

/* Catch exactly one exception while armed and skip the faulting instruction. */
static u64 probe_sync(u64 esr, u64 far, u64 elr, struct exc_frame *frame)
{
	(void)frame;
	if (!armed)
		return 0;
	armed = false;
	caught_esr = esr;
	caught_far = far;
	caught++;
	return elr + 4;
}

static void arm(void)
{
	caught = 0;
	caught_esr = 0;
	caught_far = 0;
	armed = true;
	barrier();
}

static void disarm(void)
{
	barrier();
	armed = false;
}

static char failed[128];

static void record(bool ok, const char *name)
{
	size_t len = strlen(failed);

	if (ok)
		return;
	snprintf(failed + len, sizeof(failed) - len, "%s%s", len ? "," : "", name);
}

static bool probe_data_abort(u64 bad_ipa)
{
	arm();
	__asm__ volatile("str %w0, [%1]" : : "r"(0xbadc0de), "r"(bad_ipa) : "memory");
	disarm();
	if (!caught) {
		printf("probe: store to 0x%lx did not fault\n", bad_ipa);
		return false;
	}
	printf("probe: abort caught esr=0x%lx far=0x%lx\n", caught_esr, caught_far);
	return ESR_EC(caught_esr) == ESR_EC_DABT_CUR;
}

static bool probe_foreign_irq(u32 intid)
{
	bool enabled;

	if (intid < 32 || intid >= 1020) {
		printf("probe: foreign_irq %u is not an SPI\n", intid);
		return false;
	}
	arm();
	gic_dist_write(GICD_ISENABLER(intid / 32), BIT(intid % 32));
	enabled = gic_irq_is_enabled(intid);
	disarm();
	if (caught) {
		printf("probe: GICD access for irq %u faulted esr=0x%lx\n", intid, caught_esr);
		return false;
	}
	printf("probe: foreign irq %u isenabler=%u\n", intid, enabled ? 1 : 0);
	if (enabled) /* do not leave it enabled if we really could */
		gic_dist_write(GICD_ICENABLER(intid / 32), BIT(intid % 32));
	return !enabled;
}

static bool probe_impdef_sysreg(void)
{
	u64 val = 0;

	arm();
	__asm__ volatile("mrs %0, s3_1_c15_c2_1" : "+r"(val) : : "memory");
	disarm();
	if (!caught) {
		printf("probe: s3_1_c15_c2_1 read did not trap (value 0x%lx)\n", val);
		return false;
	}
	printf("probe: undef caught esr=0x%lx\n", caught_esr);
	return ESR_EC(caught_esr) == ESR_EC_UNKNOWN;
}

static void probe_foreign_sgi(u32 count, u32 intid)
{
	for (u32 i = 0; i < count; i++) {
		gic_send_sgi_others(intid);
		for (u32 cpu = 1; cpu < 8; cpu++)
			gic_send_sgi(cpu, intid);
		timer_delay_ms(1);
	}
	printf("probe: sent %u x SGI %u to other CPUs\n", count, intid);
}

int main(const char *params)
{
	u64 bad_ipa = param_u64("bad_ipa", 0x80000000ul);
	u32 foreign_irq = (u32)param_u64("foreign_irq", 34);
	s64 cw, unk;

	(void)params;
	printf("probe: bad_ipa 0x%lx foreign_irq %u hypervisor %s\n", bad_ipa, foreign_irq,
	       bh_present() ? "yes" : "no");
	gic_init();
	exc_set_sync_handler(probe_sync);

	record(probe_data_abort(bad_ipa), "data_abort");
	record(probe_foreign_irq(foreign_irq), "foreign_irq");
	record(probe_impdef_sysreg(), "impdef_sysreg");

	cw = bh_console_write_ipa(bad_ipa, 16);
	unk = bh_call(UNKNOWN_HVC, 0, 0, 0, 0, 0).x0;
	printf("probe: console write bad ipa -> %ld, unknown hvc -> %ld\n", cw, unk);
	record(cw == BH_E_INVALID, "console_bad_ipa");
	record(unk == BH_E_NOT_SUPPORTED, "unknown_hvc");
	{
		struct bh_ipa_info pi = { 0 }, ti = { 0 };
		s64 ipa = bh_ipa_info(RT_RAM_BASE, &pi), s2 = bh_s2_info(0, &ti);

		printf("probe: host addresses: ipa_info -> %ld, s2_info -> %ld\n", ipa, s2);
		record(ipa == BH_E_DENIED && s2 == BH_E_DENIED && !pi.pa && !ti.pa,
		       "host_addresses");
	}
	if (param_u64("foreign_sgi", 0))
		probe_foreign_sgi((u32)param_u64("foreign_sgi", 0),
		                  (u32)param_u64("foreign_sgi_id", 1));

	exc_set_sync_handler(NULL);
	if (failed[0]) {
		printf("probe: FAIL %s\n", failed);
		return 1;
	}
	printf("probe: PASS\n");
	return 0;
}
