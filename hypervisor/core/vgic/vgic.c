/* SPDX-License-Identifier: Apache-2.0 */
/* Virtual interrupt state and the list-register engine, for every GIC
 * version: list registers are struct gic_lr records the arch driver encodes. */
#include "core/vgic/vgic.h"

#include "arch/aarch64/timer.h"  /* IRQ_PPI_VTIMER, IRQ_PPI_PTIMER */
#include "core/vgic/vgic_regs.h" /* GICD_ISPENDR, GICD_ICPENDR, GICD_ICACTIVER */
#include "core/vgic/vgic_v3_virq.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic.h"
#include "lib/features.h"
#include "lib/log.h"
#include "lib/string.h"

struct virq *vgic_virq(struct vm *vm, struct vcpu *v, u32 intid)
{
	if (intid < 32)
		return v ? &v->vgic.priv[intid] : NULL;
#if IS_ENABLED(ITS)
	if (intid >= VGIC_LPI_BASE)
		return intid - VGIC_LPI_BASE < VGIC_NR_LPIS ? &vm->vgic.lpi[intid - VGIC_LPI_BASE]
		                                            : NULL;
#endif
	if (intid >= vm->vgic.nr_intids)
		return NULL;
	return &vm->vgic.spi[intid - 32];
}

struct vcpu *vgic_target(struct vm *vm, struct vcpu *v, u32 intid)
{
	if (intid < 32)
		return v;
#if IS_ENABLED(ITS)
	if (intid >= VGIC_LPI_BASE) {
		struct virq *q = vgic_virq(vm, NULL, intid);

		return q ? vm->vcpus[q->target] : NULL;
	}
#endif
	return vm->vcpus[vm->vgic.spi[intid - 32].target];
}

/* vgic_set_pending_locked with q, intid's state (owned), looked up already */
static inline __attribute__((always_inline)) void vgic_pend_locked(struct vm *vm, struct vcpu *v,
                                                                   u32 intid, struct virq *q)
{
	q->flags |= VIRQ_PENDING;
	if (intid < GIC_SGI_MAX && !v->vgic.sgi_src[intid])
		v->vgic.sgi_src[intid] = 1; /* from vCPU 0 unless said otherwise */
	if (intid < 32) {
		v->vgic.pend_priv |= 1u << intid;
#if IS_ENABLED(ITS)
	} else if (intid >= VGIC_LPI_BASE) {
		u32 n = intid - VGIC_LPI_BASE;

		vm->vgic.pend_lpi[n / 32] |= 1u << (n % 32);
		vm->vgic.pend_spi_words |= 1u << VGIC_LPI_WORD;
#endif
	} else {
		u32 w = (intid - 32) / 32;

		vm->vgic.pend_spi[w] |= 1u << (intid % 32);
		vm->vgic.pend_spi_words |= 1u << w;
	}
}

void vgic_set_pending_locked(struct vm *vm, struct vcpu *v, u32 intid)
{
	struct virq *q = vgic_virq(vm, v, intid);

	if (q && (q->flags & VIRQ_OWNED))
		vgic_pend_locked(vm, v, intid, q);
}

void vgic_set_sgi_pending_locked(struct vm *vm, struct vcpu *v, u32 intid, u32 source)
{
	if (intid >= GIC_SGI_MAX || !v)
		return;
	if (!vm->vgic.sgi_sources)
		source = 0;
	v->vgic.sgi_src[intid] |= (u8)(1u << (source & 7));
	vgic_set_pending_locked(vm, v, intid);
}

void vgic_clear_sgi_sources_locked(struct vm *vm, struct vcpu *v, u32 intid, u32 sources)
{
	if (intid >= GIC_SGI_MAX || !v)
		return;
	v->vgic.sgi_src[intid] &= (u8)~sources;
	if (!v->vgic.sgi_src[intid])
		vgic_clear_pending_locked(vm, v, intid);
}

