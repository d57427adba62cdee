/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the color arithmetic (hypervisor/isolation/color.c):
 *  - color_next / color_prev against brute force over small address widths
 *    (random masks and values, every address or random addresses);
 *  - 64-bit properties: results are compliant, on the right side of the
 *    address, nothing compliant lies in between (checked with the other
 *    direction), and the sentinel appears exactly when nothing exists;
 *  - the set versions against the per-pattern minimum/maximum;
 *  - extract/deposit, color_all and the list formatter.
 * Built with AddressSanitizer and UBSan by tests/test_host_c.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isolation/color.h"

static int failures;
static unsigned long checks;
#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		checks++;                                                                  \
		if (!(cond)) {                                                             \
			if (failures++ < 20) {                                             \
				fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
				fprintf(stderr, __VA_ARGS__);                              \
				fprintf(stderr, "\n");                                     \
			}                                                                  \
		}                                                                          \
	} while (0)

static u64 rng_state = 0x9e3779b97f4a7c15ull;

static u64 rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* A random mask of `bits` width with about `density` in 8 bits set. */
static u64 rnd_mask(unsigned width, unsigned density)
{
	u64 m = 0;

	for (unsigned b = 0; b < width; b++)
		if (rnd() % 8 < density)
			m |= 1ull << b;
	return m;
}

static u64 brute_next(u64 mask, u64 value, u64 addr, unsigned width)
{
	for (u64 a = addr; a < (1ull << width); a++)
		if ((a & mask) == value)
			return a;
	/* the pattern repeats every 2^width: the next one is one period up */
	return (1ull << width) | value;
}

static u64 brute_prev(u64 mask, u64 value, u64 addr)
{
	for (u64 a = addr + 1; a-- > 0;)
		if ((a & mask) == value)
			return a;
	return COLOR_NONE;
}

/* Exhaustive over every address for a few masks at width 12. */
static void test_exhaustive_small(void)
{
	const unsigned width = 12;

	for (int round = 0; round < 60; round++) {
		u64 mask = rnd_mask(width, (unsigned)(round % 8) + 1);
		u64 value = rnd() & mask;
		u64 n = COLOR_NONE, p = COLOR_NONE;

		/* sweep down for next, up for prev: incremental brute force */
		for (u64 a = (1ull << width); a-- > 0;) {
			if ((a & mask) == value)
				n = a;
			u64 want = n == COLOR_NONE ? ((1ull << width) | value) : n;
			CHECK(color_next(mask, value, a) == want, "next m=%llx v=%llx a=%llx",
			      (unsigned long long)mask, (unsigned long long)value,
			      (unsigned long long)a);
		}
		for (u64 a = 0; a < (1ull << width); a++) {
			if ((a & mask) == value)
				p = a;
			CHECK(color_prev(mask, value, a) == p, "prev m=%llx v=%llx a=%llx",
			      (unsigned long long)mask, (unsigned long long)value,
			      (unsigned long long)a);
		}
	}
}

/* Random masks, values and addresses at widths 20-24 against brute force. */
static void test_random_brute(void)
{
	for (int round = 0; round < 200; round++) {
		unsigned width = 20 + (unsigned)(rnd() % 5);
		u64 mask = rnd_mask(width, 1 + (unsigned)(rnd() % 7));
		u64 value = rnd() & mask;

		/* page-style masks half of the time: nothing below bit 12 */
		if (round & 1) {
			mask &= ~0xfffull;
			value &= mask;
		}
		for (int k = 0; k < 8; k++) {
			u64 addr = rnd() & ((1ull << width) - 1);
			u64 n = color_next(mask, value, addr);
			u64 p = color_prev(mask, value, addr);

			CHECK(n == brute_next(mask, value, addr, width),
			      "next w=%u m=%llx v=%llx a=%llx got %llx", width,
			      (unsigned long long)mask, (unsigned long long)value,
			      (unsigned long long)addr, (unsigned long long)n);
			CHECK(p == brute_prev(mask, value, addr),
			      "prev w=%u m=%llx v=%llx a=%llx got %llx", width,
			      (unsigned long long)mask, (unsigned long long)value,
			      (unsigned long long)addr, (unsigned long long)p);
		}
	}
}

