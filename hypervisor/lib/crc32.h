/* SPDX-License-Identifier: Apache-2.0 */
/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320): the checksum of the
 * boot-image payload (core/boot/payload.c); same values as zlib's crc32. */
#ifndef LIB_CRC32_H
#define LIB_CRC32_H

#include "lib/types.h"

/* Continues a CRC: crc32_update(0, buf, n) is the CRC of buf; feeding a
 * buffer in pieces gives the same result. */
u32 crc32_update(u32 crc, const void *buf, size_t len);

#endif