void vgic_clear_pending_locked(struct vm *vm, struct vcpu *v, u32 intid)
{
	struct virq *q = vgic_virq(vm, v, intid);

	if (!q)
		return;
	q->flags &= (u8)~VIRQ_PENDING;
	if (intid < GIC_SGI_MAX)
		v->vgic.sgi_src[intid] = 0;
	if (intid < 32) {
		v->vgic.pend_priv &= ~(1u << intid);
#if IS_ENABLED(ITS)
	} else if (intid >= VGIC_LPI_BASE) {
		u32 n = intid - VGIC_LPI_BASE, any = 0;

		vm->vgic.pend_lpi[n / 32] &= ~(1u << (n % 32));
		for (u32 w = 0; w < VGIC_NR_LPIS / 32; w++)
			any |= vm->vgic.pend_lpi[w];
		if (!any)
			vm->vgic.pend_spi_words &= ~(1u << VGIC_LPI_WORD);
#endif
	} else {
		u32 w = (intid - 32) / 32;

		vm->vgic.pend_spi[w] &= ~(1u << (intid % 32));
		if (!vm->vgic.pend_spi[w])
			vm->vgic.pend_spi_words &= ~(1u << w);
	}
}

__cold void vgic_vm_setup(struct vm *vm)
{
	/* only the physical GIC's version's front end is built (Makefile GIC=) */
	static const struct vgic_ops *const fronts[] = {
#if !defined(GIC_VERSION) || GIC_VERSION == 3
		&vgic_v3_ops,
#endif
#if !defined(GIC_VERSION) || GIC_VERSION == 2
		&vgic_v2_ops,
#endif
	};
	u32 version = gic_version();

	vm->vgic.ops = NULL;
	for (u32 i = 0; i < ARRAY_SIZE(fronts); i++)
		if (fronts[i]->version == version)
			vm->vgic.ops = fronts[i];
	if (!vm->vgic.ops)
		panic("vm %s: no virtual GIC front end for GICv%u", vm->cfg->name, version);
	vm->vgic.ops->vm_init(vm);
}

bool vgic_sysreg(struct vcpu *v, u64 reg, bool read, u64 val)
{
	const struct vgic_ops *ops = v->vm->vgic.ops;

	return ops->sysreg && ops->sysreg(v, reg, read, val);
}

bool vgic_hw_level(const struct virq *q)
{
	return (q->flags & (VIRQ_HW | VIRQ_EDGE)) == VIRQ_HW;
}

/* Drops a HW level interrupt the guest has not taken (latched, or pending
 * only in a list register of v, the calling CPU's vCPU) and deactivates the
 * physical interrupt the hypervisor acknowledged on the way in. */
static void vgic_hw_drop_locked(struct vm *vm, struct vcpu *v, u32 intid, struct virq *q)
{
	if (q->flags & VIRQ_IN_LR) {
		struct gic_lr *lr = &v->vgic.lr[q->lr];

		gic_lr_read(q->lr, lr);
		if (lr->state != GIC_LR_PENDING)
			return; /* the guest has taken it: its deactivation ends it */
		*lr = (struct gic_lr){ 0 };
		gic_lr_write(q->lr, lr);
		v->vgic.lr_used &= ~(1u << q->lr);
		q->flags &= (u8)~VIRQ_IN_LR;
	} else if (!(q->flags & VIRQ_PENDING)) {
		return; /* nothing acknowledged */
	}
	vgic_clear_pending_locked(vm, v, intid);
	gic_deactivate(intid);
}

bool vgic_hw_line_locked(struct vm *vm, struct vcpu *v, u32 intid, struct virq *q)
{
	bool line = gic_is_pending(intid);

	if (!line && v && v == vcpu_current())
		vgic_hw_drop_locked(vm, v, intid, q);
	return line;
}

/*
 * Direct interrupt mode (docs/interrupts.md "Emulated sources"): a direct
 * VM has no list registers, so its emulated sources (the virtual UART's
 * interrupt, doorbells) are spare physical SPIs (the toolchain's picks,
 * config/interrupts.py) that are the VM's own as its passthrough SPIs are
 * (VIRQ_HW: enable, priority, route, pending and active written through by
 * vgic_regs.c), always edge-triggered, set pending here when the source
 * raises its interrupt.
 */
