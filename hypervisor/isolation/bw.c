/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bandwidth regulator's engine. Per regulated vCPU (one per physical CPU):
 *
 *   period start (bw_period, EL2 timer)   counter := 2^32 - grant
 *   budget spent (bw_overflow, PMU irq)   reclaim from siblings, else
 *                                         v->throttled: the CPU waits in
 *                                         WFI at EL2 (core/vcpu/vcpu.c)
 *   next period start                     throttled cleared, counter reloaded
 *
 * The counter counts at EL0, EL1 and EL2: what the hypervisor does on the
 * vCPU's behalf (traps, hypercalls, emulation) is charged to it, so a guest
 * cannot move work into the hypervisor to escape its budget. What is counted
 * while the vCPU is stalled or parked is discarded. The periods of a VM's
 * vCPUs share one schedule (bw_budget.h: absolute boundaries), so they are
 * aligned. CPUs of unregulated VMs are never touched: no timer, no PMU
 * interrupt.
 *
 * Concurrency: a bw_cpu is written only by its own CPU, with interrupts
 * masked (EL2), except where noted. Cross-CPU state is the reclaim pool
 * (compare-and-swap), the settings (seqlock, one writer under a lock, which
 * also clears the VM's hot_lead), the spare-sharing generation (atomic) and
 * the throttled flags (read only). Set-up is bw_init.c, the hypercalls and
 * the console command bw_hc.c.
 */
#include "isolation/bw_engine.h"

#include "arch/aarch64/pmu.h"
#include "arch/aarch64/timer.h"
#include "core/mem/mem.h"
#include "core/vcpu/irq_direct.h"
#include "core/vm/vm.h"
#include "core/vpmu/vpmu.h"
#include "drivers/gic/gic.h"
#include "isolation/color_ida.h"
#include "lib/features.h"
#include "lib/log.h"

struct bw_vm bw_vms[CFG_MAX_CPUS];
struct bw_cpu bw_cpus[CFG_MAX_CPUS];
const struct cfg_bw_system *bw_sys;
u64 bw_hz;
static volatile u32 bw_spare_gen;

static u32 bw_period_id(const struct bw_cpu *c)
{
	return (u32)(c->set.base + c->clk.epoch);
}

static bool bw_spare_sharing(void)
{
	return bw_sys && (bw_sys->flags & CFG_BW_SPARE_SHARING);
}

/* Copies the VM's latest settings if they are consistent (seqlock). */
bool bw_read_settings(struct bw_vm *b, struct bw_settings *out, u32 *seq)
{
	u32 s = __atomic_load_n(&b->seq, __ATOMIC_ACQUIRE);

	if (s & 1)
		return false;
	*out = b->next;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&b->seq, __ATOMIC_RELAXED) != s)
		return false;
	*seq = s;
	return true;
}

