// SPDX-License-Identifier: Apache-2.0
/*
 * matmult (TACLeBench-style): C = A B for n x n 32-bit integer matrices with
 * entries in [-64, 64), row by row (i, k, j order: A read once, B streamed
 * n times, C accumulated in place). Small: 128, 192 KiB; large: 384,
 * 1.7 MiB. Checksum: C.
 */
#include "mibench.h"

static size_t matmult_bytes(uint32_t n)
{
	return 3 * 4 * (size_t)n * n;
}

static void matmult_init(void *mem, uint32_t n, uint64_t seed)
{
	int32_t *m = mem;

	for (size_t i = 0; i < 2 * (size_t)n * n; i++)
		m[i] = (int32_t)mb_below(&seed, 128) - 64;
}

static uint64_t matmult_run(void *mem, uint32_t n)
{
	const int32_t *a = mem, *b = a + (size_t)n * n;
	int32_t *c = (int32_t *)mem + 2 * (size_t)n * n;

	for (uint32_t i = 0; i < n; i++) {
		int32_t *row = c + (size_t)i * n;

		for (uint32_t j = 0; j < n; j++)
			row[j] = 0;
		for (uint32_t k = 0; k < n; k++) {
			int32_t aik = a[(size_t)i * n + k];
			const int32_t *brow = b + (size_t)k * n;

			for (uint32_t j = 0; j < n; j++)
				row[j] += aik * brow[j];
		}
	}
	return mb_fold_bytes(MB_FOLD_INIT, c, 4 * (size_t)n * n);
}

const struct mb_kernel mb_matmult = {
	"matmult", 128, 384, matmult_bytes, matmult_init, matmult_run
};