static bool vgic_direct_vm(const struct vm *vm)
{
	return delivery_physical(vcpu_vm_delivery(vm));
}

bool vgic_direct_soft(const struct vm *vm, u32 intid)
{
	const struct cfg_vm *c = vm->cfg;

	if (!vgic_direct_vm(vm) || intid < GIC_PRIV_MAX)
		return false;
	if (c->console_ipa && c->console_irq == intid)
		return true;
	for (u32 i = 0; i < c->nshmem; i++)
		if (c->shmem[i].doorbell_irq == intid)
			return true;
	return false;
}

/* Makes a direct VM's own interrupt intid pending on the physical GIC or
 * not (its delivery's raise: the redistributor of t's CPU for a private
 * one). */
static void vgic_direct_pend(struct vm *vm, struct vcpu *t, u32 intid, bool pend)
{
	vcpu_vm_delivery(vm)->raise(t, intid, pend);
}

/* The spare SPI of a direct VM's emulated source: the VM's (edge), off,
 * nothing pending or active. */
static __cold void vgic_direct_soft_init(struct vm *vm, u32 intid)
{
	struct virq *q = vgic_virq(vm, NULL, intid);

	if (!q || !intid)
		return;
	q->flags = VIRQ_OWNED | VIRQ_HW | VIRQ_EDGE;
	gic_disable(intid);
	gic_set_edge(intid, true);
	gic_cpu_bank_write(0, GICD_ICPENDR, intid);
	gic_cpu_bank_write(0, GICD_ICACTIVER, intid);
}

__cold void vgic_vm_init(struct vm *vm)
{
	const struct cfg_vm *c = vm->cfg;
	struct vgic_dist *d = &vm->vgic;

	memset(d->spi, 0, sizeof(d->spi));
	memset(d->pend_spi, 0, sizeof(d->pend_spi));
	d->pend_spi_words = 0;
#if IS_ENABLED(ITS)
	memset(d->lpi, 0, sizeof(d->lpi)); /* not owned until the VM's ITS maps them */
	memset(d->pend_lpi, 0, sizeof(d->pend_lpi));
	for (u32 i = 0; i < VGIC_NR_LPIS; i++)
		d->lpi[i].flags = VIRQ_EDGE;
#endif
	d->ctlr = 0;
	d->nr_intids = gic_nr_intids();
	for (u32 i = 0; i < VGIC_NR_SPIS; i++) {
		d->spi[i].flags = VIRQ_EDGE;
		d->spi[i].v2_targets = 1; /* vCPU 0, its target */
	}
	for (u32 i = 0; i < c->nirq; i++) {
		struct virq *q = vgic_virq(vm, NULL, c->irqs[i]);
		if (q) {
			q->flags = VIRQ_OWNED | VIRQ_HW; /* level until the guest says otherwise */
			gic_disable(c->irqs[i]);
		}
	}
	if (c->console_ipa) {
		struct virq *q = vgic_virq(vm, NULL, c->console_irq);
		if (q)
			q->flags = VIRQ_OWNED;
	}
	for (u32 i = 0; i < c->nshmem; i++) {
		struct virq *q = vgic_virq(vm, NULL, c->shmem[i].doorbell_irq);
		if (q && c->shmem[i].doorbell_irq)
			q->flags = VIRQ_OWNED | VIRQ_EDGE;
	}
	for (u32 i = 0; i < 2; i++) { /* its virtio devices' (core/virtio: an emulated VM only) */
		const struct cfg_virtio *vd = i ? c->virtio_blk : c->virtio;
		struct virq *q = vd ? vgic_virq(vm, NULL, vd->irq) : NULL;
		if (q)
			q->flags = VIRQ_OWNED | VIRQ_EDGE;
	}
	if (!vgic_direct_vm(vm))
		return;
	if (c->console_ipa)
		vgic_direct_soft_init(vm, c->console_irq);
	for (u32 i = 0; i < c->nshmem; i++)
		vgic_direct_soft_init(vm, c->shmem[i].doorbell_irq);
}

