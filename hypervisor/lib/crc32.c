/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/crc32.h"

#define CRC32_POLY 0xEDB88320u

/* Byte-at-a-time table, built on first use (no initialised data needed). */
static u32 crc32_table[256];
static bool crc32_ready;

static void crc32_init(void)
{
	for (u32 i = 0; i < 256; i++) {
		u32 c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32_POLY : c >> 1;
		crc32_table[i] = c;
	}
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
