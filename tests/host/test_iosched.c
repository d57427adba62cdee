// SPDX-License-Identifier: Apache-2.0
/* Host unit test of the I/O VM's work-conserving scheduler
 * (guests/iovm/iosched.c): exact weighted shares between flooders, an idle
 * client's share going to the others, rate caps as an absolute bound, and a
 * randomised property test. Time is counted in frame times (the device
 * serves one frame per tick while anyone is allowed): for every client and
 * every window [a, b) of a backlog period, its service is at least
 * alpha * (b - a - delta), alpha = min(w / W, 1 / cap) frames per tick and
 * delta = W - w + 1 (+ cap for a client capped below its share), its waits
 * are at most W - w + 1 frame times (uncapped), a capped client never gets
 * more than weight + t / cap in t, and the scheduler idles only when no
 * pending client is allowed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "iosched.h"

#define T 1500

static u32 rnd_state = 12345;

static u32 rnd(u32 n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

static void test_init(void)
{
	struct iosched s;
	u32 w[IOSCHED_MAX_CLIENTS + 1] = { 0 };

	CHECK(!iosched_init(&s, 0, w, NULL));
	CHECK(!iosched_init(&s, IOSCHED_MAX_CLIENTS + 1, w, NULL));
	CHECK(iosched_init(&s, 2, w, NULL)); /* weight 0 counts as 1 */
	CHECK(s.weight[0] == 1 && s.weight[1] == 1);
	CHECK(iosched_pick(&s, 0, 0) == -1);
	CHECK(iosched_next_allowed(&s, 0, 0) == ~0ull);
}

static void test_exact_shares(void)
{
	struct iosched s;
	u32 w[3] = { 1, 2, 3 }, got[3] = { 0 }, i, seq[6];

	CHECK(iosched_init(&s, 3, w, NULL));
	for (i = 0; i < 600; i++) {
		int c = iosched_pick(&s, 7, i);

		CHECK(c >= 0 && c < 3);
		if (c >= 0)
			got[c]++;
		if (i < 6 && c >= 0)
			seq[i] = (u32)c;
	}
	CHECK(got[0] == 100 && got[1] == 200 && got[2] == 300);
	/* one round: a turn of w frames each, in order */
	CHECK(seq[0] == 0 && seq[1] == 1 && seq[2] == 1 && seq[3] == 2 && seq[4] == 2 &&
	      seq[5] == 2);
}

static void test_idle_share_goes_to_others(void)
{
	struct iosched s;
	u32 w[3] = { 5, 1, 1 }, got[3] = { 0 }, i;

	CHECK(iosched_init(&s, 3, w, NULL));
	for (i = 0; i < 100; i++) {
		int c = iosched_pick(&s, 6, i); /* client 0 (weight 5) idle */

		CHECK(c == 1 || c == 2); /* never idle while someone is pending */
		if (c >= 0)
			got[c]++;
	}
	CHECK(got[1] == 50 && got[2] == 50);
	/* alone, a client gets every frame */
	for (i = 0; i < 10; i++)
		CHECK(iosched_pick(&s, 1, 100 + i) == 0);
}

static void test_cap(void)
{
	struct iosched s;
	u32 w[2] = { 1, 2 }, got = 0, i;
	u64 cap[2] = { 0, 10 };

	CHECK(iosched_init(&s, 2, w, cap));
	/* client 1 alone, capped at one frame per 10 ticks */
	for (i = 0; i < 1000; i++) {
		int c = iosched_pick(&s, 2, i);

		CHECK(c == -1 || c == 1);
		if (c == 1)
			got++;
		else
			CHECK(iosched_next_allowed(&s, 2, i) > 0);
	}
	CHECK(got >= 100 && got <= 104);               /* 1000 / 10, and a burst of 2 weights */
	CHECK(iosched_next_allowed(&s, 1, 1000) == 0); /* client 0 uncapped */
}

struct sim_client {
	u32 kind; /* 0 flood, 1 bursty, 2 idle, 3 backlogged from a random time on */
	u32 q, start, permille;
};

static u8 pend[IOSCHED_MAX_CLIENTS][T];
static u8 got[IOSCHED_MAX_CLIENTS][T];

