/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The arithmetic of memory bandwidth reservation, free of hardware access so
 * that it is unit-tested on the host (tests/host/test_bw_budget.c):
 * bandwidth to events, a VM budget split over its vCPUs, the period clock
 * (absolute deadlines, no drift), the reclaim pool and usage prediction,
 * and the statistics kept per period. bulkhead/bandwidth.py mirrors the
 * conversion and the split for `bulkhead check`.
 */
#ifndef ISOLATION_BW_BUDGET_H
#define ISOLATION_BW_BUDGET_H

#include "lib/types.h"

#define BW_US_PER_S 1000000u
#define BW_U32_MAX  0xffffffffull

/* Limits of a period and of a budget (events per period, VM or vCPU), as
 * `bulkhead check` applies them to a config and BH_HC_BW_SET to its
 * arguments (bw_settings_ok); the generated config.c asserts the
 * toolchain's (bulkhead.config.bandwidth MAX_PERIOD_US, MAX_BUDGET_EVENTS)
 * against them. */
#define BW_MAX_PERIOD_US 1000000u    /* 1 s: a period's events fit the 32-bit counters */
#define BW_MAX_BUDGET    0x7fffffffu /* events per period, VM or vCPU */

/* A word of a period index (low 32 bits) and an event count (pool, history). */
#define POOL_EPOCH(w)   ((u32)((w) >> 32))
#define POOL_EVENTS(w)  ((u32)(w))
#define POOL_WORD(e, n) (((u64)(e) << 32) | (u64)(n))

/* Events per period for mbps (10^6 bytes/s) over period_us at
 * bytes_per_event: mbps * period_us / bytes_per_event, rounded down, at
 * least 1. */
u64 bw_events_from_mbps(u64 mbps, u64 period_us, u64 bytes_per_event);

/*
 * Splits a VM budget (events per period) over n vCPUs into share[0..n).
 * weights == NULL: evenly, the remainder going one event each to the first
 * vCPUs (the shares sum to the budget). Otherwise share[i] = budget *
 * weights[i] / 100 rounded down (weights in percent, summing to at most
 * 100). Returns the events given to no vCPU. A share of 0 becomes 1.
 */
u64 bw_split(u64 budget, u32 n, const u32 *weights, u32 *share);

/*
 * Whether a regulation is one `bulkhead check` accepts for a config
 * (BH_HC_BW_SET applies nothing else): 1 <= period_us <= BW_MAX_PERIOD_US,
 * budget (events per period for the VM, one event) <= BW_MAX_BUDGET, and
 * each of the n vCPUs' shares (as bw_split computes them, before a share
 * of 0 becomes 1) at least one event and at least floor events per period
 * (the platform's regulator_events, the forward-progress floor: less and
 * the regulator's own work would starve the vCPU). weights as bw_split.
 */
bool bw_settings_ok(u64 period_us, u64 budget, u32 n, const u32 *weights, u32 floor);

/* The 32-bit counter value from which a counter overflows after n >= 1
 * events, and the events counted between two readings. */
static inline u32 bw_preload(u32 n)
{
	return (u32)(0u - n);
}

static inline u32 bw_counted(u32 from, u32 to)
{
	return to - from;
}

/*
 * Period schedule: period k covers [bw_boundary(k), bw_boundary(k + 1)) with
 * bw_boundary(k) = start + floor(k * period_us * hz / 10^6) counter ticks,
 * exact for any frequency (no accumulated rounding).
 */
struct bw_clock {
	/* incremental form of the boundary: deadline = start + whole + frac/10^6
	 * (first: the period's hot paths load them in pairs; deadline and
	 * step_whole are all the lean one (isolation/bw_lean.S) reads) */
	u64 deadline;   /* bw_boundary(k + 1): when the current period ends */
	u64 step_whole; /* floor(period_us * hz / 10^6) */
	u64 frac;       /* accumulated fraction of a tick, < 10^6 */
	u64 step_frac;  /* (period_us * hz) mod 10^6 */
	u64 step_wrap;  /* step_frac - 10^6, mod 2^64: the fraction's step with a carry */
	u64 epoch;      /* the current period k */
	u64 start;      /* counter value where period 0 begins */
	u64 hz;         /* counter frequency */
	u32 period_us;  /* >= 1 */
};

