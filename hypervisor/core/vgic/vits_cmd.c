/* SPDX-License-Identifier: Apache-2.0 */
/* The virtual ITS's command decoder and checker (vits_cmd.h). */
#include "core/vgic/vits_cmd.h"

#define FIELD(v, lo, n) (((v) >> (lo)) & (((u64)1 << (n)) - 1))

void vits_decode(const u64 dw[4], struct vits_cmd *c)
{
	c->op = (u8)FIELD(dw[0], 0, 8);
	c->devid = (u32)FIELD(dw[0], 32, 32);
	c->event = (u32)FIELD(dw[1], 0, 32);
	c->size = (u32)FIELD(dw[1], 0, 5);
	c->intid = c->op == VITS_OP_MAPI ? c->event : (u32)FIELD(dw[1], 32, 32);
	c->icid = (u32)FIELD(dw[2], 0, 16);
	c->itt = FIELD(dw[2], 8, 44) << 8;
	c->rd = FIELD(dw[2], 16, 36);
	c->rd2 = FIELD(dw[3], 16, 36);
	c->valid = (dw[2] >> 63) & 1;
}

int vits_slot(const struct vits_cfg *cfg, u32 devid)
{
	for (u32 i = 0; i < cfg->ndevs && i < VITS_MAX_DEVS; i++)
		if (cfg->devids[i] == devid)
			return (int)i;
	return -1;
}

bool vits_queue_ok(const struct vits_cfg *cfg, u64 addr, u64 size)
{
	return size && !(addr & 0xfff) && !(size & 0xfff) && addr + size > addr &&
	       cfg->in_ram(cfg->ctx, addr, size);
}

/* one device's translation state, a function's or a virtual-only one's */
struct vits_view {
	bool *mapped;
	u8 *size_bits;
	u64 *itt;
	struct vits_ite *ite;
	u32 nev;  /* its ITEs: VITS_MAX_EVENTS or VITS_VDEV_EVENTS */
	u32 bits; /* the most event ID bits a MAPD may give it */
};

static void view_of(struct vits_state *st, u32 slot, struct vits_view *v)
{
	if (vits_slot_virtual(slot)) {
		struct vits_vdev *d = &st->vdev[slot - VITS_MAX_DEVS];

		*v = (struct vits_view){ .mapped = &d->mapped,
			                 .size_bits = &d->size_bits,
			                 .itt = &d->itt,
			                 .ite = d->ite,
			                 .nev = VITS_VDEV_EVENTS,
			                 .bits = VITS_VDEV_EVENT_BITS };
	} else {
		struct vits_dev *d = &st->dev[slot];

		*v = (struct vits_view){ .mapped = &d->mapped,
			                 .size_bits = &d->size_bits,
			                 .itt = &d->itt,
			                 .ite = d->ite,
			                 .nev = VITS_MAX_EVENTS,
			                 .bits = VITS_EVENT_BITS };
	}
}

/* the slot of devid: its function's or its mapped virtual-only device's; -1:
 * neither */
static int slot_of(const struct vits_cfg *cfg, const struct vits_state *st, u32 devid)
{
	int s = vits_slot(cfg, devid);

	if (s >= 0)
		return s;
	for (u32 i = 0; i < VITS_MAX_VDEVS; i++)
		if (st->vdev[i].mapped && st->vdev[i].devid == devid)
			return (int)(VITS_MAX_DEVS + i);
	return -1;
}

/* the mapped event of a device command: slot and ITE, or why not */
static enum vits_err event_of(const struct vits_cfg *cfg, struct vits_state *st,
                              const struct vits_cmd *c, struct vits_result *r,
                              struct vits_ite **ite)
{
	int s = slot_of(cfg, st, c->devid);
	struct vits_view v;

	if (s < 0)
		return VITS_E_UNMAPPED; /* (a virtual-only device not mapped) */
	r->slot = (u32)s;
	view_of(st, r->slot, &v);
	if (!*v.mapped)
		return VITS_E_UNMAPPED;
	if (c->event >= (1u << *v.size_bits))
		return VITS_E_EVENT;
	r->event = c->event;
	*ite = &v.ite[c->event];
	return VITS_OK;
}

