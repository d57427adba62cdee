/* SPDX-License-Identifier: Apache-2.0 */
/* A VM's virtual ITS (vits.h): its registers, its command queue, the
 * mirroring onto the physical ITS and the delivery of its LPIs. */
#include "core/vgic/vits.h"

#include "arch/aarch64/timer.h"
#include "core/config/config.h"
#include "core/mem/mem.h"
#include "core/vgic/vgic.h"
#include "core/vgic/vgic_regs.h"
#include "core/vgic/vits_cmd.h"
#include "core/vm/delivery.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/gic/gicv3_its.h"
#include "lib/log.h"
#include "lib/spinlock.h"
#include "lib/string.h"

#if IS_ENABLED(ITS) /* (a GICv2 build compiles this file empty: vits.h's stubs) */
_Static_assert(VITS_LPI_BASE == VGIC_LPI_BASE && VITS_NR_LPIS == VGIC_NR_LPIS,
               "the virtual ITS's LPIs are the vGIC's");

#define GITS_CTLR       0x0000
#define GITS_IIDR       0x0004
#define GITS_TYPER      0x0008
#define GITS_CBASER     0x0080
#define GITS_CWRITER    0x0088
#define GITS_CREADR     0x0090
#define GITS_BASER      0x0100
#define GITS_BASER_END  0x0140
#define GITS_FRAMES     0x20000 /* control and translation frames */
#define GITS_CTLR_EN    BIT(0)
#define GITS_CTLR_QUIET BIT(31)
#define GITS_VALID      BIT(63)
#define GITS_PA_MASK    0x000ffffffffff000ull
#define GITS_BASER_PA   0x0000fffffffff000ull /* (52:48: Entry_Size) */
#define GITS_BASER_64K  (2ull << 8)           /* Page_Size: 64 KiB, the only one */
#define GITS_Q_MASK     0xfffe0ull            /* CWRITER/CREADR offsets: bits 19:5 */
/* the writable attributes of GITS_CBASER and GITS_BASERn: InnerCache
 * (61:59), OuterCache (55:53), Shareability (11:10); a guest reads back
 * what it wrote (Linux's ITS driver refuses one that does not) */
#define GITS_ATTR_MASK (7ull << 59 | 7ull << 53 | 3ull << 10)
#define CREADR_STALLED BIT(0)

#define GICR_CTLR      0x0000
#define GICR_PROPBASER 0x0070
#define GICR_PENDBASER 0x0078

#define LPIS_PER_VM (VITS_MAX_DEVS * VITS_MAX_EVENTS)
/* the blocks of LPIS_PER_VM physical LPIs the toolchain gives the VMs:
 * direct VMs' first, then one per VM index */
#define VITS_BLOCKS (2 * CFG_MAX_CPUS)
_Static_assert(LPIS_PER_VM == VITS_NR_LPIS, "a direct VM's block is its LPI range");
#define VITS_LOGGED 8                            /* refusals logged per VM */
#define VPE_WAIT_NS (10ull * 1000 * 1000 * 1000) /* for a VM's other CPUs' vPEs */

struct vits {
	spinlock_t lock;
	struct vm *vm;
	struct vits_cfg cfg;
	struct vits_state st;
	u32 plpi_base;
	u32 ctlr;
	u64 cbaser, cwriter, creadr;
	u64 baser[8];
	bool stalled;
	u64 propbaser;
	u64 pendbaser[CFG_MAX_CPUS];
	u32 lpis_on; /* vCPUs whose GICR_CTLR.EnableLPIs is set */
	u64 cmds, refused;
	bool vlpi; /* GICv4: its events are vLPIs of its vCPUs' vPEs */
	u32 vpes;  /* vlpi: its vCPUs' vPEs mapped and resident so far */
};

static struct vits vits_vms[CFG_MAX_CPUS];
static bool vits_up;
/* the VM (its index + 1) and virtual LPI of each physical LPI */
static struct {
	u16 vm;
	u16 vlpi;
} vits_route[VITS_BLOCKS * LPIS_PER_VM];