/* The boundary after c->deadline; *frac is the fraction that goes with it.
 * An integer accumulator, no division, no constant: the fraction carries
 * when frac + step_frac >= 10^6, i.e. when frac + step_wrap is not negative
 * (frac < 10^6, step_frac < 10^6). */
static inline u64 bw_clock_next(const struct bw_clock *c, u64 *frac)
{
	u64 plain = c->frac + c->step_frac, wrapped = c->frac + c->step_wrap;
	bool carry = (s64)wrapped >= 0;

	*frac = carry ? wrapped : plain;
	return c->deadline + c->step_whole + carry;
}

u64 bw_boundary(u64 start, u32 period_us, u64 hz, u64 k);
/* Period 0 at start; the current period is the one containing now (or 0
 * if now < start). */
void bw_clock_init(struct bw_clock *c, u64 start, u32 period_us, u64 hz, u64 now);
/* Moves to the period containing now, at least one period on; returns how
 * many periods ended (1 when on time). */
u64 bw_clock_advance(struct bw_clock *c, u64 now);
/* Index of the period containing t (0 if t < start). */
u64 bw_period_at(u64 start, u32 period_us, u64 hz, u64 t);

/*
 * Reclaim pool of one VM: budget its vCPUs gave up for one period, as one
 * 64-bit word (period index low 32 bits << 32) | events, changed with
 * compare-and-swap only (lock-free). Giving to a pool of an older period
 * replaces it; taking from a pool of another period yields nothing. Each
 * operation retries at most BW_POOL_TRIES times (bounded): a vCPU that
 * loses that many races gets nothing, which is always safe.
 */
#define BW_POOL_TRIES 16
void bw_pool_give(u64 *pool, u32 epoch, u32 events);
/* Takes up to want events; returns how many were taken. */
u32 bw_pool_take(u64 *pool, u32 epoch, u32 want);
u32 bw_pool_peek(const u64 *pool, u32 epoch);

/*
 * Usage prediction for reclaim (exponentially weighted, 1/4 per period): a
 * vCPU that was throttled or needed more than its share is predicted to
 * need its whole share. bw_keep() is what a vCPU keeps of its share at a
 * period start (a margin above the prediction, at least 1 event); the rest
 * goes to the pool.
 */
static inline u32 bw_predict(u32 pred, u64 used, bool starved, u32 share)
{
	u64 p;

	if (starved || used >= share)
		return share;
	p = (3ull * pred + used) / 4; /* rounded down: an idle vCPU's prediction reaches 0 */
	return p > share ? share : (u32)p;
}

static inline u32 bw_keep(u32 pred, u32 share)
{
	u64 keep = (u64)pred + pred / 2 + share / 16;

	if (keep > share)
		keep = share;
	return keep ? (u32)keep : 1;
}

/* Per-period statistics of a vCPU or a VM. */
struct bw_stats {
	u64 last; /* events in the last complete period */
	u64 max;
	u64 sum;
	u64 periods;
	u64 throttles;     /* times the budget ran out */
	u64 stalled_ticks; /* counter ticks spent throttled */
};

static inline void bw_stats_period(struct bw_stats *s, u64 used)
{
	s->last = used;
	if (used > s->max)
		s->max = used;
	s->sum += used;
	s->periods++;
}

u64 bw_stats_mean(const struct bw_stats *s);

/* A small history of per-period usage, (epoch << 32) | events per slot, so
 * that another CPU can sum a VM's vCPUs for one period without locks. */
#define BW_HIST 4
static inline void bw_hist_put(u64 *hist, u32 epoch, u64 used)
{
	u64 w = POOL_WORD(epoch, used > BW_U32_MAX ? BW_U32_MAX : used);

	__atomic_store_n(&hist[epoch % BW_HIST], w, __ATOMIC_RELEASE);
}

static inline bool bw_hist_get(const u64 *hist, u32 epoch, u32 *used)
{
	u64 w = __atomic_load_n(&hist[epoch % BW_HIST], __ATOMIC_ACQUIRE);

	if (POOL_EPOCH(w) != epoch)
		return false;
	*used = POOL_EVENTS(w);
	return true;
}

#endif
