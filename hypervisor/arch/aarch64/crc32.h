/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRC-32 (the zlib/IEEE polynomial, as lib/crc32.c) with the Armv8 CRC32
 * instructions where the CPU has them (ID_AA64ISAR0_EL1.CRC32; every
 * Cortex-A53/A55/A72/A76), eight bytes per instruction; otherwise
 * lib/crc32.c's table. Same results as crc32_update().
 */
#ifndef ARCH_AARCH64_CRC32_H
#define ARCH_AARCH64_CRC32_H

#include "lib/types.h"

u32 arch_crc32_update(u32 crc, const void *buf, size_t len);

#endif
