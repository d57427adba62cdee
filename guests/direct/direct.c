// SPDX-License-Identifier: Apache-2.0
/*
 * direct: a VM with `interrupts: direct` (docs/interrupts.md) takes its own
 * interrupts on the physical GIC CPU interface, with no hypervisor exit:
 *   1. timer: `ticks` virtual timer interrupts, one every `period_us`;
 *   2. spi: `spis` interrupts of the passthrough PL031 RTC (SPI `rtc_irq`,
 *      raised at once by a match register equal to the time);
 *   3. sgi: vCPU 1 (on the CPU of MPIDR Aff0 `sibling`: a direct VM sees
 *      its physical MPIDRs) sends `sgis` SGIs to vCPU 0, each carrying a
 *      sequence number vCPU 0's handler checks (order), one at a time.
 * Around phases 1 and 2 vCPU 0 reads its CPU's exit counters
 * (BH_HC_CPU_EXITS): each phase must cost exactly the one exit of that
 * hypercall and no interrupt exit ("exits" lines).
 *
 * mode=emul runs emul.c instead: the virtual UART's receive interrupt and a
 * doorbell, emulated sources delivered through spare physical SPIs.
 *
 * mode=hostile instead starts vCPU 1 as a hostile guest (hostile()) that
 * never ends by itself; vCPU 0 waits `ms` milliseconds on its own timer,
 * prints vCPU 1's regulation statistics (BH_HC_BW_STATS) and powers the VM
 * off, which the hypervisor must manage whatever vCPU 1 masked.
 *
 * mode=sgifilter (the SGI filter, docs/interrupts.md "SGIs"): vCPU 1 sends,
 * for `ms` milliseconds, SGIs of every ID at the CPUs of Aff0 `foreign`
 * and `foreign2` (another VM's), SGI 0 (the hypervisor's kick) and
 * ICC_SGI0R/ASGI1R_EL1 at vCPU 0, a broadcast (IRM) and a target list
 * naming every CPU 0-3, then a sequence-numbered SGI at vCPU 0; vCPU 0
 * checks that the broadcast and the list arrive once per round, the
 * sequence in order and nothing reserved. Then vCPU 1 times `samples`
 * single sends (CNTVCT around one ICC_SGI1R_EL1 write, median) at a
 * foreign CPU (dropped) and at vCPU 0 (issued).
 * mode=sink (on any VM): all 16 SGIs enabled with a counting handler,
 * `delay_ms` later it spins (no WFI, no timer) for `ms` ms and counts the
 * SGIs and its CPU's physical-interrupt exits meanwhile: both must be 0.
 *
 * Params: ticks (20), period_us (500), spis (10), sgis (10), sibling (Aff0
 * of vCPU 1's CPU; 0: no SGI phase), rtc_base (0x09010000), rtc_irq (34),
 * mode (normal|hostile|sgifilter|sink|emul), storm_target (hostile: Aff0
 * the SGI storm aims at), ms (hostile: 200), quiet (hostile, 0|1: vCPU 1 only makes memory
 * traffic, the baseline), storm (hostile: all, or own: SGIs only at the VM's
 * own CPUs, storm_target being one of them), group0 (hostile, 0|1: attack
 * Group 0 too, hostile_group0; only where no EL3 takes those accesses),
 * ap1r0 (hostile with group0, 0|1: its ICC_AP1R0_EL1 write claims every
 * active priority, the hypervisor's Group 0 ones too: the open hole).
 * Lines: "direct: timer <n> ticks ok", "direct: spi <n> ok",
 *        "direct: sgi <n> in order", "direct: exits <phase> total=<a> irq=<b>",
 *        "direct: hostile vcpu1 max=<m> last=<l> mean=<a> throttles=<t>",
 *        "direct: sgifilter rounds=<r> bcast=<b> list=<l> seq=ok",
 *        "direct: sgi send kind=<dropped|own|none> min_ns=<n> mean_ns=<n>
 *        median_ns=<n> max_ns=<n>" (none: the two counter reads alone),
 *        "direct: sgi send median_ns dropped=<d> own=<o>",
 *        "direct: sink sgis=<n> irq_exits=<e> window_ms=<w>",
 *        "direct: PASS", or "direct: FAIL (<reason>)".
 */
