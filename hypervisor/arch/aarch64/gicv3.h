/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The physical GICv3: distributor, redistributors and the EL2 view of the
 * CPU interface (ICC_* for the hypervisor's own interrupts, ICH_* for the
 * virtual CPU interface the core's vGIC drives).
 */
#ifndef ARCH_GICV3_H
#define ARCH_GICV3_H

#include "lib/types.h"

#define GIC_SGI_MAX   16
#define GIC_PRIV_MAX  32
#define GIC_SPURIOUS  1023
#define GIC_MAX_INTID 1020

#define GIC_PRIO_HYP   0x80 /* the hypervisor's own interrupts */
#define GIC_PRIO_GUEST 0xa0 /* passthrough interrupts */

void gic_init(u64 gicd, u64 gicr, u64 gicr_stride);
/* Per CPU: finds and wakes this CPU's redistributor, enables the system
 * register interface with EOImode = 1 (priority drop and deactivation split). */
void gic_cpu_init(void);
u32 gic_nr_intids(void); /* 32 + SPIs the distributor implements */

u32 gic_ack(void);
void gic_eoi(u32 intid);        /* priority drop */
void gic_deactivate(u32 intid); /* deactivation */

void gic_enable(u32 intid);  /* SGI/PPI: on the calling CPU */
void gic_disable(u32 intid); /* SGI/PPI: on the calling CPU */
/* GICD/GICR_ISPENDR: for a level-sensitive interrupt the line's level
 * (also while the interrupt is active). SGI/PPI: of the calling CPU. */
bool gic_is_pending(u32 intid);
void gic_set_priority(u32 intid, u8 prio);
void gic_set_edge(u32 intid, bool edge); /* SPIs */
void gic_route_spi(u32 intid, u64 mpidr);
void gic_clear_active_local(u32 intid); /* SGI/PPI of the calling CPU */
void gic_send_sgi(u32 intid, u64 mpidr);

/* Virtual CPU interface (ICH_*) */
u32 gic_lr_count(void);
u64 gic_lr_read(u32 n);
void gic_lr_write(u32 n, u64 v);
void gic_hcr_write(u64 v);
u64 gic_misr_read(void);

#endif
