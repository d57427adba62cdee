/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bandwidth regulator. Per regulated vCPU (one per physical CPU):
 *
 *   period start (bw_period, EL2 timer)   counter := 2^32 - grant
 *   budget spent (bw_overflow, PMU irq)   reclaim from siblings, else
 *                                         v->throttled: the CPU waits in
 *                                         WFI at EL2 (core/vcpu.c)
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
 * the throttled flags (read only).
 */
#include "isolation/bw.h"

#include "arch/aarch64/cpu.h"
#include "drivers/gic/gic.h"
#include "arch/aarch64/pmu.h"
#include "arch/aarch64/timer.h"
#include "core/config.h"
#include "core/console.h"
#include "core/hypercall.h"
#include "core/irq.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "core/vpmu.h"
#include "isolation/bw_budget.h"
#include "isolation/color_ida.h"
#include "lib/log.h"
#include "lib/spinlock.h"

#define BW_ALL_VCPUS 0xffffu
#define BW_NEV       CFG_BW_MAX_EVENTS
#define BW_NO_EVENT  0xffffffffu

/* What a VM's regulation is set to: from the config, then BH_HC_BW_SET. */
struct bw_settings {
	u64 start;     /* counter value where period 0 of these settings begins */
	u64 base;      /* VM-wide index of that period (continues across changes) */
	u32 period_us; /* >= 1 */
	u64 budget[BW_NEV];
	u32 share[BW_NEV][CFG_MAX_CPUS]; /* events per period of each vCPU */
	u64 unshared[BW_NEV];            /* budget no vCPU has (weights below 100%) */
};

struct bw_vm {
	volatile u32 seq;         /* seqlock over next: odd while it is written (first: hot path) */
	const struct cfg_bw *cfg; /* NULL: unregulated */
	struct vm *vm;
	spinlock_t lock;         /* serialises writers of next */
	struct bw_settings next; /* latest settings; vCPUs switch at next.start */
	u64 pool[BW_NEV];        /* reclaim: (period << 32) | events given up */
	struct bw_stats stats;   /* VM totals per period, kept by vCPU 0's CPU (if > 1 vCPU) */
	bool set_logged;         /* BH_HC_BW_SET's console line (bw_log_set), under lock */
	u64 set_logged_at;
	u32 sets_unlogged;
};

/* No look within a period / no hot period end: far enough that now + it
 * never wraps and is beyond any deadline. */
#define BW_NO_LOOK (1ull << 62)
#define BW_NOT_HOT (1ull << 62)

/* A CPU's regulator; what the period hot path reads and writes first (small
 * offsets, pairs for ldp/stp), the size a power of two (the CPU's entry is
 * found with a shift). */
struct __attribute__((aligned(512))) bw_cpu {
	struct bw_clock clk;
	struct bw_stats stats;
	/* The next period end is bw_period_fast's when this is not BW_NOT_HOT:
	 * one counter, no reclaim, a whole period, nothing throttled, paused or
	 * released in it, the settings in use the VM's latest. Then it is lead
	 * (the margin of the late check). Set by bw_period (bw_set_hot), cleared
	 * by whatever bw_overflow does and by a settings change (bw_hc_set, on
	 * another CPU: only ever to BW_NOT_HOT). */
	u64 hot_lead;
	u64 look; /* ticks between looks at the counter within a period (BW_NO_LOOK: none) */
	struct bw_vm *bvm;
	u32 seq;         /* settings in use: bvm->seq when they were copied */
	u32 ctr[BW_NEV]; /* PMU counter of each event */
	u64 preload;     /* with hot_lead: bw_preload of the share (32 bits) */
	u64 mask;        /* the counters' overflow bits (32 bits) */
	bool multi;      /* the VM has more than one vCPU (VM totals) */
	u64 lead;        /* ticks: twice what the last general period end took to handle */
	struct vcpu *v;  /* NULL: this CPU is not regulated */
	u32 nev;
	u32 event[BW_NEV]; /* what it counts: the VM's event, or the platform's fallback */
	struct bw_settings set;
	u32 seg_start[BW_NEV]; /* counter value where the current grant began */
	u64 used[BW_NEV];      /* events of the grants closed this period */
	bool paused;           /* counters stopped: the vCPU overflowed while off */
	u32 pred[BW_NEV];      /* predicted use (reclaim) */
	bool parked_grant;     /* reclaim: the period began with the vCPU off (it kept 1) */
	bool starved;          /* needed more than it kept this period */
	volatile bool spare;   /* released by spare sharing until the period ends */
	u32 spare_seen;        /* bw_spare_gen when it was throttled */
	u64 throttle_at;
	bool partial;      /* the current period is not a whole one (the boot period) */
	u64 hist[BW_HIST]; /* (period << 32) | events, for the VM totals */
};

