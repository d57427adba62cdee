/* SPDX-License-Identifier: Apache-2.0 */
#include "isolation/bw_budget.h"

#include "lib/div128.h"

u64 bw_events_from_mbps(u64 mbps, u64 period_us, u64 bytes_per_event)
{
	u64 events;

	if (!bytes_per_event)
		return 1;
	events = muldiv64(mbps, period_us, bytes_per_event);
	return events ? events : 1;
}

static u32 bw_clamp32(u64 v)
{
	if (!v)
		return 1;
	return v > BW_U32_MAX ? (u32)BW_U32_MAX : (u32)v;
}

u64 bw_split(u64 budget, u32 n, const u32 *weights, u32 *share)
{
	u64 given = 0;

	if (!n)
		return budget;
	for (u32 i = 0; i < n; i++) {
		u64 s;

		if (weights)
			s = muldiv64(budget, weights[i], 100u);
		else
			s = budget / n + (i < budget % n ? 1 : 0);
		share[i] = bw_clamp32(s);
		given += share[i];
	}
	return given < budget ? budget - given : 0;
}

bool bw_settings_ok(u64 period_us, u64 budget, u32 n, const u32 *weights, u32 floor)
{
	u64 least = floor ? floor : 1;

	if (period_us < 1 || period_us > BW_MAX_PERIOD_US || budget > BW_MAX_BUDGET || !n)
		return false;
	for (u32 i = 0; i < n; i++) {
		u64 share = weights ? budget * weights[i] / 100u : budget / n;

		if (share < least)
			return false;
	}
	return true;
}

u64 bw_boundary(u64 start, u32 period_us, u64 hz, u64 k)
{
	u128 t = (u128)k * period_us * hz;

	return start + (u64)div128(t, BW_US_PER_S, NULL);
}

u64 bw_period_at(u64 start, u32 period_us, u64 hz, u64 t)
{
	u128 scaled;
	u64 k;

	if (t < start || !period_us || !hz)
		return 0;
	scaled = (u128)(t - start) * BW_US_PER_S;
	k = (u64)div128(scaled, (u128)period_us * hz, NULL);
	/* rounding of the boundaries: make sure boundary(k) <= t < boundary(k + 1) */
	while (k && bw_boundary(start, period_us, hz, k) > t)
		k--;
	while (bw_boundary(start, period_us, hz, k + 1) <= t)
		k++;
	return k;
}

static void bw_clock_set(struct bw_clock *c, u64 k)
{
	u128 frac;
	u128 t = div128((u128)(k + 1) * c->period_us * c->hz, BW_US_PER_S, &frac);

	c->epoch = k;
	c->deadline = c->start + (u64)t;
	c->frac = (u64)frac;
}

void bw_clock_init(struct bw_clock *c, u64 start, u32 period_us, u64 hz, u64 now)
{
	u64 step = (u64)period_us * hz;

	c->start = start;
	c->hz = hz;
	c->period_us = period_us ? period_us : 1;
	c->step_whole = step / BW_US_PER_S;
	c->step_frac = step % BW_US_PER_S;
	c->step_wrap = c->step_frac - BW_US_PER_S;
	bw_clock_set(c, bw_period_at(start, c->period_us, hz, now));
}

/* Lagging by more than this many periods: recompute instead of stepping. */
#define BW_CLOCK_MAX_STEPS 8

u64 bw_clock_advance(struct bw_clock *c, u64 now)
{
	u64 first = c->epoch;

	for (u32 i = 0; i < BW_CLOCK_MAX_STEPS; i++) {
		c->epoch++;
		c->deadline = bw_clock_next(c, &c->frac);
		if (c->deadline > now)
			return c->epoch - first;
	}
	bw_clock_set(c, bw_period_at(c->start, c->period_us, c->hz, now));
	if (c->epoch <= first)
		bw_clock_set(c, first + 1);
	return c->epoch - first;
}

void bw_pool_give(u64 *pool, u32 epoch, u32 events)
{
	u64 old = __atomic_load_n(pool, __ATOMIC_ACQUIRE);

	for (u32 i = 0; i < BW_POOL_TRIES; i++) {
		u64 sum = events;
		u64 neu;

		if (POOL_EPOCH(old) == epoch)
			sum += POOL_EVENTS(old);
		else if ((s32)(POOL_EPOCH(old) - epoch) > 0)
			return; /* the pool already belongs to a later period */
		neu = POOL_WORD(epoch, sum > BW_U32_MAX ? BW_U32_MAX : sum);
		if (__atomic_compare_exchange_n(pool, &old, neu, false, __ATOMIC_ACQ_REL,
		                                __ATOMIC_ACQUIRE))
			return;
	}
}

u32 bw_pool_take(u64 *pool, u32 epoch, u32 want)
{
	u64 old = __atomic_load_n(pool, __ATOMIC_ACQUIRE);

	for (u32 i = 0; i < BW_POOL_TRIES; i++) {
		u32 have, got;

		if (POOL_EPOCH(old) != epoch)
			return 0;
		have = POOL_EVENTS(old);
		if (!have)
			return 0;
		got = want < have ? want : have;
		if (__atomic_compare_exchange_n(pool, &old, POOL_WORD(epoch, have - got), false,
		                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return got;
	}
	return 0;
}

u32 bw_pool_peek(const u64 *pool, u32 epoch)
{
	u64 w = __atomic_load_n(pool, __ATOMIC_ACQUIRE);

	return POOL_EPOCH(w) == epoch ? POOL_EVENTS(w) : 0;
}

u64 bw_stats_mean(const struct bw_stats *s)
{
	return s->periods ? s->sum / s->periods : 0;
}
