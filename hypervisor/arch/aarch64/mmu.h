/* SPDX-License-Identifier: Apache-2.0 */
/* The hypervisor's own (EL2 stage-1) identity map. */
#ifndef ARCH_MMU_H
#define ARCH_MMU_H

#include "lib/types.h"

enum mmu_kind {
	MMU_NORMAL, /* write-back cacheable, inner shareable */
	MMU_DEVICE, /* Device-nGnRE, never executable */
};

/* Adds an identity mapping to the EL2 tables (boot CPU, before mmu_enable). */
void mmu_map_identity(u64 base, u64 size, enum mmu_kind kind);

/* Turns on the EL2 MMU and caches on the calling CPU with the tables built
 * so far. Every CPU calls it once. */
void mmu_enable(void);

/*
 * Self-coloring (docs/coloring.md, "Self-coloring"). mmu_map_image_colored
 * maps the hypervisor image [base, base + size) page by page, page i (link
 * address base + i * 4 KiB) onto frame(i), except the EL2 tables' own pages
 * and the memory SMMUs read, the .dmamem section (identity: the table
 * walker and the SMMUs read them by PA). mmu_enable_colored then
 * copies every remapped page to its frame and turns the MMU on with nothing
 * written in between (no stack use), and records the registers so that
 * the secondary CPUs turn their MMU on before they touch memory (boot.S).
 * Boot CPU only, instead of mmu_enable. Returns the pages remapped.
 */
u32 mmu_map_image_colored(u64 base, u64 size, u64 (*frame)(u32 i));
void mmu_enable_colored(void);

/* Read by boot.S on secondary CPUs with the MMU off (written before the
 * image is copied, so the original frames hold it): sctlr 0 = not colored.
 * boot.S reads it at the offsets asm_offsets.c derives (MMU_BOOT_*). */
struct mmu_boot_regs {
	u64 mair, tcr, ttbr, sctlr;
};
extern struct mmu_boot_regs mmu_boot;
/* Whether the calling CPU's EL2 MMU is on. */
bool mmu_enabled(void);

#endif
