/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal flattened-device-tree reader: the RAM ranges declared by the
 * /memory nodes of the DTB a boot loader passes in x0 (core/boot/bootmem.c). */
#ifndef LIB_FDT_H
#define LIB_FDT_H

#include "lib/types.h"

#define FDT_MAGIC 0xd00dfeedu

struct fdt_range {
	u64 base;
	u64 size;
};

/* Size of the blob at fdt per its header (0 if it is not an FDT). */
u32 fdt_total_size(const void *fdt);

/*
 * Collects the reg ranges of every top-level memory node (named memory or
 * memory@..., or with device_type = "memory") that has no status other than
 * "okay", honouring the root's #address-cells and #size-cells (1 or 2),
 * into out[0..*n): sorted by base, overlapping and adjacent ranges merged,
 * none of size 0. More than max separate ranges is an error
 * (fdt_err_too_many). len bounds every access. Returns NULL, or what is
 * wrong with the blob.
 */
const char *fdt_memory(const void *fdt, u32 len, struct fdt_range *out, u32 max, u32 *n);

/* fdt_memory's error when the ranges do not fit in max. */
extern const char fdt_err_too_many[];

#endif
