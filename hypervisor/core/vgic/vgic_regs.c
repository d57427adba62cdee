/* SPDX-License-Identifier: Apache-2.0 */
#include "core/vgic/vgic_regs.h"

#include "core/vgic/vgic.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic.h"
#include "lib/features.h"

enum vgic_bank { BANK_ENABLE, BANK_PENDING, BANK_ACTIVE };

/*
 * Direct interrupt mode (docs/interrupts.md): the guest takes its
 * interrupts on the physical CPU interface, so what it writes here about
 * its own physical interrupts (SGIs, its timers' PPIs, its passthrough
 * SPIs) goes to the physical distributor/redistributor of the target
 * vCPU's CPU as well. Anything else it owns (an emulated device's
 * interrupt) stays virtual only. Non-secure writes cannot reach the
 * firmware's Group 0 interrupts, and the priorities it writes land in the
 * lower half of the priority range (non-secure view), below every SDEI
 * event's priority.
 */
static bool vgic_direct_phys(struct vm *vm, const struct virq *q, u32 intid)
{
	/* SGI 15 is the hypervisor's Group 0 kick when its events are FIQs
	 * (the firmware's, a secure one, under SDEI); a direct guest's sends
	 * of it are dropped (irq_direct.c) */
	return delivery_physical(vcpu_vm_delivery(vm)) &&
	       ((intid < GIC_SGI_MAX && intid != IRQ_SGI_KICK_FIQ) || (q->flags & VIRQ_HW));
}

/* A direct VM's own interrupt's priority, in the non-secure view when
 * Group 0 is the hypervisor's (gic_guest_prio, docs/interrupts.md). */
static void vgic_direct_prio(u32 cpu, u32 intid, u8 prio)
{
	gic_cpu_set_priority(cpu, intid, gic_guest_prio(prio));
}

static u32 vgic_direct_cpu(struct vm *vm, struct vcpu *v, u32 intid)
{
	struct vcpu *t = vgic_target(vm, v, intid);

	return t ? t->pcpu : 0;
}

static bool vgic_bank_bit(struct vm *vm, struct vcpu *v, enum vgic_bank bank, u32 intid)
{
	struct virq *q = vgic_virq(vm, v, intid);
	struct vcpu *t;

	if (!q || !(q->flags & VIRQ_OWNED))
		return false;
	switch (bank) {
	case BANK_ENABLE:
		return q->flags & VIRQ_ENABLED;
	case BANK_PENDING:
		if (vgic_direct_phys(vm, q, intid))
			return gic_cpu_bank_read(vgic_direct_cpu(vm, v, intid), GICD_ISPENDR,
			                         intid);
		t = vgic_target(vm, v, intid);
		if (vgic_hw_level(q) && (intid >= 32 || t == vcpu_current()))
			return vgic_hw_line_locked(vm, t, intid, q);
		if (q->flags & VIRQ_PENDING)
			return true;
		return (q->flags & VIRQ_IN_LR) && t && (t->vgic.lr[q->lr].state & GIC_LR_PENDING);
	case BANK_ACTIVE:
		if (vgic_direct_phys(vm, q, intid))
			return gic_cpu_bank_read(vgic_direct_cpu(vm, v, intid), GICD_ISACTIVER,
			                         intid);
		return q->flags & VIRQ_ACTIVE;
	}
	return false;
}

/* A direct VM's own physical interrupt (vgic_direct_phys): the virtual
 * enable bit (which the distributor's reads and vgic_hw_enable keep), and
 * the physical register. */
static void vgic_direct_bank_set(struct vm *vm, struct vcpu *v, struct virq *q, enum vgic_bank bank,
                                 u32 intid, bool set)
{
	u32 cpu = vgic_direct_cpu(vm, v, intid);

	switch (bank) {
	case BANK_ENABLE:
		if (set)
			q->flags |= VIRQ_ENABLED;
		else
			q->flags &= (u8)~VIRQ_ENABLED;
		if (intid >= GIC_PRIV_MAX) {
			vgic_hw_enable(vm, intid, set); /* routing to the target's CPU */
			vgic_direct_prio(cpu, intid, q->prio);
			return;
		}
		if (set)
			vgic_direct_prio(cpu, intid, q->prio);
		gic_cpu_bank_write(cpu, set ? GICD_ISENABLER : GICD_ICENABLER, intid);
		return;
	case BANK_PENDING:
		gic_cpu_bank_write(cpu, set ? GICD_ISPENDR : GICD_ICPENDR, intid);
		return;
	case BANK_ACTIVE:
		if (!set)
			gic_cpu_bank_write(cpu, GICD_ICACTIVER, intid);
		return;
	}
}

static void vgic_bank_set(struct vm *vm, struct vcpu *v, enum vgic_bank bank, u32 intid, bool set,
                          struct vcpu **kick)
{
	struct virq *q = vgic_virq(vm, v, intid);

	if (!q || !(q->flags & VIRQ_OWNED))
		return; /* not this VM's interrupt: write ignored */
	if (vgic_direct_phys(vm, q, intid)) {
		vgic_direct_bank_set(vm, v, q, bank, intid, set);
		return;
	}
	switch (bank) {
	case BANK_ENABLE:
		if (set == !!(q->flags & VIRQ_ENABLED))
			return;
		if (set)
			q->flags |= VIRQ_ENABLED;
		else
			q->flags &= (u8)~VIRQ_ENABLED;
		vgic_hw_enable(vm, intid, set);
		if (set && (q->flags & VIRQ_PENDING))
			*kick = vgic_target(vm, v, intid);
		return;
	case BANK_PENDING:
		if (q->flags & VIRQ_HW)
			return; /* physical state is the device's */
		if (set) {
			vgic_set_pending_locked(vm, vgic_target(vm, v, intid), intid);
			*kick = vgic_target(vm, v, intid);
		} else {
			vgic_clear_pending_locked(vm, vgic_target(vm, v, intid), intid);
		}
		return;
	case BANK_ACTIVE:
		if (!set)
			q->flags &= (u8)~VIRQ_ACTIVE;
		return;
	}
}

