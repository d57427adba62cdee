/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The boot-image payload: every guest image of the configuration, packed by
 * the toolchain (bulkhead/image.py) behind a table and linked into the
 * hypervisor image (core/boot/payload.S). Little-endian:
 *
 *   header   struct payload_header, then count x struct payload_entry;
 *            header_crc = CRC-32 of those bytes with header_crc = 0
 *   data     from data_offset (4 KiB aligned): entry i at data_offset +
 *            offset_i (4 KiB aligned), size_i bytes, CRC-32 crc_i
 *
 * At boot the data is moved to load_pa (the platform's staging window),
 * where the VMs' cfg_image.src_pa point; see docs/boot.md. With
 * PAYLOAD_PLACED (the boot ELF, bulkhead/generate/image.py) the boot loader
 * has already put the data at load_pa and every cfg_image marked placed at
 * its final address in VM memory: nothing is moved or copied at boot.
 */
#ifndef CORE_PAYLOAD_H
#define CORE_PAYLOAD_H

#include "lib/types.h"

#define PAYLOAD_MAGIC      "BHPAYLD1"
#define PAYLOAD_VERSION    1u
#define PAYLOAD_NAME_LEN   32u
#define PAYLOAD_MAX_IMAGES 1024u
#define PAYLOAD_PLACED     0x1u /* flags: data placed by the boot loader */

struct payload_header {
	char magic[8];
	u32 version;
	u32 count;       /* entries following the header */
	u64 data_offset; /* from the start of the header */
	u64 data_size;   /* bytes of data (entries' extents, aligned) */
	u64 load_pa;     /* where the data is moved at boot */
	u32 header_crc;  /* CRC-32 of header + entries, this field 0 */
	u32 flags;       /* PAYLOAD_PLACED */
};

struct payload_entry {
	char name[PAYLOAD_NAME_LEN]; /* image name, NUL-terminated */
	u32 vm;                      /* VM index in the configuration */
	u32 crc;                     /* CRC-32 of the image's bytes */
	u64 offset;                  /* from the start of the data */
	u64 size;
	u64 dst_ipa;
};

_Static_assert(sizeof(struct payload_header) == 48, "payload header layout");
_Static_assert(sizeof(struct payload_entry) == 64, "payload entry layout");

/*
 * Checks a payload of len bytes at blob: magic, version, table bounds and
 * CRC, every entry inside the data and NUL-terminated. Returns NULL when it
 * is well formed, else what is wrong. Image contents are not checked here.
 */
const char *payload_parse(const void *blob, u64 len);

/* The entries following a header that payload_parse accepted. */
static inline const struct payload_entry *payload_entries(const struct payload_header *h)
{
	return (const struct payload_entry *)(h + 1);
}

/* The entry of image `name` of VM `vm`, or NULL. */
const struct payload_entry *payload_find(const struct payload_header *h, u32 vm, const char *name);

#endif
