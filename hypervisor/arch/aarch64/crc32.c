/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/crc32.h"

#include "arch/aarch64/sysregs.h"
#include "lib/crc32.h"

static bool arch_crc32_present(void)
{
	return ((sysreg_read(id_aa64isar0_el1) >> 16) & 0xf) != 0;
}

static u32 arch_crc32_byte(u32 crc, u8 b)
{
	__asm__(".arch_extension crc\n\tcrc32b %w0, %w0, %w1" : "+r"(crc) : "r"((u32)b));
	return crc;
}

static u32 arch_crc32_dword(u32 crc, u64 d)
{
	__asm__(".arch_extension crc\n\tcrc32x %w0, %w0, %x1" : "+r"(crc) : "r"(d));
	return crc;
}

u32 arch_crc32_update(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;

	if (!arch_crc32_present())
		return crc32_update(crc, buf, len);
	crc = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		crc = arch_crc32_byte(crc, *p++);
		len--;
	}
	/* 64 bytes a step: four LDP and eight CRC32X, a quarter of the loop
	 * overhead of one word a step over a boot payload of tens of MiB */
	for (; len >= 64; len -= 64, p += 64) {
		const u64 *w = (const void *)p;

		crc = arch_crc32_dword(crc, w[0]);
		crc = arch_crc32_dword(crc, w[1]);
		crc = arch_crc32_dword(crc, w[2]);
		crc = arch_crc32_dword(crc, w[3]);
		crc = arch_crc32_dword(crc, w[4]);
		crc = arch_crc32_dword(crc, w[5]);
		crc = arch_crc32_dword(crc, w[6]);
		crc = arch_crc32_dword(crc, w[7]);
	}
	for (; len >= 8; len -= 8, p += 8)
		crc = arch_crc32_dword(crc, *(const u64 *)(const void *)p);
	while (len--)
		crc = arch_crc32_byte(crc, *p++);
	return ~crc;
}
