// SPDX-License-Identifier: Apache-2.0
/*
 * smp: PSCI and SGI test over all vCPUs of the VM.
 *
 * vCPU 0 starts every other vCPU with CPU_ON and checks AFFINITY_INFO
 * (OFF before, ON after), CPU_ON to an already-on vCPU (ALREADY_ON) and to
 * nonexistent MPIDRs (INVALID_PARAMETERS). Then every vCPU sends `rounds`
 * SGIs to the next one (ring), each waiting until the receiver counted it;
 * secondaries then CPU_OFF and vCPU 0 waits with AFFINITY_INFO until they
 * are all off.
 *
 * Params: cpus (vCPU count when BH_HC_VM_INFO is unavailable, default 2),
 *         rounds (SGIs per vCPU, default 5),
 *         last_off (1: after PASS vCPU 0, the last vCPU on, calls CPU_OFF
 *         instead of returning; the VM must end as after SYSTEM_OFF).
 * Lines: "smp: vcpu 0 up (mpidr 0x0)",
 *        "smp: vcpu <i> up (mpidr 0x<m>, ctx 0x<c>)" per secondary,
 *        "smp: vcpu <i> done (sent <r>, received <r> SGIs)" per vCPU,
 *        "smp: PASS (<n> vCPUs)" or "smp: FAIL (<reason>)",
 *        with last_off "smp: vcpu 0 CPU_OFF (last vCPU on)".
 */
#include "runtime.h"

#define SGI_RING   1
#define CTX_MAGIC  0x5350000ul
#define TIMEOUT_NS (5 * NSEC_PER_SEC)

static u32 ncpus;
static u32 rounds;
static volatile u32 online[RT_MAX_CPUS];
static volatile u32 received[RT_MAX_CPUS];
static volatile u32 start_ring;
static volatile u32 failures;

static void sgi_irq(u32 intid)
{
	(void)intid;
	atomic_add32(&received[cpu_id()], 1);
}

static void fail(const char *what, s64 val)
{
	printf("smp: FAIL (%s: %ld)\n", what, val);
	atomic_add32(&failures, 1);
}

/* Busy-poll (this guest does not use the timer interrupt) with a timeout. */
static bool wait_u32(volatile u32 *p, u32 at_least)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(TIMEOUT_NS);

	while (atomic_load32(p) < at_least) {
		if (timer_now() > deadline)
			return false;
		cpu_relax();
	}
	return true;
}

/* Send `rounds` SGIs to the next vCPU, one at a time, then wait for ours. */
static void ring(u32 cpu)
{
	u32 next = (cpu + 1) % ncpus, r;

	for (r = 1; r <= rounds; r++) {
		gic_send_sgi(next, SGI_RING);
		if (!wait_u32(&received[next], r)) {
			printf("smp: FAIL (vcpu %u: SGI %u to vcpu %u not received)\n", cpu, r,
			       next);
			atomic_add32(&failures, 1);
			break;
		}
	}
	if (!wait_u32(&received[cpu], rounds)) {
		printf("smp: FAIL (vcpu %u: received %u of %u SGIs)\n", cpu,
		       atomic_load32(&received[cpu]), rounds);
		atomic_add32(&failures, 1);
	}
	printf("smp: vcpu %u done (sent %u, received %u SGIs)\n", cpu, r - 1,
	       atomic_load32(&received[cpu]));
}

static void setup_sgi(void)
{
	gic_set_priority(SGI_RING, GIC_DEFAULT_PRIO);
	gic_irq_enable(SGI_RING);
}

void secondary_main(u32 cpu, u64 ctx)
{
	gic_cpu_init();
	setup_sgi();
	printf("smp: vcpu %u up (mpidr 0x%lx, ctx 0x%lx)\n", cpu, cpu_mpidr() & MPIDR_AFF_MASK,
	       ctx);
	if (ctx != CTX_MAGIC + cpu)
		fail("wrong context id", (s64)ctx);
	atomic_store32(&online[cpu], 1);
	if (!wait_u32(&start_ring, 1)) {
		fail("ring never started on vcpu", cpu);
		return;
	}
	ring(cpu);
	/* Returning powers this vCPU off (PSCI CPU_OFF). */
}

