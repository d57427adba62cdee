/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a guest's ITS command queue (core/vgic/vits_cmd.c). Any
 * sequence of 32-byte commands: a refused command changes nothing; an applied
 * one never names a device of another VM, an event past the device's size or
 * VITS_MAX_EVENTS, an LPI out of the VM's range, a target vCPU it does not
 * have; every mapped ITE stays within those bounds. A device ID that is no
 * function of the VM is a virtual-only device: never given a physical LPI
 * (its slot past the functions'), never one of the VM's functions' IDs, at
 * most VITS_MAX_VDEVS of them, each ID once, up to VITS_VDEV_EVENTS events. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/vgic/vits_cmd.h"

#define RAM_BASE 0x40000000ull
#define RAM_SIZE 0x01000000ull

static bool in_ram(const void *ctx, u64 ipa, u64 size)
{
	(void)ctx;
	return ipa >= RAM_BASE && size <= RAM_SIZE && ipa - RAM_BASE <= RAM_SIZE - size;
}

static void invariants(const struct vits_cfg *cfg, const struct vits_state *st)
{
	for (u32 s = 0; s < VITS_MAX_DEVS; s++) {
		const struct vits_dev *d = &st->dev[s];

		if (s >= cfg->ndevs && d->mapped)
			abort();
		if (d->mapped && (d->size_bits > VITS_EVENT_BITS || !d->size_bits ||
		                  !in_ram(NULL, d->itt, (u64)VITS_ITE_SIZE << d->size_bits)))
			abort();
		for (u32 e = 0; e < VITS_MAX_EVENTS; e++) {
			const struct vits_ite *ite = &d->ite[e];

			if (!ite->vlpi)
				continue;
			if (!d->mapped || e >= (1u << d->size_bits) ||
			    ite->vlpi < vits_lpi_base(cfg) ||
			    ite->vlpi >= vits_lpi_base(cfg) + VITS_NR_LPIS ||
			    ite->icid >= VITS_MAX_COLLECTIONS)
				abort();
		}
	}
	for (u32 i = 0; i < VITS_MAX_VDEVS; i++) {
		const struct vits_vdev *d = &st->vdev[i];

		if (d->mapped && cfg->phys_lpis)
			abort(); /* a direct VM has no virtual-only devices */
		if (d->mapped && (!d->size_bits || d->size_bits > VITS_VDEV_EVENT_BITS ||
		                  vits_slot(cfg, d->devid) >= 0 ||
		                  !in_ram(NULL, d->itt, (u64)VITS_ITE_SIZE << d->size_bits)))
			abort();
		for (u32 j = 0; j < i; j++)
			if (d->mapped && st->vdev[j].mapped && st->vdev[j].devid == d->devid)
				abort();
		for (u32 e = 0; e < VITS_VDEV_EVENTS; e++) {
			const struct vits_ite *ite = &d->ite[e];

			if (ite->vlpi &&
			    (!d->mapped || e >= (1u << d->size_bits) || ite->vlpi < VITS_LPI_BASE ||
			     ite->vlpi >= VITS_LPI_BASE + VITS_NR_LPIS ||
			     ite->icid >= VITS_MAX_COLLECTIONS))
				abort();
		}
	}
	for (u32 i = 0; i < VITS_MAX_COLLECTIONS; i++)
		if (st->coll[i] > cfg->ncpus)
			abort();
}

/* an applied device command's slot: the device's function, or a mapped
 * virtual-only device of that ID (or, unmapped now, one with no events) */
static void check_slot(const struct vits_cfg *cfg, const struct vits_state *st,
                       const struct vits_cmd *c, const struct vits_result *r)
{
	if (!vits_slot_virtual(r->slot)) {
		if (r->slot >= cfg->ndevs || cfg->devids[r->slot] != c->devid ||
		    r->act == VITS_ACT_DROP_VLPIS)
			abort();
		return;
	}
	if (r->slot - VITS_MAX_DEVS >= VITS_MAX_VDEVS || vits_slot(cfg, c->devid) >= 0)
		abort();
	if (st->vdev[r->slot - VITS_MAX_DEVS].mapped &&
	    st->vdev[r->slot - VITS_MAX_DEVS].devid != c->devid)
		abort();
	if (r->act == VITS_ACT_UNMAP || r->act == VITS_ACT_UNMAP_DEV)
		abort(); /* nothing physical to unmap */
	if (r->act != VITS_ACT_DROP_VLPIS && r->event >= VITS_VDEV_EVENTS)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vits_cfg cfg = { .ndevs = 3, .devids = { 0x10, 0x11, 0x100 }, .in_ram = in_ram };
	struct vits_state st, before;

	if (size < 1)
		return 0;
	cfg.ncpus = 1 + data[0] % 4;
	if (data[0] & 0x80) { /* `interrupts: direct`: its own block of physical LPIs */
		cfg.phys_lpis = true;
		cfg.lpi_base = VITS_LPI_BASE + VITS_NR_LPIS * (1u + (data[0] >> 4 & 7));
	}
	memset(&st, 0, sizeof(st));
	for (size_t i = 1; i + VITS_CMD_SIZE <= size; i += VITS_CMD_SIZE) {
		u64 dw[4];
		struct vits_cmd c;
		struct vits_result r;
		enum vits_err err;

		memcpy(dw, data + i, sizeof(dw));
		vits_decode(dw, &c);
		before = st;
		err = vits_apply(&cfg, &st, &c, &r);
		if ((u32)err >= VITS_E_NR || !vits_err_name(err))
			abort();
		if (err) {
			if (memcmp(&before, &st, sizeof(st)) || r.act != VITS_ACT_NONE ||
			    vits_err_stalls(err) == (err == VITS_E_UNMAPPED))
				abort();
			continue;
		}
		if (r.act == VITS_ACT_MOVE_COLL &&
		    (r.icid >= VITS_MAX_COLLECTIONS || r.vcpu >= cfg.ncpus ||
		     st.coll[r.icid] != r.vcpu + 1))
			abort();
		if (r.act != VITS_ACT_NONE && r.act != VITS_ACT_INV &&
		    r.act != VITS_ACT_MOVE_COLL) {
			check_slot(&cfg, &st, &c, &r);
			if (r.vcpu >= cfg.ncpus)
				abort();
		}
		if ((r.act == VITS_ACT_MAP || r.act == VITS_ACT_INT || r.act == VITS_ACT_MOVE) &&
		    (r.vlpi < vits_lpi_base(&cfg) || r.vlpi >= vits_lpi_base(&cfg) + VITS_NR_LPIS ||
		     (!vits_slot_virtual(r.slot) &&
		      (r.event >= VITS_MAX_EVENTS ||
		       vits_plpi_index(r.slot, r.event) >= VITS_MAX_DEVS * VITS_MAX_EVENTS))))
			abort();
		invariants(&cfg, &st);
	}
	return 0;
}
