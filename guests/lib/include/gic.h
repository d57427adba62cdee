/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Driver for the VM's (virtual) GIC, the platform's version (read at run
 * time): distributor at 0x08000000 in both; GICv3: redistributor of vCPU i
 * at 0x080A0000 + i * 0x20000, CPU interface through the ICC_*_EL1 system
 * registers, all interrupts Group 1; GICv2 (GIC-400 platforms): CPU
 * interface at 0x08010000, all interrupts Group 0. (The QEMU virt layout.)
 */
#ifndef GUEST_GIC_H
#define GUEST_GIC_H

#include "types.h"

#define GICD_BASE       0x08000000ul
#define GICR_BASE       0x080A0000ul
#define GICR_STRIDE     0x20000ul
#define GICR_SGI_OFFSET 0x10000ul
#define GICC_BASE       0x08010000ul /* GICv2 */

#define GICD_CTLR           0x0000
#define GICD_TYPER          0x0004
#define GICD_IGROUPR(n)     (0x0080 + 4 * (n))
#define GICD_ISENABLER(n)   (0x0100 + 4 * (n))
#define GICD_ICENABLER(n)   (0x0180 + 4 * (n))
#define GICD_ISPENDR(n)     (0x0200 + 4 * (n))
#define GICD_ICPENDR(n)     (0x0280 + 4 * (n))
#define GICD_ICACTIVER(n)   (0x0380 + 4 * (n))
#define GICD_IPRIORITYR(n)  (0x0400 + 4 * (n))
#define GICD_ICFGR(n)       (0x0C00 + 4 * (n))
#define GICD_IROUTER(intid) (0x6000 + 8 * (intid))

#define GIC_DEFAULT_PRIO 0xa0
#define GIC_SPURIOUS     1023

/* Distributor setup (vCPU 0, once) followed by gic_cpu_init(). */
void gic_init(void);
/* This vCPU's redistributor and CPU interface (every vCPU, once). */
void gic_cpu_init(void);

/* SGI/PPI (< 32) act on the calling vCPU's redistributor, SPIs on the GICD. */
void gic_irq_enable(u32 intid);
void gic_irq_disable(u32 intid);
bool gic_irq_is_enabled(u32 intid);
/* The GIC's pending state of intid (GICR_ISPENDR0 / GICD_ISPENDR). */
bool gic_irq_is_pending(u32 intid);
void gic_set_priority(u32 intid, u8 prio);
void gic_set_edge(u32 intid, bool edge); /* false: level-sensitive */
void gic_clear_pending(u32 intid);
/* Route an SPI to the vCPU with this MPIDR (GICD_IROUTER, IRM = 0). */
void gic_route_spi(u32 intid, u64 mpidr);
/*
 * Convenience for an SPI handled on the calling vCPU: route here, set
 * trigger mode and default priority, enable.
 */
void gic_spi_setup(u32 intid, bool edge);
/* gic_irq_enable (on) or gic_irq_disable. */
void gic_irq_set(u32 intid, bool on);
/* A doorbell (an edge SPI of a shared-memory region; a value outside the
 * SPIs means none, and nothing is done): handled by fn on the calling vCPU,
 * left enabled or not. */
void gic_doorbell_setup(u32 intid, void (*fn)(u32 intid), bool enabled);

/* Send SGI intid (0..15) to vCPU cpu (Aff0 = cpu): ICC_SGI1R_EL1 or GICD_SGIR. */
void gic_send_sgi(u32 cpu, u32 intid);
/* Send SGI intid to every other vCPU (ICC_SGI1R_EL1.IRM, GICD_SGIR filter 1). */
void gic_send_sgi_others(u32 intid);

u32 gic_ack(void);       /* ICC_IAR1_EL1 */
void gic_eoi(u32 intid); /* ICC_EOIR1_EL1 (EOImode 0: drop + deactivate) */

/* 2 or 3 */
u32 gic_arch_version(void);

u32 gic_dist_read(u32 off);
/* This vCPU's redistributor's RD frame (by its GICR_TYPER affinity). */
uptr gic_redist(void);
void gic_dist_write(u32 off, u32 val);
/* Number of INTIDs the distributor implements (32 * (ITLinesNumber + 1)). */
u32 gic_num_intids(void);

#endif
