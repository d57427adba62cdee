/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The spin-table CPU enable method (Linux's Documentation/arch/arm64/
 * booting.rst "spin-table"): a CPU the firmware parked waits, with its MMU
 * off, for a non-zero entry address at its release address and then jumps
 * there with x0-x3 = 0 (the Raspberry Pi's armstub, QEMU raspi's loader).
 */
#ifndef ARCH_SPINTABLE_H
#define ARCH_SPINTABLE_H

#include "lib/types.h"

/* boot.S: one entry per CPU index i at spintable_entries + i * 8, each
 * setting x0 = i before the common secondary entry. */
extern char spintable_entries[];
#define SPINTABLE_ENTRY_SIZE 8

/* Writes CPU `index`'s entry to its release address (identity-mapped RAM),
 * cleans it to the point of coherency and wakes the parked CPUs (SEV). */
void spintable_release(u64 release, u32 index);

#endif