#include "runtime.h"

#define RTC_DR   0x00
#define RTC_MR   0x04
#define RTC_IMSC 0x10
#define RTC_ICR  0x1c

#define SGI_SEQ 5
#define SGI_ACK 6

#define fail(...) rt_fail("direct", __VA_ARGS__)

static volatile u32 ticks, spis, sgis, acks, bad_order;
static volatile u32 seq_sent, seq_seen;
static volatile u32 v1_up, v0_aff;
static u64 period;
static uptr rtc;

static void tick_irq(u32 intid)
{
	(void)intid;
	atomic_add32(&ticks, 1);
	timer_set_deadline(timer_now() + period);
}

static void rtc_irq(u32 intid)
{
	(void)intid;
	mmio_write32(rtc + RTC_ICR, 1);
	atomic_add32(&spis, 1);
}

static void seq_irq(u32 intid)
{
	u32 seq = atomic_load32(&seq_sent);

	(void)intid;
	if (seq != atomic_load32(&seq_seen) + 1)
		atomic_add32(&bad_order, 1);
	atomic_store32(&seq_seen, seq);
	atomic_add32(&sgis, 1);
}

static void ack_irq(u32 intid)
{
	(void)intid;
	atomic_add32(&acks, 1);
}

/* Waits in WFI until *counter >= n (or timeout). */
static bool wait_count(volatile u32 *counter, u32 n, u64 timeout_ns)
{
	u64 end = timer_now() + timer_ns_to_ticks(timeout_ns);

	while (atomic_load32(counter) < n) {
		if (timer_now() > end)
			return false;
		irq_local_disable();
		if (atomic_load32(counter) < n)
			wfi();
		irq_local_enable();
		isb();
	}
	return true;
}

static struct bh_cpu_exits exits_before;

static void exits_mark(void)
{
	bh_cpu_exits(BH_CPU_SELF, &exits_before);
}

/* The exits since exits_mark, less the two counting hypercalls' own one. */
static bool exits_check(const char *phase)
{
	struct bh_cpu_exits now;

	bh_cpu_exits(BH_CPU_SELF, &now);
	printf("direct: exits %s total=%lu irq=%lu\n", phase, now.exits - exits_before.exits - 1,
	       now.irq_exits - exits_before.irq_exits);
	return now.exits - exits_before.exits == 1 && now.irq_exits == exits_before.irq_exits;
}

static __noreturn void hostile(u64 storm_target, bool quiet, bool own, bool group0, bool full);

/* secondary_main's context: turn hostile (low bits: the storm's target) */
#define HOSTILE (1ull << 32)
#define QUIET   (1ull << 33) /* only the memory traffic: the baseline */
#define OWN     (1ull << 34) /* SGIs at its own CPUs only (storm=own) */
#define FILTER  (1ull << 35) /* mode=sgifilter's sender */
#define GROUP0  (1ull << 36) /* hostile: Group 0 too (only without EL3: group0=1) */
#define FULLAP  (1ull << 37) /* hostile: every AP1R0 bit, even with GROUP0 (ap1r0=1) */

static void filter_sender(void);

void secondary_main(u32 cpu, u64 n)
{
	(void)cpu;
	if (n & FILTER) {
		filter_sender();
		return;
	}
	if (n & HOSTILE)
		hostile(n & 0xff, n & QUIET, n & OWN, n & GROUP0, n & FULLAP);
	gic_cpu_init();
	irq_register(SGI_ACK, ack_irq);
	gic_set_priority(SGI_ACK, GIC_DEFAULT_PRIO);
	gic_irq_enable(SGI_ACK);
	irq_local_enable();
	atomic_store32(&v1_up, 1);
	for (u32 i = 1; i <= n; i++) {
		atomic_store32(&seq_sent, i);
		dsb_sy();
		gic_send_sgi(atomic_load32(&v0_aff), SGI_SEQ);
		if (!wait_count(&acks, i, 2 * NSEC_PER_SEC))
			return;
	}
}

/*
 * A hostile direct guest (docs/interrupts.md "Hostile guests"): everything
 * it can do to the physical CPU interface at once, for good: lowest
 * priority mask, active priorities and group enable scribbled, EOImode
 * flipped, an interrupt taken and never ended, SGIs stormed at
 * storm_target (another VM's CPU: they must not arrive) and at itself,
 * DAIF masked. The hypervisor must still regulate it and leave its
 * neighbours alone; the VM never ends by itself.
 */
