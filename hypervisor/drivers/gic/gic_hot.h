/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inline accessors of the physical GIC for the interrupt hot path
 * (core/irq/irq_lean.c irq_guest_lean, core/irq/irq.c irq_guest_fast): the build's
 * GIC version (Makefile GIC=2|3, passed as GIC_VERSION) picks gicv3_hot.h
 * or gicv2_hot.h, so the hot path pays no call and no version-neutral
 * record. Everything else goes through gic.h.
 *
 *   u32 gic_hot_ack(void)           acknowledge (as gic_ack)
 *   void gic_hot_eoi(u32 intid)     priority drop of a PPI or SPI (not an SGI)
 *   void gic_hot_eoi_deactivate(u32 intid)  both, of a PPI or SPI
 *   u32 gic_hot_lr_empty(void)      as gic_lr_empty
 *   void gic_hot_lr_write_hw(u32 n, u32 intid, u8 prio)
 *       list register n := intid pending, HW bit, physical INTID = intid,
 *       priority prio (n < gic_lr_count())
 */
#ifndef DRIVERS_GIC_HOT_H
#define DRIVERS_GIC_HOT_H

#include "drivers/gic/gic.h"

#if defined(BULKHEAD_HOST_TEST)
/* host unit tests (tests/host): the test provides them */
u32 gic_hot_ack(void);
void gic_hot_eoi(u32 intid);
void gic_hot_eoi_deactivate(u32 intid);
u32 gic_hot_lr_empty(void);
void gic_hot_lr_write_hw(u32 n, u32 intid, u8 prio);
#elif GIC_VERSION == 3
#include "drivers/gic/gicv3_hot.h"
#elif GIC_VERSION == 2
#include "drivers/gic/gicv2_hot.h"
#else
#error "GIC_VERSION must be 2 or 3 (Makefile GIC=)"
#endif

#endif
