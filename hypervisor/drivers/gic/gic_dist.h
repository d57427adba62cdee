/* SPDX-License-Identifier: Apache-2.0 */
/* The distributor registers GICv2 and GICv3 share (for gicv2.c and gicv3.c only). */
#ifndef DRIVERS_GIC_DIST_H
#define DRIVERS_GIC_DIST_H

#include "drivers/gic/gic.h"

#define GICD_CTLR       0x0000
#define GICD_TYPER      0x0004
#define GICD_IGROUPR    0x0080
#define GICD_ISENABLER  0x0100
#define GICD_ICENABLER  0x0180
#define GICD_ISPENDR    0x0200
#define GICD_ICPENDR    0x0280
#define GICD_ICACTIVER  0x0380
#define GICD_IPRIORITYR 0x0400
#define GICD_ICFGR      0x0c00

static inline volatile u32 *gic_reg32(u64 base, u64 off)
{
	return (volatile u32 *)(uintptr_t)(base + off);
}

/* 32 + the SPIs the distributor implements (GICD_TYPER.ITLinesNumber). */
static inline u32 gic_dist_intids(u64 gicd)
{
	u32 n = 32 * ((*gic_reg32(gicd, GICD_TYPER) & 0x1f) + 1);

	return n > GIC_MAX_INTID ? GIC_MAX_INTID : n;
}

/* Every SPI disabled, not pending, not active, at the guests' priority. */
static inline void gic_dist_reset_spis(u64 gicd, u32 intids)
{
	for (u32 i = 32; i < intids; i += 32) {
		*gic_reg32(gicd, GICD_ICENABLER + i / 8) = ~0u;
		*gic_reg32(gicd, GICD_ICPENDR + i / 8) = ~0u;
		*gic_reg32(gicd, GICD_ICACTIVER + i / 8) = ~0u;
	}
	for (u32 i = 32; i < intids; i += 4)
		*gic_reg32(gicd, GICD_IPRIORITYR + i) = 0x01010101u * GIC_PRIO_GUEST;
}

/* An SPI's trigger (GICD_ICFGR); SGIs and PPIs are left alone. */
static inline void gic_dist_set_edge(u64 gicd, u32 intid, bool edge)
{
	volatile u32 *cfg;
	u32 shift = (intid % 16) * 2 + 1;

	if (intid < GIC_PRIV_MAX)
		return;
	cfg = gic_reg32(gicd, GICD_ICFGR + (intid / 16) * 4);
	if (edge)
		*cfg |= 1u << shift;
	else
		*cfg &= ~(1u << shift);
}

#endif