int main(const char *params)
{
	u64 deadline;
	s64 ret;
	u32 i;

	(void)params;
	rounds = (u32)param_u64("rounds", 5);
	ncpus = rt_ncpus((u32)param_u64("cpus", 2));
	if (ncpus > RT_MAX_CPUS)
		ncpus = RT_MAX_CPUS;
	printf("smp: %u vCPUs, PSCI version 0x%lx\n", ncpus, psci_version());
	if (ncpus < 2) {
		printf("smp: FAIL (need at least 2 vCPUs, have %u)\n", ncpus);
		return 1;
	}

	gic_init();
	irq_register(SGI_RING, sgi_irq);
	setup_sgi();
	printf("smp: vcpu 0 up (mpidr 0x%lx)\n", cpu_mpidr() & MPIDR_AFF_MASK);

	ret = psci_features(PSCI_CPU_ON);
	if (ret < 0)
		fail("PSCI_FEATURES(CPU_ON)", ret);

	for (i = 1; i < ncpus; i++) {
		ret = psci_affinity_info(cpu_index_to_mpidr(i));
		if (ret != PSCI_AFF_OFF)
			fail("AFFINITY_INFO before CPU_ON", ret);
		ret = psci_cpu_on_index(i, CTX_MAGIC + i);
		if (ret != PSCI_SUCCESS) {
			fail("CPU_ON", ret);
			continue;
		}
		if (!wait_u32(&online[i], 1)) {
			fail("vcpu did not come up", i);
			continue;
		}
		ret = psci_affinity_info(cpu_index_to_mpidr(i));
		if (ret != PSCI_AFF_ON)
			fail("AFFINITY_INFO after CPU_ON", ret);
		ret = psci_cpu_on_index(i, 0);
		if (ret != PSCI_E_ALREADY_ON)
			fail("CPU_ON to a running vcpu", ret);
	}

	ret = psci_cpu_on_index(0, 0);
	if (ret != PSCI_E_ALREADY_ON)
		fail("CPU_ON to the calling vcpu", ret);
	ret = psci_cpu_on(cpu_index_to_mpidr(0xff), (u64)(uptr)secondary_entry, 0);
	if (ret != PSCI_E_INVALID_PARAMETERS)
		fail("CPU_ON to MPIDR Aff0=0xff", ret);
	if (bh_present()) {
		/* The first vCPU index the VM does not have. */
		ret = psci_cpu_on_index(ncpus, 0);
		if (ret != PSCI_E_INVALID_PARAMETERS)
			fail("CPU_ON to vcpu index == vcpu count", ret);
	}

	atomic_store32(&start_ring, 1);
	ring(0);

	for (i = 1; i < ncpus; i++) {
		if (!atomic_load32(&online[i]))
			continue;
		deadline = timer_now() + timer_ns_to_ticks(TIMEOUT_NS);
		while ((ret = psci_affinity_info(cpu_index_to_mpidr(i))) != PSCI_AFF_OFF) {
			if (timer_now() > deadline)
				break;
			timer_delay_us(100);
		}
		if (ret != PSCI_AFF_OFF)
			fail("vcpu still not off after CPU_OFF; AFFINITY_INFO", ret);
	}

	if (atomic_load32(&failures)) {
		printf("smp: FAIL (%u failures)\n", atomic_load32(&failures));
		return 1;
	}
	printf("smp: PASS (%u vCPUs)\n", ncpus);
	if (param_u64("last_off", 0)) {
		/* The siblings are off: CPU_OFF here turns off the VM's last vCPU,
		 * which must end the VM (like SYSTEM_OFF), not leave it on. */
		printf("smp: vcpu 0 CPU_OFF (last vCPU on)\n");
		ret = psci_cpu_off();
		printf("smp: FAIL (CPU_OFF of the last vCPU returned %ld)\n", ret);
		return 1;
	}
	return 0;
}