/* `interrupts: direct`: its LPIs are the physical ones (its block); folds to
 * false in a build without direct mode */
static bool vits_phys(const struct vits *s)
{
	return delivery_physical(vcpu_vm_delivery(s->vm));
}

static struct vits *vits_of(const struct vm *vm)
{
	struct vits *s = &vits_vms[vm->id];

	return s->vm == vm ? s : NULL;
}

static bool vits_in_ram(const void *ctx, u64 ipa, u64 size)
{
	struct vm *vm = (struct vm *)(uintptr_t)ctx;
	u64 pa;

	if (!size || ipa + size < ipa)
		return false;
	for (u64 a = ipa & ~(SZ_4K - 1); a < ipa + size; a += SZ_4K)
		if (!mem_ipa_to_pa(vm, a, &pa))
			return false;
	return true;
}

/* vLPI's configuration from the guest's LPI configuration table (disabled
 * when it cannot be read); vgic lock held */
static void vits_lpi_config_locked(struct vits *s, u32 vlpi, u8 prop)
{
	struct virq *q = vgic_virq(s->vm, NULL, vlpi);

	if (!q || !(q->flags & VIRQ_OWNED))
		return;
	q->prio = prop & 0xfc;
	if (prop & 1)
		q->flags |= VIRQ_ENABLED;
	else
		q->flags &= (u8)~VIRQ_ENABLED;
	if (s->vlpi)
		its_vlpi_config(s->vm->id, vlpi, prop);
}

static u8 vits_prop(struct vits *s, u32 vlpi)
{
	u8 prop = 0;

	if (!mem_copy_from_vm(s->vm, &prop, (s->propbaser & GITS_PA_MASK) + vlpi - VGIC_LPI_BASE,
	                      1))
		return 0;
	return prop;
}

/* INV (vlpi) or INVALL (0): the configuration read again, pending ones kicked */
static void vits_inv(struct vits *s, u32 vlpi)
{
	struct vm *vm = s->vm;
	u32 first = vlpi ? vlpi : VGIC_LPI_BASE,
	    last = vlpi ? vlpi : VGIC_LPI_BASE + VGIC_NR_LPIS - 1;
	u32 kick = 0;

	for (u32 n = first; n <= last; n++) {
		struct virq *q = vgic_virq(vm, NULL, n);
		u8 prop;

		if (!q || !(q->flags & VIRQ_OWNED))
			continue;
		prop = vits_prop(s, n);
		spin_lock(&vm->vgic.lock);
		vits_lpi_config_locked(s, n, prop);
		if ((q->flags & (VIRQ_ENABLED | VIRQ_PENDING)) == (VIRQ_ENABLED | VIRQ_PENDING))
			kick |= 1u << q->target;
		spin_unlock(&vm->vgic.lock);
	}
	for (u32 i = 0; i < vm->nvcpus; i++)
		if (kick & (1u << i))
			vcpu_kick(vm->vcpus[i]);
}

/* the virtual LPI's ownership and target (MAP, MOVE, UNMAP) */
static void vits_lpi_map(struct vits *s, u32 vlpi, u32 vcpu, bool own)
{
	struct vm *vm = s->vm;
	u8 prop = own ? vits_prop(s, vlpi) : 0;
	struct virq *q;

	spin_lock(&vm->vgic.lock);
	q = vgic_virq(vm, NULL, vlpi);
	if (q && own) {
		q->flags |= VIRQ_OWNED | VIRQ_EDGE;
		q->target = (u8)vcpu;
		vits_lpi_config_locked(s, vlpi, prop);
	} else if (q && !(q->flags & VIRQ_IN_LR)) {
		vgic_clear_pending_locked(vm, NULL, vlpi);
		q->flags = VIRQ_EDGE;
	} else if (q) {
		q->flags &= (u8) ~(VIRQ_OWNED | VIRQ_PENDING | VIRQ_ENABLED);
	}
	spin_unlock(&vm->vgic.lock);
}

/* DISCARD of (slot, event), mapped to vlpi; vgic: the VM's virtual LPI
 * released too */
