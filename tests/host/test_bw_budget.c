/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the bandwidth-regulation arithmetic
 * (hypervisor/isolation/bw_budget.c): conversion, split, period clock,
 * reclaim pool (also under concurrent threads), prediction, statistics,
 * and the limits BH_HC_BW_SET shares with `bulkhead check`.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "isolation/bw_budget.h"
#include "check.h"

#define CHECK_EQ(a, b)                                                                           \
	do {                                                                                     \
		unsigned long long _a = (unsigned long long)(a), _b = (unsigned long long)(b);   \
		if (_a != _b) {                                                                  \
			failures++;                                                              \
			fprintf(stderr, "%s:%d: %s = %llu, expected %llu\n", __FILE__, __LINE__, \
			        #a, _a, _b);                                                     \
		}                                                                                \
	} while (0)

static void test_conversion(void)
{
	/* 200 MB/s over 1 ms at 64 B per event: 200e6 * 1e-3 / 64 = 3125 */
	CHECK_EQ(bw_events_from_mbps(200, 1000, 64), 3125);
	/* rounded down */
	CHECK_EQ(bw_events_from_mbps(100, 1000, 64), 1562);
	/* at least 1 */
	CHECK_EQ(bw_events_from_mbps(1, 1, 64), 1);
	/* pessimistic Cortex-A55 model: 2 x 64 B */
	CHECK_EQ(bw_events_from_mbps(1000, 100, 128), 781);
	/* notional QEMU model: 1 byte per event (a cycle) */
	CHECK_EQ(bw_events_from_mbps(500, 1000, 1), 500000);
	/* no overflow for large values */
	CHECK_EQ(bw_events_from_mbps(1ull << 40, 1ull << 30, 1ull << 10), 1ull << 60);
}

static void test_split(void)
{
	u32 share[8];
	u32 w[3] = { 60, 30, 10 };
	u32 w2[2] = { 50, 25 };

	CHECK_EQ(bw_split(10, 4, NULL, share), 0);
	CHECK_EQ(share[0], 3);
	CHECK_EQ(share[1], 3);
	CHECK_EQ(share[2], 2);
	CHECK_EQ(share[3], 2);
	CHECK_EQ(bw_split(1000, 3, w, share), 0);
	CHECK_EQ(share[0], 600);
	CHECK_EQ(share[1], 300);
	CHECK_EQ(share[2], 100);
	/* weights under 100%: the rest is given to no vCPU */
	CHECK_EQ(bw_split(1001, 2, w2, share), 251);
	CHECK_EQ(share[0], 500);
	CHECK_EQ(share[1], 250);
	/* rounding to 0 gives 1 */
	CHECK_EQ(bw_split(1, 2, NULL, share), 0);
	CHECK_EQ(share[0], 1);
	CHECK_EQ(share[1], 1);
	/* random: even split sums to the budget, weighted never above it */
	for (int i = 0; i < 10000; i++) {
		u32 n = 1 + (u32)(rand() % 8), ws[8], left = 100;
		u64 budget = 1 + (u64)rand() % 100000000, sum = 0, rest;

		rest = bw_split(budget, n, NULL, share);
		for (u32 k = 0; k < n; k++)
			sum += share[k];
		CHECK_EQ(rest, 0);
		if (budget >= n)
			CHECK_EQ(sum, budget);
		for (u32 k = 0; k < n; k++) {
			ws[k] = left ? (u32)(rand() % (left + 1)) : 0;
			if (!ws[k])
				ws[k] = 1;
			left = ws[k] > left ? 0 : left - ws[k];
		}
		sum = 0;
		rest = bw_split(budget, n, ws, share);
		for (u32 k = 0; k < n; k++) {
			sum += share[k];
			CHECK(share[k] >= 1);
		}
		if (budget >= 100)
			CHECK(sum + rest == budget || rest == 0);
	}
}

static void test_clock(void)
{
	struct bw_clock c;
	const u64 hz = 62500000; /* QEMU's cortex-a53: 62.5 MHz, 1 us = 62.5 ticks */

	bw_clock_init(&c, 1000, 1, hz, 1000);
	CHECK_EQ(c.epoch, 0);
	CHECK_EQ(c.deadline, 1062);
	/* stepping one period at a time matches the closed form exactly */
	for (u64 k = 1; k < 100000; k++) {
		CHECK_EQ(bw_clock_advance(&c, c.deadline), 1);
		CHECK_EQ(c.epoch, k);
		CHECK_EQ(c.deadline, bw_boundary(1000, 1, hz, k + 1));
		if (failures)
			return;
	}
	/* no drift: after 10^6 periods of 1 us, exactly 1 s of ticks */
	bw_clock_init(&c, 0, 1, hz, 0);
	for (u64 k = 0; k < 1000000; k++)
		bw_clock_advance(&c, c.deadline);
	CHECK_EQ(c.epoch, 1000000);
	CHECK_EQ(c.deadline, hz + 62); /* boundary(10^6 + 1) = 62500062.5 */
	/* late handling skips the missed periods */
	bw_clock_init(&c, 0, 1000, hz, 0);
	CHECK_EQ(c.deadline, 62500);
	CHECK_EQ(bw_clock_advance(&c, 62500 * 3 + 5), 3);
	CHECK_EQ(c.epoch, 3);
	CHECK_EQ(c.deadline, 62500 * 4);
	/* far behind: recomputed */
	CHECK_EQ(bw_clock_advance(&c, 62500 * 1000 + 1), 997);
	CHECK_EQ(c.deadline, 62500 * 1001);
	/* init in the middle of a period */
	bw_clock_init(&c, 100, 10, 1000000, 100 + 25);
	CHECK_EQ(c.epoch, 2);
	CHECK_EQ(c.deadline, 130);
	/* before the start: period 0 */
	bw_clock_init(&c, 100, 10, 1000000, 50);
	CHECK_EQ(c.epoch, 0);
	CHECK_EQ(c.deadline, 110);
	/* the period hot path's step (bw_clock_next: the fraction carried with
	 * the wrapped step, no division) against the closed form, at counter
	 * frequencies and periods with every kind of remainder */
	{
		static const u64 freqs[] = {
			62500000, 19200000, 24000000, 33333333, 999999, 1000000
		};
		static const u32 periods[] = { 1, 3, 7, 10, 333, 1000 };

		for (u32 f = 0; f < sizeof(freqs) / sizeof(freqs[0]); f++) {
			for (u32 p = 0; p < sizeof(periods) / sizeof(periods[0]); p++) {
				bw_clock_init(&c, 12345, periods[p], freqs[f], 12345);
				for (u64 k = c.epoch + 1; k < 20000; k++) {
					u64 frac, next = bw_clock_next(&c, &frac);

					CHECK_EQ(next,
					         bw_boundary(12345, periods[p], freqs[f], k + 1));
					CHECK(frac < BW_US_PER_S);
					c.deadline = next;
					c.frac = frac;
					if (failures)
						return;
				}
			}
		}
	}
	/* bw_period_at at the boundaries */
	for (u64 t = 0; t < 5000; t++) {
		u64 k = bw_period_at(7, 3, hz, t + 7);
		CHECK(bw_boundary(7, 3, hz, k) <= t + 7);
		CHECK(bw_boundary(7, 3, hz, k + 1) > t + 7);
	}
}

static u64 shared_pool;
static u64 taken_total[4];

static void *taker(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < 200000; i++)
		taken_total[id] += bw_pool_take(&shared_pool, 5, 3);
	return NULL;
}