/* Full 64-bit masks: properties instead of brute force. */
static void test_random_64(void)
{
	for (int round = 0; round < 100000; round++) {
		u64 mask = rnd_mask(64, 1 + (unsigned)(rnd() % 7));
		u64 value = rnd() & mask;
		u64 addr = rnd();
		u64 n, p;

		if (round % 4 == 0)
			addr >>= rnd() % 64; /* small addresses too */
		if (round % 16 == 1)
			addr = ~0ull - (rnd() & 0xffff); /* near the top */
		n = color_next(mask, value, addr);
		p = color_prev(mask, value, addr);
		if (n != COLOR_NONE) {
			CHECK((n & mask) == value && n >= addr, "next not compliant m=%llx a=%llx",
			      (unsigned long long)mask, (unsigned long long)addr);
			/* nothing compliant in [addr, n): the previous one is below addr */
			if (n > addr) {
				u64 before = color_prev(mask, value, n - 1);
				CHECK(before == COLOR_NONE || before < addr,
				      "gap before next m=%llx v=%llx a=%llx n=%llx b=%llx",
				      (unsigned long long)mask, (unsigned long long)value,
				      (unsigned long long)addr, (unsigned long long)n,
				      (unsigned long long)before);
			}
		} else {
			/* none above: the compliant maximum (all free bits set) is below */
			u64 top = ~mask | value;
			CHECK(top < addr, "next: none but %llx >= %llx", (unsigned long long)top,
			      (unsigned long long)addr);
		}
		if (p != COLOR_NONE) {
			CHECK((p & mask) == value && p <= addr, "prev not compliant m=%llx a=%llx",
			      (unsigned long long)mask, (unsigned long long)addr);
			if (p < addr) {
				u64 after = color_next(mask, value, p + 1);
				CHECK(after == COLOR_NONE || after > addr,
				      "gap after prev m=%llx a=%llx", (unsigned long long)mask,
				      (unsigned long long)addr);
			}
		} else {
			/* none below: the compliant minimum (value itself) is above */
			CHECK(value > addr, "prev: none but %llx <= %llx",
			      (unsigned long long)value, (unsigned long long)addr);
		}
	}
	/* corner cases */
	CHECK(color_next(0, 0, 1234) == 1234, "empty mask");
	CHECK(color_prev(0, 0, 1234) == 1234, "empty mask");
	CHECK(color_next(BIT(63), 0, BIT(63)) == COLOR_NONE, "top bit");
	CHECK(color_prev(BIT(63), BIT(63), BIT(63) - 1) == COLOR_NONE, "top bit");
	CHECK(color_next(BIT(63), BIT(63), 5) == BIT(63), "top bit");
	CHECK(color_prev(BIT(63), 0, ~0ull) == BIT(63) - 1, "top bit");
	CHECK(color_next(~0ull, 0, 1) == COLOR_NONE, "full mask");
	CHECK(color_prev(~0ull, 5, 4) == COLOR_NONE, "full mask");
	CHECK(color_prev(~0ull, 5, 6) == 5, "full mask");
	CHECK(color_next(0xf000, 0x3000, 0x4000) == 0x13000, "llc");
	CHECK(color_prev(0xf000, 0x3000, 0x12fff) == 0x3fff, "llc");
	CHECK(color_next(BIT(31) | 0x6000, BIT(31), 0x1000) == BIT(31), "scattered");
	CHECK(color_prev(BIT(31) | 0x6000, 0, BIT(31) + 5) == BIT(31) - 1 - 0x6000, "scattered");
}