/*
 * With group0 (the hypervisor's events are Group 0 FIQs: no EL3, which
 * would take these accesses itself), the Group 0 side too: its CPU
 * interface registers (ICC_IGRPEN0/BPR0/AP0R0/EOIR0/IAR0_EL1) and every
 * interrupt of its redistributor and of the distributor moved to Group 0,
 * disabled and given priority 0 through the emulated GIC; the
 * hypervisor's (EL2 timer, PMU, kick) must stay its own.
 */
static void hostile_group0(void)
{
	uptr sgi = gic_redist() + GICR_SGI_OFFSET;

	write_sysreg(0, icc_igrpen0_el1);
	write_sysreg(0, icc_bpr0_el1);
	write_sysreg(0xffffffff, icc_ap0r0_el1);
	(void)read_sysreg(icc_iar0_el1);
	write_sysreg(26, icc_eoir0_el1);
	write_sysreg(1ull << (read_sysreg(mpidr_el1) & 0xf), icc_sgi0r_el1); /* SGI 0 at itself */
	mmio_write32(sgi + GICD_IGROUPR(0), 0);
	mmio_write32(sgi + GICD_ICENABLER(0), ~0u);
	for (u32 i = 0; i < 8; i++)
		mmio_write32(sgi + GICD_IPRIORITYR(i), 0);
	for (u32 i = 1; i < 32; i++)
		mmio_write32(GICD_BASE + GICD_IGROUPR(i), 0);
	isb();
}

static __noreturn void hostile(u64 storm_target, bool quiet, bool own, bool group0, bool full)
{
	u64 self = read_sysreg(mpidr_el1) & 0xff;

	if (quiet)
		for (u64 i = 0;; i++)
			for (volatile u64 *p = (volatile u64 *)(uptr)0x40800000ul;
			     p < (volatile u64 *)(uptr)0x40900000ul; p += 8)
				*p += i;
	printf("direct: hostile (storm at %lu and self)\n", storm_target);
	irq_local_disable();
	/* not 0: QEMU 10 aborts on a non-secure ICC_BPR1_EL1 of 0 with EL3 present
	 * (arm_gicv3_cpuif.c icc_gprio_mask: assertion bpr > 0) */
	write_sysreg(3, icc_bpr1_el1);
	write_sysreg(0, icc_pmr_el1);
	/* without EL3 (group0) the GIC lets a guest claim any active priority,
	 * the hypervisor's Group 0 ones too: its non-secure half only there
	 * (the limit docs/interrupts.md states; TF-A's GIC enforces it),
	 * or every bit with full (the hole docs/interrupts.md names) */
	write_sysreg(group0 && !full ? 0xffff0000u : 0xffffffffu, icc_ap1r0_el1);
	write_sysreg(0, icc_ctlr_el1);
	write_sysreg(0, icc_igrpen1_el1);
	write_sysreg(1, icc_igrpen1_el1);
	write_sysreg(0xff, icc_pmr_el1);
	isb();
	(void)read_sysreg(icc_iar1_el1); /* acknowledged, never ended */
	if (group0)
		hostile_group0();
	for (u64 i = 0;; i++) {
		u64 t = i & 1 ? self : storm_target;

		if (group0)
			write_sysreg(0, icc_igrpen0_el1);
		write_sysreg((u64)(i & 0xf) << 24 | (1ull << (t & 0xf)), icc_sgi1r_el1);
		if (!own) /* all but self */
			write_sysreg((u64)1 << 40 | (u64)(i & 0xf) << 24, icc_sgi1r_el1);
		write_sysreg((u64)(i & 0xf) << 24 | (1ull << (t & 0xf)), icc_asgi1r_el1);
		write_sysreg((u64)(i & 0xf) << 24 | (1ull << (t & 0xf)), icc_sgi0r_el1);
		/* memory traffic for the regulator to hold */
		for (volatile u64 *p = (volatile u64 *)(uptr)0x40800000ul;
		     p < (volatile u64 *)(uptr)0x40900000ul; p += 8)
			*p += i;
	}
}

