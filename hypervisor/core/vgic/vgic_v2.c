/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GICv2 front end (GIC-400 platforms): the distributor is trapped and
 * emulated like the GICv3 one, with the GICv2-only registers: the per-CPU
 * banks of SGIs and PPIs in the same frame, GICD_ITARGETSR (SPI routing by
 * CPU-interface bit, here by vCPU index) and GICD_SGIR (SGI generation).
 * The CPU interface is the hardware's: the physical GICV frame is mapped
 * at the guest's GICC address, and the common engine loads the list
 * registers through GICH. SGIs keep their source vCPU (GICC_IAR.CPUID).
 *
 * GICD_SPENDSGIR/CPENDSGIR show and change the accessing vCPU's pending
 * SGIs per source vCPU. Not emulated: interrupt groups (every interrupt is
 * Group 0: GICD_IGROUPR is RAZ/WI), the Security Extensions.
 */
#include "core/config/config.h"
#include "core/mem/mem.h"
#include "core/vgic/vgic.h"
#include "core/vgic/vgic_regs.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"

#define GICD_CTLR         0x0000
#define GICD_TYPER        0x0004
#define GICD_IIDR         0x0008
#define GICD_ITARGETSR    0x0800
#define GICD_SGIR         0x0f00
#define GICD_CPENDSGIR    0x0f10
#define GICD_SPENDSGIR    0x0f20
#define GICD_ID_BASE      0x0fd0
#define VGIC_V2_DIST_SIZE 0x10000 /* the 4 KiB frame, aliased or not: 64 KiB trap */
#define VGIC_V2_FRAME     0x1000
#define GIC400_IIDR       0x0200143b /* GIC-400 r0p1 (Arm, product 0x02) */

#define SGIR_TARGETS(v) (((v) >> 16) & 0xff)
#define SGIR_FILTER(v)  (((v) >> 24) & 3)
#define SGIR_INTID(v)   ((v)&0xf)

static u32 vgic_v2_all(const struct vm *vm)
{
	return (1u << vm->nvcpus) - 1;
}

/* GICD_SGIR: target list, all but self, or self. */
static void vgic_v2_sgir(struct vcpu *v, u32 val)
{
	u32 all = vgic_v2_all(v->vm);
	u32 targets;

	switch (SGIR_FILTER(val)) {
	case 0:
		targets = SGIR_TARGETS(val) & all;
		break;
	case 1:
		targets = all & ~(1u << v->idx);
		break;
	case 2:
		targets = 1u << v->idx;
		break;
	default:
		return; /* reserved */
	}
	vgic_sgi_send(v, SGIR_INTID(val), targets);
}

/* GICD_C/SPENDSGIR<n>: byte k is SGI 4n + k of the accessing vCPU, one bit
 * per source vCPU (an SGI waiting in a list register counts as pending). */
static bool vgic_v2_pendsgi(struct vm *vm, struct vcpu *v, struct mmio_access *a, bool set)
{
	u32 sgi0 = (u32)(a->off & 0xf);

	if (!a->write)
		a->val = 0;
	spin_lock(&vm->vgic.lock);
	for (u32 i = 0; i < a->size && sgi0 + i < GIC_SGI_MAX; i++) {
		u32 sgi = sgi0 + i;
		u32 bits = (u32)(a->val >> (8 * i)) & vgic_v2_all(vm);
		const struct virq *q = &v->vgic.priv[sgi];

		if (!a->write) {
			u32 pend = (q->flags & VIRQ_PENDING) ? v->vgic.sgi_src[sgi] : 0;

			if ((q->flags & VIRQ_IN_LR) && (v->vgic.lr[q->lr].state & GIC_LR_PENDING))
				pend |= 1u << v->vgic.lr[q->lr].source;
			a->val |= (u64)(pend & 0xff) << (8 * i);
			continue;
		}
		for (u32 src = 0; set && src < 8; src++)
			if (bits & (1u << src))
				vgic_set_sgi_pending_locked(vm, v, sgi, src);
		if (!set && bits)
			vgic_clear_sgi_sources_locked(vm, v, sgi, bits);
	}
	spin_unlock(&vm->vgic.lock);
	return true;
}

/* GICD_ITARGETSR: one byte per interrupt; a CPU-interface bit is a vCPU.
 * SGIs and PPIs read as the accessing vCPU's own bit. An SPI of the VM
 * reads back the byte written, masked to the VM's vCPUs (as the GIC-400
 * makes the bits of CPU interfaces it lacks RAZ/WI), and is delivered to
 * the lowest vCPU it names (no 1-of-N); a byte naming none reads back 0
 * and leaves the delivery with the vCPU it had (the GIC-400 would forward
 * it to no CPU; a VM's interrupt is never left without a vCPU). Other
 * SPIs are RAZ/WI. */