static bool vgic_bits(struct vm *vm, struct vcpu *v, struct mmio_access *a, u64 base,
                      enum vgic_bank bank, bool set, u32 first, u32 count, struct vcpu **kick)
{
	u32 intid0 = (u32)((a->off - base) * 8);

	if (intid0 < first || intid0 >= first + count) {
		if (!a->write)
			a->val = 0;
		return true;
	}
	for (u32 i = 0; i < a->size * 8; i++) {
		u32 intid = intid0 + i;

		if (a->write) {
			if (a->val & (1ull << i))
				vgic_bank_set(vm, v, bank, intid, set, kick);
		} else if (vgic_bank_bit(vm, v, bank, intid)) {
			a->val |= 1ull << i;
		}
	}
	return true;
}

bool vgic_regs_access(struct vm *vm, struct vcpu *v, struct mmio_access *a, u32 first, u32 count)
{
	struct vcpu *kick = NULL;
	u64 off = a->off;
	bool ok = true;

	if (!a->write)
		a->val = 0;
	if (off >= GICD_IGROUPR && off < GICD_ISENABLER) {
		/* every interrupt is Group 1: RAO/WI for owned ones */
		u32 intid0 = (u32)((off - GICD_IGROUPR) * 8);
		if (!a->write)
			for (u32 i = 0; i < a->size * 8; i++) {
				struct virq *q = vgic_virq(vm, v, intid0 + i);
				if (q && (q->flags & VIRQ_OWNED) && intid0 + i >= first &&
				    intid0 + i < first + count)
					a->val |= 1ull << i;
			}
		return true;
	}
	spin_lock(&vm->vgic.lock);
	if (off >= GICD_ISENABLER && off < GICD_ICENABLER)
		ok = vgic_bits(vm, v, a, GICD_ISENABLER, BANK_ENABLE, true, first, count, &kick);
	else if (off >= GICD_ICENABLER && off < GICD_ISPENDR)
		ok = vgic_bits(vm, v, a, GICD_ICENABLER, BANK_ENABLE, false, first, count, &kick);
	else if (off >= GICD_ISPENDR && off < GICD_ICPENDR)
		ok = vgic_bits(vm, v, a, GICD_ISPENDR, BANK_PENDING, true, first, count, &kick);
	else if (off >= GICD_ICPENDR && off < GICD_ISACTIVER)
		ok = vgic_bits(vm, v, a, GICD_ICPENDR, BANK_PENDING, false, first, count, &kick);
	else if (off >= GICD_ISACTIVER && off < GICD_ICACTIVER)
		ok = vgic_bits(vm, v, a, GICD_ISACTIVER, BANK_ACTIVE, true, first, count, &kick);
	else if (off >= GICD_ICACTIVER && off < GICD_IPRIORITYR)
		ok = vgic_bits(vm, v, a, GICD_ICACTIVER, BANK_ACTIVE, false, first, count, &kick);
	else if (off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + 1020) {
		u32 intid0 = (u32)(off - GICD_IPRIORITYR);
		for (u32 i = 0; i < a->size; i++) {
			struct virq *q = vgic_virq(vm, v, intid0 + i);
			if (!q || !(q->flags & VIRQ_OWNED) || intid0 + i < first ||
			    intid0 + i >= first + count)
				continue;
			if (a->write) {
				q->prio = (u8)(a->val >> (8 * i)) & 0xf8;
				if (vgic_direct_phys(vm, q, intid0 + i))
					vgic_direct_prio(vgic_direct_cpu(vm, v, intid0 + i),
					                 intid0 + i, q->prio);
			} else
				a->val |= (u64)q->prio << (8 * i);
		}
	} else if (off >= GICD_ICFGR && off < GICD_IGRPMODR) {
		u32 intid0 = (u32)((off - GICD_ICFGR) * 4);
		for (u32 i = 0; i < a->size * 4; i++) {
			u32 intid = intid0 + i;
			struct virq *q = vgic_virq(vm, v, intid);
			if (!q || !(q->flags & VIRQ_OWNED) || intid < first ||
			    intid >= first + count)
				continue;
			if (!a->write) {
				if (q->flags & VIRQ_EDGE)
					a->val |= 2ull << (2 * i);
			} else if (intid >= 32 && !vgic_direct_soft(vm, intid)) {
				/* (a direct VM's emulated source stays edge-triggered) */
				bool edge = (a->val >> (2 * i + 1)) & 1;
				if (edge)
					q->flags |= VIRQ_EDGE;
				else
					q->flags &= (u8)~VIRQ_EDGE;
				if (q->flags & VIRQ_HW)
					gic_set_edge(intid, edge);
			}
		}
	} else if (off >= GICD_IGRPMODR && off < GICD_NSACR + 0x100) {
		/* group modifier and non-secure access: RAZ/WI */
	} else {
		ok = false;
	}
	spin_unlock(&vm->vgic.lock);
	if (kick)
		vcpu_kick(kick);
	return ok;
}

u32 vgic_regs_id(u64 off, u32 version)
{
	switch (off) {
	case GICD_PIDR2:
		return (version << 4) | 0x0b; /* ArchRev, JEDEC, JEP106 ID (Arm) bits 6:4 */
	case 0xfff0:
		return 0x0d;
	case 0xfff4:
		return 0xf0;
	case 0xfff8:
		return 0x05;
	case 0xfffc:
		return 0xb1;
	default:
		return 0;
	}
}
