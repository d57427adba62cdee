/* SPDX-License-Identifier: Apache-2.0 */
/* GICv2 inline hot-path accessors (for gic_hot.h and gicv2.c only). */
#ifndef DRIVERS_GICV2_HOT_H
#define DRIVERS_GICV2_HOT_H

#include "arch/aarch64/cpu.h"
#include "drivers/gic/gic.h"
#include "arch/aarch64/sysregs.h"
#include "lib/types.h"

#define GICC_IAR    0x000c
#define GICC_EOIR   0x0010
#define GICH_ELRSR0 0x0030
#define GICH_LR     0x0100

/* GICH_LR<n> */
#define LR_VID_MASK    0x3ffu
#define LR_PID_SHIFT   10
#define LR_PID_MASK    0x3ffu
#define LR_CPUID_SHIFT 10
#define LR_EOI         BIT(19)
#define LR_PRIO_SHIFT  23 /* 5 bits: priority[7:3] */
#define LR_STATE_SHIFT 28
#define LR_HW          BIT(31)

/* gicv2.c: the CPU interface and virtual interface control frames, and
 * the CPU interface's second page (GICC_DIR at its offset 0) */
extern u64 gicv2_gicc_base, gicv2_gich_base, gicv2_gicc_dir;
/* gicv2.c: the source CPU of the SGI each CPU acknowledged last (GICC_IAR
 * CPUID), which GICC_EOIR/GICC_DIR take back with the INTID */
extern u8 gicv2_sgi_src[ARCH_MAX_CPUS][GIC_SGI_MAX];

static inline u32 gic_hot_ack(void)
{
	u32 iar = *(volatile u32 *)(uintptr_t)(gicv2_gicc_base + GICC_IAR);
	u32 intid = iar & 0x3ff;

	dsb(sy);
	if (intid < GIC_SGI_MAX) /* inline: a call would give the hot path a frame */
		gicv2_sgi_src[cpu_index()][intid] = (u8)((iar >> 10) & 7);
	return intid;
}

static inline void gic_hot_eoi(u32 intid)
{
	*(volatile u32 *)(uintptr_t)(gicv2_gicc_base + GICC_EOIR) = intid;
}

/* Priority drop and deactivation of a PPI or SPI the hypervisor handled
 * (as gic_eoi_deactivate; GICC_DIR is at offset 0 of its page). */
static inline void gic_hot_eoi_deactivate(u32 intid)
{
	*(volatile u32 *)(uintptr_t)(gicv2_gicc_base + GICC_EOIR) = intid;
	*(volatile u32 *)(uintptr_t)gicv2_gicc_dir = intid;
}

static inline u32 gic_hot_lr_empty(void)
{
	return *(volatile u32 *)(uintptr_t)(gicv2_gich_base +
	                                    GICH_ELRSR0); /* at most 64 LRs; GIC-400 has 4 */
}

static inline void gic_hot_lr_write_hw(u32 n, u32 intid, u8 prio)
{
	u32 v = LR_HW | (GIC_LR_PENDING << LR_STATE_SHIFT) | ((u32)(prio >> 3) << LR_PRIO_SHIFT) |
	        (intid << LR_PID_SHIFT) | intid;

	*(volatile u32 *)(uintptr_t)(gicv2_gich_base + GICH_LR + 4 * n) = v;
}

#endif
