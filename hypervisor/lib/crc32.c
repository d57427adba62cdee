/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/crc32.h"

#define CRC32_POLY 0xEDB88320u

/* Byte-at-a-time table, built on first use (no initialised data needed).
 * The CRC is linear: the entries of the eight single bits are computed bit
 * by bit, every other one as the XOR of its lowest bit's and the rest's
 * (a few hundred instructions instead of 256 x 8 steps, at boot). */
static u32 crc32_table[256];
static bool crc32_ready;

static void crc32_init(void)
{
	for (u32 b = 1; b < 256; b <<= 1) {
		u32 c = b;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32_POLY : c >> 1;
		crc32_table[b] = c;
	}
	for (u32 i = 3; i < 256; i++)
		if (i & (i - 1))
			crc32_table[i] = crc32_table[i & (i - 1)] ^ crc32_table[i & -i];
	crc32_ready = true;
}

u32 crc32_update(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;

	if (!crc32_ready)
		crc32_init();
	crc = ~crc;
	while (len--)
		crc = crc32_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