static void vits_unmap(struct vits *s, u32 slot, u32 event, u32 vlpi, bool vgic)
{
	u32 plpi = vits_phys(s) ? vlpi : s->plpi_base + vits_plpi_index(slot, event);

	its_unmap_event(s->cfg.devids[slot], event, plpi);
	vits_route[plpi - GIC_LPI_BASE].vm = 0;
	if (vgic && vlpi && !vits_phys(s))
		vits_lpi_map(s, vlpi, 0, false);
}

/* MOVI of (devid, event) to CPU pcpu: its physical LPI or, on a GICv4, its vLPI */
static void vits_move_event(const struct vits *s, u32 devid, u32 event, u32 pcpu)
{
	if (s->vlpi)
		its_vmove_event(devid, event, pcpu);
	else
		its_move_event(devid, event, pcpu);
}

/* Releases the virtual LPIs that no event of the VM maps any more (a
 * virtual-only device's DISCARD or MAPD). */
static void vits_drop_vlpis(struct vits *s)
{
	u32 used[VITS_NR_LPIS / 32] = { 0 };

	for (u32 d = 0; d < VITS_MAX_DEVS + VITS_MAX_VDEVS; d++) {
		bool virt = vits_slot_virtual(d);
		const struct vits_ite *ite =
		    virt ? s->st.vdev[d - VITS_MAX_DEVS].ite : s->st.dev[d].ite;

		for (u32 e = 0; e < (virt ? VITS_VDEV_EVENTS : VITS_MAX_EVENTS); e++)
			if (ite[e].vlpi)
				used[(ite[e].vlpi - VITS_LPI_BASE) / 32] |=
				    1u << ((ite[e].vlpi - VITS_LPI_BASE) % 32);
	}
	for (u32 n = 0; n < VITS_NR_LPIS; n++) {
		struct virq *q = vgic_virq(s->vm, NULL, VITS_LPI_BASE + n);

		if (q && (q->flags & VIRQ_OWNED) && !(used[n / 32] & (1u << (n % 32))))
			vits_lpi_map(s, VITS_LPI_BASE + n, 0, false);
	}
}

/* A virtual-only device's command: the VM's virtual LPIs only, never the
 * physical ITS (nothing physical has its device ID); also on a GICv4, its
 * INT goes through a list register. */
static void vits_mirror_virtual(struct vits *s, const struct vits_result *r)
{
	switch (r->act) {
	case VITS_ACT_MAP:
	case VITS_ACT_MOVE:
		vits_lpi_map(s, r->vlpi, r->vcpu, true);
		break;
	case VITS_ACT_DROP_VLPIS:
		vits_drop_vlpis(s);
		break;
	case VITS_ACT_INT:
		vgic_inject(s->vm, NULL, r->vlpi);
		break;
	case VITS_ACT_CLEAR:
		spin_lock(&s->vm->vgic.lock);
		vgic_clear_pending_locked(s->vm, NULL, r->vlpi);
		spin_unlock(&s->vm->vgic.lock);
		break;
	case VITS_ACT_INV:
		vits_inv(s, r->vlpi);
		break;
	default:
		break;
	}
}

/* GICv4 direct injection: what vits_mirror does differently for a vLPI
 * VM (its events are VMAPTI'd to the vPE of their vCPU's CPU); false: not
 * a GICv4 VM or not a command done differently. */
static bool vits_mirror_vlpi(struct vits *s, const struct vits_result *r, u32 devid, u32 pcpu)
{
	struct vm *vm = s->vm;

	if (!s->vlpi)
		return false;
	switch (r->act) {
	case VITS_ACT_MAP:
		vits_lpi_map(s, r->vlpi, r->vcpu, true); /* (its configuration byte too) */
		its_vmap_event(devid, r->event, r->vlpi, pcpu);
		return true;
	case VITS_ACT_CLEAR:
		its_clear(devid, r->event);
		return true;
	case VITS_ACT_INV:
		vits_inv(s, r->vlpi); /* the configuration bytes, then the GIC told */
		if (r->vlpi)
			its_inv(devid, r->event);
		else
			for (u32 i = 0; i < vm->nvcpus; i++)
				its_vinvall(vm->vcpus[i]->pcpu);
		return true;
	default:
		return false;
	}
}