static int watch_hostile(u64 sibling);
static int sgifilter(u64 sibling);
static int sink(void);
int direct_emul(void);

int main(const char *params)
{
	u32 nticks = (u32)param_u64("ticks", 20), nspi = (u32)param_u64("spis", 10);
	u32 nsgi = (u32)param_u64("sgis", 10);
	u64 sibling = param_u64("sibling", 0), rtc_intid = param_u64("rtc_irq", 34);
	const char *mode = param_str_default("mode", "normal");
	bool ok = true;
	s64 ret;

	(void)params;
	if (!strcmp(mode, "hostile"))
		return watch_hostile(sibling);
	if (!strcmp(mode, "sgifilter"))
		return sgifilter(sibling);
	if (!strcmp(mode, "sink"))
		return sink();
	if (!strcmp(mode, "emul"))
		return direct_emul(); /* emul.c */
	rtc = (uptr)param_u64("rtc_base", 0x09010000);
	period = timer_ns_to_ticks(param_u64("period_us", 500) * 1000);
	v0_aff = (u32)(read_sysreg(mpidr_el1) & 0xff);
	gic_init();
	irq_register(TIMER_VIRT_INTID, tick_irq);
	irq_register((u32)rtc_intid, rtc_irq);
	irq_register(SGI_SEQ, seq_irq);
	gic_irq_enable(TIMER_VIRT_INTID);
	gic_set_priority(SGI_SEQ, GIC_DEFAULT_PRIO);
	gic_irq_enable(SGI_SEQ);
	gic_spi_setup((u32)rtc_intid, false);
	irq_local_enable();

	/* 1. the virtual timer */
	exits_mark();
	timer_set_deadline(timer_now() + period);
	if (!wait_count(&ticks, nticks, 5 * NSEC_PER_SEC))
		return fail("timer: %u of %u ticks", ticks, nticks);
	timer_stop();
	ok = exits_check("timer") && ok;
	printf("direct: timer %u ticks ok\n", nticks);

	/* 2. the passthrough RTC's SPI */
	exits_mark();
	mmio_write32(rtc + RTC_IMSC, 1);
	for (u32 i = 1; i <= nspi; i++) {
		mmio_write32(rtc + RTC_MR, mmio_read32(rtc + RTC_DR)); /* matches at once */
		if (!wait_count(&spis, i, 2 * NSEC_PER_SEC))
			return fail("spi: %u of %u", spis, nspi);
	}
	mmio_write32(rtc + RTC_IMSC, 0);
	ok = exits_check("spi") && ok;
	printf("direct: spi %u ok\n", nspi);

	/* 3. SGIs from the sibling vCPU, in order */
	if (sibling) {
		ret = psci_cpu_on(sibling, (u64)(uptr)secondary_entry, nsgi);
		if (ret)
			return fail("CPU_ON of %lu: %ld", sibling, ret);
		for (u32 i = 1; i <= nsgi; i++) {
			if (!wait_count(&sgis, i, 2 * NSEC_PER_SEC))
				return fail("sgi: %u of %u", sgis, nsgi);
			gic_send_sgi((u32)sibling, SGI_ACK);
		}
		if (bad_order)
			return fail("sgi: %u out of order", bad_order);
		printf("direct: sgi %u in order\n", nsgi);
	}
	if (!ok)
		return fail("exits during direct delivery");
	printf("direct: PASS\n");
	return 0;
}

/* mode=hostile: vCPU 1 attacks, vCPU 0 watches its regulation and ends it. */
static int watch_hostile(u64 sibling)
{
	struct bh_bw_stats st;
	s64 ret;

	ret = psci_cpu_on(sibling, (u64)(uptr)secondary_entry,
	                  HOSTILE | (param_u64("quiet", 0) ? QUIET : 0) |
	                      (!strcmp(param_str_default("storm", "all"), "own") ? OWN : 0) |
	                      (param_u64("group0", 0) ? GROUP0 : 0) |
	                      (param_u64("ap1r0", 0) ? FULLAP : 0) |
	                      (param_u64("storm_target", 0) & 0xff));
	if (ret)
		return fail("CPU_ON of %lu: %ld", sibling, ret);
	timer_delay_ms(10);
	if (!bh_bw_stats(1, &st))
		printf("direct: hostile early vcpu1 max=%lu last=%lu throttles=%lu\n", st.max,
		       st.last, st.throttles);
	timer_delay_ms(param_u64("ms", 200));
	ret = bh_bw_stats(1, &st);
	if (ret)
		return fail("BH_HC_BW_STATS: %ld", ret);
	printf("direct: hostile vcpu1 max=%lu last=%lu mean=%lu throttles=%lu\n", st.max, st.last,
	       st.mean, st.throttles);
	printf("direct: PASS\n");
	return 0;
}