static void test_pool(void)
{
	u64 pool = 0;
	pthread_t t[4];
	u64 sum = 0;

	CHECK_EQ(bw_pool_take(&pool, 0, 10), 0);
	bw_pool_give(&pool, 1, 100);
	CHECK_EQ(bw_pool_peek(&pool, 1), 100);
	CHECK_EQ(bw_pool_take(&pool, 0, 10), 0); /* another period's budget */
	CHECK_EQ(bw_pool_take(&pool, 2, 10), 0);
	CHECK_EQ(bw_pool_take(&pool, 1, 30), 30);
	bw_pool_give(&pool, 1, 5);
	CHECK_EQ(bw_pool_take(&pool, 1, 1000), 75);
	CHECK_EQ(bw_pool_take(&pool, 1, 1), 0);
	/* a gift for a new period replaces what is left of the old one */
	bw_pool_give(&pool, 1, 50);
	bw_pool_give(&pool, 2, 7);
	CHECK_EQ(bw_pool_peek(&pool, 2), 7);
	/* a late gift for an old period is dropped */
	bw_pool_give(&pool, 1, 9);
	CHECK_EQ(bw_pool_peek(&pool, 2), 7);
	CHECK_EQ(bw_pool_peek(&pool, 1), 0);
	/* saturates */
	bw_pool_give(&pool, 3, 0xfffffff0u);
	bw_pool_give(&pool, 3, 0x100u);
	CHECK_EQ(bw_pool_peek(&pool, 3), 0xffffffffu);

	/* concurrent takers never take more than was given */
	shared_pool = 0;
	bw_pool_give(&shared_pool, 5, 100000);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, taker, (void *)i);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		sum += taken_total[i];
	}
	CHECK(sum <= 100000);
	CHECK_EQ(sum + bw_pool_peek(&shared_pool, 5), 100000);
}

static void test_predict(void)
{
	u32 p = 1000;

	/* a vCPU using nothing decays towards 0 but its keep stays >= 1 */
	for (int i = 0; i < 100; i++)
		p = bw_predict(p, 0, false, 1000);
	CHECK(p <= 1);
	CHECK(bw_keep(p, 1000) >= 1);
	CHECK(bw_keep(p, 1000) <= 1000 / 16 + 2);
	/* starved: its whole share */
	CHECK_EQ(bw_predict(10, 10, true, 1000), 1000);
	CHECK_EQ(bw_predict(10, 2000, false, 1000), 1000);
	/* steady use of half: keeps half plus a margin, never above the share */
	p = 0;
	for (int i = 0; i < 100; i++)
		p = bw_predict(p, 500, false, 1000);
	CHECK(p >= 497 && p <= 500);
	CHECK_EQ(bw_keep(500, 1000), 500 + 250 + 62);
	CHECK_EQ(bw_keep(900, 1000), 1000);
	CHECK_EQ(bw_keep(100, 1000), 100 + 50 + 62);
	CHECK_EQ(bw_keep(0, 1), 1);
}

