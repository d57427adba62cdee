/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtual redistributors (GICR) of a VM, one 128 KiB frame pair per
 * vCPU: RD_base (control, identification, wake-up) and SGI_base (the SGI
 * and PPI banks of that vCPU). LPIs where the VM has a virtual ITS (vits.c).
 */
#include "core/vgic/vgic_v3.h"

#include "core/vgic/vgic.h"
#include "core/vgic/vgic_regs.h"
#include "core/vgic/vits.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"

#define GICR_CTLR     0x0000
#define GICR_IIDR     0x0004
#define GICR_TYPER    0x0008
#define GICR_STATUSR  0x0010
#define GICR_WAKER    0x0014
#define GICR_SGI_BASE 0x10000
#define GICR_FRAME    0x20000

#define GICR_WAKER_SLEEP  BIT(1)
#define GICR_WAKER_ASLEEP BIT(2)

static u64 vgic_redist_stride;

static bool vgic_redist_rd(struct vcpu *t, struct mmio_access *a, u64 off)
{
	struct vm *vm = t->vm;

	if (vits_redist(t, a, off)) /* LPIs: GICR_CTLR, PROPBASER, PENDBASER */
		return true;
	if (!a->write)
		a->val = 0;
	switch (off) {
	case GICR_TYPER:
	case GICR_TYPER + 4: {
		/* Affinity (the MPIDR the vCPU reads, vcpu_vmpidr) and Processor_Number */
		u64 m = vcpu_vmpidr(t);
		u64 aff = (m & 0xffffff) | ((m >> 8) & 0xff000000);
		u64 typer = (aff << 32) | ((u64)t->idx << 8) | vits_redist_typer(vm);
		if (t->idx == vm->nvcpus - 1)
			typer |= BIT(4); /* Last */
		if (!a->write)
			a->val = off == GICR_TYPER ? typer : typer >> 32;
		if (!a->write && a->size == 4 && off == GICR_TYPER)
			a->val &= 0xffffffffu;
		return true;
	}
	case GICR_WAKER:
		if (a->write)
			t->vgic.waker_sleep = a->val & GICR_WAKER_SLEEP;
		else if (t->vgic.waker_sleep)
			a->val = GICR_WAKER_SLEEP | GICR_WAKER_ASLEEP;
		return true;
	case GICR_CTLR:
	case GICR_IIDR:
	case GICR_STATUSR:
		return true;
	default:
		if (off >= 0xffd0 && !a->write)
			a->val = vgic_regs_id(off, 3);
		return true;
	}
}

static bool vgic_redist_mmio(struct vcpu *v, struct mmio_access *a, void *dev)
{
	struct vm *vm = dev;
	u64 frame = a->off / vgic_redist_stride;
	u64 off = a->off % vgic_redist_stride;
	struct vcpu *t;

	(void)v;
	if (frame >= vm->nvcpus || off >= GICR_FRAME) {
		if (!a->write)
			a->val = 0;
		return true;
	}
	t = vm->vcpus[frame];
	if (off < GICR_SGI_BASE)
		return vgic_redist_rd(t, a, off);
	off -= GICR_SGI_BASE;
	if (off >= 0x80 && off < 0x0e00 + 0x100) {
		struct mmio_access sub = *a;
		bool ok;

		sub.off = off;
		ok = vgic_regs_access(vm, t, &sub, 0, 32);
		a->val = sub.val;
		return ok;
	}
	if (!a->write)
		a->val = 0;
	return true;
}

void vgic_v3_redist_init(struct vm *vm, u64 ipa, u64 stride)
{
	vgic_redist_stride = stride;
	mmio_register(vm, ipa, stride * vm->nvcpus, vgic_redist_mmio, vm);
}