/* mode=sgifilter (see the top) */
#define SGI_BCAST 7
#define SGI_LIST  4 /* 8-15 are the secure firmware's on QEMU (TF-A's Group 0) */
#define SGI_TIMED 3
#define SAMPLES   128

static volatile u32 got[16];
static volatile u32 rounds, sender_done;
static u64 foreign, foreign2, end_ticks;
static u64 sample[SAMPLES];

static void count_irq(u32 intid)
{
	atomic_add32(&got[intid & 0xf], 1);
	if (intid == SGI_SEQ)
		seq_irq(intid);
}

static void sgi1r(u64 val)
{
	dsb_sy();
	write_sysreg(val, icc_sgi1r_el1);
	isb();
}

static u64 sgir(u64 aff0, u32 intid)
{
	return (u64)intid << 24 | (1ull << (aff0 & 0xf));
}

/* Single-send times (or, with !send, of the two counter reads alone), in
 * ns: prints a "direct: sgi send kind=..." line, returns the median
 * (samples sorted in place). */
static u64 timed_sends(const char *kind, u64 val, bool send)
{
	u64 sum = 0;

	for (u32 i = 0; i < SAMPLES; i++) {
		u64 t0 = timer_now();

		if (send)
			write_sysreg(val, icc_sgi1r_el1);
		sample[i] = timer_now() - t0;
		sum += sample[i];
	}
	for (u32 i = 1; i < SAMPLES; i++)
		for (u32 j = i; j > 0 && sample[j - 1] > sample[j]; j--) {
			u64 t = sample[j];

			sample[j] = sample[j - 1];
			sample[j - 1] = t;
		}
	printf("direct: sgi send kind=%s min_ns=%lu mean_ns=%lu median_ns=%lu max_ns=%lu\n", kind,
	       timer_ticks_to_ns(sample[0]), timer_ticks_to_ns(sum) / SAMPLES,
	       timer_ticks_to_ns(sample[SAMPLES / 2]), timer_ticks_to_ns(sample[SAMPLES - 1]));
	return timer_ticks_to_ns(sample[SAMPLES / 2]);
}

static void filter_sender(void)
{
	u64 self = read_sysreg(mpidr_el1) & 0xff, v0 = atomic_load32(&v0_aff);
	u32 r = 0;
	u64 dropped, own;

	gic_cpu_init();
	irq_register(SGI_ACK, ack_irq);
	gic_set_priority(SGI_ACK, GIC_DEFAULT_PRIO);
	gic_irq_enable(SGI_ACK);
	irq_local_enable();
	while (timer_now() < end_ticks) {
		r++;
		for (u32 id = 0; id < 16; id++) {
			sgi1r(sgir(foreign, id));
			sgi1r(sgir(foreign2, id));
		}
		sgi1r(sgir(v0, 0)); /* the hypervisor's kick: reserved */
		write_sysreg(sgir(v0, SGI_SEQ), icc_sgi0r_el1);
		write_sysreg(sgir(v0, SGI_SEQ), icc_asgi1r_el1);
		sgi1r(1ull << 40 | (u64)SGI_BCAST << 24);
		sgi1r((u64)SGI_LIST << 24 | 0xf); /* CPUs 0-3: the VM's two and two others */
		atomic_store32(&seq_sent, r);
		sgi1r(sgir(v0, SGI_SEQ));
		if (!wait_count(&acks, r, 2 * NSEC_PER_SEC))
			break;
	}
	atomic_store32(&rounds, r);
	dropped = timed_sends("dropped", sgir(foreign, SGI_TIMED), true);
	own = timed_sends("own", sgir(v0, SGI_TIMED), true);
	(void)timed_sends("none", 0, false);
	(void)self;
	printf("direct: sgi send median_ns dropped=%lu own=%lu\n", dropped, own);
	atomic_store32(&sender_done, 1);
	sgi1r(sgir(v0, SGI_TIMED)); /* wakes vCPU 0 */
}

