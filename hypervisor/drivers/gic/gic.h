/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The physical interrupt controller, one interface for every GIC version.
 * Exactly one driver is linked in a build: gicv3.c (distributor,
 * redistributors, ICC_* system registers, ICH_* virtual CPU interface) or
 * gicv2.c (GIC-400: distributor, GICC and GICH frames); the platform file
 * names it (Makefile GIC_DRIVER=<driver>, GIC=<its architecture>).
 *
 * A driver offers two things. Its cold operations (set-up, configuring one
 * interrupt) are a table, const struct gic_ops <driver>_ops, that config.c
 * names (cfg_platform.gic, a struct gic_dev) and gic_init takes; gic.c, the front end,
 * calls through it. What the run loop calls (acknowledge, EOI, kick SGIs,
 * the list registers, the direct mode's banks) it defines by the names
 * below, linked directly, and the hottest accessors inline in
 * gic<version>_hot.h (gic_hot.h): those paths pay no indirect call.
 *
 * The virtual CPU interface is driven through a version-neutral list
 * register record (struct gic_lr): the drivers encode and decode it, so the
 * core's list-register engine (core/vgic/vgic.c) knows no register layout.
 */
#ifndef DRIVERS_GIC_H
#define DRIVERS_GIC_H

#include "lib/types.h"

#define GIC_SGI_MAX   16
#define GIC_PRIV_MAX  32
#define GIC_SPURIOUS  1023
#define GIC_MAX_INTID 1020

#define GIC_PRIO_HYP    0x80 /* the hypervisor's own interrupts */
#define GIC_PRIO_GUEST  0xa0 /* passthrough interrupts */
#define GIC_PRIO_GROUP0 0x40 /* the hypervisor's Group 0 ones (gic_group0_set) */

struct gic_ops;

/* The GIC (config.c, from the platform file's gic:): its driver's
 * operations and register frames; unused frames are 0. */
struct gic_dev {
	const struct gic_ops *ops;
	u64 gicd;             /* distributor */
	u64 gicr;             /* v3: first redistributor */
	u64 gicr_stride;      /* v3: distance between redistributors */
	u64 gicc;             /* v2: CPU interface */
	u64 gicc_page_stride; /* v2: its second 4 KiB page (GICC_DIR) at gicc + this (0: 4 KiB) */
	u64 gich;             /* v2: virtual interface control */
	u64 its;              /* v3: the ITS (GITS_CTLR frame); 0: none */
};

/* A driver's cold operations; the front end's functions below say what
 * each does. */
struct gic_ops {
	u32 version; /* the architecture: 2 or 3 */
	void (*init)(const struct gic_dev *g);
	void (*cpu_init)(void);
	u32 (*nr_intids)(void);
	void (*enable)(u32 intid);
	void (*disable)(u32 intid);
	void (*set_priority)(u32 intid, u8 prio);
	void (*set_edge)(u32 intid, bool edge);
	void (*route_spi)(u32 intid, u64 mpidr);
	void (*cpu_set_priority)(u32 cpu, u32 intid, u8 prio);
};

/* The front end (gic.c), the driver's operations: first gic_init, on
 * config.c's cfg_platform.gic. */
void gic_init(const struct gic_dev *g);
/* Per CPU: wakes/enables this CPU's interface with priority drop and
 * deactivation split (EOImode = 1) and resets the virtual interface. */
void gic_cpu_init(void);
u32 gic_version(void);       /* 2 or 3 */
u32 gic_nr_intids(void);     /* 32 + SPIs the distributor implements */
void gic_enable(u32 intid);  /* SGI/PPI: on the calling CPU */
void gic_disable(u32 intid); /* SGI/PPI: on the calling CPU */
void gic_set_priority(u32 intid, u8 prio);
void gic_set_edge(u32 intid, bool edge); /* SPIs */
void gic_route_spi(u32 intid, u64 mpidr);
/* Direct interrupt mode: see gic_cpu_bank_write. */
void gic_cpu_set_priority(u32 cpu, u32 intid, u8 prio);

/* Defined by the driver itself (the run loop's calls; linked directly): */
u32 gic_ack(void);              /* the hot path inlines it: drivers/gic/gic_hot.h */
void gic_eoi(u32 intid);        /* priority drop */
void gic_deactivate(u32 intid); /* deactivation */
/* Both, for a hot path about to ERET (which synchronises the last write). */
void gic_eoi_deactivate(u32 intid);
/* GICD/GICR_ISPENDR: for a level-sensitive interrupt the line's level
 * (also while the interrupt is active). SGI/PPI: of the calling CPU. */
bool gic_is_pending(u32 intid);
void gic_clear_active_local(u32 intid);  /* SGI/PPI of the calling CPU */
void gic_send_sgi(u32 intid, u64 mpidr); /* the vCPU kick: on the doorbell's path */

/* Direct interrupt mode (GICv3 only; docs/interrupts.md): the interrupt
 * intid of CPU index cpu (its redistributor for an SGI/PPI, the distributor
 * for an SPI). bank is the register bank's offset, GICD_ISENABLER ...
 * GICD_ICACTIVER (drivers/gic/gic_dist.h): write sets intid's bit there,
 * read returns it. Panics on GICv2, whose private banks other CPUs cannot
 * reach (so does gic_cpu_set_priority). */
/*
 * GICv3 with one security state (GICD_CTLR.DS 1: no EL3, e.g. QEMU virt
 * booted by -kernel): Group 0 is the hypervisor's, signalled as FIQ, and on
 * a direct CPU carries its own events while the guest owns Group 1
 * (core/vcpu/irq_direct.c, docs/interrupts.md).
 */
bool gic_group0_ours(void);     /* GICD_CTLR.DS reads 1 */
void gic_group0_enable(void);   /* Group 0 on; the guests' priorities halved from now */
u8 gic_guest_prio(u8 prio);     /* a guest's priority as written: >> 1 | 0x80 then */
void gic_group0_set(u32 intid); /* Group 0 at GIC_PRIO_GROUP0 (SGI/PPI: this CPU's) */
bool gic_spi_routed_here(u32 intid);
void gic_send_sgi0(u32 intid, u64 mpidr); /* a Group 0 SGI (ICC_SGI0R_EL1) */
u32 gic_ack0(void);                       /* ICC_IAR0_EL1 */
void gic_eoi0(u32 intid);                 /* ICC_EOIR0_EL1, and DIR if EOImode */

void gic_cpu_bank_write(u32 cpu, u32 bank, u32 intid);
bool gic_cpu_bank_read(u32 cpu, u32 bank, u32 intid);

/* Virtual CPU interface */
#define GIC_LR_PENDING 1u
#define GIC_LR_ACTIVE  2u

struct gic_lr {
	u32 vintid;
	u32 pintid;     /* hw: the physical INTID the guest's deactivation deactivates */
	u8 prio;        /* 8-bit priority (v2 keeps the top 5 bits) */
	u8 state;       /* GIC_LR_PENDING | GIC_LR_ACTIVE; 0: the register is free */
	u8 source;      /* SGIs: the sending vCPU (v2 reports it in GICC_IAR; v3 ignores it) */
	bool hw;        /* backed by a physical interrupt */
	bool eoi_maint; /* software interrupt: maintenance interrupt on its EOI */
};

u32 gic_lr_count(void);
/* Bitmap of the list registers that hold no interrupt (state invalid):
 * ICH_ELRSR_EL2 / GICH_ELRSR0. One register read instead of one per LR. */
u32 gic_lr_empty(void);
void gic_lr_read(u32 n, struct gic_lr *lr);
void gic_lr_write(u32 n, const struct gic_lr *lr);
/* Enables the virtual interface; underflow: maintenance interrupt when at
 * most one list register holds an interrupt. */
void gic_vif_ctl(bool underflow);
/* Clears every list register and the guest's interface state (VMCR). */
void gic_vif_reset(void);
/* Disables the virtual interface (a direct vCPU uses the physical one). */
void gic_vif_off(void);

#endif
