// SPDX-License-Identifier: Apache-2.0
/*
 * insertsort (TACLeBench-style): insertion sort of a copy of n random 32-bit
 * keys, quadratic in n and cache-resident (small: 2 Ki keys, 16 KiB; large:
 * 8 Ki keys, 64 KiB): the kernel that should not care about memory
 * interference. Checksum: the sorted keys.
 */
#include "mibench.h"

static size_t insertsort_bytes(uint32_t n)
{
	return 8 * (size_t)n;
}

static void insertsort_init(void *mem, uint32_t n, uint64_t seed)
{
	uint32_t *in = mem;

	for (uint32_t i = 0; i < n; i++)
		in[i] = (uint32_t)mb_rand(&seed);
}

static uint64_t insertsort_run(void *mem, uint32_t n)
{
	const uint32_t *in = mem;
	uint32_t *a = (uint32_t *)mem + n;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = in[i], j = i;

		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
	return mb_fold_bytes(MB_FOLD_INIT, a, 4 * (size_t)n);
}

const struct mb_kernel mb_insertsort = { "insertsort",     2 << 10,         8 << 10,
	                                 insertsort_bytes, insertsort_init, insertsort_run };