/* MAPD of a device that is no function of the VM: its virtual-only slot
 * (found, or a free one when valid); -1 with *err when none */
static int vdev_slot(const struct vits_state *st, const struct vits_cmd *c, enum vits_err *err)
{
	for (u32 i = 0; i < VITS_MAX_VDEVS; i++)
		if (st->vdev[i].mapped && st->vdev[i].devid == c->devid)
			return (int)(VITS_MAX_DEVS + i);
	*err = VITS_OK; /* unmapping one not mapped: nothing to do */
	if (!c->valid)
		return -1;
	for (u32 i = 0; i < VITS_MAX_VDEVS; i++)
		if (!st->vdev[i].mapped)
			return (int)(VITS_MAX_DEVS + i);
	*err = VITS_E_DEVICE;
	return -1;
}

static enum vits_err mapd(const struct vits_cfg *cfg, struct vits_state *st,
                          const struct vits_cmd *c, struct vits_result *r)
{
	int s = vits_slot(cfg, c->devid);
	struct vits_view v;
	enum vits_err err;
	u32 mask = 0;
	bool any = false;

	if (s < 0 && cfg->phys_lpis)
		return c->valid ? VITS_E_DEVICE : VITS_OK; /* no virtual-only devices */
	if (s < 0 && (s = vdev_slot(st, c, &err)) < 0)
		return err;
	r->slot = (u32)s;
	view_of(st, r->slot, &v);
	if (c->valid) {
		if (c->size + 1 > v.bits)
			return VITS_E_SIZE;
		if (!c->itt || !cfg->in_ram(cfg->ctx, c->itt, (u64)VITS_ITE_SIZE << (c->size + 1)))
			return VITS_E_ADDR;
	}
	/* (re)mapping or unmapping drops the old translations */
	for (u32 e = 0; e < v.nev; e++) {
		if (v.ite[e].vlpi && e < 32)
			mask |= 1u << e;
		any |= v.ite[e].vlpi != 0;
		v.ite[e].vlpi = 0;
		v.ite[e].icid = 0;
	}
	*v.mapped = c->valid;
	*v.size_bits = c->valid ? (u8)(c->size + 1) : 0;
	*v.itt = c->valid ? c->itt : 0;
	if (vits_slot_virtual(r->slot)) {
		st->vdev[r->slot - VITS_MAX_DEVS].devid = c->valid ? c->devid : 0;
		r->act = any ? VITS_ACT_DROP_VLPIS : VITS_ACT_NONE;
		return VITS_OK;
	}
	_Static_assert(VITS_MAX_EVENTS <= 32, "ev_mask");
	r->ev_mask = mask;
	r->act = mask ? VITS_ACT_UNMAP_DEV : VITS_ACT_NONE;
	return VITS_OK;
}

static enum vits_err mapti(const struct vits_cfg *cfg, struct vits_state *st,
                           const struct vits_cmd *c, struct vits_result *r)
{
	struct vits_ite *ite = NULL;
	enum vits_err err = event_of(cfg, st, c, r, &ite);

	if (err)
		return err;
	if (c->icid >= VITS_MAX_COLLECTIONS)
		return VITS_E_COLLECTION;
	if (c->intid < vits_lpi_base(cfg) || c->intid >= vits_lpi_base(cfg) + VITS_NR_LPIS)
		return VITS_E_LPI;
	if (ite->vlpi)
		return VITS_E_MAPPED;
	ite->vlpi = (u16)c->intid;
	ite->icid = (u8)c->icid;
	r->vlpi = c->intid;
	r->vcpu = st->coll[c->icid] ? st->coll[c->icid] - 1u : 0;
	r->act = VITS_ACT_MAP;
	return VITS_OK;
}

