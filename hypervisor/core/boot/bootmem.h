/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The RAM a boot loader declares: with a DTB in x0 at entry, its /memory
 * nodes must cover the hypervisor, the staging window and every VM's
 * memory, or the hypervisor refuses to boot (docs/boot.md).
 */
#ifndef CORE_BOOTMEM_H
#define CORE_BOOTMEM_H

#include "lib/types.h"

/* Boot CPU, MMU on. dtb: x0 at entry (0: none, nothing is checked). Panics
 * when the DTB is unreadable or declares too little RAM for the
 * configuration. */
void bootmem_check(u64 dtb);

/* Panics (naming `what`) if a DTB was given and its RAM does not cover
 * [base, base + size). */
void bootmem_require(const char *what, u64 base, u64 size);

#endif