/* `interrupts: direct`: the guest's configuration byte of each of its mapped
 * LPIs (vlpi, or all: 0) copied to the physical table, then INV or INVALL */
static void vits_direct_inv(struct vits *s, const struct vits_result *r, u32 devid)
{
	struct vm *vm = s->vm;

	if (r->vlpi) {
		its_lpi_config(r->vlpi, vits_prop(s, r->vlpi));
		its_inv(devid, r->event);
		return;
	}
	for (u32 d = 0; d < s->cfg.ndevs; d++)
		for (u32 e = 0; e < VITS_MAX_EVENTS; e++)
			if (s->st.dev[d].ite[e].vlpi)
				its_lpi_config(s->st.dev[d].ite[e].vlpi,
				               vits_prop(s, s->st.dev[d].ite[e].vlpi));
	for (u32 i = 0; i < vm->nvcpus; i++) /* (its collections: its CPUs' alone) */
		its_invall(vm->vcpus[i]->pcpu);
}

/* `interrupts: direct` (docs/interrupts.md "MSIs in a direct VM"): the
 * guest's LPI is the physical one (its block), mapped with the guest's
 * configuration byte to the physical CPU of its collection's vCPU, where the
 * guest takes it on the physical CPU interface; no vGIC state. false: not a
 * direct VM or a command done as for the others. */
static bool vits_mirror_direct(struct vits *s, const struct vits_result *r, u32 devid, u32 pcpu)
{
	if (!vits_phys(s))
		return false;
	switch (r->act) {
	case VITS_ACT_MAP:
		its_map_event(devid, r->event, r->vlpi, pcpu, vits_prop(s, r->vlpi));
		return true;
	case VITS_ACT_MOVE:
		its_move_event(devid, r->event, pcpu);
		return true;
	case VITS_ACT_CLEAR:
		its_clear(devid, r->event);
		return true;
	case VITS_ACT_INV:
		vits_direct_inv(s, r, devid);
		return true;
	case VITS_ACT_MOVE_COLL:
		for (u32 d = 0; d < s->cfg.ndevs; d++)
			for (u32 e = 0; e < VITS_MAX_EVENTS; e++)
				if (s->st.dev[d].ite[e].vlpi && s->st.dev[d].ite[e].icid == r->icid)
					its_move_event(s->cfg.devids[d], e, pcpu);
		return true;
	default: /* UNMAP, UNMAP_DEV (vits_unmap), INT: as for the others */
		return false;
	}
}