void bw_write_settings(struct bw_vm *b, const struct bw_settings *s)
{
	__atomic_store_n(&b->seq, b->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	b->next = *s;
	__atomic_store_n(&b->seq, b->seq + 1, __ATOMIC_RELEASE);
}

/* At a period start: switches to newer settings once they have begun. */
static void bw_adopt(struct bw_cpu *c, u64 now)
{
	struct bw_settings n;
	u32 seq;

	if (__atomic_load_n(&c->bvm->seq, __ATOMIC_ACQUIRE) == c->seq)
		return;
	if (!bw_read_settings(c->bvm, &n, &seq) || n.start > now)
		return;
	c->set = n;
	c->seq = seq;
	bw_clock_init(&c->clk, n.start, n.period_us, bw_hz, now);
}

/*
 * Arms the EL2 timer for the period end or, on a platform whose event
 * counters raise their overflow interrupt late (QEMU: at the next exception
 * entry), for the next look within the period, while the vCPU runs: taking
 * that interrupt is what makes the overflow seen. A vCPU's overrun is then
 * bounded by what it counts in c->look (docs/bandwidth.md "QEMU").
 */
static u64 bw_next_timer(const struct bw_cpu *c, u64 now)
{
	u64 at = c->clk.deadline;

	if (!c->v->throttled && now + c->look < at)
		at = now + c->look;
	return at;
}

void bw_arm(struct bw_cpu *c, u64 now)
{
	timer_hyp_arm(bw_next_timer(c, now));
}

/* Adds the events counted since each grant began to this period's use
 * (charge), or drops them (what a stalled or parked vCPU's CPU counted). */
static void bw_count(struct bw_cpu *c, bool charge)
{
	for (u32 e = 0; e < c->nev; e++) {
		u32 now = pmu_hyp_read(c->ctr[e]);

		if (charge)
			c->used[e] += bw_counted(c->seg_start[e], now);
		c->seg_start[e] = now;
	}
}

static void bw_grant(struct bw_cpu *c, u32 e, u32 events)
{
	c->seg_start[e] = bw_preload(events);
	pmu_hyp_write(c->ctr[e], c->seg_start[e]);
}

/* The vCPU runs no guest code: off, or waiting to be started. */
static bool bw_idle(const struct vcpu *v)
{
	return READ_ONCE(v->parked) || v->power != VCPU_ON;
}

/* vCPU 0's CPU sums the VM's vCPUs two periods late (all have reported);
 * a period some vCPU did not report as complete is not counted. */
static void bw_vm_totals(struct bw_vm *b, u32 period)
{
	u64 sum = 0;

	for (u32 k = 0; k < b->vm->nvcpus; k++) {
		u32 used;

		if (!bw_hist_get(bw_cpus[b->vm->vcpus[k]->pcpu].hist, period, &used))
			return;
		sum += used;
	}
	bw_stats_period(&b->stats, sum);
}

/*
 * Telemetry of a closed period: only what the regulation charged over one
 * complete period counts. Not counted: the boot period (it began when the
 * regulator started, before the guest ran, while the hypervisor loaded
 * images) and a period whose end was handled more than a period late (what
 * was counted spans several periods). See docs/bandwidth.md "Telemetry".
 */
static void bw_account_vm(struct bw_cpu *c, u32 period, u64 total)
{
	bw_hist_put(c->hist, period, total);
	if (c->v->idx == 0)
		bw_vm_totals(c->bvm, period - 2);
}

static void bw_report(struct bw_cpu *c, u64 now, u64 total)
{
	bool complete = !c->partial && now < c->clk.deadline + c->clk.step_whole;

	c->partial = false;
	if (!complete)
		return;
	bw_stats_period(&c->stats, total);
	if (c->multi)
		bw_account_vm(c, bw_period_id(c), total);
}

static void bw_close_period(struct bw_cpu *c, u64 now)
{
	struct vcpu *v = c->v;
	bool starved = c->starved || v->throttled || c->spare;
	bool idle = bw_idle(v);
	u64 total = 0;

	if (!c->paused)
		bw_count(c, !v->throttled && !idle);
	for (u32 e = 0; e < c->nev; e++) {
		if (idle)
			c->used[e] = 0; /* what the CPU counted while the vCPU was off */
		total += c->used[e];
		if (c->bvm->cfg->flags & CFG_BW_RECLAIM)
			c->pred[e] =
			    bw_predict(c->pred[e], c->used[e], starved && !idle, bw_share(c, e));
	}
	bw_report(c, now, total);
	if (v->throttled) {
		if (!c->paused)
			c->stats.stalled_ticks += now - c->throttle_at;
		v->throttled = false;
	}
	c->spare = false;
	c->starved = false;
}

void bw_open_period(struct bw_cpu *c)
{
	struct vcpu *v = c->v;
	struct bw_vm *b = c->bvm;
	bool reclaim = b->cfg->flags & CFG_BW_RECLAIM;
	bool idle = bw_idle(v);
	u32 id = bw_period_id(c);

	c->parked_grant = reclaim && idle;
#if IS_ENABLED(IDA)
	if (v->vm->cfg->flags & CFG_VM_IDA_PERIOD) {
		struct color_ida_result ida;

		color_ida_prepare(v->vm, 0, &ida); /* invalidation-driven allocation */
	}
#endif
	/* stale flags first: a small grant may overflow before we are done */
	pmu_overflow_clear((u32)c->mask);
	for (u32 e = 0; e < c->nev; e++) {
		u32 share = bw_share(c, e);
		u32 keep = share;

		if (reclaim) {
			/* keep what it is likely to use, lend the rest */
			keep = idle ? 1 : bw_keep(c->pred[e], share);
			if (share > keep)
				bw_pool_give(&b->pool[e], id, share - keep);
			if (v->idx == 0 && c->set.unshared[e])
				bw_pool_give(&b->pool[e], id,
				             (u32)MIN(c->set.unshared[e], BW_MAX_BUDGET));
		}
		c->used[e] = 0;
		if (c->paused)
			pmu_hyp_start(c->ctr[e], c->event[e], bw_preload(keep));
		bw_grant(c, e, keep);
	}
	c->paused = false;
}

/* Stops regulating this CPU (its VM is off for good). */
static void bw_cpu_stop(struct bw_cpu *c)
{
	timer_hyp_stop();
	for (u32 e = 0; e < c->nev; e++)
		pmu_hyp_stop(c->ctr[e]);
	gic_disable(cfg_system.platform->timer_hyp_irq);
	gic_disable(vpmu_hw_irq());
	c->v->throttled = false;
}

/* The VM totals' part of the hot path (a VM of several vCPUs): out of
 * line, called last, so that the hot path stays a leaf. */
static __attribute__((noinline)) bool bw_account_vm_hot(struct bw_cpu *c, u32 period, u64 total)
{
	bw_account_vm(c, period, total);
	return true;
}

/*
 * The common period end, kept short (it runs every period, most often from
 * the hot path): the same as bw_close_period + bw_clock_advance +
 * bw_open_period when the period is hot (c->hot_lead), the settings did not
 * change and the period end is not late. Runs in the period timer's handler
 * (the timer is enabled: only its deadline moves). The checks come first,
 * then the two system register writes (compiler barriers), then the state
 * is updated.
 *
 * What it does not check, and why (the invariants of a hot period, which
 * only bw_period starts, at a period start, and bw_overflow ends, before it
 * touches the counter, the grant or the vCPU's state; nothing else changes
 * them within a period):
 * - one counter, c->ctr[0], no reclaim, and a whole period in which nothing
 *   was throttled, paused or released: the vCPU runs guest code (the caller
 *   interrupted it, or bw_period checked it is not idle);
 * - the counter was last written with c->preload, at this period's start,
 *   and no grant was closed since: c->seg_start[0] == c->preload and
 *   c->used[0] == 0, so the period's charge is the counter minus c->preload
 *   and those two fields keep their values for the next period;
 * - not late means now < next - lead: the period that ends was handled
 *   within the next one (a whole period was counted: telemetry) and the
 *   vCPU runs in the next one.
 * - the settings: a change clears c->hot_lead (bw_hc_set, bw_set_hot).
 * What can change within a period is checked: the time. Statistics are per
 * CPU, written only here and by the general path of the same CPU (no lock);
 * the mean is derived when read.
 *
 * The variant (constants, bw_hot_variant): events, some regulated VM counts
 * on an event counter (which may also look at it within a period, c->look;
 * without this bit the counter is the cycle counter and nothing looks); vms,
 * some regulated VM has several vCPUs (its totals, c->multi). A variant
 * without them does not read those fields.
 */

static inline __attribute__((always_inline)) bool bw_period_fast(struct bw_cpu *c, u64 now,
                                                                 u32 variant)
{
	struct bw_clock *k = &c->clk;
	struct bw_stats *s = &c->stats;
	u64 frac, next = bw_clock_next(k, &frac), at = next, total;
	u64 preload;

	if (__builtin_expect(next <= now + READ_ONCE(c->hot_lead), 0))
		return false; /* late (the next period would be over before the vCPU runs), or not
		                 hot */
	if (variant & BW_HOT_EVENTS)
		at = MIN(now + c->look, next);
	preload = c->preload;
	total = bw_counted((u32)preload, /* clears an overflow too */
	                   pmu_hyp_swap(variant & BW_HOT_EVENTS ? c->ctr[0] : PMU_CYCLE_COUNTER,
	                                preload, c->mask));
	timer_hyp_rearm(at);
	k->deadline = next;
	k->frac = frac;
	k->epoch++;
	s->last = total;
	if (total > s->max)
		s->max = total;
	s->sum += total;
	s->periods++;
	if ((variant & BW_HOT_VMS) && c->multi)
		return bw_account_vm_hot(c, (u32)(c->set.base + k->epoch - 1), total);
	return true;
}

/* A look within the period (c->look) on the hot path: out of line, and
 * tail-called, so that the period end keeps the hot path without a frame. */
static __attribute__((noinline)) u32 bw_look(struct cpu *cpu, u32 intid, struct bw_cpu *c, u64 now)
{
	if (!c->v || pmu_overflow_status((u32)c->mask))
		return intid; /* an overflow raised at this entry (QEMU): both in one exit */
	timer_hyp_rearm(bw_next_timer(c, now));
	return irq_hot_done(cpu, intid);
}

/*
 * The period timer's hot path (core/irq/irq.c, irq_register_hyp_hot): it
 * interrupted the regulated vCPU's guest code (so the vCPU is on, neither
 * parked nor throttled), only the caller-saved registers are saved, and the
 * vGIC is neither synced nor flushed (nothing of the vCPU's interrupt state
 * changes here). A leaf: the common period end and the return, the rest out
 * of line (a look within the period, a VM's totals); anything else is
 * declined, with nothing done, to bw_period. bw_init registers the variant
 * the configuration needs.
 */
static inline __attribute__((always_inline)) u32 bw_period_hot(struct cpu *cpu, u32 intid,
                                                               u32 variant)
{
	struct bw_cpu *c = &bw_cpus[cpu->index];
	u64 now = timer_now_at_entry();

	if (now < c->clk.deadline)
		return bw_look(cpu, intid, c, now); /* without looks: a spurious interrupt */
	return bw_period_fast(c, now, variant) ? irq_hot_done(cpu, intid) : intid;
}

static u32 bw_period_hot_plain(struct cpu *cpu, u32 intid)
{
	return bw_period_hot(cpu, intid, 0);
}

static u32 bw_period_hot_events(struct cpu *cpu, u32 intid)
{
	return bw_period_hot(cpu, intid, BW_HOT_EVENTS);
}

static u32 bw_period_hot_vms(struct cpu *cpu, u32 intid)
{
	return bw_period_hot(cpu, intid, BW_HOT_VMS);
}

static u32 bw_period_hot_all(struct cpu *cpu, u32 intid)
{
	return bw_period_hot(cpu, intid, BW_HOT_EVENTS | BW_HOT_VMS);
}

const irq_hot_fn_t bw_hot_variant[4] = { bw_period_hot_plain, bw_period_hot_events,
	                                 bw_period_hot_vms, bw_period_hot_all };

/*
 * At a general period end: whether the next one may take the hot path, and
 * its late margin: the general path's own duration (half c->lead), more
 * than the hot path takes (it no longer times itself). A
 * settings change published by another CPU clears c->hot_lead after it
 * bumps the sequence (bw_hc_set); here the sequence is read after the
 * store: either that read sees the change (not hot until adopted) or the
 * other CPU's clear comes after this store. The hot path checks no settings.
 */
static void bw_set_hot(struct bw_cpu *c)
{
	bool hot = c->nev == 1 && !(c->bvm->cfg->flags & CFG_BW_RECLAIM) && !c->watcher;
	u64 lead = c->lead / 2, step = c->clk.step_whole;
	/* the lean path's cases: one vCPU (no VM totals), the cycle counter, no
	 * look within the period, whole ticks per period (bw_lean.S) */
	bool lean = hot && !c->multi && c->ctr[0] == PMU_CYCLE_COUNTER && c->look == BW_NO_LOOK &&
	            !c->clk.step_frac && step > lead;

	__atomic_store_n(&c->lean_limit, lean ? step - lead : 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->hot_lead, hot ? lead : BW_NOT_HOT, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->bvm->seq, __ATOMIC_SEQ_CST) != c->seq)
		bw_not_hot(c);
}