/* vCPU 0: round i's three SGIs arrived (true), or the sender is done. */
static bool round_done(u32 i)
{
	u64 end = timer_now() + timer_ns_to_ticks(2 * NSEC_PER_SEC);

	for (;;) {
		if (atomic_load32(&sgis) >= i && got[SGI_BCAST] >= i && got[SGI_LIST] >= i)
			return true;
		if (atomic_load32(&sender_done) || timer_now() > end)
			return false;
		irq_local_disable();
		if (!atomic_load32(&sender_done) && atomic_load32(&sgis) < i)
			wfi();
		irq_local_enable();
		isb();
	}
}

static int sgifilter(u64 sibling)
{
	u32 r, want[16] = { 0 };
	s64 ret;

	foreign = param_u64("foreign", 0);
	foreign2 = param_u64("foreign2", 1);
	v0_aff = (u32)(read_sysreg(mpidr_el1) & 0xff);
	gic_init();
	for (u32 id = 0; id < 16; id++) {
		irq_register(id, count_irq);
		gic_set_priority(id, GIC_DEFAULT_PRIO);
		if (id != SGI_ACK)
			gic_irq_enable(id);
	}
	irq_local_enable();
	end_ticks = timer_now() + timer_ns_to_ticks(param_u64("ms", 40) * 1000000);
	dsb_sy();
	ret = psci_cpu_on(sibling, (u64)(uptr)secondary_entry, FILTER);
	if (ret)
		return fail("CPU_ON of %lu: %ld", sibling, ret);
	for (u32 i = 1;; i++) {
		if (!round_done(i)) {
			if (atomic_load32(&sender_done))
				break;
			return fail("sgifilter: round %u: seq %u bcast %u list %u", i, sgis,
			            got[SGI_BCAST], got[SGI_LIST]);
		}
		gic_send_sgi((u32)sibling, SGI_ACK);
	}
	timer_delay_ms(1);
	r = atomic_load32(&rounds);
	want[SGI_BCAST] = want[SGI_LIST] = want[SGI_SEQ] = r;
	/* back-to-back sends of one SGI may merge while it is pending */
	if (got[SGI_TIMED] >= 1 && got[SGI_TIMED] <= SAMPLES + 1)
		want[SGI_TIMED] = got[SGI_TIMED];
	printf("direct: sgifilter rounds=%u bcast=%u list=%u seq=%s\n", r, got[SGI_BCAST],
	       got[SGI_LIST], bad_order ? "bad" : "ok");
	for (u32 id = 0; id < 16; id++)
		if (got[id] != want[id])
			return fail("sgifilter: SGI %u arrived %u times, not %u", id, got[id],
			            want[id]);
	if (bad_order || r < 10)
		return fail("sgifilter: %u rounds, %u out of order", r, bad_order);
	printf("direct: PASS\n");
	return 0;
}

static int sink(void)
{
	struct bh_cpu_exits a, b;
	u64 end, t0;
	u32 n = 0;

	gic_init();
	for (u32 id = 0; id < 16; id++) {
		irq_register(id, count_irq);
		gic_set_priority(id, GIC_DEFAULT_PRIO);
		gic_irq_enable(id);
	}
	irq_local_enable();
	timer_delay_ms(param_u64("delay_ms", 5));
	bh_cpu_exits(BH_CPU_SELF, &a);
	t0 = timer_now();
	end = t0 + timer_ns_to_ticks(param_u64("ms", 20) * 1000000);
	while (timer_now() < end)
		;
	bh_cpu_exits(BH_CPU_SELF, &b);
	for (u32 id = 0; id < 16; id++)
		n += got[id];
	printf("direct: sink sgis=%u irq_exits=%lu window_ms=%lu\n", n, b.irq_exits - a.irq_exits,
	       timer_ticks_to_ns(timer_now() - t0) / 1000000);
	if (n || b.irq_exits != a.irq_exits)
		return fail("sink: %u SGIs, %lu interrupt exits", n, b.irq_exits - a.irq_exits);
	printf("direct: PASS\n");
	return 0;
}
