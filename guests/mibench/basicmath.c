// SPDX-License-Identifier: Apache-2.0
/*
 * basicmath: the arithmetic of MiBench's basic math in integers (the
 * bare-metal guests have no floating point): for each of n items the integer
 * square root and cube root of a random 64-bit value (bit by bit), an angle
 * in degrees (Q16) to radians (Q32) and back, and the three integer roots of
 * a cubic x^3 + bx^2 + cx + d with distinct roots in [-4096, 4096] (the
 * turning points from an integer square root, then a binary search on each
 * monotonic piece). Mostly arithmetic and branches; memory: 40 bytes of
 * input and 56 of output per item (small: 4 Ki items, 384 KiB; large:
 * 32 Ki items, 3 MiB). Checksum: every output.
 */
#include "mibench.h"

#define MB_PI_Q32  13493037705ull /* pi * 2^32, rounded */
#define ROOT_LIMIT 4096
#define BASIC_OUTS 7

struct basic_in {
	uint64_t x;
	uint64_t deg_q16; /* [0, 360 * 2^16) */
	int64_t b, c, d;
};

static size_t basicmath_bytes(uint32_t n)
{
	return (size_t)n * (sizeof(struct basic_in) + BASIC_OUTS * 8);
}

static void basicmath_init(void *mem, uint32_t n, uint64_t seed)
{
	struct basic_in *in = mem;

	for (uint32_t i = 0; i < n; i++) {
		int64_t r1 = (int64_t)mb_below(&seed, 2 * ROOT_LIMIT - 2) - ROOT_LIMIT;
		int64_t r2 = r1 + 1 + mb_below(&seed, (uint32_t)(ROOT_LIMIT - r1 - 1));
		int64_t r3 = r2 + 1 + mb_below(&seed, (uint32_t)(ROOT_LIMIT - r2));
		uint64_t x = mb_rand(&seed);

		in[i].x = x >> mb_below(&seed, 64);
		in[i].deg_q16 = mb_below(&seed, 360u << 16);
		in[i].b = -(r1 + r2 + r3);
		in[i].c = r1 * r2 + r1 * r3 + r2 * r3;
		in[i].d = -r1 * r2 * r3;
	}
}

static uint64_t isqrt(uint64_t x)
{
	uint64_t root = 0, bit = 1ull << 62;

	while (bit > x)
		bit >>= 2;
	for (; bit; bit >>= 2) {
		if (x >= root + bit) {
			x -= root + bit;
			root = (root >> 1) + bit;
		} else {
			root >>= 1;
		}
	}
	return root;
}

static uint64_t icbrt(uint64_t x)
{
	uint64_t y = 0;

	for (int s = 63; s >= 0; s -= 3) {
		uint64_t b;

		y <<= 1;
		b = 3 * y * (y + 1) + 1;
		if ((x >> s) >= b) {
			x -= b << s;
			y++;
		}
	}
	return y;
}

static int64_t poly(const struct basic_in *p, int64_t x)
{
	return ((x + p->b) * x + p->c) * x + p->d;
}

/* x lies at or left of the first turning point: 3x + b <= 0 and p'(x) >= 0. */
static int left_of_turn(const struct basic_in *p, int64_t x)
{
	return 3 * x + p->b <= 0 && 3 * x * x + 2 * p->b * x + p->c >= 0;
}

static int right_of_turn(const struct basic_in *p, int64_t x)
{
	return 3 * x + p->b >= 0 && 3 * x * x + 2 * p->b * x + p->c >= 0;
}

/* Smallest x in [lo, hi] with sign * p(x) >= 0 (monotonic there), else hi. */
static int64_t first_crossing(const struct basic_in *p, int64_t lo, int64_t hi, int sign)
{
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (sign * poly(p, mid) >= 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void cubic_roots(const struct basic_in *p, uint64_t *out)
{
	int64_t s = (int64_t)isqrt((uint64_t)(p->b * p->b - 3 * p->c));
	int64_t t1 = (-p->b - s) / 3, t2 = (-p->b + s) / 3;

	while (!left_of_turn(p, t1))
		t1--;
	while (left_of_turn(p, t1 + 1))
		t1++;
	while (!right_of_turn(p, t2))
		t2++;
	while (right_of_turn(p, t2 - 1))
		t2--;
	out[0] = (uint64_t)first_crossing(p, -ROOT_LIMIT, t1, 1);
	out[1] = (uint64_t)first_crossing(p, t1 + 1, t2 - 1, -1);
	out[2] = (uint64_t)first_crossing(p, t2, ROOT_LIMIT, 1);
}

static uint64_t basicmath_run(void *mem, uint32_t n)
{
	const struct basic_in *in = mem;
	uint64_t *out = (uint64_t *)(in + n);

	for (uint32_t i = 0; i < n; i++, out += BASIC_OUTS) {
		uint64_t rad = in[i].deg_q16 * MB_PI_Q32 / (180u << 16);

		out[0] = isqrt(in[i].x);
		out[1] = icbrt(in[i].x);
		out[2] = rad;
		out[3] = (rad * (180u << 16) + MB_PI_Q32 / 2) / MB_PI_Q32;
		cubic_roots(&in[i], &out[4]);
	}
	return mb_fold_bytes(MB_FOLD_INIT, in + n, (size_t)n * BASIC_OUTS * 8);
}

const struct mb_kernel mb_basicmath = { "basicmath",     4 << 10,        32 << 10,
	                                basicmath_bytes, basicmath_init, basicmath_run };