/*
 * docs/interrupts.md "Closing the ICC_AP1R0_EL1 hole": the vCPUs of vm
 * whose CPU has missed more than 2 period ends though it runs guest code
 * (its guest holds off the period timer's FIQ), as BIT(idx).
 */
static u32 bw_stale(const struct vm *vm, u64 now)
{
	u32 stale = 0;

	for (u32 k = 0; k < vm->nvcpus; k++) {
		const struct bw_cpu *w = &bw_cpus[vm->vcpus[k]->pcpu];

		if (w->v == vm->vcpus[k] && !bw_idle(w->v) && !READ_ONCE(w->paused) &&
		    (s64)(now - READ_ONCE(w->clk.deadline)) > (s64)(2 * w->clk.step_whole))
			stale |= (u32)BIT(k);
	}
	return stale;
}

/* A watcher's look at the other VMs whose guests can hold off the
 * hypervisor's FIQs: a late one has its stage 2 revoked until its late
 * vCPUs have faulted (core/trap/trap.c trap_revoked); one that went idle
 * meanwhile (parked, off: it will not fault) is let go here. */
static void bw_watch(const struct bw_cpu *c, u64 now)
{
	for (u32 i = 0; i < vm_count; i++) {
		struct vm *vm = &vms[i];
		u32 wait;

		if (!bw_vms[i].watched || vm == c->v->vm)
			continue;
		wait = READ_ONCE(vm->revoke_vcpus);
		if (READ_ONCE(vm->revoked)) {
			for (u32 k = 0; k < vm->nvcpus; k++)
				if ((wait & BIT(k)) &&
				    (bw_idle(vm->vcpus[k]) || READ_ONCE(vm->state) != VM_RUNNING))
					mem_vm_revoke_done(vm, (u32)BIT(k));
			continue;
		}
		if (READ_ONCE(vm->state) != VM_RUNNING)
			continue;
		wait = bw_stale(vm, now);
		if (wait && mem_vm_revoke(vm, wait) && ++vm->revokes == 1)
			log_info("vm %s: stage 2 revoked (vCPUs %x late: their guest holds off the "
			         "hypervisor's FIQs through ICC_AP1R0_EL1; logged once)",
			         vm->cfg->name, wait);
	}
}