static struct bw_vm bw_vms[CFG_MAX_CPUS];
static struct bw_cpu bw_cpus[CFG_MAX_CPUS];
static const struct cfg_bw_system *bw_sys;
static u64 bw_hz;
static volatile u32 bw_spare_gen;

static struct bw_cpu *bw_this(void)
{
	return &bw_cpus[cpu_index()];
}

static u32 bw_share(const struct bw_cpu *c, u32 e)
{
	return c->set.share[e][c->v->idx];
}

static u32 bw_period_id(const struct bw_cpu *c)
{
	return (u32)(c->set.base + c->clk.epoch);
}

static bool bw_spare_sharing(void)
{
	return bw_sys && (bw_sys->flags & CFG_BW_SPARE_SHARING);
}

/* Copies the VM's latest settings if they are consistent (seqlock). */
static bool bw_read_settings(struct bw_vm *b, struct bw_settings *out, u32 *seq)
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

static void bw_write_settings(struct bw_vm *b, const struct bw_settings *s)
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

static void bw_arm(struct bw_cpu *c, u64 now)
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

static void bw_open_period(struct bw_cpu *c)
{
	struct vcpu *v = c->v;
	struct bw_vm *b = c->bvm;
	bool reclaim = b->cfg->flags & CFG_BW_RECLAIM;
	bool idle = bw_idle(v);
	u32 id = bw_period_id(c);

	c->parked_grant = reclaim && idle;
	if (v->vm->cfg->flags & CFG_VM_IDA_PERIOD) {
		struct color_ida_result ida;

		color_ida_prepare(v->vm, 0, &ida); /* invalidation-driven allocation */
	}
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
#define BW_HOT_EVENTS 1u
#define BW_HOT_VMS    2u

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
 * The period timer's hot path (core/irq.c, irq_register_hyp_hot): it
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

static const irq_hot_fn_t bw_hot_variant[] = { bw_period_hot_plain, bw_period_hot_events,
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
	bool hot = c->nev == 1 && !(c->bvm->cfg->flags & CFG_BW_RECLAIM);

	__atomic_store_n(&c->hot_lead, hot ? c->lead / 2 : BW_NOT_HOT, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->bvm->seq, __ATOMIC_SEQ_CST) != c->seq)
		__atomic_store_n(&c->hot_lead, BW_NOT_HOT, __ATOMIC_RELAXED);
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
 * period the vCPU runs no guest code (vcpu_exit_path stalls it).
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
	__atomic_store_n(&c->hot_lead, BW_NOT_HOT, __ATOMIC_RELAXED);
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

/* Called by the stall loop of a throttled vCPU (core/vcpu.c). */
static void bw_stall_hook(struct vcpu *v)
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
static void bw_unpark_hook(struct vcpu *v)
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

/* --- hypercalls and console --------------------------------------------- */

static void bw_hc_stats(struct vcpu *v)
{
	struct frame *f = v->frame;
	struct vm *vm = v->vm;
	struct bw_vm *b = &bw_vms[vm->id];
	u64 idx = f->x[1];
	struct bw_stats s;

	if (!b->cfg || (idx != BW_ALL_VCPUS && idx >= vm->nvcpus)) {
		f->x[0] = (u64)(s64)BH_E_INVALID;
		return;
	}
	if (idx == BW_ALL_VCPUS && vm->nvcpus == 1)
		idx = 0; /* the VM is its vCPU */
	if (idx == BW_ALL_VCPUS) {
		s = b->stats;
		s.throttles = 0;
		s.stalled_ticks = 0;
		for (u32 k = 0; k < vm->nvcpus; k++) {
			const struct bw_cpu *c = &bw_cpus[vm->vcpus[k]->pcpu];

			s.throttles += READ_ONCE(c->stats.throttles);
			s.stalled_ticks += READ_ONCE(c->stats.stalled_ticks);
		}
	} else {
		s = bw_cpus[vm->vcpus[idx]->pcpu].stats;
	}
	f->x[0] = BH_OK;
	f->x[1] = s.last;
	f->x[2] = s.max;
	f->x[3] = bw_stats_mean(&s);
	f->x[4] = s.throttles;
	f->x[5] = timer_ticks_to_ns(s.stalled_ticks);
}

static void bw_split_settings(struct bw_settings *s, const struct cfg_bw *cfg, u32 nvcpus)
{
	for (u32 e = 0; e < cfg->nevents; e++)
		s->unshared[e] = bw_split(s->budget[e], nvcpus, cfg->weights, s->share[e]);
}

/* The console line of an accepted BH_HC_BW_SET, at most one per target VM
 * per second of counter time: a manager calling in a loop cannot flood the
 * console (the lines left out are counted in the next one). */
static void bw_log_set(struct bw_vm *b, const struct bw_settings *n, const struct vm *by)
{
	u64 now = timer_now();
	u32 quiet;

	spin_lock(&b->lock);
	if (b->set_logged && now - b->set_logged_at < bw_hz) {
		b->sets_unlogged++;
		spin_unlock(&b->lock);
		return;
	}
	quiet = b->sets_unlogged;
	b->set_logged = true;
	b->set_logged_at = now;
	b->sets_unlogged = 0;
	spin_unlock(&b->lock);
	if (quiet)
		log_info("bw: vm %s: %lu events per %u us (set by vm %s; %u more set in the second "
		         "before, not shown)",
		         b->vm->cfg->name, n->budget[0], n->period_us, by->cfg->name, quiet);
	else
		log_info("bw: vm %s: %lu events per %u us (set by vm %s)", b->vm->cfg->name,
		         n->budget[0], n->period_us, by->cfg->name);
}

/* BH_HC_BW_SET: x1 = VM id, x2 = budget (events per period for the VM; 0
 * keeps it), x3 = period in us (0 keeps it), x4 = second event's budget
 * (read/write platforms; 0 keeps it). Managers only. The change takes
 * effect for all the VM's vCPUs at one period boundary. */
static void bw_hc_set(struct vcpu *v)
{
	struct frame *f = v->frame;
	u64 id = f->x[1], budget = f->x[2], period = f->x[3], budget2 = f->x[4];
	struct bw_settings cur, n;
	struct bw_vm *b;
	u64 k;
	u32 seq;

	if (!(v->vm->cfg->flags & CFG_VM_MANAGER)) {
		f->x[0] = (u64)(s64)BH_E_DENIED;
		return;
	}
	if (id >= vm_count || !bw_vms[id].cfg || budget > BW_MAX_BUDGET ||
	    budget2 > BW_MAX_BUDGET || period > BW_MAX_PERIOD_US) {
		f->x[0] = (u64)(s64)BH_E_INVALID;
		return;
	}
	b = &bw_vms[id];
	spin_lock(&b->lock);
	while (!bw_read_settings(b, &cur, &seq))
		;
	n = cur;
	if (period)
		n.period_us = (u32)period;
	if (budget)
		n.budget[0] = budget;
	if (budget2 && b->cfg->nevents > 1)
		n.budget[1] = budget2;
	/* what `bulkhead check` would refuse in a config changes nothing */
	for (u32 e = 0; e < b->cfg->nevents; e++) {
		if (!bw_settings_ok(n.period_us, n.budget[e], b->vm->nvcpus, b->cfg->weights,
		                    bw_sys->regulator_events)) {
			spin_unlock(&b->lock);
			f->x[0] = (u64)(s64)BH_E_INVALID;
			return;
		}
	}
	bw_split_settings(&n, b->cfg, b->vm->nvcpus);
	/* a boundary of the current schedule at least one period away: every
	 * vCPU reaches it on the old schedule, then switches */
	k = bw_period_at(cur.start, cur.period_us, bw_hz, timer_now()) + 2;
	n.start = bw_boundary(cur.start, cur.period_us, bw_hz, k);
	n.base = cur.base + k;
	bw_write_settings(b, &n);
	/* the VM's period ends take the general path until they adopt n */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (u32 i = 0; i < b->vm->nvcpus; i++)
		__atomic_store_n(&bw_cpus[b->vm->vcpus[i]->pcpu].hot_lead, BW_NOT_HOT,
		                 __ATOMIC_RELAXED);
	spin_unlock(&b->lock);
	bw_log_set(b, &n, v->vm);
	f->x[0] = BH_OK;
}

static __cold void bw_dump(void)
{
	bool any = false;

	for (u32 i = 0; i < vm_count; i++) {
		struct bw_vm *b = &bw_vms[i];

		if (!b->cfg)
			continue;
		for (u32 k = 0; k < b->vm->nvcpus; k++) {
			const struct bw_cpu *c = &bw_cpus[b->vm->vcpus[k]->pcpu];
			struct bw_stats s = c->stats;

			log_info("bw vm=%s vcpu=%u last=%lu max=%lu mean=%lu throttled=%lu "
			         "stalled_us=%lu",
			         b->vm->cfg->name, k, s.last, s.max, bw_stats_mean(&s), s.throttles,
			         timer_ticks_to_ns(s.stalled_ticks) / 1000);
			any = true;
		}
	}
	if (!any)
		log_info("bw: no VM is regulated");
}

/* --- initialisation ------------------------------------------------------ */

__cold void bw_init(void)
{
	u32 variant = 0;
	u64 start;

	hypercall_register(BH_HC_BW_STATS, bw_hc_stats);
	hypercall_register(BH_HC_BW_SET, bw_hc_set);
	console_register_command('b', bw_dump);
	for (u32 i = 0; i < CFG_MAX_CPUS; i++) {
		bw_cpus[i].hot_lead = BW_NOT_HOT; /* the first period end is bw_period's */
		bw_cpus[i].look = BW_NO_LOOK;
	}
	bw_sys = cfg_system.bw;
	if (!bw_sys)
		return;
	bw_hz = timer_freq();
	if (bw_sys->counter_hz && bw_sys->counter_hz != bw_hz)
		log_info("bw: the counter runs at %lu Hz, the platform file says %lu Hz; periods "
		         "follow the counter",
		         bw_hz, bw_sys->counter_hz);
	start = timer_now();
	for (u32 i = 0; i < vm_count; i++) {
		struct vm *vm = &vms[i];
		const struct cfg_bw *cfg = vm->cfg->bw;
		struct bw_vm *b = &bw_vms[i];
		struct bw_settings *s = &b->next;

		if (!cfg)
			continue;
		b->cfg = cfg;
		b->vm = vm;
		b->seq = 2;
		s->start = start;
		s->base = 0;
		s->period_us = cfg->period_us ? cfg->period_us : 1;
		for (u32 e = 0; e < cfg->nevents && e < BW_NEV; e++) {
			u64 given = 0;

			s->budget[e] = cfg->budget[e];
			for (u32 k = 0; k < vm->nvcpus; k++) {
				s->share[e][k] = cfg->vcpu_budget[e * vm->nvcpus + k];
				given += s->share[e][k];
			}
			s->unshared[e] = given < cfg->budget[e] ? cfg->budget[e] - given : 0;
		}
		if (vm->nvcpus > 1)
			variant |= BW_HOT_VMS;
		if (!(cfg->flags & CFG_BW_CYCLES))
			variant |= BW_HOT_EVENTS;
		for (u32 k = 0; k < vm->nvcpus; k++) {
			struct bw_cpu *c = &bw_cpus[vm->vcpus[k]->pcpu];

			c->v = vm->vcpus[k];
			c->bvm = b;
			c->multi = vm->nvcpus > 1;
			c->nev = cfg->flags & CFG_BW_CYCLES ? 1 : MIN(cfg->nevents, BW_NEV);
		}
		log_info("bw: vm %s: %lu %s per %u us over %u vCPU(s)%s", vm->cfg->name,
		         cfg->budget[0], cfg->flags & CFG_BW_CYCLES ? "cycles" : "events",
		         cfg->period_us, vm->nvcpus,
		         cfg->flags & CFG_BW_RECLAIM ? ", reclaim" : "");
	}
	vpmu_set_hyp_overflow(bw_overflow); /* the PMU PPI is shared with guests' counters */
	irq_register_hyp(cfg_system.platform->timer_hyp_irq, bw_period);
	irq_register_hyp_hot(cfg_system.platform->timer_hyp_irq, bw_hot_variant[variant]);
	vcpu_set_stall_hook(bw_stall_hook);
	vcpu_set_unpark_hook(bw_unpark_hook);
}

/*
 * The events this CPU counts: the VM's as this vCPU's core type counts them
 * (cfg->vcpu_event on platforms with several core types), or, where the CPU
 * does not implement one of them (PMCEID: QEMU has none of the Cortex-A53's
 * memory events), the platform's fallback event for every channel, said on
 * the console (once per VM and core type). Returns the interval of the looks
 * at the counter in us (0: none).
 */
static __cold u32 bw_choose_events(struct bw_cpu *c, const struct cfg_bw *cfg)
{
	u32 missing = BW_NO_EVENT;
	u32 ncpus = c->v->vm->cfg->ncpus;
	u32 i = c->v->idx;
	bool first_of_type = i == 0;

	for (u32 e = 0; e < c->nev; e++) {
		u32 ev = cfg->vcpu_event ? cfg->vcpu_event[e * ncpus + i] : cfg->event[e];

		c->event[e] = ev;
		if (missing == BW_NO_EVENT && !pmu_event_implemented(ev))
			missing = ev;
	}
	if (cfg->vcpu_event) {
		first_of_type = true;
		for (u32 j = 0; j < i && first_of_type; j++)
			if (cfg->vcpu_event[j] == cfg->vcpu_event[i])
				first_of_type = false;
	}
	if (missing == BW_NO_EVENT || !bw_sys->fallback_event) {
		if (cfg->vcpu_event && first_of_type)
			log_info("bw: vm %s: vCPU %u counts event 0x%x (its core type's)",
			         c->v->vm->cfg->name, i, c->event[0]);
		return bw_sys->overflow_poll_us;
	}
	for (u32 e = 0; e < c->nev; e++)
		c->event[e] = bw_sys->fallback_event;
	if (first_of_type && cfg->vcpu_event)
		log_info("bw: vm %s: vCPU %u: this CPU does not count its core type's event 0x%x "
		         "(PMCEID); counting the platform's fallback event 0x%x instead, looking "
		         "every %u us",
		         c->v->vm->cfg->name, i, missing, bw_sys->fallback_event,
		         bw_sys->fallback_poll_us);
	else if (first_of_type)
		log_info("bw: vm %s: this CPU does not count event 0x%x (PMCEID); counting the "
		         "platform's fallback event 0x%x instead, looking every %u us",
		         c->v->vm->cfg->name, missing, bw_sys->fallback_event,
		         bw_sys->fallback_poll_us);
	return bw_sys->fallback_poll_us;
}

__cold void bw_cpu_init(void)
{
	struct bw_cpu *c = bw_this();
	const struct cfg_bw *cfg;
	u32 poll_us;
	u64 now;

	if (!bw_sys || !c->v)
		return;
	cfg = c->bvm->cfg;
	if (cfg->flags & CFG_BW_CYCLES) {
		pmu_hyp_reserve(0, true);
		c->ctr[0] = PMU_CYCLE_COUNTER;
	} else {
		u32 first = pmu_hyp_reserve(c->nev, false);

		if (first + c->nev > pmu_counters())
			panic("bw: cpu %u has %u PMU counters, regulation needs %u", cpu_index(),
			      pmu_counters(), c->nev);
		for (u32 e = 0; e < c->nev; e++)
			c->ctr[e] = first + e;
	}
	c->mask = 0;
	for (u32 e = 0; e < c->nev; e++)
		c->mask |= BIT(c->ctr[e]);
	now = timer_now();
	while (!bw_read_settings(c->bvm, &c->set, &c->seq))
		;
	bw_clock_init(&c->clk, c->set.start, c->set.period_us, bw_hz, now);
	poll_us = cfg->flags & CFG_BW_CYCLES ? 0 : bw_choose_events(c, cfg);
	for (u32 e = 0; e < c->nev; e++)
		pmu_hyp_start(c->ctr[e], c->event[e], bw_preload(bw_share(c, e)));
	bw_open_period(c);
	c->partial = true; /* the boot period: the guest has not run yet */
	c->look = BW_NO_LOOK;
	if (poll_us) {
		c->look = timer_ns_to_ticks((u64)poll_us * 1000);
		/* the looks stand in for the overflow interrupt QEMU raises late
		 * (or, on xlnx-zcu102, never): they are the vCPU's, and so is all
		 * EL2 work on this path (docs/bandwidth.md "QEMU") */
		pmu_hyp_count_el2_always();
	}
	irq_enable_hyp_local(vpmu_hw_irq());
	gic_enable(cfg_system.platform->timer_hyp_irq);
	bw_arm(c, now);
}
