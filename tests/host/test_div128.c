/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of lib/div128.c against the host compiler's 128-bit
 * division: edge cases (0, 1, powers of two, all ones, a divisor above 64
 * bits, a quotient above 64 bits) and a million pseudo-random pairs of
 * every width; muldiv64 saturates where the quotient needs more than 64 bits. */
#include <stdio.h>

#include "check.h"
#include "lib/div128.h"

static u64 rng = 0x9e3779b97f4a7c15ull;

static u64 next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static u128 wide(u32 bits)
{
	u128 x = ((u128)next() << 64) | next();

	return bits >= 128 ? x : x & (((u128)1 << bits) - 1);
}

static void check_one(u128 n, u128 d)
{
	u128 r = 0, q = div128(n, d, &r);

	CHECK(q == n / d && r == n % d);
	CHECK(div128(n, d, NULL) == q);
}

int main(void)
{
	const u128 ones = ~(u128)0;
	const u128 edge[] = { 0,
		              1,
		              2,
		              3,
		              999999999,
		              1000000,
		              (u128)1 << 63,
		              ((u128)1 << 64) - 1,
		              (u128)1 << 64,
		              ((u128)1 << 64) + 1,
		              (u128)1 << 100,
		              ones - 1,
		              ones };
	u128 r = 7;

	CHECK(div128(5, 0, &r) == 0 && r == 5);
	for (u32 i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		for (u32 j = 0; j < sizeof(edge) / sizeof(edge[0]); j++)
			if (edge[j])
				check_one(edge[i], edge[j]);
	for (u32 i = 0; i < 1000000; i++) {
		u128 d = wide(1 + (u32)(next() % 128));

		if (d)
			check_one(wide(1 + (u32)(next() % 128)), d);
	}
	CHECK(muldiv64(1000, 3, 7) == 428);
	CHECK(muldiv64(~0ull, ~0ull, 1) == ~0ull);     /* saturated */
	CHECK(muldiv64(~0ull, ~0ull, ~0ull) == ~0ull); /* exactly 2^64 - 1 */
	CHECK(muldiv64(1ull << 40, 1ull << 40, 1ull << 20) == 1ull << 60);
	CHECK(muldiv64(5, 5, 0) == ~0ull);
	if (failures) {
		printf("test_div128: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_div128: ok\n");
	return 0;
}
