// SPDX-License-Identifier: Apache-2.0
/* The generator, the checksum and the table of kernels (mibench.h). */
#include "mibench.h"

uint64_t mb_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t mb_below(uint64_t *state, uint32_t bound)
{
	return (uint32_t)(((mb_rand(state) >> 32) * bound) >> 32);
}

uint64_t mb_fold(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0x100000001b3ull;
}

/* The outputs are bytes or 32-bit words: read them as 64-bit words legally. */
typedef uint64_t __attribute__((may_alias)) mb_word;

uint64_t mb_fold_bytes(uint64_t h, const void *p, size_t n)
{
	const mb_word *w = p;
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8)
		h = mb_fold(h, w[i / 8]);
	for (; i < n; i++)
		h = mb_fold(h, b[i]);
	return h;
}

const struct mb_kernel *const mb_kernels[] = {
	&mb_susan, &mb_qsort,   &mb_bitcount, &mb_basicmath,  &mb_binarysearch,
	&mb_fir,   &mb_matmult, &mb_crc,      &mb_insertsort, &mb_countnegative,
};
const size_t mb_nkernels = sizeof(mb_kernels) / sizeof(mb_kernels[0]);

const struct mb_kernel *mb_find(const char *name, size_t len)
{
	for (size_t i = 0; i < mb_nkernels; i++) {
		const char *k = mb_kernels[i]->name;
		size_t j = 0;

		while (j < len && k[j] && k[j] == name[j])
			j++;
		if (j == len && !k[j])
			return mb_kernels[i];
	}
	return NULL;
}
