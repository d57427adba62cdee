/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The regulator's state and the engine's entry points, shared by the three
 * files of the regulator: the engine (bw.c: period ends, overflows, the
 * hot path, the stall and unpark hooks), its hypercalls and console command
 * (bw_hc.c) and its set-up (bw_init.c). Only those include it; the rest of
 * the hypervisor sees isolation/bw.h. bw_init.c calls bw_hc.c and bw.c,
 * bw_hc.c calls bw.c, bw.c calls neither (tests/test_c_layers.py).
 */
#ifndef ISOLATION_BW_ENGINE_H
#define ISOLATION_BW_ENGINE_H

#include "arch/aarch64/cpu.h"
#include "core/config/config.h"
#include "core/irq/irq.h"
#include "core/vm/vcpu.h"
#include "isolation/bw_budget.h"
#include "isolation/bw_lean.h"
#include "lib/spinlock.h"
#include "lib/types.h"

#define BW_NEV CFG_BW_MAX_EVENTS

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
	bool watched;            /* regulated, its guest can hold off the FIQs (bw.c bw_watch) */
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

/* A CPU's regulator; what the period's hot paths read and write first
 * (small offsets, pairs for ldp/stp: isolation/bw_lean.h), the size a
 * power of two (the CPU's entry is found with a shift). */
struct __attribute__((aligned(512))) bw_cpu {
	struct bw_stats stats;
	/* The next period end is the lean path's (isolation/bw_lean.S) when
	 * the counter, at the period timer's interrupt, is in [0, lean_limit)
	 * ticks past clk.deadline: a hot period (hot_lead below) of a VM of one
	 * vCPU counting cycles with no look within the period, its step whole
	 * ticks (clk.step_frac 0), and the period end not late (lean_limit is
	 * the step less the late margin). 0: never. Set with hot_lead
	 * (bw_set_hot), cleared with it (bw_not_hot). */
	u64 lean_limit;
	struct bw_clock clk;
	u64 preload; /* with hot_lead: bw_preload of the share (32 bits) */
	u64 mask;    /* the counters' overflow bits (32 bits) */
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
	bool multi;      /* the VM has more than one vCPU (VM totals) */
	bool watcher;    /* it watches other VMs' CPUs (bw.c bw_watch): no hot path */
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

/* The regulator's state (bw.c): per VM (index: VM id), per CPU. */
extern struct bw_vm bw_vms[CFG_MAX_CPUS];
extern struct bw_cpu bw_cpus[CFG_MAX_CPUS];
extern const struct cfg_bw_system *bw_sys; /* NULL: the platform has no regulator */
extern u64 bw_hz;                          /* the counter's frequency (bw_init) */

static inline struct bw_cpu *bw_this(void)
{
	return &bw_cpus[cpu_index()];
}

#define BW_LEAN_AT(f, at) _Static_assert(__builtin_offsetof(struct bw_cpu, f) == (at), #f)
BW_LEAN_AT(stats.last, BW_LEAN_LAST);
BW_LEAN_AT(stats.max, BW_LEAN_MAX);
BW_LEAN_AT(stats.sum, BW_LEAN_SUM);
BW_LEAN_AT(stats.periods, BW_LEAN_SUM + 8);
BW_LEAN_AT(lean_limit, BW_LEAN_LIMIT);
BW_LEAN_AT(clk.deadline, BW_LEAN_DEADLINE);
BW_LEAN_AT(clk.step_whole, BW_LEAN_STEP);
BW_LEAN_AT(clk.epoch, BW_LEAN_EPOCH);
BW_LEAN_AT(preload, BW_LEAN_PRELOAD);
BW_LEAN_AT(mask, BW_LEAN_PRELOAD + 8);
#undef BW_LEAN_AT

/* No period end takes a hot path until the next general one (bw_period,
 * bw_set_hot): an overflow, or new settings published (another CPU). */
static inline void bw_not_hot(struct bw_cpu *c)
{
	__atomic_store_n(&c->lean_limit, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->hot_lead, BW_NOT_HOT, __ATOMIC_RELAXED);
}

static inline u32 bw_share(const struct bw_cpu *c, u32 e)
{
	return c->set.share[e][c->v->idx];
}

/* The hot path's variants (bw_hot_variant[BW_HOT_EVENTS | BW_HOT_VMS], see
 * bw_period_fast in bw.c): which fields the configuration needs it to read. */
#define BW_HOT_EVENTS 1u
#define BW_HOT_VMS    2u
extern const irq_hot_fn_t bw_hot_variant[4];

/* Copies the VM's latest settings if they are consistent (seqlock). */
bool bw_read_settings(struct bw_vm *b, struct bw_settings *out, u32 *seq);
/* Publishes new settings (the writer holds b->lock). */
void bw_write_settings(struct bw_vm *b, const struct bw_settings *s);

/* A period begins on this CPU: grants from the settings in use. */
void bw_open_period(struct bw_cpu *c);
/* Arms the EL2 timer for the period end or the next look within it. */
void bw_arm(struct bw_cpu *c, u64 now);

/* PMU overflow interrupt: the vCPU on this CPU has spent its budget. */
void bw_overflow(u32 intid);
/* EL2 timer interrupt: the period of the vCPU on this CPU ended. */
void bw_period(u32 intid);
/* core/vcpu/vcpu.c's stall loop of a throttled vCPU (spare sharing). */
void bw_stall_hook(struct vcpu *v);
/* A vCPU leaves its park in a period that began while it was off. */
void bw_unpark_hook(struct vcpu *v);

#endif