static void test_stats(void)
{
	struct bw_stats s = { 0 };
	u64 hist[BW_HIST] = { 0 };
	u32 used = 0;

	CHECK_EQ(bw_stats_mean(&s), 0);
	bw_stats_period(&s, 10);
	bw_stats_period(&s, 30);
	bw_stats_period(&s, 20);
	CHECK_EQ(s.last, 20);
	CHECK_EQ(s.max, 30);
	CHECK_EQ(bw_stats_mean(&s), 20);
	CHECK_EQ(s.periods, 3);

	bw_hist_put(hist, 7, 123);
	CHECK(bw_hist_get(hist, 7, &used));
	CHECK_EQ(used, 123);
	CHECK(!bw_hist_get(hist, 3, &used));
	bw_hist_put(hist, 11, 5); /* same slot, newer period */
	CHECK(!bw_hist_get(hist, 7, &used));
	CHECK(bw_hist_get(hist, 11, &used));
	CHECK_EQ(used, 5);
}

/* BH_HC_BW_SET's limits are `bulkhead check`'s (issue #32 item 2). */
static void test_settings_ok(void)
{
	static const u32 w3[3] = { 50, 30, 20 };

	CHECK(bw_settings_ok(1000, 300000, 1, NULL, 200));
	CHECK(!bw_settings_ok(1, 1, 1, NULL, 200));      /* 1 event per 1 us period */
	CHECK(!bw_settings_ok(1000, 1, 1, NULL, 200));   /* below the forward-progress floor */
	CHECK(!bw_settings_ok(1000, 199, 1, NULL, 200)); /* one event short */
	CHECK(bw_settings_ok(1000, 200, 1, NULL, 200));  /* exactly the floor */
	CHECK(bw_settings_ok(1, 200, 1, NULL, 200));     /* 1 us is a period check accepts */
	CHECK(bw_settings_ok(1000, 1, 1, NULL, 0));      /* no floor: 1 event is enough */
	CHECK(!bw_settings_ok(1000, 2, 3, NULL, 0));     /* less than one event per vCPU */
	CHECK(bw_settings_ok(1000, 3, 3, NULL, 0));
	CHECK(!bw_settings_ok(1000, 599, 3, NULL, 200)); /* 199 for the last vCPU */
	CHECK(bw_settings_ok(1000, 600, 3, NULL, 200));
	CHECK(!bw_settings_ok(0, 300000, 1, NULL, 200)); /* period out of range */
	CHECK(!bw_settings_ok(1000001, 300000, 1, NULL, 200));
	CHECK(bw_settings_ok(1000000, 300000, 1, NULL, 200));
	CHECK(!bw_settings_ok(1000, 0x80000000ull, 1, NULL, 0)); /* 2^31: beyond the counter */
	CHECK(bw_settings_ok(1000, 0x7fffffffull, 1, NULL, 0));
	CHECK(!bw_settings_ok(1000, 300000, 0, NULL, 0)); /* no vCPU */
	/* weighted: the smallest share (20%) decides */
	CHECK(bw_settings_ok(1000, 1000, 3, w3, 200));
	CHECK(!bw_settings_ok(1000, 999, 3, w3, 200));
	/* the toolchain's own rule, on a sample: share >= max(1, floor) for every vCPU */
	for (int i = 0; i < 2000; i++) {
		u64 budget = (u64)rand() % 5000, period = (u64)rand() % 1100000;
		u32 n = 1 + (u32)rand() % 4, floor = (u32)rand() % 400, share[4];
		bool want = period >= 1 && period <= 1000000;

		bw_split(budget, n, NULL, share);
		for (u32 k = 0; k < n; k++)
			want = want && budget / n >= (floor ? floor : 1) && share[k] >= budget / n;
		CHECK_EQ(bw_settings_ok(period, budget, n, NULL, floor), want);
	}
}

static void test_counter(void)
{
	u32 start = bw_preload(1000);

	CHECK_EQ(start, 0xfffffc18u);
	CHECK_EQ(bw_counted(start, 0), 1000);      /* exactly at the overflow */
	CHECK_EQ(bw_counted(start, 7), 1007);      /* 7 events of skid */
	CHECK_EQ(bw_counted(start, start + 5), 5); /* no overflow yet */
}

int main(void)
{
	srand(7);
	test_conversion();
	test_split();
	test_clock();
	test_pool();
	test_predict();
	test_stats();
	test_counter();
	test_settings_ok();
	if (failures) {
		printf("test_bw_budget: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_bw_budget: ok\n");
	return 0;
}