__cold void vgic_vcpu_init(struct vcpu *v)
{
	struct vgic_cpu *g = &v->vgic;

	spin_lock(&v->vm->vgic.lock);
	memset(g->priv, 0, sizeof(g->priv));
	memset(g->sgi_src, 0, sizeof(g->sgi_src));
	g->pend_priv = 0;
	for (u32 i = 0; i < 16; i++)
		g->priv[i].flags = VIRQ_OWNED | VIRQ_EDGE | VIRQ_ENABLED;
	g->priv[IRQ_PPI_VTIMER].flags = VIRQ_OWNED | VIRQ_HW;
	g->priv[IRQ_PPI_PTIMER].flags = VIRQ_OWNED | VIRQ_HW;
	spin_unlock(&v->vm->vgic.lock);
	g->nlr = gic_lr_count();
	if (g->nlr > VGIC_MAX_LRS)
		g->nlr = VGIC_MAX_LRS;
	g->lr_all = (1u << g->nlr) - 1;
	g->lr_used = 0;
	g->fresh_hw = 0;
	g->underflow = false;
	memset(g->lr, 0, sizeof(g->lr));
	g->waker_sleep = true;
	gic_vif_reset();
}

static struct gic_lr vgic_lr_value(u32 intid, const struct virq *q, u32 source);

/* List register n of v no longer holds q: forget it (and clear the register
 * when write, e.g. a finished level interrupt's EOI bit; a register empty by
 * ELRSR needs nothing). A software level source still high is pending
 * again. */
static void vgic_lr_retire_locked(struct vcpu *v, u32 n, struct virq *q, bool write)
{
	struct vgic_cpu *g = &v->vgic;
	u32 intid = g->lr[n].vintid;

	q->flags &= (u8) ~(VIRQ_IN_LR | VIRQ_ACTIVE);
	g->lr_used &= ~(1u << n);
	g->lr[n] = (struct gic_lr){ 0 };
	if (write)
		gic_lr_write(n, &g->lr[n]);
	if (!(q->flags & (VIRQ_EDGE | VIRQ_HW)) && (q->flags & VIRQ_LEVEL))
		vgic_set_pending_locked(v->vm, v, intid);
}

/* Reads back the list registers after the guest ran: interrupts the guest
 * has finished with leave them; level sources still high become pending.
 * Empty registers (one ELRSR read) are retired from the cached copy without
 * reading or writing them. */
static void __attribute__((noinline)) vgic_sync_lrs(struct vcpu *v)
{
	struct vm *vm = v->vm;
	struct vgic_cpu *g = &v->vgic;
	u32 empty = gic_lr_empty();

	spin_lock(&vm->vgic.lock);
	for (u32 used = g->lr_used; used; used &= used - 1) {
		u32 n = (u32)__builtin_ctz(used);
		struct gic_lr *lr = &g->lr[n];
		u32 intid = lr->vintid;
		struct virq *q;

		if (empty & (1u << n))
			lr->state = 0;
		else
			gic_lr_read(n, lr);
		q = vgic_virq(vm, v, intid);
		if (!q)
			continue;
		if (lr->state == GIC_LR_PENDING && vgic_hw_level(q) &&
		    !vgic_hw_line_locked(vm, v, intid, q))
			continue; /* the line dropped before the guest took it */
		if (lr->state) {
			if (lr->state & GIC_LR_ACTIVE)
				q->flags |= VIRQ_ACTIVE;
			else
				q->flags &= (u8)~VIRQ_ACTIVE;
			continue;
		}
		vgic_lr_retire_locked(v, n, q, !(empty & (1u << n)));
	}
	spin_unlock(&vm->vgic.lock);
}

/* The platform quirk gic.virq: software (vgic_v3_virq.h): the interface's
 * IRQ line, at the end of every entry and hot-path
 * delivery; nothing in any other build. */