static void test_sets(void)
{
	for (int round = 0; round < 20000; round++) {
		u64 values[16];
		u64 mask = rnd_mask(40, 1 + (unsigned)(rnd() % 4)) & ~0xfffull;
		u32 nvalues = 1 + (u32)(rnd() % 16);
		struct cfg_color c = { .mask = mask, .nvalues = nvalues, .values = values };
		u64 addr = rnd() & ((1ull << 42) - 1);
		u64 want_n = COLOR_NONE, want_p = COLOR_NONE;

		for (u32 i = 0; i < nvalues; i++) {
			values[i] = rnd() & mask;
			u64 n = color_next(mask, values[i], addr);
			u64 p = color_prev(mask, values[i], addr);
			if (n < want_n)
				want_n = n;
			if (p != COLOR_NONE && (want_p == COLOR_NONE || p > want_p))
				want_p = p;
		}
		CHECK(color_set_next(&c, addr) == want_n, "set next");
		CHECK(color_set_prev(&c, addr) == want_p, "set prev");
		CHECK(color_set_match(&c, want_n), "set match");
		CHECK(want_p == COLOR_NONE || color_set_match(&c, want_p), "set match");
		CHECK(color_set_match(&c, addr) == (color_set_next(&c, addr) == addr), "match");
	}
	/* walking pages of a set visits exactly the compliant pages, in order */
	{
		static const u64 vals[] = { 0x0000, 0x3000, 0x8000 | 0x20000 };
		struct cfg_color c = { .mask = 0x3f000, .nvalues = 3, .values = vals };
		u64 a = 0x40000000, count = 0;

		for (u64 page = 0x40000000; page < 0x40400000; page += 0x1000) {
			bool ok = color_set_match(&c, page);
			if (ok) {
				a = color_set_next(&c, count ? a + 0x1000 : 0x40000000);
				CHECK(a == page, "walk %llx != %llx", (unsigned long long)a,
				      (unsigned long long)page);
				count++;
			}
		}
		CHECK(count == 3 * (0x400000 / 0x40000), "walk count %llu",
		      (unsigned long long)count);
	}
}

static void test_bits(void)
{
	char buf[64];

	CHECK(color_extract(0x5000, 0xf000) == 5, "extract");
	CHECK(color_extract(BIT(31) | BIT(13), BIT(31) | BIT(14) | BIT(13)) == 5, "extract");
	CHECK(color_deposit(5, BIT(31) | BIT(14) | BIT(13)) == (BIT(31) | BIT(13)), "deposit");
	for (int i = 0; i < 10000; i++) {
		u64 m = rnd_mask(48, 2);
		u64 x = rnd();
		CHECK(color_deposit(color_extract(x, m), m) == (x & m), "round trip");
	}
	CHECK(color_all(0) == 1, "all");
	CHECK(color_all(0xf000) == 0xffff, "all");
	CHECK(color_all(0x3f000) == ~0ull, "all");
	CHECK(color_all(0x30000) == 0xf, "all");

	color_format_list(buf, sizeof(buf), 0x10f);
	CHECK(!strcmp(buf, "0-3,8"), "%s", buf);
	color_format_list(buf, sizeof(buf), 0);
	CHECK(!strcmp(buf, "none"), "%s", buf);
	color_format_list(buf, sizeof(buf), ~0ull);
	CHECK(!strcmp(buf, "0-63"), "%s", buf);
	color_format_list(buf, sizeof(buf), 0x5555);
	CHECK(!strcmp(buf, "0,2,4,6,8,10,12,14"), "%s", buf);
	CHECK(color_format_list(buf, 5, 0x5555) == 18 && !strcmp(buf, "0,2,"), "%s", buf);
	CHECK(color_format_list(buf, sizeof(buf), BIT(63) | 1) == 4 && !strcmp(buf, "0,63"), "%s",
	      buf);
}

