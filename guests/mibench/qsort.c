// SPDX-License-Identifier: Apache-2.0
/*
 * qsort: sort n random 32-bit keys (a copy of the input, so every iteration
 * sorts the same data) with a quicksort: median-of-three pivot, the smaller
 * part first and the larger one iteratively (a bounded stack), insertion sort
 * below 16 keys. Memory: input and output, 8n bytes (small: 64 Ki keys,
 * 512 KiB; large: 1 Mi keys, 8 MiB), far beyond L1. Checksum: the sorted
 * keys.
 */
#include "mibench.h"

#define QSORT_CUTOFF 16
#define QSORT_DEPTH  64 /* > log2 of any n, since the larger part waits */

static size_t qsort_bytes(uint32_t n)
{
	return 8 * (size_t)n;
}

static void qsort_init(void *mem, uint32_t n, uint64_t seed)
{
	uint32_t *in = mem;

	for (uint32_t i = 0; i < n; i++)
		in[i] = (uint32_t)(mb_rand(&seed) >> 32);
}

static void swap(uint32_t *a, uint32_t *b)
{
	uint32_t t = *a;

	*a = *b;
	*b = t;
}

static void insertion(uint32_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint32_t v = a[i];
		size_t j = i;

		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/* Partition a[0..n) (n >= 3) around the median of three; returns its index. */
static size_t partition(uint32_t *a, size_t n)
{
	size_t mid = n / 2, i = 0, j = n - 1;
	uint32_t pivot;

	if (a[mid] < a[0])
		swap(&a[mid], &a[0]);
	if (a[n - 1] < a[0])
		swap(&a[n - 1], &a[0]);
	if (a[n - 1] < a[mid])
		swap(&a[n - 1], &a[mid]);
	pivot = a[mid];
	swap(&a[mid], &a[n - 2]); /* a[0] <= pivot <= a[n - 1] are sentinels */
	j = n - 2;
	for (;;) {
		while (a[++i] < pivot)
			;
		while (pivot < a[--j])
			;
		if (i >= j)
			break;
		swap(&a[i], &a[j]);
	}
	swap(&a[i], &a[n - 2]);
	return i;
}

static uint64_t qsort_run(void *mem, uint32_t n)
{
	const uint32_t *in = mem;
	uint32_t *out = (uint32_t *)mem + n;
	uint32_t *lo_stack[QSORT_DEPTH];
	size_t n_stack[QSORT_DEPTH], top = 0, len = n;
	uint32_t *a = out;

	for (uint32_t i = 0; i < n; i++)
		out[i] = in[i];
	for (;;) {
		while (len > QSORT_CUTOFF) {
			size_t p = partition(a, len), left = p, right = len - p - 1;

			if (left < right) { /* the smaller part now, the larger one later */
				lo_stack[top] = a + p + 1;
				n_stack[top++] = right;
				len = left;
			} else {
				lo_stack[top] = a;
				n_stack[top++] = left;
				a += p + 1;
				len = right;
			}
		}
		insertion(a, len);
		if (!top)
			break;
		a = lo_stack[--top];
		len = n_stack[top];
	}
	return mb_fold_bytes(MB_FOLD_INIT, out, 4 * (size_t)n);
}

const struct mb_kernel mb_qsort = {
	"qsort", 64 << 10, 1 << 20, qsort_bytes, qsort_init, qsort_run
};