static inline void vgic_flush_virq(struct vcpu *v)
{
	if (IS_ENABLED(SOFT_VIRQ))
		vgic_v3_virq_line(v);
}

bool vgic_inject_fast_locked(struct vcpu *v, u32 intid, struct virq *q)
{
	struct vm *vm = v->vm;
	struct vgic_cpu *g = &v->vgic;
	u32 all = (1u << g->nlr) - 1, empty, n;
	bool done = false;

	spin_lock(&vm->vgic.lock);
	if (!(vm->vgic.ctlr & 3) || g->pend_priv || vm->vgic.pend_spi_words ||
	    (q->flags & (VIRQ_ENABLED | VIRQ_PENDING | VIRQ_HW)) != (VIRQ_ENABLED | VIRQ_HW))
		goto out;
	empty = gic_lr_empty() & g->lr_used;
	if (q->flags & VIRQ_IN_LR) {
		/* its previous delivery's register: reusable once the guest is done */
		n = q->lr;
		if (!(empty & (1u << n)) || g->lr[n].vintid != intid)
			goto out; /* (an SPI in another vCPU's register) */
		q->flags &= (u8)~VIRQ_ACTIVE;
	} else {
		if (!(~g->lr_used & all)) {
			/* retire what the guest has finished with, as vgic_sync does */
			for (; empty; empty &= empty - 1) {
				u32 k = (u32)__builtin_ctz(empty);
				struct virq *old = vgic_virq(vm, v, g->lr[k].vintid);

				if (old)
					vgic_lr_retire_locked(v, k, old, false);
			}
			if (!(~g->lr_used & all) || g->pend_priv)
				goto out; /* full, or a retired level source is pending again */
		}
		n = (u32)__builtin_ctz(~g->lr_used & all);
		q->flags |= VIRQ_IN_LR;
		q->lr = (u8)n;
		g->lr_used |= 1u << n;
	}
	g->lr[n] = vgic_lr_value(intid, q, 0);
	gic_lr_write(n, &g->lr[n]);
	done = true;
out:
	spin_unlock(&vm->vgic.lock);
	if (done)
		vgic_flush_virq(v); /* (as vgic_fast_done) */
	return done;
}

static bool vgic_deliverable(const struct virq *q)
{
	return (q->flags & (VIRQ_PENDING | VIRQ_ENABLED | VIRQ_IN_LR)) ==
	       (VIRQ_PENDING | VIRQ_ENABLED);
}

#if IS_ENABLED(ITS)
/* vgic_best's look at the pending virtual LPIs targeting v: the best of
 * them if more urgent than best (priority *best_prio). */
static u32 vgic_best_lpi(struct vm *vm, struct vcpu *v, u32 best, u32 *best_prio, bool *found)
{
	for (u32 w = 0; w < VGIC_NR_LPIS / 32; w++) {
		for (u32 bits = vm->vgic.pend_lpi[w]; bits; bits &= bits - 1) {
			u32 n = w * 32 + (u32)__builtin_ctz(bits);
			struct virq *q = &vm->vgic.lpi[n];

			if (q->target == v->idx && vgic_deliverable(q) && q->prio < *best_prio) {
				best = VGIC_LPI_BASE + n;
				*best_prio = q->prio;
				*found = true;
			}
		}
	}
	return best;
}
#endif

/* Highest-priority deliverable interrupt for v, or 0 with *found = false. */
static u32 vgic_best(struct vm *vm, struct vcpu *v, bool *found)
{
	u32 best = 0;
	u32 best_prio = 0x100;
	u32 bits = v->vgic.pend_priv;

	*found = false;
	while (bits) {
		u32 i = (u32)__builtin_ctz(bits);
		struct virq *q = &v->vgic.priv[i];

		bits &= bits - 1;
		if (vgic_deliverable(q) && q->prio < best_prio) {
			best = i;
			best_prio = q->prio;
			*found = true;
		}
	}
	for (u32 words = vm->vgic.pend_spi_words; words; words &= words - 1) {
		u32 w = (u32)__builtin_ctz(words);

#if IS_ENABLED(ITS)
		if (w == VGIC_LPI_WORD) {
			best = vgic_best_lpi(vm, v, best, &best_prio, found);
			continue;
		}
#endif
		bits = vm->vgic.pend_spi[w];
		while (bits) {
			u32 i = (u32)__builtin_ctz(bits);
			u32 intid = 32 + w * 32 + i;
			struct virq *q = &vm->vgic.spi[intid - 32];

			bits &= bits - 1;
			if (q->target == v->idx && vgic_deliverable(q) && q->prio < best_prio) {
				best = intid;
				best_prio = q->prio;
				*found = true;
			}
		}
	}
	return best;
}

