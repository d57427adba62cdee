// SPDX-License-Identifier: Apache-2.0
/*
 * bitcount: count the set bits of n random 64-bit words four ways, as
 * MiBench's bit counting compares methods: clearing the lowest set bit until
 * none is left (time depends on the data), a 4-bit table, a 256-entry table
 * built at the start of each iteration, and a branch-free parallel sum.
 * Words are sparse, dense or uniform in turn, so the first method's loop
 * length varies. Memory: 8n bytes (small: 16 Ki words, 128 KiB; large:
 * 256 Ki words, 2 MiB). Checksum: the four totals folded in order (they are
 * equal when every method is right).
 */
#include "mibench.h"

static size_t bitcount_bytes(uint32_t n)
{
	return 8 * (size_t)n;
}

static void bitcount_init(void *mem, uint32_t n, uint64_t seed)
{
	uint64_t *w = mem;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = mb_rand(&seed), b = mb_rand(&seed);

		w[i] = i % 3 == 0 ? a & b : i % 3 == 1 ? a | b : a;
	}
}

static uint32_t by_clearing(uint64_t x)
{
	uint32_t c = 0;

	for (; x; x &= x - 1)
		c++;
	return c;
}

static const uint8_t nibble_bits[16] = { 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4 };

static uint32_t by_nibbles(uint64_t x)
{
	uint32_t c = 0;

	for (; x; x >>= 4)
		c += nibble_bits[x & 15];
	return c;
}

static uint32_t by_bytes(uint64_t x, const uint8_t *table)
{
	uint32_t c = 0;

	for (int i = 0; i < 8; i++, x >>= 8)
		c += table[x & 255];
	return c;
}

static uint32_t by_parallel_sum(uint64_t x)
{
	x = (x & 0x5555555555555555ull) + ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x & 0x0f0f0f0f0f0f0f0full) + ((x >> 4) & 0x0f0f0f0f0f0f0f0full);
	x += x >> 8;
	x += x >> 16;
	x += x >> 32;
	return (uint32_t)(x & 127);
}

static uint64_t bitcount_run(void *mem, uint32_t n)
{
	const uint64_t *w = mem;
	uint64_t total[4] = { 0, 0, 0, 0 }, h = MB_FOLD_INIT;
	uint8_t table[256];
	uint32_t i;

	for (i = 0; i < 256; i++)
		table[i] = (uint8_t)(nibble_bits[i & 15] + nibble_bits[i >> 4]);
	for (i = 0; i < n; i++)
		total[0] += by_clearing(w[i]);
	for (i = 0; i < n; i++)
		total[1] += by_nibbles(w[i]);
	for (i = 0; i < n; i++)
		total[2] += by_bytes(w[i], table);
	for (i = 0; i < n; i++)
		total[3] += by_parallel_sum(w[i]);
	for (i = 0; i < 4; i++)
		h = mb_fold(h, total[i]);
	return h;
}

const struct mb_kernel mb_bitcount = { "bitcount",     16 << 10,      256 << 10,
	                               bitcount_bytes, bitcount_init, bitcount_run };