static bool vgic_v2_itargets(struct vm *vm, struct vcpu *v, struct mmio_access *a)
{
	u32 intid0 = (u32)(a->off - GICD_ITARGETSR);

	if (!a->write)
		a->val = 0;
	spin_lock(&vm->vgic.lock);
	for (u32 i = 0; i < a->size; i++) {
		u32 intid = intid0 + i;
		struct virq *q = vgic_virq(vm, v, intid);
		u32 byte = (u32)(a->val >> (8 * i)) & 0xff & vgic_v2_all(vm);

		if (intid < 32) { /* banked: read-only, this vCPU */
			if (!a->write)
				a->val |= (u64)(1u << v->idx) << (8 * i);
			continue;
		}
		if (!q || !(q->flags & VIRQ_OWNED))
			continue;
		if (!a->write) {
			a->val |= (u64)q->v2_targets << (8 * i);
			continue;
		}
		q->v2_targets = (u8)byte;
		if (byte) {
			q->target = (u8)__builtin_ctz(byte);
			if ((q->flags & VIRQ_HW) && (q->flags & VIRQ_ENABLED))
				vgic_hw_enable(vm, intid, true);
		}
	}
	spin_unlock(&vm->vgic.lock);
	return true;
}

static bool vgic_v2_dist_mmio(struct vcpu *v, struct mmio_access *a, void *dev)
{
	struct vm *vm = dev;
	u64 off = a->off;

	if (off >= VGIC_V2_FRAME) {
		if (!a->write)
			a->val = 0;
		return true;
	}
	switch (off) {
	case GICD_CTLR:
		if (a->write) {
			spin_lock(&vm->vgic.lock);
			vm->vgic.ctlr = (u32)a->val & 3;
			spin_unlock(&vm->vgic.lock);
			for (u32 i = 0; i < vm->nvcpus; i++)
				if (vm->vcpus[i] != v)
					vcpu_kick(vm->vcpus[i]);
		} else {
			a->val = vm->vgic.ctlr;
		}
		return true;
	case GICD_TYPER:
		if (!a->write)
			a->val = (vm->vgic.nr_intids / 32 - 1) | ((vm->nvcpus - 1) << 5);
		return true;
	case GICD_IIDR:
		if (!a->write)
			a->val = GIC400_IIDR;
		return true;
	case GICD_SGIR:
		if (a->write)
			vgic_v2_sgir(v, (u32)a->val);
		else
			a->val = 0;
		return true;
	default:
		break;
	}
	if (off >= GICD_ITARGETSR && off < GICD_ITARGETSR + 1020)
		return vgic_v2_itargets(vm, v, a);
	if (off >= GICD_CPENDSGIR && off < GICD_SPENDSGIR + 0x10)
		return vgic_v2_pendsgi(vm, v, a, off >= GICD_SPENDSGIR);
	if (off >= GICD_IGROUPR && off < GICD_ISENABLER) {
		if (!a->write)
			a->val = 0; /* Group 0 */
		return true;
	}
	if (off >= GICD_ISENABLER && off < GICD_IGRPMODR)
		return vgic_regs_access(vm, v, a, 0, vm->vgic.nr_intids);
	if (off >= GICD_ID_BASE) {
		if (!a->write)
			a->val = vgic_regs_id(0xf000 + off, 2);
		return true;
	}
	if (!a->write)
		a->val = 0; /* reserved: RAZ/WI */
	return true;
}

static void vgic_v2_vm_init(struct vm *vm)
{
	const struct cfg_platform *p = cfg_system.platform;
	u64 stride = p->gic.gicc_page_stride ? p->gic.gicc_page_stride : VGIC_V2_FRAME;

	vm->vgic.sgi_sources = true;
	mmio_register(vm, p->vgicd_ipa, VGIC_V2_DIST_SIZE, vgic_v2_dist_mmio, vm);
	/* GICV's two pages at the guest's GICC (architected 4 KiB layout) */
	mem_map(vm, p->vgicc_ipa, p->gicv_base, VGIC_V2_FRAME, MEM_DEVICE, NULL);
	mem_map(vm, p->vgicc_ipa + VGIC_V2_FRAME, p->gicv_base + stride, VGIC_V2_FRAME, MEM_DEVICE,
	        NULL);
}

const struct vgic_ops vgic_v2_ops = {
	.version = 2,
	.vm_init = vgic_v2_vm_init,
	.sysreg = NULL, /* no GICv3 system registers: they are undefined */
};
