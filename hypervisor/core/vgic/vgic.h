/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/vgic (docs/ARCHITECTURE.md "Core"): the virtual GIC: the
 * common state engine, the register banks and the front end of each GIC
 * version. Calls: arch, core/config, core/mem, core/vm, drivers, lib.
 */
/*
 * The virtual GIC, common to every GIC version: per-interrupt state of a
 * VM, the list-register engine that presents pending interrupts to a vCPU
 * (through the version-neutral struct gic_lr of drivers/gic/gic.h),
 * injection, and SGI routing inside a VM (vgic_sgi.c). The register banks
 * GICD and the GICv3 SGI frame share are in vgic_regs.c. What differs per
 * version is a front end (struct vgic_ops): vgic_v3*.c emulates the GICv3
 * distributor and redistributors and traps ICC_SGI1R_EL1; vgic_v2.c
 * emulates the GICv2 distributor (GICD_ITARGETSR, GICD_SGIR) and maps the
 * physical GICV frame as the guest's GICC. The VM gets the front end of the
 * physical GIC's version.
 *
 * Locking: one lock per VM (vgic_dist.lock) covers all of the VM's
 * interrupt state. List registers are only touched by the physical CPU the
 * vCPU is pinned to; other CPUs mark an interrupt pending and kick it.
 */
#ifndef CORE_VGIC_H
#define CORE_VGIC_H

#include "core/vm/vgic_state.h"
#include "drivers/gic/gic.h"
#include "lib/types.h"

struct vm;
struct vcpu;

/* A GIC version's front end: the VM's register interface. */
struct vgic_ops {
	u32 version;
	/* Registers the VM's distributor (and what else the version has). */
	void (*vm_init)(struct vm *vm);
	/* A trapped MSR/MRS of a GIC system register (encoding as
	 * arch/aarch64/sysregs.h SYSREG()); false: not handled (undefined). */
	bool (*sysreg)(struct vcpu *v, u64 reg, bool read, u64 val);
};

/* Boot CPU: picks the VM's front end and registers its interface. */
void vgic_vm_setup(struct vm *vm);
/* Resets the VM's interrupt state (boot and VM reset). */
void vgic_vm_init(struct vm *vm);
void vgic_vcpu_init(struct vcpu *v);

/* Exit/entry hooks of the vCPU's own physical CPU. */
void vgic_sync(struct vcpu *v);
void vgic_flush(struct vcpu *v);
/* The hot path's locked part (core/vgic/vgic_fast.h vgic_inject_fast has the
 * rest): HW interrupt intid (q: its state) of v, which runs on the calling
 * CPU, straight into a free list register (list registers the guest has
 * finished with are retired first), or into its previous delivery's
 * register once the guest is done with it, when it is enabled, not already
 * pending, and nothing else of the VM is pending. False: nothing loaded,
 * take vgic_inject and the exit path. */
bool vgic_inject_fast_locked(struct vcpu *v, u32 intid, struct virq *q);

/* The GIC maintenance interrupt (list-register underflow or EOI). */
void vgic_maintenance(struct vcpu *v);

/* Marks an edge on a virtual interrupt. For SPIs, target is ignored (the
 * VM's routing decides); for SGIs/PPIs it names the vCPU. Kicks the target
 * vCPU's physical CPU when it is not the caller. Interrupts marked
 * VIRQ_HW (virtual timer, passthrough SPIs) go into the list registers with
 * the HW bit: the guest's deactivation deactivates the physical interrupt. */
void vgic_inject(struct vm *vm, struct vcpu *target, u32 intid);
/* Sets the line level of an emulated level-sensitive interrupt. In a
 * direct VM (no list registers) the interrupt is an edge-triggered spare SPI
 * (vgic_direct_soft): a rising level makes it pending, a falling one clears
 * what the guest has not taken. */
void vgic_set_level(struct vm *vm, u32 intid, bool level);
/* New data behind a level that may have stayed high: a direct VM's spare SPI
 * is made pending again (its handler drains the source until empty); nothing
 * for an emulated VM. */
void vgic_level_fresh(struct vm *vm, u32 intid);
/* A direct VM's emulated source (its console or a doorbell): a spare SPI it
 * owns, kept edge-triggered. */
bool vgic_direct_soft(const struct vm *vm, u32 intid);
/* SGI intid from vCPU from to the vCPUs of the same VM whose index bits
 * are set in targets (vgic_sgi.c). */
void vgic_sgi_send(struct vcpu *from, u32 intid, u32 targets);
/* A trapped GIC system register access: the front end's (core/trap/sysreg.c). */
bool vgic_sysreg(struct vcpu *v, u64 reg, bool read, u64 val);

extern const struct vgic_ops vgic_v3_ops;
extern const struct vgic_ops vgic_v2_ops;

/* Internal to the vGIC files */
struct virq *vgic_virq(struct vm *vm, struct vcpu *v, u32 intid);
void vgic_set_pending_locked(struct vm *vm, struct vcpu *v, u32 intid);
void vgic_set_sgi_pending_locked(struct vm *vm, struct vcpu *v, u32 intid, u32 source);
/* Clears the given source bits of a pending SGI (all gone: not pending). */
void vgic_clear_sgi_sources_locked(struct vm *vm, struct vcpu *v, u32 intid, u32 sources);
void vgic_clear_pending_locked(struct vm *vm, struct vcpu *v, u32 intid);
struct vcpu *vgic_target(struct vm *vm, struct vcpu *v, u32 intid);
void vgic_hw_enable(struct vm *vm, u32 intid, bool enable);
/* Level-sensitive and backed by hardware (HW bit, not configured edge). */
bool vgic_hw_level(const struct virq *q);
/* A HW level interrupt is pending exactly while its physical line is
 * (GICD/GICR_ISPENDR); returns that. When the line has dropped and v is the
 * calling CPU's vCPU, an acknowledged but untaken interrupt is dropped and
 * the physical one deactivated. Lock held. */
bool vgic_hw_line_locked(struct vm *vm, struct vcpu *v, u32 intid, struct virq *q);

#endif