/* Run-time sets from bitmaps (recoloring): a page matches exactly when its
 * LLC and bank colors are in the bitmaps; color_sets_meet agrees with a
 * page-by-page search. Disjoint and overlapping LLC/bank bits. */
static void test_rt_sets(void)
{
	static const u64 masks[][2] = { { 0xf000, 0x30000 }, { 0xf000, 0x18000 }, { 0x3000, 0 } };
	static struct color_rt_set s[2];

	for (unsigned m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		u64 lm = masks[m][0], bm = masks[m][1];

		for (int iter = 0; iter < 300; iter++) {
			u64 want[2][2];
			const char *err[2];
			bool meet = false;

			for (int k = 0; k < 2; k++) {
				want[k][0] = rnd() & color_all(lm);
				want[k][1] = iter % 3 ? rnd() & color_all(bm) : 0;
				err[k] = color_rt_build(&s[k], want[k][0], want[k][1], lm, bm);
			}
			if (err[0] || err[1])
				continue;
			for (u64 a = 0; a < (1ull << 18); a += 0x1000) {
				bool in[2];

				for (int k = 0; k < 2; k++) {
					u64 l = want[k][0] ? want[k][0] : color_all(lm);
					u64 b = want[k][1] ? want[k][1] : color_all(bm);

					in[k] = (l >> color_extract(a, lm) & 1) &&
					        (b >> color_extract(a, bm) & 1);
					CHECK(color_set_match(&s[k].set, a) == in[k],
					      "rt set %lx/%lx page %lx", l, b, a);
				}
				meet |= in[0] && in[1];
			}
			CHECK(color_sets_meet(&s[0].set, &s[1].set) == meet, "meet %lx %lx",
			      want[0][0], want[1][0]);
		}
	}
	CHECK(color_rt_build(&s[0], 0, 0, 0xf000, 0x30000) != NULL, "every color refused");
	CHECK(color_rt_build(&s[0], BIT(16), 0, 0xf000, 0) != NULL, "beyond the bits refused");
	CHECK(color_rt_build(&s[0], 1, 1, 0, 0) != NULL, "no coloring refused");
	/* LLC bit 15 = 1 (colors 8-15) and bank bit 15 = 0 (banks 0, 2) never agree */
	CHECK(color_rt_build(&s[0], 0xff00, 0x5, 0xf000, 0x18000) != NULL, "disagreement refused");
	CHECK(color_rt_build(&s[0], 0xff, 0, 0xf000, 0x30000) == NULL && s[0].set.mask == 0xf000 &&
	          s[0].set.nvalues == 8,
	      "LLC only: bank bits left out");
}

/* color_parse_list: the inverse of color_format_list; malformed lists. */
static void test_parse_list(void)
{
	static const char *bad[] = { "",   "-",  "3-", "-3",   "5-2",   "64",
		                     "1,", ",1", "1x", "1000", "0-3,,4" };
	char buf[200];

	for (int i = 0; i < 2000; i++) {
		u64 b = rnd() & rnd(), got = 0;
		const char *s = buf;

		if (!b)
			continue;
		color_format_list(buf, sizeof(buf), b);
		CHECK(color_parse_list(&s, &got) && got == b && !*s, "round trip %s", buf);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *s = bad[i];
		u64 got = 0;

		CHECK(!color_parse_list(&s, &got), "accepted '%s'", bad[i]);
	}
	{
		const char *s = "4-7 1";
		u64 got = 0;

		CHECK(color_parse_list(&s, &got) && got == 0xf0 && *s == ' ', "stops at a space");
	}
}

int main(void)
{
	test_exhaustive_small();
	test_random_brute();
	test_random_64();
	test_sets();
	test_bits();
	test_rt_sets();
	test_parse_list();
	if (failures) {
		printf("test_color: %d of %lu checks FAILED\n", failures, checks);
		return 1;
	}
	printf("test_color: ok (%lu checks)\n", checks);
	return 0;
}