void bw_period(u32 intid)
{
	struct bw_cpu *c = bw_this();
	u64 now = timer_now();

	(void)intid;
	if (!c->v) {
		timer_hyp_stop();
		return;
	}
	if (c->v->vm->state == VM_OFF || c->v->vm->state == VM_STOPPED) {
		bw_cpu_stop(c);
		return;
	}
	if (now < c->clk.deadline) { /* early (or a look, c->look): not this period's end yet */
		/* a look also finds an overflow whose interrupt is not wired (QEMU
		 * xlnx-zcu102): the exception entry made the flag current */
		if (c->look != BW_NO_LOOK && pmu_overflow_status((u32)c->mask))
			bw_overflow(intid);
		bw_arm(c, now);
		return;
	}
	if (!bw_idle(c->v) && bw_period_fast(c, now, BW_HOT_EVENTS | BW_HOT_VMS))
		return;
	if (irq_direct_ap_built() && c->watcher)
		bw_watch(c, now);
	bw_close_period(c, now);
	/* Late (handling a period end costs about a period or more, or a long
	 * trap delayed it): the next period must leave the vCPU time to run,
	 * else it would only ever run this handler; periods are skipped, the
	 * boundaries stay on the grid. */
	if (bw_clock_advance(&c->clk, now) > 1 && c->clk.deadline - now < c->clk.step_whole)
		bw_clock_advance(&c->clk, c->clk.deadline);
	for (u32 i = 0; i < 4 && c->clk.deadline <= now + c->lead; i++)
		bw_clock_advance(&c->clk, c->clk.deadline);
	bw_adopt(c, now);
	bw_open_period(c);
	c->preload = bw_preload(bw_share(c, 0));
	bw_arm(c, now);
	c->lead = 2 * (timer_now() - now);
	/* the hot path keeps this margin (conservative: it declines when in doubt) */
	bw_set_hot(c);
}