static void vits_mirror(struct vits *s, const struct vits_result *r, u32 old_vlpi[VITS_MAX_EVENTS])
{
	struct vm *vm = s->vm;
	u32 devid, plpi;
	u32 pcpu = vm->vcpus[r->vcpu < vm->nvcpus ? r->vcpu : 0]->pcpu;

	if (vits_slot_virtual(r->slot)) {
		vits_mirror_virtual(s, r);
		return;
	}
	devid = s->cfg.devids[r->slot];
	plpi = s->plpi_base + vits_plpi_index(r->slot, r->event);
	if (vits_mirror_vlpi(s, r, devid, pcpu) || vits_mirror_direct(s, r, devid, pcpu))
		return;
	switch (r->act) {
	case VITS_ACT_MAP:
		vits_lpi_map(s, r->vlpi, r->vcpu, true);
		vits_route[plpi - GIC_LPI_BASE].vlpi = (u16)r->vlpi;
		vits_route[plpi - GIC_LPI_BASE].vm = (u16)(vm->id + 1);
		its_map_event(devid, r->event, plpi, pcpu, GIC_PRIO_GUEST | 1);
		break;
	case VITS_ACT_UNMAP:
		vits_unmap(s, r->slot, r->event, r->vlpi, true);
		break;
	case VITS_ACT_UNMAP_DEV:
		for (u32 e = 0; e < VITS_MAX_EVENTS; e++)
			if (r->ev_mask & (1u << e))
				vits_unmap(s, r->slot, e, old_vlpi[e], true);
		break;
	case VITS_ACT_MOVE:
		vits_lpi_map(s, r->vlpi, r->vcpu, true);
		vits_move_event(s, devid, r->event, pcpu);
		break;
	case VITS_ACT_INT:
		its_int(devid, r->event); /* through the physical ITS, as the device would */
		break;
	case VITS_ACT_CLEAR:
		spin_lock(&vm->vgic.lock);
		vgic_clear_pending_locked(vm, NULL, r->vlpi);
		spin_unlock(&vm->vgic.lock);
		break;
	case VITS_ACT_INV:
		vits_inv(s, r->vlpi);
		break;
	case VITS_ACT_MOVE_COLL:
		for (u32 d = 0; d < s->cfg.ndevs; d++)
			for (u32 e = 0; e < VITS_MAX_EVENTS; e++) {
				const struct vits_ite *ite = &s->st.dev[d].ite[e];

				if (ite->vlpi && ite->icid == r->icid) {
					vits_lpi_map(s, ite->vlpi, r->vcpu, true);
					vits_move_event(s, s->cfg.devids[d], e, pcpu);
				}
			}
		for (u32 d = 0; d < VITS_MAX_VDEVS; d++) /* virtual-only: the vGIC's only */
			for (u32 e = 0; e < VITS_VDEV_EVENTS; e++) {
				const struct vits_ite *ite = &s->st.vdev[d].ite[e];

				if (ite->vlpi && ite->icid == r->icid)
					vits_lpi_map(s, ite->vlpi, r->vcpu, true);
			}
		break;
	default:
		break;
	}
}

static void vits_stall(struct vits *s, const char *why, u64 dw0)
{
	s->stalled = true;
	if (++s->refused > VITS_LOGGED)
		return; /* a guest stalling it on purpose does not flood the log */
	log_info("vm %s: its: command %lx at %lx refused (%s): the ITS stalls", s->vm->cfg->name,
	         dw0 & 0xff, s->creadr, why);
}

/* Runs the commands between CREADR and CWRITER, VITS_BUDGET at most; lock held. */
static void vits_process_locked(struct vits *s)
{
	u64 base = s->cbaser & GITS_PA_MASK, size = ((s->cbaser & 0xff) + 1) * SZ_4K;

	if (!(s->ctlr & GITS_CTLR_EN) || !(s->cbaser & GITS_VALID) || s->stalled ||
	    s->creadr == s->cwriter)
		return;
	if (!vits_queue_ok(&s->cfg, base, size) || s->cwriter >= size) {
		vits_stall(s, "command queue outside the VM's memory", 0);
		return;
	}
	for (u32 n = 0; n < VITS_BUDGET && s->creadr != s->cwriter; n++) {
		u64 dw[4];
		u32 old[VITS_MAX_EVENTS];
		struct vits_cmd c;
		struct vits_result r;
		enum vits_err err;

		if (!mem_copy_from_vm(s->vm, dw, base + s->creadr, sizeof(dw))) {
			vits_stall(s, "command queue outside the VM's memory", 0);
			return;
		}
		vits_decode(dw, &c);
		{
			int slot = vits_slot(&s->cfg, c.devid);

			for (u32 e = 0; e < VITS_MAX_EVENTS; e++)
				old[e] = slot >= 0 ? s->st.dev[slot].ite[e].vlpi : 0;
		}
		err = vits_apply(&s->cfg, &s->st, &c, &r);
		if (vits_err_stalls(err)) {
			vits_stall(s, vits_err_name(err), dw[0]);
			return;
		}
		if (!err) /* (else a command on something not mapped: ignored) */
			vits_mirror(s, &r, old);
		s->cmds++;
		s->creadr = (s->creadr + VITS_CMD_SIZE) % size;
	}
}