static void check_client(const struct iosched *s, u32 i, u32 W)
{
	u64 w = s->weight[i], K = s->cap_ticks[i];
	bool capped_below = K && w * K > W; /* the cap (1 / K) is below the share (w / W) */
	u32 t = 0;

	/* a capped client never gets more than weight + L / cap in L ticks */
	if (K) {
		for (u32 a = 0; a < T; a++) {
			u64 n = 0;

			for (u32 b = a; b < T; b++) {
				n += got[i][b];
				CHECK(K * n <= 2 * K * w + (b - a + 1));
				if (K * n > 2 * K * w + (b - a + 1)) {
					fprintf(stderr,
					        "cap: client %u w %lu K %lu [%u,%u] n %lu\n", i, w,
					        K, a, b, n);
					return;
				}
			}
		}
	}
	while (t < T) {
		u32 s0, e, x;
		s64 best; /* max over a of (W or K-scaled) P[a] - rate * a */
		s64 p = 0;
		u64 D = W - w + 1 + (capped_below ? K : 0);
		u32 last;

		if (!pend[i][t]) {
			t++;
			continue;
		}
		for (s0 = t, e = t; e < T && pend[i][e]; e++)
			;
			/* windows [a, b) with s0 <= a < b <= e: f(x) = scale * P[x] - rate * x */
#define F(px, xx) (capped_below ? (s64)K * (px) - (s64)(xx) : (s64)W * (px) - (s64)w * (xx))
		best = F(0, s0);
		for (x = s0; x < e; x++) {
			s64 fb;

			p += got[i][x];
			fb = F(p, x + 1);
			/* service in [a, x] >= alpha (len - D) */
			if (fb - best < -(capped_below ? (s64)D : (s64)(w * D))) {
				CHECK(!"bounded delay");
				fprintf(stderr,
				        "client %u w %lu W %u K %lu: run [%u,%u) at %u fb %ld best "
				        "%ld D %lu\n",
				        i, w, W, K, s0, e, x, (long)fb, (long)best, D);
				return;
			}
			if (fb > best)
				best = fb;
		}
#undef F
		/* waits: from the start of the backlog and between services */
		for (last = s0, x = s0; !K && x < e; x++) {
			if (!got[i][x])
				continue;
			/* from the start: the others' W - w frames; between two: + its own */
			CHECK(x - last <= (last == s0 && x == s0 ? 0 : W - w + 1));
			last = x;
		}
		t = e;
	}
}

static void test_property(void)
{
	for (u32 trial = 0; trial < 300; trial++) {
		struct iosched s;
		struct sim_client sc[IOSCHED_MAX_CLIENTS];
		u32 n = 1 + rnd(IOSCHED_MAX_CLIENTS), w[IOSCHED_MAX_CLIENTS], W = 0;
		u64 cap[IOSCHED_MAX_CLIENTS];

		for (u32 i = 0; i < n; i++) {
			w[i] = 1 + rnd(5);
			W += w[i];
			cap[i] = rnd(4) == 0 ? 1 + rnd(3 * IOSCHED_MAX_CLIENTS * 5) : 0;
			sc[i].kind = rnd(4);
			sc[i].q = 0;
			sc[i].start = rnd(T);
			sc[i].permille = 50 + rnd(900);
		}
		CHECK(iosched_init(&s, n, w, cap));
		memset(pend, 0, sizeof(pend));
		memset(got, 0, sizeof(got));
		for (u32 t = 0; t < T; t++) {
			u32 mask = 0;
			int c;

			for (u32 i = 0; i < n; i++) {
				if (sc[i].kind == 1 && rnd(1000) < sc[i].permille && sc[i].q < 64)
					sc[i].q++;
				if (sc[i].kind == 0 || (sc[i].kind == 3 && t >= sc[i].start) ||
				    (sc[i].kind == 1 && sc[i].q))
					mask |= 1u << i;
				pend[i][t] = (u8)(mask >> i & 1);
			}
			c = iosched_pick(&s, mask, t);
			if (c < 0) {
				/* idle only when no pending client is allowed: all capped */
				for (u32 i = 0; i < n; i++)
					CHECK(!(mask >> i & 1) || cap[i]);
				CHECK(iosched_next_allowed(&s, mask, t) > 0);
				continue;
			}
			CHECK((u32)c < n && (mask >> c & 1));
			got[c][t] = 1;
			if (sc[c].kind == 1)
				sc[c].q--;
		}
		for (u32 i = 0; i < n; i++)
			check_client(&s, i, W);
		if (failures)
			return;
	}
}

int main(void)
{
	test_init();
	test_exact_shares();
	test_idle_share_goes_to_others();
	test_cap();
	test_property();
	if (failures)
		return 1;
	printf("test_iosched: ok\n");
	return 0;
}
