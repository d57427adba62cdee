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

/* the mapped event of a device command: slot and ITE, or why not */
static enum vits_err event_of(const struct vits_cfg *cfg, struct vits_state *st,
                              const struct vits_cmd *c, struct vits_result *r)
{
	int s = vits_slot(cfg, c->devid);

	if (s < 0)
		return VITS_E_DEVICE;
	r->slot = (u32)s;
	if (!st->dev[s].mapped)
		return VITS_E_UNMAPPED;
	if (c->event >= (1u << st->dev[s].size_bits))
		return VITS_E_EVENT;
	r->event = c->event;
	return VITS_OK;
}

static enum vits_err mapd(const struct vits_cfg *cfg, struct vits_state *st,
                          const struct vits_cmd *c, struct vits_result *r)
{
	int s = vits_slot(cfg, c->devid);
	struct vits_dev *d;
	u32 mask = 0;

	if (s < 0)
		return VITS_E_DEVICE;
	d = &st->dev[s];
	r->slot = (u32)s;
	if (c->valid) {
		if (c->size + 1 > VITS_EVENT_BITS)
			return VITS_E_SIZE;
		if (!c->itt || !cfg->in_ram(cfg->ctx, c->itt, (u64)VITS_ITE_SIZE << (c->size + 1)))
			return VITS_E_ADDR;
	}
	/* (re)mapping or unmapping drops the old translations */
	for (u32 e = 0; e < VITS_MAX_EVENTS; e++) {
		if (d->ite[e].vlpi)
			mask |= 1u << e;
		d->ite[e].vlpi = 0;
		d->ite[e].icid = 0;
	}
	d->mapped = c->valid;
	d->size_bits = c->valid ? (u8)(c->size + 1) : 0;
	d->itt = c->valid ? c->itt : 0;
	r->ev_mask = mask;
	r->act = mask ? VITS_ACT_UNMAP_DEV : VITS_ACT_NONE;
	return VITS_OK;
}

static enum vits_err mapti(const struct vits_cfg *cfg, struct vits_state *st,
                           const struct vits_cmd *c, struct vits_result *r)
{
	enum vits_err err = event_of(cfg, st, c, r);
	struct vits_ite *ite;

	if (err)
		return err;
	if (c->icid >= VITS_MAX_COLLECTIONS)
		return VITS_E_COLLECTION;
	if (c->intid < VITS_LPI_BASE || c->intid >= VITS_LPI_BASE + VITS_NR_LPIS)
		return VITS_E_LPI;
	ite = &st->dev[r->slot].ite[r->event];
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
	enum vits_err err = event_of(cfg, st, c, r);
	struct vits_ite *ite;

	if (err)
		return err;
	ite = &st->dev[r->slot].ite[r->event];
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
		r->act = VITS_ACT_UNMAP;
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

const char *vits_err_name(enum vits_err err)
{
	static const char *const names[VITS_E_NR] = {
		[VITS_OK] = "ok",
		[VITS_E_COMMAND] = "unknown command",
		[VITS_E_DEVICE] = "foreign device ID",
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