static u64 vits_typer(void)
{
	/* physical LPIs, 8-byte ITEs, 14 ID bits, 16 device ID bits, PTA = 0,
	 * VITS_MAX_COLLECTIONS collections held in the ITS (HCC), which are
	 * all its collection IDs (CIL, CIDbits: 3 bits) */
	_Static_assert(VITS_MAX_COLLECTIONS == 8, "CIDbits");
	return 1 | (u64)(VITS_ITE_SIZE - 1) << 4 | 13u << 8 | 15u << 13 |
	       (u64)VITS_MAX_COLLECTIONS << 24 | 2ull << 32 | 1ull << 36;
}

/* GITS_BASERn's read-only fields: BASER0 a device table, BASER1 a
 * collection table (both unused: the hypervisor holds the VM's mappings),
 * 8-byte entries in 64 KiB pages; the rest no table (0) */
static u64 vits_baser_fixed(u32 n)
{
	static const u64 type[2] = { 1, 4 }; /* Devices, Collections */

	return n < 2 ? type[n] << 56 | 7ull << 48 | GITS_BASER_64K : 0;
}

/* a 64-bit register as a 4- or 8-byte access at off - reg (0 or 4) sees it */
static u64 vits_get(u64 reg, u64 off, u32 size)
{
	u64 v = reg >> (8 * (off & 4));

	return size == 8 ? v : (u32)v;
}

static u64 vits_put(u64 reg, u64 off, u32 size, u64 val)
{
	if (size == 8)
		return val;
	if (off & 4)
		return (reg & 0xffffffffull) | val << 32;
	return (reg & ~0xffffffffull) | (u32)val;
}

static bool vits_mmio(struct vcpu *v, struct mmio_access *a, void *dev)
{
	struct vits *s = dev;
	u64 off = a->off, reg = off & ~7ull;
	u64 r = 0;

	(void)v;
	if (a->size < 4 || (off & (a->size - 1)))
		return false;
	if (off == ITS_TRANSLATER_OFF && a->write) {
		/* a CPU's MSI write: INT of the VM's first device's event */
		u64 dw[4] = { VITS_OP_INT | (u64)s->cfg.devids[0] << 32, (u32)a->val, 0, 0 };
		struct vits_cmd c;
		struct vits_result res;

		spin_lock(&s->lock);
		vits_decode(dw, &c);
		if (vits_apply(&s->cfg, &s->st, &c, &res) == VITS_OK)
			vits_mirror(s, &res, NULL);
		spin_unlock(&s->lock);
		return true;
	}
	spin_lock(&s->lock);
	switch (reg) {
	case GITS_CTLR: /* and GITS_IIDR */
		if (a->write && !(off & 4)) {
			s->ctlr = (u32)a->val & GITS_CTLR_EN;
			vits_process_locked(s);
		}
		r = s->ctlr & GITS_CTLR_EN ? s->ctlr : GITS_CTLR_QUIET;
		r |= (u64)0x43b << 32; /* IIDR: implementer Arm */
		break;
	case GITS_TYPER:
		r = vits_typer();
		break;
	case GITS_CBASER:
		if (a->write) {
			s->cbaser = vits_put(s->cbaser, off, a->size, a->val) &
			            (GITS_VALID | GITS_ATTR_MASK | GITS_PA_MASK | 0xff);
			s->creadr = 0;
			s->stalled = false;
		}
		r = s->cbaser;
		break;
	case GITS_CWRITER:
		if (a->write) {
			s->cwriter = vits_put(s->cwriter, off, a->size, a->val) & GITS_Q_MASK;
			vits_process_locked(s);
		}
		r = s->cwriter;
		break;
	case GITS_CREADR:
		if (!a->write)
			vits_process_locked(s);
		r = s->creadr | (s->stalled ? CREADR_STALLED : 0);
		break;
	default:
		if (reg >= GITS_BASER && reg < GITS_BASER_END) {
			u32 n = (u32)(reg - GITS_BASER) / 8;
			u64 fixed = vits_baser_fixed(n);

			if (a->write && fixed)
				s->baser[n] = vits_put(s->baser[n], off, a->size, a->val) &
				              (GITS_VALID | GITS_ATTR_MASK | GITS_BASER_PA | 0xff);
			r = s->baser[n] | fixed;
		} else if (off >= 0xffd0 && off < 0x10000) {
			r = vgic_regs_id(off, 3);
			spin_unlock(&s->lock);
			if (!a->write)
				a->val = r;
			return true;
		}
		break;
	}
	spin_unlock(&s->lock);
	if (!a->write)
		a->val = vits_get(r, off, a->size);
	return true;
}

