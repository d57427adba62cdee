// SPDX-License-Identifier: Apache-2.0
/*
 * crc (TACLeBench-style): the CRC-32 of n random bytes (reflected
 * polynomial 0xedb88320, initial value and final XOR all ones, as in
 * Ethernet and zlib), a byte at a time through a 256-entry table built at
 * the start of each iteration. A sequential read with a serial dependency
 * (small: 256 KiB; large: 4 MiB). Checksum: the CRC.
 */
#include "mibench.h"

#define CRC_POLY 0xedb88320u

static size_t crc_bytes(uint32_t n)
{
	return n;
}

static void crc_init(void *mem, uint32_t n, uint64_t seed)
{
	uint8_t *data = mem;

	for (uint32_t i = 0; i < n; i++)
		data[i] = (uint8_t)(mb_rand(&seed) >> 56);
}

static uint64_t crc_run(void *mem, uint32_t n)
{
	const uint8_t *data = mem;
	uint32_t table[256], crc = 0xffffffffu;

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t r = i;

		for (int b = 0; b < 8; b++)
			r = r & 1 ? (r >> 1) ^ CRC_POLY : r >> 1;
		table[i] = r;
	}
	for (uint32_t i = 0; i < n; i++)
		crc = (crc >> 8) ^ table[(crc ^ data[i]) & 255];
	return mb_fold(MB_FOLD_INIT, crc ^ 0xffffffffu);
}

const struct mb_kernel mb_crc = { "crc", 256 << 10, 4 << 20, crc_bytes, crc_init, crc_run };
