/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/div128.h"

static u32 div128_bits(u128 x)
{
	u64 hi = (u64)(x >> 64);

	return hi       ? 128u - (u32)__builtin_clzll(hi)
	       : (u64)x ? 64u - (u32)__builtin_clzll((u64)x)
	                : 0;
}

u128 div128(u128 n, u128 d, u128 *rem)
{
	u128 q = 0;
	u32 shift;

	if (!d || n < d) {
		if (rem)
			*rem = n;
		return 0;
	}
	if (!(n >> 64)) { /* both fit in 64 bits: one hardware division */
		u64 q64 = (u64)n / (u64)d;

		if (rem)
			*rem = (u64)n - q64 * (u64)d;
		return q64;
	}
	/* align d's top bit with n's, then one quotient bit per step */
	shift = div128_bits(n) - div128_bits(d);
	d <<= shift;
	for (u32 i = 0; i <= shift; i++) {
		q <<= 1;
		if (n >= d) {
			n -= d;
			q |= 1;
		}
		d >>= 1;
	}
	if (rem)
		*rem = n;
	return q;
}

u64 muldiv64(u64 a, u64 b, u64 d)
{
	u128 q;

	if (!d)
		return ~0ull;
	q = div128((u128)a * b, d, NULL);
	return q >> 64 ? ~0ull : (u64)q;
}
