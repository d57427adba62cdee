/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtual ITS of a VM that owns PCI functions, on a platform with an ITS
 * (gic.its; built with ITS=1; docs/interrupts.md "Message-signalled
 * interrupts"). The VM sees a GICv3 ITS at the physical one's address: its
 * GITS_* registers and a command queue in its own RAM, whose commands are
 * decoded and checked (vits_cmd.c) and mirrored onto the physical ITS
 * (drivers/gic/gicv3_its.h) with physical LPIs the hypervisor chose; a
 * physical LPI of the VM's becomes a virtual LPI in a list register. Its
 * redistributors take LPIs (GICR_CTLR.EnableLPIs, GICR_PROPBASER: the LPI
 * configuration table the hypervisor reads on MAPTI, INV and INVALL).
 *
 * A command queue outside the VM's RAM and a refused command stall the
 * virtual ITS (GITS_CREADR.Stalled; the first 8 logged) until the guest writes
 * GITS_CBASER again; at most VITS_BUDGET commands run per trapped access
 * (GITS_CWRITER written, GITS_CREADR read): a flood costs the VM's own
 * vCPU only. A CPU write of an event ID to the VM's GITS_TRANSLATER is an
 * INT of its first device's event.
 *
 * Locking: one lock per VM's ITS (LOCK_RANK_VITS), under which the vGIC's
 * (vm->vgic.lock) and the physical ITS's (its_lock) are taken.
 */
#ifndef CORE_VITS_H
#define CORE_VITS_H

#include "lib/features.h"
#include "lib/types.h"

struct vm;
struct vcpu;
struct mmio_access;

#define VITS_BUDGET 64u /* commands per trapped access */

#if IS_ENABLED(ITS)
/* Boot CPU, after the VMs are built: the physical ITS when a VM needs it,
 * and each such VM's virtual ITS. */
void vits_init(void);
/* Per CPU, after vits_init: its redistributor and collection. */
void vits_cpu_init(void);
/* A physical LPI (acknowledged): delivered to its VM's vCPU. */
void vits_lpi(u32 intid);
/* The VM is (re)loaded: its ITS as at power-on (disabled, nothing mapped),
 * its events discarded on the physical ITS. */
void vits_vm_reset(struct vm *vm);
/* The VM's redistributor registers for LPIs (GICR_CTLR, PROPBASER,
 * PENDBASER) of vCPU t; false: not one of them. */
bool vits_redist(struct vcpu *t, struct mmio_access *a, u64 off);
/* GICD_TYPER and GICR_TYPER bits the VM's ITS adds (LPIs, ID bits). */
u32 vits_dist_typer(const struct vm *vm);
u32 vits_redist_typer(const struct vm *vm);
#else
static inline void vits_init(void)
{
}
static inline void vits_cpu_init(void)
{
}
static inline void vits_lpi(u32 intid)
{
	(void)intid;
}
static inline void vits_vm_reset(struct vm *vm)
{
	(void)vm;
}
static inline bool vits_redist(struct vcpu *t, struct mmio_access *a, u64 off)
{
	(void)t, (void)a, (void)off;
	return false;
}
static inline u32 vits_dist_typer(const struct vm *vm)
{
	(void)vm;
	return 0;
}
static inline u32 vits_redist_typer(const struct vm *vm)
{
	(void)vm;
	return 0;
}
#endif

#endif
