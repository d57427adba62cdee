/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtual distributor (GICD) of a VM: trap-and-emulate. A VM sees every
 * SPI the platform has, but only those it owns (passthrough, console,
 * doorbells) read back or change anything; the rest are RAZ/WI.
 */
#include "core/vgic/vgic_v3.h"

#include "core/vgic/vgic.h"
#include "core/vgic/vgic_regs.h"
#include "core/vgic/vits.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "lib/features.h"

#define GICD_CTLR        0x0000
#define GICD_TYPER       0x0004
#define GICD_IIDR        0x0008
#define GICD_TYPER2      0x000c
#define GICD_STATUSR     0x0010
#define GICD_IROUTER     0x6000
#define GICD_IROUTER_END 0x7fe0

#define GICD_CTLR_EN_GRP0 BIT(0)
#define GICD_CTLR_EN_GRP1 BIT(1)
#define GICD_CTLR_ARE     BIT(4)
#define GICD_CTLR_DS      BIT(6)

static u32 vgic_dist_typer(const struct vm *vm)
{
	u32 lines = vm->vgic.nr_intids / 32 - 1;

	/* IDbits = 10 (value 9), no LPIs, no 1-of-N routing */
	return lines | (9u << 19) | BIT(25) | vits_dist_typer(vm);
}

/* The vCPU whose MPIDR (as it reads it, vcpu_vmpidr: physical ones in
 * direct mode) an IROUTER value names; 0 when none does (affinity 3 and
 * IRM are not supported). */
static u8 vgic_v3_irouter_target(struct vm *vm, u64 val)
{
	struct vcpu *t = vm_vcpu_by_mpidr(vm, val, 0xffffff);

	return t ? (u8)t->idx : 0;
}

static bool vgic_dist_irouter(struct vm *vm, struct mmio_access *a)
{
	u32 intid = (u32)((a->off - GICD_IROUTER) / 8);
	bool high = (a->off & 4) != 0;
	struct virq *q = vgic_virq(vm, NULL, intid);

	if (!q || !(q->flags & VIRQ_OWNED) || intid < 32) {
		if (!a->write)
			a->val = 0;
		return true;
	}
	spin_lock(&vm->vgic.lock);
	if (a->write) {
		if (!high) {
			q->target = vgic_v3_irouter_target(vm, a->val);
			if ((q->flags & VIRQ_HW) && (q->flags & VIRQ_ENABLED))
				vgic_hw_enable(vm, intid, true);
		}
	} else {
		a->val = high ? 0 : vcpu_vmpidr(vm->vcpus[q->target]) & 0xffffff;
	}
	spin_unlock(&vm->vgic.lock);
	return true;
}

static bool vgic_dist_mmio(struct vcpu *v, struct mmio_access *a, void *dev)
{
	struct vm *vm = dev;
	u64 off = a->off;

	switch (off) {
	case GICD_CTLR:
		if (a->write) {
			spin_lock(&vm->vgic.lock);
			vm->vgic.ctlr = (u32)a->val & (GICD_CTLR_EN_GRP0 | GICD_CTLR_EN_GRP1);
			spin_unlock(&vm->vgic.lock);
			/* enabling may make pending interrupts deliverable everywhere */
			for (u32 i = 0; i < vm->nvcpus; i++)
				if (vm->vcpus[i] != v)
					vcpu_kick(vm->vcpus[i]);
		} else {
			a->val = vm->vgic.ctlr | GICD_CTLR_ARE | GICD_CTLR_DS;
		}
		return true;
	case GICD_TYPER:
		if (!a->write)
			a->val = vgic_dist_typer(vm);
		return true;
	case GICD_IIDR:
	case GICD_TYPER2:
	case GICD_STATUSR:
		if (!a->write)
			a->val = 0;
		return true;
	default:
		break;
	}
	if (off >= GICD_IROUTER && off < GICD_IROUTER_END)
		return vgic_dist_irouter(vm, a);
	if (off >= 0xffd0) {
		if (!a->write)
			a->val = vgic_regs_id(off, 3);
		return true;
	}
	if (off >= 0x80 && off < 0x0e00 + 0x100)
		return vgic_regs_access(vm, v, a, 32, vm->vgic.nr_intids - 32);
	if (!a->write)
		a->val = 0; /* reserved and unimplemented registers: RAZ/WI */
	return true;
}

void vgic_v3_dist_init(struct vm *vm, u64 ipa)
{
	mmio_register(vm, ipa, VGIC_V3_DIST_SIZE, vgic_dist_mmio, vm);
}
