// SPDX-License-Identifier: Apache-2.0
/*
 * countnegative (TACLeBench-style): over an n x n matrix of 32-bit values
 * in [-1000, 1000], count the negative and the non-negative entries and sum
 * each kind. One pass of plain loads (small: 256 x 256, 256 KiB; large:
 * 1024 x 1024, 4 MiB). Checksum: the two counts and the two sums.
 */
#include "mibench.h"

static size_t countnegative_bytes(uint32_t n)
{
	return 4 * (size_t)n * n;
}

static void countnegative_init(void *mem, uint32_t n, uint64_t seed)
{
	int32_t *m = mem;

	for (size_t i = 0; i < (size_t)n * n; i++)
		m[i] = (int32_t)mb_below(&seed, 2001) - 1000;
}

static uint64_t countnegative_run(void *mem, uint32_t n)
{
	const int32_t *m = mem;
	uint64_t negatives = 0, others = 0;
	int64_t neg_sum = 0, other_sum = 0;

	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t j = 0; j < n; j++) {
			int32_t v = m[(size_t)i * n + j];

			if (v < 0) {
				negatives++;
				neg_sum += v;
			} else {
				others++;
				other_sum += v;
			}
		}
	}
	return mb_fold(
	    mb_fold(mb_fold(mb_fold(MB_FOLD_INIT, negatives), others), (uint64_t)neg_sum),
	    (uint64_t)other_sum);
}

const struct mb_kernel mb_countnegative = {
	"countnegative", 256, 1024, countnegative_bytes, countnegative_init, countnegative_run
};
