// SPDX-License-Identifier: Apache-2.0
/*
 * The mibench kernels (guests/mibench) against independent checks, on the
 * build host under AddressSanitizer and UBSan (tests/test_mibench.py): each
 * kernel runs its small input (and, for the cheap ones, its large input)
 * and its outputs and checksum are compared with what a different method
 * computes: the C library's qsort and bsearch, the compiler's popcount, a
 * naive smoothing, bitwise CRC-32 and its check value, floating point for
 * the angles, the roots put back into their cubic, other loop orders for the
 * matrix product and the filter. Prints "mibench_check: ok (<n> checks)" or
 * the first failure, with status 1.
 */
#define _DEFAULT_SOURCE /* M_PI */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mibench.h"

static unsigned checks, failures;

#define CHECK(cond, ...)                                                           \
	do {                                                                       \
		checks++;                                                          \
		if (!(cond)) {                                                     \
			failures++;                                                \
			printf("mibench_check: FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);                                       \
			printf("\n");                                              \
			return;                                                    \
		}                                                                  \
	} while (0)

static void *prepare(const struct mb_kernel *k, uint32_t n, uint64_t seed)
{
	void *mem = aligned_alloc(64, (k->bytes(n) + 63) / 64 * 64);

	if (!mem) {
		perror("aligned_alloc");
		exit(2);
	}
	k->init(mem, n, seed);
	return mem;
}

static uint64_t fold_words(const void *p, size_t bytes)
{
	return mb_fold_bytes(MB_FOLD_INIT, p, bytes);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* A sort kernel: in[n] then out[n]; out is in sorted (the C library's). */
static void check_sort(const struct mb_kernel *k, uint32_t n)
{
	uint32_t *mem = prepare(k, n, 3), *want = malloc(4 * (size_t)n);
	uint64_t sum = k->run(mem, n);

	memcpy(want, mem, 4 * (size_t)n);
	qsort(want, n, 4, cmp_u32);
	for (uint32_t i = 1; i < n; i++)
		CHECK(mem[n + i - 1] <= mem[n + i], "%s: out[%u] > out[%u]", k->name, i - 1, i);
	CHECK(!memcmp(want, mem + n, 4 * (size_t)n), "%s: not the input's keys", k->name);
	CHECK(sum == fold_words(want, 4 * (size_t)n), "%s: checksum", k->name);
	free(want);
	free(mem);
}

static uint8_t naive_smooth(const uint8_t *img, uint32_t w, uint32_t x, uint32_t y)
{
	long num = 0, den = 0, c = img[y * w + x];

	for (long yy = (long)y - 2; yy <= (long)y + 2; yy++) {
		for (long xx = (long)x - 2; xx <= (long)x + 2; xx++) {
			long d = img[yy * (long)w + xx] - c,
			     dist2 = (xx - x) * (xx - x) + (yy - y) * (yy - y);

			if (dist2 == 0 || dist2 == 8 ||
			    labs(d) >= 24) /* the centre and the corners */
				continue;
			num += (24 * 24 - d * d) * img[yy * (long)w + xx];
			den += 24 * 24 - d * d;
		}
	}
	return den ? (uint8_t)((num + den / 2) / den) : (uint8_t)c;
}

static void check_susan(uint32_t n)
{
	uint32_t w = n, h = n / 4 * 3;
	uint8_t *mem = prepare(&mb_susan, n, 5), *want = malloc((size_t)w * h);
	uint64_t sum = mb_susan.run(mem, n);
	unsigned changed = 0;

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			want[y * w + x] = (x < 2 || y < 2 || x >= w - 2 || y >= h - 2)
			                      ? mem[y * w + x]
			                      : naive_smooth(mem, w, x, y);
	for (size_t i = 0; i < (size_t)w * h; i++)
		changed += want[i] != mem[i];
	CHECK(!memcmp(want, mem + (size_t)w * h, (size_t)w * h), "susan: output differs");
	CHECK(changed > (size_t)w * h / 4, "susan: only %u pixels smoothed", changed);
	CHECK(sum == fold_words(want, (size_t)w * h), "susan: checksum");
	free(want);
	free(mem);
}

static void check_bitcount(uint32_t n)
{
	uint64_t *mem = prepare(&mb_bitcount, n, 9), total = 0, want = MB_FOLD_INIT;

	for (uint32_t i = 0; i < n; i++)
		total += (uint64_t)__builtin_popcountll(mem[i]);
	for (int m = 0; m < 4; m++)
		want = mb_fold(want, total);
	CHECK(mb_bitcount.run(mem, n) == want, "bitcount: total is not %llu",
	      (unsigned long long)total);
	free(mem);
}

static void check_basicmath(uint32_t n)
{
	uint64_t *mem = prepare(&mb_basicmath, n, 11), *out = mem + 5 * (size_t)n;
	uint64_t sum = mb_basicmath.run(mem, n);

	for (uint32_t i = 0; i < n; i++, out += 7) {
		const uint64_t *in = mem + 5 * (size_t)i;
		unsigned __int128 x = in[0], r = out[0], q = out[1];
		double rad = (double)in[1] / 65536.0 * M_PI / 180.0;
		int64_t b = (int64_t)in[2], c = (int64_t)in[3], d = (int64_t)in[4];

		CHECK(r * r <= x && (r + 1) * (r + 1) > x, "isqrt(%llu) = %llu",
		      (unsigned long long)in[0], (unsigned long long)out[0]);
		CHECK(q * q * q <= x && (q + 1) * (q + 1) * (q + 1) > x, "icbrt(%llu) = %llu",
		      (unsigned long long)in[0], (unsigned long long)out[1]);
		CHECK(fabs((double)out[2] / 4294967296.0 - rad) < 1e-9, "radians of %llu",
		      (unsigned long long)in[1]);
		CHECK(out[3] == in[1], "degrees back: %llu, not %llu", (unsigned long long)out[3],
		      (unsigned long long)in[1]);
		for (int j = 4; j < 7; j++) {
			int64_t z = (int64_t)out[j];

			CHECK(((z + b) * z + c) * z + d == 0, "item %u: %lld is no root", i,
			      (long long)z);
			CHECK(j == 4 || (int64_t)out[j - 1] < z, "item %u: roots not increasing",
			      i);
		}
	}
	CHECK(sum == fold_words(mem + 5 * (size_t)n, 56 * (size_t)n), "basicmath: checksum");
	free(mem);
}

static void check_binarysearch(uint32_t n)
{
	uint32_t *mem = prepare(&mb_binarysearch, n, 13), *answer = mem + 2 * (size_t)n;
	uint64_t sum = mb_binarysearch.run(mem, n);
	unsigned hits = 0;

	for (uint32_t i = 0; i < n; i++) {
		const uint32_t *found = bsearch(&mem[n + i], mem, n, 4, cmp_u32);
		uint32_t want = found ? (uint32_t)(found - mem) : 0xffffffffu;

		CHECK(answer[i] == want, "binarysearch: query %u: %u, not %u", i, answer[i], want);
		hits += found != NULL;
	}
	CHECK(hits >= n / 2, "binarysearch: %u hits", hits);
	CHECK(sum == fold_words(answer, 4 * (size_t)n), "binarysearch: checksum");
	free(mem);
}

static void check_fir(uint32_t n)
{
	int32_t *mem = prepare(&mb_fir, n, 15), *want = calloc(n, 4);
	const int16_t *h = (const int16_t *)(mem + n), *x = h + 32;
	int64_t *acc = calloc(n, 8);
	uint64_t sum = mb_fir.run(mem, n);

	for (uint32_t k = 0; k < 32; k++) /* tap by tap over the whole signal */
		for (uint32_t i = k; i < n; i++)
			acc[i] += (int64_t)h[k] * x[i - k];
	for (uint32_t i = 0; i < n; i++)
		want[i] = (int32_t)(acc[i] >> 15);
	CHECK(!memcmp(want, mem, 4 * (size_t)n), "fir: output differs");
	CHECK(sum == fold_words(want, 4 * (size_t)n), "fir: checksum");
	free(acc);
	free(want);
	free(mem);
}

static void check_matmult(uint32_t n)
{
	int32_t *mem = prepare(&mb_matmult, n, 17), *want = malloc(4 * (size_t)n * n);
	const int32_t *a = mem, *b = mem + (size_t)n * n;
	uint64_t sum = mb_matmult.run(mem, n);

	for (uint32_t i = 0; i < n; i++) /* the dot-product order */
		for (uint32_t j = 0; j < n; j++) {
			int64_t s = 0;

			for (uint32_t k = 0; k < n; k++)
				s += (int64_t)a[(size_t)i * n + k] * b[(size_t)k * n + j];
			want[(size_t)i * n + j] = (int32_t)s;
		}
	CHECK(!memcmp(want, mem + 2 * (size_t)n * n, 4 * (size_t)n * n), "matmult: C differs");
	CHECK(sum == fold_words(want, 4 * (size_t)n * n), "matmult: checksum");
	free(want);
	free(mem);
}

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

static void check_crc(uint32_t n)
{
	uint8_t *mem = prepare(&mb_crc, n, 19);
	char vec[16] = "123456789";

	CHECK(mb_crc.run(mem, n) == mb_fold(MB_FOLD_INIT, crc_bitwise(mem, n)), "crc: random data");
	CHECK(mb_crc.run(vec, 9) == mb_fold(MB_FOLD_INIT, 0xcbf43926u), "crc: check value");
	free(mem);
}

static void check_countnegative(uint32_t n)
{
	int32_t *mem = prepare(&mb_countnegative, n, 21);
	uint64_t neg = 0, want;
	int64_t neg_sum = 0, total = 0;

	for (size_t i = 0; i < (size_t)n * n; i++) {
		neg += mem[i] < 0;
		neg_sum += mem[i] < 0 ? mem[i] : 0;
		total += mem[i];
	}
	want = mb_fold(
	    mb_fold(mb_fold(mb_fold(MB_FOLD_INIT, neg), (uint64_t)n * n - neg), (uint64_t)neg_sum),
	    (uint64_t)(total - neg_sum));
	CHECK(neg > (uint64_t)n * n / 3 && neg < (uint64_t)n * n * 2 / 3, "countnegative: %llu",
	      (unsigned long long)neg);
	CHECK(mb_countnegative.run(mem, n) == want, "countnegative: checksum");
	free(mem);
}

/* Every kernel: the same checksum twice (inputs untouched), another seed another. */
static void check_repeatable(const struct mb_kernel *k)
{
	void *mem = prepare(k, k->n_small, 1), *other = prepare(k, k->n_small, 2);
	uint64_t first = k->run(mem, k->n_small);

	CHECK(k->run(mem, k->n_small) == first, "%s: checksum changed on the second run", k->name);
	CHECK(k->run(other, k->n_small) != first, "%s: the seed changes nothing", k->name);
	CHECK(mb_find(k->name, strlen(k->name)) == k, "%s: not found by name", k->name);
	free(other);
	free(mem);
}

int main(void)
{
	for (size_t i = 0; i < mb_nkernels; i++)
		check_repeatable(mb_kernels[i]);
	check_sort(&mb_qsort, mb_qsort.n_small);
	check_sort(&mb_qsort, 1000); /* small partitions, duplicates unlikely */
	check_sort(&mb_insertsort, mb_insertsort.n_small);
	check_susan(mb_susan.n_small);
	check_bitcount(mb_bitcount.n_small);
	check_bitcount(mb_bitcount.n_large);
	check_basicmath(mb_basicmath.n_small);
	check_binarysearch(mb_binarysearch.n_small);
	check_fir(mb_fir.n_small);
	check_matmult(mb_matmult.n_small);
	check_crc(mb_crc.n_small);
	check_crc(mb_crc.n_large);
	check_countnegative(mb_countnegative.n_small);
	if (failures)
		return 1;
	printf("mibench_check: ok (%u checks)\n", checks);
	return 0;
}
