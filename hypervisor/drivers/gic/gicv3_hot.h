/* SPDX-License-Identifier: Apache-2.0 */
/* GICv3 inline hot-path accessors (for gic_hot.h and gicv3.c only). */
#ifndef DRIVERS_GICV3_HOT_H
#define DRIVERS_GICV3_HOT_H

#include "drivers/gic/gic.h"
#include "arch/aarch64/sysregs.h"
#include "lib/types.h"

/* ICH_LR<n>_EL2 */
#define ICH_LR_VINTID_MASK  0xffffffffull
#define ICH_LR_PINTID_SHIFT 32
#define ICH_LR_PINTID_MASK  0x1fffull
#define ICH_LR_EOI          BIT(41)
#define ICH_LR_PRIO_SHIFT   48
#define ICH_LR_GROUP1       BIT(60)
#define ICH_LR_HW           BIT(61)
#define ICH_LR_STATE_SHIFT  62

static inline u32 gic_hot_ack(void)
{
	u64 v = sysreg_read(S3_0_C12_C12_0); /* ICC_IAR1_EL1 */

	dsb(sy);
	return (u32)(v & 0xffffff);
}

static inline void gic_hot_eoi(u32 intid)
{
	sysreg_write(S3_0_C12_C12_1, intid); /* ICC_EOIR1_EL1 (the ERET synchronises) */
}

/* Priority drop and deactivation of a PPI or SPI the hypervisor handled,
 * about to ERET (as gic_eoi_deactivate). */
static inline void gic_hot_eoi_deactivate(u32 intid)
{
	sysreg_write(S3_0_C12_C12_1, intid); /* ICC_EOIR1_EL1 */
	isb();
	sysreg_write(S3_0_C12_C11_1, intid); /* ICC_DIR_EL1 (the ERET synchronises) */
}

static inline u32 gic_hot_lr_empty(void)
{
	return (u32)sysreg_read(S3_4_C12_C11_5); /* ICH_ELRSR_EL2 */
}

#define GICV3_HOT_LR(crm, op2) "msr S3_4_C12_" #crm "_" #op2 ", %[v]\n\tb 2f\n\t"

/* clang-format off */
#define GICV3_HOT_LR_TABLE                                                                  \
	GICV3_HOT_LR(C12, 0) GICV3_HOT_LR(C12, 1) GICV3_HOT_LR(C12, 2) GICV3_HOT_LR(C12, 3) \
	GICV3_HOT_LR(C12, 4) GICV3_HOT_LR(C12, 5) GICV3_HOT_LR(C12, 6) GICV3_HOT_LR(C12, 7) \
	GICV3_HOT_LR(C13, 0) GICV3_HOT_LR(C13, 1) GICV3_HOT_LR(C13, 2) GICV3_HOT_LR(C13, 3) \
	GICV3_HOT_LR(C13, 4) GICV3_HOT_LR(C13, 5) GICV3_HOT_LR(C13, 6) GICV3_HOT_LR(C13, 7)
/* clang-format on */

/* A computed branch into a table of MSR/B pairs (8 bytes each): five
 * instructions for any n (a C switch takes about ten). */
static inline void gic_hot_lr_write_hw(u32 n, u32 intid, u8 prio)
{
	u64 v = intid | ((u64)intid << ICH_LR_PINTID_SHIFT) | ((u64)prio << ICH_LR_PRIO_SHIFT) |
	        ICH_LR_GROUP1 | ICH_LR_HW | ((u64)GIC_LR_PENDING << ICH_LR_STATE_SHIFT);
	u64 t;

	__asm__ volatile("adr %[t], 1f\n\t"
	                 "add %[t], %[t], %[n], lsl #3\n\t"
	                 "br %[t]\n"
	                 "1:\n\t" GICV3_HOT_LR_TABLE "2:"
	                 : [t] "=&r"(t)
	                 : [n] "r"((u64)(n % 16)), [v] "r"(v)
	                 : "memory");
}

#undef GICV3_HOT_LR_TABLE
#undef GICV3_HOT_LR

#endif
