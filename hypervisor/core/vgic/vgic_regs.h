/* SPDX-License-Identifier: Apache-2.0 */
/* Register banks shared by the virtual distributor and redistributors. */
#ifndef CORE_VGIC_REGS_H
#define CORE_VGIC_REGS_H

#include "core/vm/mmio.h"
#include "lib/types.h"

/* Offsets common to GICD and the GICR SGI frame */
#define GICD_IGROUPR    0x0080
#define GICD_ISENABLER  0x0100
#define GICD_ICENABLER  0x0180
#define GICD_ISPENDR    0x0200
#define GICD_ICPENDR    0x0280
#define GICD_ISACTIVER  0x0300
#define GICD_ICACTIVER  0x0380
#define GICD_IPRIORITYR 0x0400
#define GICD_ICFGR      0x0c00
#define GICD_IGRPMODR   0x0d00
#define GICD_NSACR      0x0e00
#define GICD_PIDR2      0xffe8

struct vm;
struct vcpu;

/* Handles the per-interrupt banks (group, enable, pending, active,
 * priority, config) at offset a->off for INTIDs [first, first + count).
 * Returns false if a->off is not one of these banks. */
bool vgic_regs_access(struct vm *vm, struct vcpu *v, struct mmio_access *a, u32 first, u32 count);

/* The CoreSight-style ID registers at 0xffd0..0xfffc of a GIC of the
 * given architecture version (PIDR2.ArchRev). */
u32 vgic_regs_id(u64 off, u32 version);

#endif
