/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The C layouts and constants the assembly uses (vectors.S, boot.S): this
 * file is compiled to assembly only (never linked), and the Makefile turns
 * each "->ASM_OFFSET name value" line into "#define name value" in the
 * generated header $(O)/include/generated/asm_offsets.h, which the .S files
 * include. So no offset or size is copied by hand.
 */
#include "arch/aarch64/cpu.h"
#include "arch/aarch64/mmu.h"
#include "arch/aarch64/pmu.h"

#define ASM_OFFSET(sym, val) \
	__asm__ volatile("\n.ascii \"->ASM_OFFSET " #sym " %0\"" : : "i"((u64)(val)))

/* The save and restore code stores the frame with stp pairs: x0-x30 at
 * 8 * n, then ELR and SPSR as one pair; the frame keeps SP 16-aligned. */
_Static_assert(__builtin_offsetof(struct frame, x) == 0, "vectors.S: x[n] at 8 * n");
_Static_assert(__builtin_offsetof(struct frame, elr) == 31 * 8, "vectors.S: x30 then ELR");
_Static_assert(__builtin_offsetof(struct frame, spsr) == __builtin_offsetof(struct frame, elr) + 8,
               "vectors.S: ELR and SPSR are one stp pair");
_Static_assert(sizeof(struct frame) % 16 == 0, "the frame keeps SP 16-byte aligned");
_Static_assert(sizeof(((struct cpu *)0)->pmu_el2) == 2 * sizeof(u64), "vectors.S: two filters");
_Static_assert(__builtin_offsetof(struct cpu, period) ==
                   __builtin_offsetof(struct cpu, period_irq) + 8,
               "isolation/bw_lean.S: the period's INTID and state are one ldp pair");
_Static_assert(__builtin_offsetof(struct mmu_boot_regs, tcr) ==
                   __builtin_offsetof(struct mmu_boot_regs, mair) + 8,
               "boot.S: MAIR and TCR are one ldp pair");

void asm_offsets(void);

void asm_offsets(void)
{
	ASM_OFFSET(FRAME_SIZE, sizeof(struct frame));
	ASM_OFFSET(F_ELR, __builtin_offsetof(struct frame, elr));
	ASM_OFFSET(F_SPSR, __builtin_offsetof(struct frame, spsr));
	ASM_OFFSET(CPU_PMU_EL2, __builtin_offsetof(struct cpu, pmu_el2));
	ASM_OFFSET(PMU_FILTER_NSH, PMU_FILTER_NSH);
	ASM_OFFSET(CPU_SDEI_PENDING, __builtin_offsetof(struct cpu, sdei_pending));
	ASM_OFFSET(CPU_PERIOD_IRQ, __builtin_offsetof(struct cpu, period_irq));
	ASM_OFFSET(CPU_PERIOD_EXITS, __builtin_offsetof(struct cpu, period_exits));
	ASM_OFFSET(ARCH_STACK_SIZE, ARCH_STACK_SIZE);
	ASM_OFFSET(ARCH_MAX_CPUS, ARCH_MAX_CPUS);
	ASM_OFFSET(MMU_BOOT_MAIR, __builtin_offsetof(struct mmu_boot_regs, mair));
	ASM_OFFSET(MMU_BOOT_TTBR, __builtin_offsetof(struct mmu_boot_regs, ttbr));
	ASM_OFFSET(MMU_BOOT_SCTLR, __builtin_offsetof(struct mmu_boot_regs, sctlr));
}