/* commands on one mapped event: INT, CLEAR, INV, DISCARD, MOVI */
static enum vits_err on_event(const struct vits_cfg *cfg, struct vits_state *st,
                              const struct vits_cmd *c, struct vits_result *r)
{
	struct vits_ite *ite = NULL;
	enum vits_err err = event_of(cfg, st, c, r, &ite);

	if (err)
		return err;
	if (!ite->vlpi)
		return VITS_E_UNMAPPED;
	if (c->op == VITS_OP_MOVI && c->icid >= VITS_MAX_COLLECTIONS)
		return VITS_E_COLLECTION;
	if (c->op != VITS_OP_DISCARD && c->op != VITS_OP_INV &&
	    !st->coll[c->op == VITS_OP_MOVI ? c->icid : ite->icid])
		return VITS_E_UNMAPPED; /* no target to deliver to */
	r->vlpi = ite->vlpi;
	switch (c->op) {
	case VITS_OP_INT:
		r->act = VITS_ACT_INT;
		break;
	case VITS_OP_CLEAR:
		r->act = VITS_ACT_CLEAR;
		break;
	case VITS_OP_INV:
		r->act = VITS_ACT_INV;
		break;
	case VITS_OP_DISCARD:
		ite->vlpi = 0;
		ite->icid = 0;
		r->act = vits_slot_virtual(r->slot) ? VITS_ACT_DROP_VLPIS : VITS_ACT_UNMAP;
		break;
	default: /* MOVI */
		ite->icid = (u8)c->icid;
		r->act = VITS_ACT_MOVE;
		break;
	}
	r->vcpu = st->coll[ite->icid] ? st->coll[ite->icid] - 1u : 0;
	return VITS_OK;
}

enum vits_err vits_apply(const struct vits_cfg *cfg, struct vits_state *st,
                         const struct vits_cmd *c, struct vits_result *r)
{
	r->act = VITS_ACT_NONE;
	r->slot = r->event = r->vlpi = r->vcpu = r->ev_mask = r->icid = 0;
	switch (c->op) {
	case VITS_OP_MAPD:
		return mapd(cfg, st, c, r);
	case VITS_OP_MAPC:
		if (c->icid >= VITS_MAX_COLLECTIONS)
			return VITS_E_COLLECTION;
		if (c->valid && c->rd >= cfg->ncpus)
			return VITS_E_TARGET;
		if (c->valid && st->coll[c->icid] && st->coll[c->icid] != c->rd + 1) {
			r->act = VITS_ACT_MOVE_COLL; /* remapped: its events follow */
			r->icid = c->icid;
			r->vcpu = (u32)c->rd;
		}
		st->coll[c->icid] = c->valid ? (u8)(c->rd + 1) : 0;
		return VITS_OK;
	case VITS_OP_MAPTI:
	case VITS_OP_MAPI:
		return mapti(cfg, st, c, r);
	case VITS_OP_INT:
	case VITS_OP_CLEAR:
	case VITS_OP_INV:
	case VITS_OP_DISCARD:
	case VITS_OP_MOVI:
		return on_event(cfg, st, c, r);
	case VITS_OP_INVALL:
		if (c->icid >= VITS_MAX_COLLECTIONS)
			return VITS_E_COLLECTION;
		r->act = VITS_ACT_INV; /* vlpi 0: all */
		return VITS_OK;
	case VITS_OP_SYNC:
		return c->rd < cfg->ncpus ? VITS_OK : VITS_E_TARGET;
	case VITS_OP_MOVALL:
		/* pending state moves with the vCPU's list registers: nothing */
		return c->rd < cfg->ncpus && c->rd2 < cfg->ncpus ? VITS_OK : VITS_E_TARGET;
	default:
		return VITS_E_COMMAND;
	}
}

bool vits_err_stalls(enum vits_err err)
{
	return err != VITS_OK && err != VITS_E_UNMAPPED;
}

const char *vits_err_name(enum vits_err err)
{
	static const char *const names[VITS_E_NR] = {
		[VITS_OK] = "ok",
		[VITS_E_COMMAND] = "unknown command",
		[VITS_E_DEVICE] = "foreign device ID, virtual-only devices all in use",
		[VITS_E_UNMAPPED] = "not mapped",
		[VITS_E_MAPPED] = "event mapped already",
		[VITS_E_EVENT] = "event ID out of range",
		[VITS_E_SIZE] = "ITT size out of range",
		[VITS_E_ADDR] = "table outside the VM's memory",
		[VITS_E_COLLECTION] = "collection out of range",
		[VITS_E_TARGET] = "target not a vCPU of the VM",
		[VITS_E_LPI] = "LPI out of the VM's range",
	};

	return (u32)err < VITS_E_NR ? names[err] : "?";
}
