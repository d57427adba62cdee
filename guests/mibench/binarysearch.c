// SPDX-License-Identifier: Apache-2.0
/*
 * binarysearch (TACLeBench-style): look n keys up in a sorted table of n
 * distinct 32-bit keys; half of the queries are in the table. Each lookup
 * is a chain of dependent loads spread over the table (small: 64 Ki keys,
 * 768 KiB with queries and answers; large: 512 Ki keys, 6 MiB). Output: the
 * index found, or 0xffffffff. Checksum: the answers.
 */
#include "mibench.h"

static size_t binarysearch_bytes(uint32_t n)
{
	return 12 * (size_t)n; /* table, queries, answers */
}

static void binarysearch_init(void *mem, uint32_t n, uint64_t seed)
{
	uint32_t *table = mem, *query = table + n, key = 0;

	for (uint32_t i = 0; i < n; i++) {
		key += 1 + mb_below(&seed, 8);
		table[i] = key;
	}
	for (uint32_t i = 0; i < n; i++)
		query[i] = i % 2 ? table[mb_below(&seed, n)] : mb_below(&seed, key + 8);
}

static uint64_t binarysearch_run(void *mem, uint32_t n)
{
	const uint32_t *table = mem, *query = table + n;
	uint32_t *answer = (uint32_t *)mem + 2 * (size_t)n;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t lo = 0, hi = n, q = query[i];

		while (lo < hi) { /* the first entry >= q is in [lo, hi] */
			uint32_t mid = lo + (hi - lo) / 2;

			if (table[mid] < q)
				lo = mid + 1;
			else
				hi = mid;
		}
		answer[i] = lo < n && table[lo] == q ? lo : 0xffffffffu;
	}
	return mb_fold_bytes(MB_FOLD_INIT, answer, 4 * (size_t)n);
}

const struct mb_kernel mb_binarysearch = {
	"binarysearch", 64 << 10, 512 << 10, binarysearch_bytes, binarysearch_init, binarysearch_run
};