static struct gic_lr vgic_lr_value(u32 intid, const struct virq *q, u32 source)
{
	struct gic_lr lr = {
		.vintid = intid,
		.prio = q->prio,
		.state = GIC_LR_PENDING,
		.source = (u8)source,
	};

	if (q->flags & VIRQ_HW) {
		lr.hw = true;
		lr.pintid = intid;
	} else if (!(q->flags & VIRQ_EDGE)) {
		lr.eoi_maint = true; /* level: tell us when the guest is done */
	}
	return lr;
}

/* Clears list register n (the cached copy and the hardware register). */
static void vgic_lr_free(struct vgic_cpu *g, u32 n)
{
	g->lr[n] = (struct gic_lr){ 0 };
	gic_lr_write(n, &g->lr[n]);
	g->lr_used &= ~(1u << n);
}

/* All list registers are in use: if one holds a merely pending interrupt
 * of lower priority than prio, put it back to the pending set and free
 * its LR, so that the guest always sees the most urgent interrupts. */
static bool vgic_evict(struct vm *vm, struct vcpu *v, u8 prio)
{
	struct vgic_cpu *g = &v->vgic;
	u32 victim = g->nlr;
	u32 worst = prio;

	for (u32 n = 0; n < g->nlr; n++) {
		const struct gic_lr *lr = &g->lr[n];

		if (lr->state == GIC_LR_PENDING && lr->prio > worst) {
			worst = lr->prio;
			victim = n;
		}
	}
	if (victim == g->nlr)
		return false;
	u32 intid = g->lr[victim].vintid;
	u32 source = g->lr[victim].source;
	struct virq *q = vgic_virq(vm, v, intid);

	vgic_lr_free(g, victim);
	if (q) {
		q->flags &= (u8)~VIRQ_IN_LR;
		if (intid < GIC_SGI_MAX)
			vgic_set_sgi_pending_locked(vm, v, intid, source);
		else
			vgic_set_pending_locked(vm, v, intid);
	}
	return true;
}

/* Fills free list registers with the highest-priority pending interrupts;
 * asks for an underflow maintenance interrupt if some are left over. Does
 * nothing but return when nothing of the VM is pending (the bitmaps are read
 * without the lock: a CPU that sets a bit afterwards kicks this one). */