bool vits_redist(struct vcpu *t, struct mmio_access *a, u64 off)
{
	struct vits *s = vits_of(t->vm);
	u64 reg = off & ~7ull, r = 0;

	if (!s || (reg != GICR_CTLR && reg != GICR_PROPBASER && reg != GICR_PENDBASER) ||
	    (reg == GICR_CTLR && off != GICR_CTLR))
		return false;
	spin_lock(&s->lock);
	if (reg == GICR_CTLR) {
		if (a->write && (a->val & 1))
			s->lpis_on |= 1u << t->idx;
		else if (a->write)
			s->lpis_on &= ~(1u << t->idx);
		r = (s->lpis_on >> t->idx) & 1;
	} else if (reg == GICR_PROPBASER) {
		if (a->write)
			s->propbaser = vits_put(s->propbaser, off, a->size, a->val);
		r = s->propbaser;
	} else {
		if (a->write)
			s->pendbaser[t->idx] = vits_put(s->pendbaser[t->idx], off, a->size, a->val);
		r = s->pendbaser[t->idx];
	}
	spin_unlock(&s->lock);
	if (!a->write)
		a->val = a->size == 8 ? r : vits_get(r, off, a->size);
	return true;
}

u32 vits_dist_typer(const struct vm *vm)
{
	/* LPIs, 14 ID bits (IDbits 13) */
	return vits_of(vm) ? (13u << 19 | BIT(17)) : 0;
}

u32 vits_redist_typer(const struct vm *vm)
{
	return vits_of(vm) ? 1u : 0; /* PLPIS */
}

void vits_lpi(u32 intid)
{
	u32 n = intid - GIC_LPI_BASE;
	u32 owner, vlpi;

	gic_eoi(intid); /* an LPI has no active state: nothing to deactivate */
	if (n >= ARRAY_SIZE(vits_route))
		return;
	owner = READ_ONCE(vits_route[n].vm);
	vlpi = READ_ONCE(vits_route[n].vlpi);
	if (owner && owner <= vm_count)
		vgic_inject(&vms[owner - 1], NULL, vlpi);
}

void vits_vm_reset(struct vm *vm)
{
	struct vits *s = vits_of(vm);

	if (!s)
		return; /* (at boot: before vits_init) */
	spin_lock(&s->lock);
	for (u32 d = 0; d < s->cfg.ndevs; d++)
		for (u32 e = 0; e < VITS_MAX_EVENTS; e++)
			if (s->st.dev[d].ite[e].vlpi) /* (the vGIC's LPIs were reset already) */
				vits_unmap(s, d, e, s->st.dev[d].ite[e].vlpi, false);
	memset(&s->st, 0, sizeof(s->st));
	s->ctlr = 0;
	s->cbaser = s->cwriter = s->creadr = 0;
	memset(s->baser, 0, sizeof(s->baser));
	s->stalled = false;
	s->propbaser = 0;
	memset(s->pendbaser, 0, sizeof(s->pendbaser));
	s->lpis_on = 0;
	spin_unlock(&s->lock);
}