/* Spare sharing: when every regulated vCPU that runs has spent its budget,
 * all of them run on until their own period ends. */
static void bw_spare_check(struct bw_cpu *me)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (u32 i = 0; i < ARCH_MAX_CPUS; i++) {
		struct vcpu *w = bw_cpus[i].v;

		if (!w || READ_ONCE(w->throttled) || READ_ONCE(bw_cpus[i].spare))
			continue;
		if (READ_ONCE(w->parked) || w->power != VCPU_ON || w->vm->state != VM_RUNNING)
			continue;
		return;
	}
	__atomic_add_fetch(&bw_spare_gen, 1, __ATOMIC_SEQ_CST);
	for (u32 i = 0; i < ARCH_MAX_CPUS; i++) {
		struct vcpu *w = bw_cpus[i].v;

		if (w && &bw_cpus[i] != me && READ_ONCE(w->throttled))
			vcpu_kick(w);
	}
}

static void bw_throttle(struct bw_cpu *c)
{
	bw_count(c, true);
	c->spare_seen = __atomic_load_n(&bw_spare_gen, __ATOMIC_ACQUIRE);
	c->throttle_at = timer_now();
	c->stats.throttles++;
	c->starved = true;
	c->v->throttled = true;
	if (bw_spare_sharing())
		bw_spare_check(c);
}