static void __attribute__((noinline)) vgic_flush_pending(struct vcpu *v)
{
	struct vm *vm = v->vm;
	struct vgic_cpu *g = &v->vgic;
	bool overflow = false;

	spin_lock(&vm->vgic.lock);
	/* An edge that arrived while the interrupt is in an LR (software
	 * interrupts only): active there, make the LR pending and active (an
	 * SGI only when pending from the same source alone); else it waits for
	 * the LR, whose EOI must then exit (EOI maintenance): without that exit
	 * it stayed pending beside the LR after the guest's EOI, vgic_inject
	 * kicked no CPU for later edges and a guest asleep in WFI slept on
	 * (tests/configs/doorbell-stale.yaml). Still pending, it keeps a flood
	 * of edges from kicking the CPU again. */
	for (u32 used = g->lr_used; used; used &= used - 1) {
		u32 n = (u32)__builtin_ctz(used);
		u32 intid = g->lr[n].vintid;
		struct virq *q = vgic_virq(vm, v, intid);

		if (!q || !(q->flags & VIRQ_PENDING) || (q->flags & VIRQ_HW))
			continue;
		if (g->lr[n].state == GIC_LR_ACTIVE &&
		    (intid >= GIC_SGI_MAX || v->vgic.sgi_src[intid] == 1u << g->lr[n].source)) {
			g->lr[n].state |= GIC_LR_PENDING;
			gic_lr_write(n, &g->lr[n]);
			vgic_clear_pending_locked(vm, v, intid);
		} else if (!g->lr[n].eoi_maint) {
			g->lr[n].eoi_maint = true;
			gic_lr_write(n, &g->lr[n]);
		}
	}
	if (vm->vgic.ctlr & 3) {
		for (;;) {
			bool found;
			u32 intid = vgic_best(vm, v, &found);
			u32 n, source = 0;
			struct virq *q;

			if (!found)
				break;
			q = vgic_virq(vm, v, intid);
			/* a PPI acknowledged during this exit is still high: no resample */
			if (vgic_hw_level(q) && !(intid < 32 && (g->fresh_hw & (1u << intid))) &&
			    !vgic_hw_line_locked(vm, v, intid, q))
				continue; /* dropped: its line fell before delivery */
			if (g->lr_used == (1u << g->nlr) - 1 && !vgic_evict(vm, v, q->prio)) {
				overflow = true;
				break;
			}
			n = (u32)__builtin_ctz(~g->lr_used);
			if (intid < GIC_SGI_MAX && g->sgi_src[intid])
				source = (u32)__builtin_ctz(g->sgi_src[intid]);
			g->lr[n] = vgic_lr_value(intid, q, source);
			gic_lr_write(n, &g->lr[n]);
			g->lr_used |= 1u << n;
			q->flags |= VIRQ_IN_LR;
			q->lr = (u8)n;
			if (intid < GIC_SGI_MAX && (g->sgi_src[intid] &= (u8) ~(1u << source)))
				continue; /* still pending from other sources (after this one) */
			vgic_clear_pending_locked(vm, v, intid);
		}
	}
	g->fresh_hw = 0;
	spin_unlock(&vm->vgic.lock);
	if (overflow != g->underflow) {
		g->underflow = overflow;
		gic_vif_ctl(overflow);
	}
}

void vgic_sync(struct vcpu *v)
{
	if (IS_ENABLED(SOFT_VIRQ)) /* the quirk gic.virq: software: the line drops */
		vgic_v3_virq_exit();
	if (v->vgic.lr_used)
		vgic_sync_lrs(v);
}

/* Nothing to do when nothing of the VM is pending and no underflow
 * interrupt is asked for. The bitmaps are read without the lock: a CPU that
 * sets a bit afterwards kicks this one. */
void vgic_flush(struct vcpu *v)
{
	if (READ_ONCE(v->vgic.pend_priv) || READ_ONCE(v->vm->vgic.pend_spi_words) ||
	    v->vgic.underflow) {
		vgic_flush_pending(v);
		vgic_flush_virq(v);
		return;
	}
	v->vgic.fresh_hw = 0;
	/* Not needed architecturally (the interface is on, no underflow asked
	 * for), but measured on QEMU: without this write (and its ISB) on every
	 * entry the bandwidth regulator's overflow skid grew from ~460 to ~1,150
	 * events (tests/qemu/test_bandwidth.py); why QEMU notices the overflow
	 * later is not established. Five instructions. */
	gic_vif_ctl(false);
	vgic_flush_virq(v);
}

void vgic_maintenance(struct vcpu *v)
{
	/* The underflow condition is a level: drop UIE so it deasserts; the
	 * exit path refills the list registers and sets UIE again if needed.
	 * (EOI maintenance deasserts when vgic_sync() clears the LR.) */
	gic_vif_ctl(false);
	if (v) {
		v->vgic.underflow = false;
		v->vgic.maint_irqs++;
	}
}

/*
 * Makes intid pending and kicks the target's CPU only when that can change
 * what its vGIC presents: the interrupt is enabled and was not pending
 * already (a pending one was kicked for when it became pending, or is
 * delivered by the write that enables it: vgic_regs). A doorbell to a
 * disabled or already-pending interrupt costs the target nothing
 * (docs/io.md: a client flooding doorbells at a busy I/O VM).
 */
