/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtual GIC's state in the VM and vCPU objects (struct vm vgic,
 * struct vcpu vgic): per-interrupt state, the list-register shadow and the
 * distributor's. Its operations are the vGIC's (core/vgic/vgic.h), which
 * includes this; the objects need the layout only.
 */
#ifndef CORE_VM_VGIC_STATE_H
#define CORE_VM_VGIC_STATE_H

#include "drivers/gic/gic.h"
#include "lib/features.h"
#include "lib/spinlock.h"
#include "lib/types.h"

#define VGIC_NR_INTIDS 1024
#define VGIC_NR_SPIS   (VGIC_NR_INTIDS - 32)
#define VGIC_MAX_LRS   16
/* virtual LPIs (a VM's virtual ITS, ITS=1: core/vgic/vits.h) */
#define VGIC_LPI_BASE 8192u
#define VGIC_NR_LPIS  256u
#define VGIC_LPI_WORD 31u /* pend_spi_words' bit for pend_lpi (SPIs use 0-30) */

#define VIRQ_ENABLED BIT(0)
#define VIRQ_PENDING BIT(1) /* latched pending, not yet in a list register */
#define VIRQ_EDGE    BIT(2)
#define VIRQ_HW      BIT(3) /* backed by the same physical INTID */
#define VIRQ_LEVEL   BIT(4) /* line level of an emulated level-sensitive source */
#define VIRQ_OWNED   BIT(5) /* the VM may see and configure it */
#define VIRQ_IN_LR   BIT(6)
#define VIRQ_ACTIVE  BIT(7)

struct virq {
	u8 prio;
	u8 flags;
	u8 lr;         /* list register while VIRQ_IN_LR */
	u8 target;     /* SPIs: target vCPU index */
	u8 v2_targets; /* GICv2 SPIs: GICD_ITARGETSR as written, masked to the VM's vCPUs */
};

struct vgic_cpu {
	struct virq priv[32];
	u32 pend_priv;                  /* bitmap of VIRQ_PENDING among priv */
	u32 fresh_hw;                   /* HW PPIs acknowledged since the last entry */
	bool underflow;                 /* underflow maintenance requested (gic_vif_ctl) */
	u8 sgi_src[16];                 /* pending SGIs: bitmap of source vCPUs */
	struct gic_lr lr[VGIC_MAX_LRS]; /* last value read from or written to each LR */
	u32 lr_used;                    /* bitmap of LRs holding an interrupt */
	u32 nlr;
	u32 lr_all; /* (1 << nlr) - 1: the list registers there are */
	bool waker_sleep;
	u64 maint_irqs; /* statistics */
};

struct vgic_ops;

struct vgic_dist {
	spinlock_t lock;
	const struct vgic_ops *ops;
	bool sgi_sources; /* SGIs keep their source vCPU (GICv2); else one source */
	u32 ctlr;
	u32 nr_intids;
	struct virq spi[VGIC_NR_SPIS];
	u32 pend_spi[VGIC_NR_SPIS / 32]; /* bitmap of VIRQ_PENDING among spi */
	u32 pend_spi_words;              /* bit w: pend_spi[w] != 0 */
#if IS_ENABLED(ITS)
	struct virq lpi[VGIC_NR_LPIS];   /* INTIDs VGIC_LPI_BASE on (target: a vCPU) */
	u32 pend_lpi[VGIC_NR_LPIS / 32]; /* bitmap of VIRQ_PENDING among lpi */
#endif
};

#endif