/*
 * The PMU overflow path: the vCPU on this CPU spent what it was granted.
 * Reclaim first (intra-VM pool), else throttle: from here until its next
 * period the vCPU runs no guest code (vcpu_exit_wait stalls it).
 */
void bw_overflow(u32 intid)
{
	struct bw_cpu *c = bw_this();
	bool reclaim, throttle = false;
	u32 ovf;

	(void)intid;
	if (!c->v)
		return;
	ovf = pmu_overflow_status((u32)c->mask);
	if (!ovf)
		return; /* cleared by a period start in the meantime */
	pmu_overflow_clear(ovf);
	/* whatever happens here, the period end needs bw_period */
	bw_not_hot(c);
	if (c->v->throttled || c->spare)
		return;
	if (bw_idle(c->v)) {
		/* the CPU counted while the vCPU is off: stop counting until the
		 * next period; started meanwhile, the vCPU waits for that period */
		for (u32 e = 0; e < c->nev; e++)
			pmu_hyp_stop(c->ctr[e]);
		c->paused = true;
		c->v->throttled = true;
		c->throttle_at = timer_now();
		return;
	}
	reclaim = c->bvm->cfg->flags & CFG_BW_RECLAIM;
	for (u32 e = 0; e < c->nev; e++) {
		u32 now, got = 0;

		if (!(ovf & BIT(c->ctr[e])))
			continue;
		now = pmu_hyp_read(c->ctr[e]);
		c->used[e] += bw_counted(c->seg_start[e], now);
		c->seg_start[e] = now;
		if (reclaim)
			got = bw_pool_take(&c->bvm->pool[e], bw_period_id(c), bw_share(c, e));
		if (got) {
			c->starved = true;
			bw_grant(c, e, got);
		} else {
			throttle = true;
		}
	}
	if (throttle)
		bw_throttle(c);
}

/* Called by the stall loop of a throttled vCPU (core/vcpu/vcpu.c). */
void bw_stall_hook(struct vcpu *v)
{
	struct bw_cpu *c = bw_this();

	if (c->v != v || !bw_spare_sharing() || c->paused)
		return; /* a paused vCPU (counter stopped) waits for its period */
	if (__atomic_load_n(&bw_spare_gen, __ATOMIC_ACQUIRE) == c->spare_seen)
		return;
	c->stats.stalled_ticks += timer_now() - c->throttle_at;
	bw_count(c, false); /* the stall is not charged */
	c->spare = true;    /* the counter goes on: no further overflow this period */
	v->throttled = false;
}

/*
 * A vCPU leaves its park (PSCI CPU_ON, VM start or reset) in a period that
 * began while it was off: it kept one event of its share (bw_open_period)
 * and lent the rest to the VM's pool. Before its first guest instruction
 * this does what that grant's overflow would do at that instruction: take
 * up to its share from the pool, else throttle it until its next period.
 * Left to the overflow, the grant ran out on the ERET and QEMU (-icount,
 * round robin) delivered the interrupt only after the sibling CPU's slice,
 * ~40 us that the running counter charged to this vCPU: 641,797 events in
 * a period of a 600,000-event VM (test_reclaim). What the CPU counted while
 * the vCPU was off is discarded, as at a period end (bw_close_period).
 */
void bw_unpark_hook(struct vcpu *v)
{
	struct bw_cpu *c = bw_this();

	if (c->v != v || !c->parked_grant || c->paused || v->throttled)
		return; /* paused: its counter ran out while off, it waits for its period */
	c->parked_grant = false;
	bw_count(c, false);
	pmu_overflow_clear((u32)c->mask); /* the kept event's, counted at EL2 */
	for (u32 e = 0; e < c->nev; e++) {
		u32 got = bw_pool_take(&c->bvm->pool[e], bw_period_id(c), bw_share(c, e));

		if (!got) {
			bw_throttle(c);
			return;
		}
		c->starved = true;
		bw_grant(c, e, got);
	}
}