void vgic_inject(struct vm *vm, struct vcpu *target, u32 intid)
{
	struct vcpu *t;
	struct virq *q;
	bool kick = false;

	spin_lock(&vm->vgic.lock);
	t = vgic_target(vm, target, intid);
	q = vgic_virq(vm, t, intid);
	if (vgic_direct_vm(vm)) {
		/* its own physical interrupt: pending at the GIC, no kick */
		if (q && (q->flags & (VIRQ_OWNED | VIRQ_HW)) == (VIRQ_OWNED | VIRQ_HW))
			vgic_direct_pend(vm, t, intid, true);
		spin_unlock(&vm->vgic.lock);
		return;
	}
	if (q) {
		u8 flags = q->flags;

		kick = (flags & (VIRQ_OWNED | VIRQ_ENABLED | VIRQ_PENDING)) ==
		       (VIRQ_OWNED | VIRQ_ENABLED);
		if (flags & VIRQ_OWNED)
			vgic_pend_locked(vm, t, intid, q);
		/* a PPI acknowledged just now: its line is high (a private q is
		 * t's, t not NULL) */
		if (intid < 32 && (flags & VIRQ_HW))
			t->vgic.fresh_hw |= 1u << intid;
	}
	spin_unlock(&vm->vgic.lock);
	if (t && kick)
		vcpu_kick(t);
}

void vgic_set_level(struct vm *vm, u32 intid, bool level)
{
	struct virq *q;
	struct vcpu *t = NULL;

	spin_lock(&vm->vgic.lock);
	q = vgic_virq(vm, NULL, intid);
	if (q && vgic_direct_vm(vm)) {
		bool was = q->flags & VIRQ_LEVEL;

		/* edge-triggered spare SPI: pending on a rising level, and no longer
		 * pending (not yet taken) once the level fell (a stale edge) */
		if (level)
			q->flags |= VIRQ_LEVEL;
		else
			q->flags &= (u8)~VIRQ_LEVEL;
		if (level != was && (q->flags & VIRQ_HW))
			vgic_direct_pend(vm, vgic_target(vm, NULL, intid), intid, level);
	} else if (q) {
		bool was = q->flags & VIRQ_LEVEL;

		if (level) {
			q->flags |= VIRQ_LEVEL;
			if (!was && !(q->flags & VIRQ_IN_LR)) {
				t = vgic_target(vm, NULL, intid);
				vgic_set_pending_locked(vm, t, intid);
			}
		} else {
			q->flags &= (u8)~VIRQ_LEVEL;
			if (!(q->flags & VIRQ_IN_LR))
				vgic_clear_pending_locked(vm, NULL, intid);
		}
	}
	spin_unlock(&vm->vgic.lock);
	if (t)
		vcpu_kick(t);
}

void vgic_level_fresh(struct vm *vm, u32 intid)
{
	struct virq *q;

	if (!vgic_direct_vm(vm))
		return; /* a level in a list register stays until the guest is done */
	spin_lock(&vm->vgic.lock);
	q = vgic_virq(vm, NULL, intid);
	if (q && (q->flags & (VIRQ_LEVEL | VIRQ_HW)) == (VIRQ_LEVEL | VIRQ_HW))
		vgic_direct_pend(vm, vgic_target(vm, NULL, intid), intid, true);
	spin_unlock(&vm->vgic.lock);
}

__cold void vgic_hw_enable(struct vm *vm, u32 intid, bool enable)
{
	struct virq *q = vgic_virq(vm, NULL, intid);

	if (!q || !(q->flags & VIRQ_HW) || intid < 32)
		return;
	if (enable) {
		gic_set_priority(intid, GIC_PRIO_GUEST);
		gic_route_spi(intid, vm->vcpus[q->target]->pcpu_mpidr);
		gic_enable(intid);
	} else {
		gic_disable(intid);
	}
}