static void vits_vm_init(struct vm *vm, u64 ipa)
{
	struct vits *s = &vits_vms[vm->id];
	const struct cfg_vm *c = vm->cfg;

	if (c->npci > VITS_MAX_DEVS)
		panic("vm %s: %u PCI functions, its virtual ITS takes %u", c->name, c->npci,
		      VITS_MAX_DEVS);
	memset(s, 0, sizeof(*s));
	spin_set_rank(&s->lock, LOCK_RANK_VITS);
	s->vm = vm;
	/* the device IDs are the requester IDs its functions' MSIs carry: one for
	 * all of those behind one conventional bridge (its alias) */
	for (u32 i = 0; i < c->npci; i++) {
		u32 d = 0;

		while (d < s->cfg.ndevs && s->cfg.devids[d] != c->pci[i].devid)
			d++;
		if (d == s->cfg.ndevs)
			s->cfg.devids[s->cfg.ndevs++] = c->pci[i].devid;
	}
	s->cfg.ncpus = vm->nvcpus;
	s->cfg.in_ram = vits_in_ram;
	s->cfg.ctx = vm;
	s->plpi_base = c->lpi_base;
	s->vlpi = its_virtual() && vm->id < ITS_VLPI_TABLES && !vits_phys(s);
	if (vits_phys(s)) { /* its guest names its physical LPIs */
		s->cfg.lpi_base = s->plpi_base;
		s->cfg.phys_lpis = true;
	}
	for (u32 i = 0; i < s->cfg.ndevs; i++)
		its_map_device(s->cfg.devids[i], VITS_EVENT_BITS);
	mmio_register(vm, ipa, GITS_FRAMES, vits_mmio, s);
	log_info("vm %s: virtual ITS at %lx, %u device(s), LPIs %u-%u%s", c->name, ipa,
	         s->cfg.ndevs, s->plpi_base, s->plpi_base + LPIS_PER_VM - 1,
	         s->vlpi        ? ", delivered as vLPIs (GICv4)"
	         : vits_phys(s) ? ", its own (interrupts: direct)"
	                        : "");
}

void vits_init(void)
{
	const struct cfg_platform *p = cfg_system.platform;
	u32 maxdev = 0, nlpis = vm_count * LPIS_PER_VM;
	bool need = false;

	for (u32 i = 0; i < vm_count; i++) {
		const struct cfg_vm *c = vms[i].cfg;

		for (u32 k = 0; k < c->npci; k++) {
			need = true;
			maxdev = c->pci[k].devid > maxdev ? c->pci[k].devid : maxdev;
		}
		if (c->npci &&
		    (c->lpi_base < GIC_LPI_BASE || (c->lpi_base - GIC_LPI_BASE) % LPIS_PER_VM ||
		     c->lpi_base - GIC_LPI_BASE >= VITS_BLOCKS * LPIS_PER_VM))
			panic("vm %s: LPI block at %u", c->name, c->lpi_base);
		if (c->npci && c->lpi_base + LPIS_PER_VM - GIC_LPI_BASE > nlpis)
			nlpis = c->lpi_base + LPIS_PER_VM - GIC_LPI_BASE;
	}
	if (!p->gic.its || !need)
		return;
	if (!its_init(p->gic.its, nlpis, maxdev))
		panic("its: cannot serve the VMs' PCI functions");
	vits_up = true;
	its_cpu_init();
	for (u32 i = 0; i < vm_count; i++)
		if (vms[i].cfg->npci)
			vits_vm_init(&vms[i], p->gic.its);
}

void vits_cpu_init(void)
{
	const struct vcpu *v = &vcpus[cpu_index()];
	struct vits *s = v->vm ? vits_of(v->vm) : NULL;
	u64 until;

	if (vits_up && cpu_index())
		its_cpu_init();
	if (!vits_up || !s || !s->vlpi)
		return;
	its_vpe_init(v->vm->id); /* resident for good: the vCPU never leaves */
	spin_lock(&s->lock);
	s->vpes++;
	spin_unlock(&s->lock);
	/* No guest instruction before each vPE of the VM is mapped: a VMAPTI to
	 * one not yet mapped (VMAPP on its CPU) would lose its interrupts. */
	until = timer_now() + timer_ns_to_ticks(VPE_WAIT_NS);
	while (READ_ONCE(s->vpes) < s->vm->nvcpus)
		if (timer_now() > until)
			panic("vm %s: %u of its %u vPEs mapped after 10 s", s->vm->cfg->name,
			      READ_ONCE(s->vpes), s->vm->nvcpus);
}
#endif
