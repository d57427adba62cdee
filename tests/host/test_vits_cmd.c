// SPDX-License-Identifier: Apache-2.0
/* Host test of core/vgic/vits_cmd.c: the virtual ITS's command decoder and
 * checker (a guest setting up its device's MSIs; foreign device IDs, events
 * out of range, tables outside its RAM, unknown commands refused and
 * changing nothing). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/vgic/vits_cmd.h"

#define RAM_BASE 0x40000000ull
#define RAM_SIZE 0x08000000ull

static bool in_ram(const void *ctx, u64 ipa, u64 size)
{
	(void)ctx;
	return ipa >= RAM_BASE && size <= RAM_SIZE && ipa - RAM_BASE <= RAM_SIZE - size;
}

static const struct vits_cfg cfg = {
	.ndevs = 2, .devids = { 0x10, 0x18 }, .ncpus = 2, .in_ram = in_ram, .ctx = NULL
};

static u64 w0(u8 op, u32 devid)
{
	return op | (u64)devid << 32;
}

static enum vits_err run(struct vits_state *st, u64 d0, u64 d1, u64 d2, u64 d3,
                         struct vits_result *r)
{
	u64 dw[4] = { d0, d1, d2, d3 };
	struct vits_cmd c;

	vits_decode(dw, &c);
	return vits_apply(&cfg, st, &c, r);
}

/* every refused command leaves the state as it was */
static void refused(struct vits_state *st, u64 d0, u64 d1, u64 d2, u64 d3, enum vits_err want)
{
	struct vits_state before = *st;
	struct vits_result r;
	enum vits_err err = run(st, d0, d1, d2, d3, &r);

	CHECK(err == want);
	if (err != want)
		fprintf(stderr, "  got %d (%s), want %d\n", err, vits_err_name(err), want);
	CHECK(memcmp(&before, st, sizeof(before)) == 0);
	CHECK(r.act == VITS_ACT_NONE);
}

static void decode(void)
{
	u64 dw[4] = { 0x1234567800000008ull, 0x0000000300000004ull, 0x80000000400123ffull,
		      0x00000000000a0000ull };
	struct vits_cmd c;

	vits_decode(dw, &c);
	CHECK(c.op == VITS_OP_MAPD && c.devid == 0x12345678 && c.size == 4 && c.valid);
	CHECK(c.itt == 0x40012300ull);
	CHECK(c.icid == 0x23ff && c.rd == 0x4001 && c.rd2 == 0xa);
	dw[0] = VITS_OP_MAPTI;
	vits_decode(dw, &c);
	CHECK(c.event == 4 && c.intid == 3);
	dw[0] = VITS_OP_MAPI;
	vits_decode(dw, &c);
	CHECK(c.intid == 4); /* MAPI: the LPI is the event ID */
}

/* Device IDs that are no function of the VM (kvm-unit-tests' its-trigger maps
 * 2 and 7): virtual-only devices, up to 256 events, the VM's LPIs only; the
 * table full, another one refused. Leaves st as it found it. */
static void virtual_only(struct vits_state *st)
{
	struct vits_result r;

	/* MAPD devid 2, 8 event ID bits (its-trigger's), ITT of 2 KiB */
	CHECK(run(st, w0(VITS_OP_MAPD, 2), 7, 1ull << 63 | 0x40200000, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_NONE && vits_slot_virtual(r.slot) && r.slot == VITS_MAX_DEVS);
	CHECK(st->vdev[0].mapped && st->vdev[0].devid == 2 && st->vdev[0].size_bits == 8);
	refused(st, w0(VITS_OP_MAPD, 7), 8, 1ull << 63 | 0x40200000, 0, VITS_E_SIZE);
	refused(st, w0(VITS_OP_MAPD, 7), 7, 1ull << 63 | (RAM_BASE + RAM_SIZE - 0x400), 0,
	        VITS_E_ADDR);
	CHECK(run(st, w0(VITS_OP_MAPD, 7), 7, 1ull << 63 | 0x40210000, 0, &r) == VITS_OK);
	CHECK(r.slot == VITS_MAX_DEVS + 1);
	/* event 255 -> LPI 8196 on collection 0 (vCPU 1); INT pends it, never physical */
	CHECK(run(st, w0(VITS_OP_MAPTI, 7), 255 | (u64)8196 << 32, 0, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_MAP && r.slot == VITS_MAX_DEVS + 1 && r.event == 255 &&
	      r.vlpi == 8196 && r.vcpu == 1);
	CHECK(run(st, w0(VITS_OP_INT, 7), 255, 0, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_INT && vits_slot_virtual(r.slot) && r.vlpi == 8196);
	refused(st, w0(VITS_OP_INT, 7), 256, 0, 0, VITS_E_EVENT);
	refused(st, w0(VITS_OP_MAPTI, 7), 1 | (u64)9000 << 32, 0, 0, VITS_E_LPI);
	CHECK(run(st, w0(VITS_OP_MOVI, 7), 255, 1, 0, &r) == VITS_OK && r.act == VITS_ACT_MOVE &&
	      r.vcpu == 1);
	CHECK(run(st, w0(VITS_OP_DISCARD, 7), 255, 0, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_DROP_VLPIS && !st->vdev[1].ite[255].vlpi);
	/* two more fill the table; a fifth is refused and changes nothing */
	CHECK(run(st, w0(VITS_OP_MAPD, 0x20), 0, 1ull << 63 | 0x40220000, 0, &r) == VITS_OK);
	CHECK(run(st, w0(VITS_OP_MAPD, 0x21), 0, 1ull << 63 | 0x40220000, 0, &r) == VITS_OK);
	refused(st, w0(VITS_OP_MAPD, 0x22), 0, 1ull << 63 | 0x40220000, 0, VITS_E_DEVICE);
	/* unmapping one frees its slot, its events' LPIs released */
	CHECK(run(st, w0(VITS_OP_MAPTI, 2), 20 | (u64)8195 << 32, 0, 0, &r) == VITS_OK);
	CHECK(run(st, w0(VITS_OP_MAPD, 2), 0, 0, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_DROP_VLPIS && !st->vdev[0].mapped && !st->vdev[0].ite[20].vlpi);
	refused(st, w0(VITS_OP_INT, 2), 20, 0, 0, VITS_E_UNMAPPED); /* its-trigger's last check */
	CHECK(run(st, w0(VITS_OP_MAPD, 2), 0, 0, 0, &r) == VITS_OK && r.act == VITS_ACT_NONE);
	CHECK(run(st, w0(VITS_OP_MAPD, 0x22), 0, 1ull << 63 | 0x40220000, 0, &r) == VITS_OK);
	CHECK(r.slot == VITS_MAX_DEVS);
	/* a function's ID is never virtual-only */
	CHECK(run(st, w0(VITS_OP_MAPD, 0x10), 7, 1ull << 63 | 0x40200000, 0, &r) == VITS_E_SIZE);
	for (u32 id = 0x20; id <= 0x22; id++)
		CHECK(run(st, w0(VITS_OP_MAPD, id), 0, 0, 0, &r) == VITS_OK);
	CHECK(run(st, w0(VITS_OP_MAPD, 7), 0, 0, 0, &r) == VITS_OK);
	for (u32 i = 0; i < VITS_MAX_VDEVS; i++)
		CHECK(!st->vdev[i].mapped);
}

/* A VM with `interrupts: direct` whose LPI block is 8448-8703: its MAPTI
 * names an LPI of that block only (the guest acknowledges the physical
 * INTID), and a device ID that is none of its functions is refused (no
 * virtual-only devices: nothing but the physical ITS pends its LPIs). */
static void direct(void)
{
	const struct vits_cfg dcfg = { .ndevs = 1,
		                       .devids = { 0x18 },
		                       .ncpus = 1,
		                       .in_ram = in_ram,
		                       .lpi_base = 8448,
		                       .phys_lpis = true };
	struct vits_state st;
	struct vits_result r;
	struct vits_cmd c;
	u64 mapd[4] = { w0(VITS_OP_MAPD, 0x18), 1, 1ull << 63 | 0x40100000, 0 };
	u64 mapc[4] = { VITS_OP_MAPC, 0, 1ull << 63, 0 };
	u64 low[4] = { w0(VITS_OP_MAPTI, 0x18), 0 | (u64)8197 << 32, 0, 0 };
	u64 high[4] = { w0(VITS_OP_MAPTI, 0x18), 0 | (u64)8704 << 32, 0, 0 };
	u64 own[4] = { w0(VITS_OP_MAPTI, 0x18), 1 | (u64)8453 << 32, 0, 0 };
	u64 last[4] = { w0(VITS_OP_MAPTI, 0x18), 2 | (u64)8703 << 32, 0, 0 };
	u64 foreign[4] = { w0(VITS_OP_MAPD, 2), 7, 1ull << 63 | 0x40200000, 0 };
	u64 unmap_foreign[4] = { w0(VITS_OP_MAPD, 2), 0, 0, 0 };
	struct vits_state before;

	memset(&st, 0, sizeof(st));
	CHECK(vits_lpi_base(&dcfg) == 8448 && vits_lpi_base(&cfg) == VITS_LPI_BASE);
	vits_decode(mapd, &c);
	CHECK(vits_apply(&dcfg, &st, &c, &r) == VITS_OK);
	vits_decode(mapc, &c);
	CHECK(vits_apply(&dcfg, &st, &c, &r) == VITS_OK);
	before = st;
	vits_decode(low, &c); /* the emulated VMs' guest range: not this VM's */
	CHECK(vits_apply(&dcfg, &st, &c, &r) == VITS_E_LPI);
	vits_decode(high, &c);
	CHECK(vits_apply(&dcfg, &st, &c, &r) == VITS_E_LPI);
	vits_decode(foreign, &c);
	CHECK(vits_apply(&dcfg, &st, &c, &r) == VITS_E_DEVICE);
	CHECK(memcmp(&before, &st, sizeof(st)) == 0);
	vits_decode(unmap_foreign, &c); /* unmapping one never mapped: nothing */
	CHECK(vits_apply(&dcfg, &st, &c, &r) == VITS_OK && r.act == VITS_ACT_NONE);
	vits_decode(own, &c);
	CHECK(vits_apply(&dcfg, &st, &c, &r) == VITS_OK && r.act == VITS_ACT_MAP &&
	      r.vlpi == 8453 && st.dev[0].ite[1].vlpi == 8453);
	vits_decode(last, &c);
	CHECK(vits_apply(&dcfg, &st, &c, &r) == VITS_OK && r.vlpi == 8703);
}

int main(void)
{
	struct vits_state st;
	struct vits_result r;

	decode();
	direct();
	memset(&st, 0, sizeof(st));
	/* a guest's set-up: collection 0 -> vCPU 1, device 0x18 with 4 events */
	CHECK(run(&st, VITS_OP_MAPC, 0, 1ull << 63 | 1ull << 16 | 0, 0, &r) == VITS_OK);
	CHECK(st.coll[0] == 2);
	CHECK(run(&st, w0(VITS_OP_MAPD, 0x18), 1, 1ull << 63 | 0x40100000, 0, &r) == VITS_OK);
	CHECK(st.dev[1].mapped && st.dev[1].size_bits == 2 && r.act == VITS_ACT_NONE);
	CHECK(run(&st, w0(VITS_OP_MAPTI, 0x18), 3 | (u64)8200 << 32, 0, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_MAP && r.slot == 1 && r.event == 3 && r.vlpi == 8200 &&
	      r.vcpu == 1);
	CHECK(vits_plpi_index(r.slot, r.event) == VITS_MAX_EVENTS + 3);
	CHECK(run(&st, w0(VITS_OP_MAPI, 0x18), 8195, 0, 0, &r) == VITS_E_EVENT); /* 2 bits */
	CHECK(run(&st, w0(VITS_OP_SYNC, 0), 0, 1ull << 16, 0, &r) == VITS_OK &&
	      r.act == VITS_ACT_NONE);
	CHECK(run(&st, w0(VITS_OP_INT, 0x18), 3, 0, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_INT && r.vlpi == 8200 && r.vcpu == 1);
	CHECK(run(&st, w0(VITS_OP_CLEAR, 0x18), 3, 0, 0, &r) == VITS_OK && r.act == VITS_ACT_CLEAR);
	CHECK(run(&st, w0(VITS_OP_INV, 0x18), 3, 0, 0, &r) == VITS_OK && r.act == VITS_ACT_INV &&
	      r.vlpi == 8200);
	CHECK(run(&st, VITS_OP_INVALL, 0, 0, 0, &r) == VITS_OK && r.act == VITS_ACT_INV &&
	      r.vlpi == 0);
	/* MOVI to collection 1 (vCPU 0) */
	CHECK(run(&st, VITS_OP_MAPC, 0, 1ull << 63 | 0 << 16 | 1, 0, &r) == VITS_OK);
	CHECK(run(&st, w0(VITS_OP_MOVI, 0x18), 3, 1, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_MOVE && r.vcpu == 0 && st.dev[1].ite[3].icid == 1);
	/* collection 1 remapped to vCPU 1: its events follow; mapped again the same: nothing */
	CHECK(run(&st, VITS_OP_MAPC, 0, 1ull << 63 | 1ull << 16 | 1, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_MOVE_COLL && r.icid == 1 && r.vcpu == 1 && st.coll[1] == 2);
	CHECK(run(&st, VITS_OP_MAPC, 0, 1ull << 63 | 1ull << 16 | 1, 0, &r) == VITS_OK &&
	      r.act == VITS_ACT_NONE);

	/* a foreign device not mapped: its commands name nothing (ignored, no stall) */
	refused(&st, w0(VITS_OP_MAPTI, 0x20), 0 | (u64)8192 << 32, 0, 0, VITS_E_UNMAPPED);
	refused(&st, w0(VITS_OP_INT, 0x20), 0, 0, 0, VITS_E_UNMAPPED);
	refused(&st, w0(VITS_OP_DISCARD, 0x11), 0, 0, 0, VITS_E_UNMAPPED);
	CHECK(!vits_err_stalls(VITS_E_UNMAPPED) && vits_err_stalls(VITS_E_DEVICE) &&
	      vits_err_stalls(VITS_E_EVENT) && !vits_err_stalls(VITS_OK));
	virtual_only(&st);
	/* events out of range: of the device's size, of the limit */
	refused(&st, w0(VITS_OP_MAPTI, 0x18), 4 | (u64)8192 << 32, 0, 0, VITS_E_EVENT);
	refused(&st, w0(VITS_OP_INT, 0x18), 0xffffffff, 0, 0, VITS_E_EVENT);
	refused(&st, w0(VITS_OP_MAPD, 0x10), VITS_EVENT_BITS, 1ull << 63 | 0x40100000, 0,
	        VITS_E_SIZE);
	/* an ITT outside the VM's RAM, across its end, at 0 */
	refused(&st, w0(VITS_OP_MAPD, 0x10), 1, 1ull << 63 | 0x3ff00000, 0, VITS_E_ADDR);
	refused(&st, w0(VITS_OP_MAPD, 0x10), 4, 1ull << 63 | (RAM_BASE + RAM_SIZE), 0, VITS_E_ADDR);
	refused(&st, w0(VITS_OP_MAPD, 0x10), 1, 1ull << 63 | (RAM_BASE - 0x100), 0, VITS_E_ADDR);
	refused(&st, w0(VITS_OP_MAPD, 0x10), 1, 1ull << 63, 0, VITS_E_ADDR);
	/* collections and targets */
	refused(&st, VITS_OP_MAPC, 0, 1ull << 63 | 2ull << 16, 0, VITS_E_TARGET);
	refused(&st, VITS_OP_MAPC, 0, 1ull << 63 | VITS_MAX_COLLECTIONS, 0, VITS_E_COLLECTION);
	refused(&st, w0(VITS_OP_MOVI, 0x18), 3, VITS_MAX_COLLECTIONS, 0, VITS_E_COLLECTION);
	refused(&st, w0(VITS_OP_MOVI, 0x18), 3, 5, 0, VITS_E_UNMAPPED);
	refused(&st, VITS_OP_SYNC, 0, 7ull << 16, 0, VITS_E_TARGET);
	refused(&st, VITS_OP_MOVALL, 0, 0, 9ull << 16, VITS_E_TARGET);
	/* LPIs out of the VM's range; a mapped event mapped again */
	refused(&st, w0(VITS_OP_MAPTI, 0x18), 0 | (u64)8191 << 32, 0, 0, VITS_E_LPI);
	refused(&st, w0(VITS_OP_MAPTI, 0x18), 0 | (u64)(VITS_LPI_BASE + VITS_NR_LPIS) << 32, 0, 0,
	        VITS_E_LPI);
	refused(&st, w0(VITS_OP_MAPTI, 0x18), 3 | (u64)8300 << 32, 0, 0, VITS_E_MAPPED);
	/* commands on unmapped things */
	refused(&st, w0(VITS_OP_MAPTI, 0x10), 0 | (u64)8192 << 32, 0, 0, VITS_E_UNMAPPED);
	refused(&st, w0(VITS_OP_INT, 0x18), 2, 0, 0, VITS_E_UNMAPPED);
	/* GICv4 (VMAPP 0x29, VMAPTI 0x2a) and unknown commands */
	refused(&st, 0x29, 0, 0, 0, VITS_E_COMMAND);
	refused(&st, w0(0x2a, 0x18), 0, 0, 0, VITS_E_COMMAND);
	refused(&st, 0xff, 0, 0, 0, VITS_E_COMMAND);
	refused(&st, 0, 0, 0, 0, VITS_E_COMMAND);

	/* the command queue: in RAM, 4 KiB-aligned */
	CHECK(vits_queue_ok(&cfg, RAM_BASE + 0x10000, 0x1000));
	CHECK(!vits_queue_ok(&cfg, RAM_BASE + 0x10010, 0x1000));
	CHECK(!vits_queue_ok(&cfg, RAM_BASE + RAM_SIZE - 0x1000, 0x2000));
	CHECK(!vits_queue_ok(&cfg, 0x08080000, 0x1000));
	CHECK(!vits_queue_ok(&cfg, 0xfffffffffffff000ull, 0x2000));
	CHECK(!vits_queue_ok(&cfg, RAM_BASE, 0));

	/* DISCARD, then unmapping the device drops the rest */
	CHECK(run(&st, w0(VITS_OP_MAPTI, 0x18), 1 | (u64)8201 << 32, 0, 0, &r) == VITS_OK);
	CHECK(run(&st, w0(VITS_OP_DISCARD, 0x18), 3, 0, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_UNMAP && r.event == 3 && !st.dev[1].ite[3].vlpi);
	CHECK(run(&st, w0(VITS_OP_MAPD, 0x18), 0, 0, 0, &r) == VITS_OK);
	CHECK(r.act == VITS_ACT_UNMAP_DEV && r.ev_mask == 1u << 1 && !st.dev[1].mapped);
	refused(&st, w0(VITS_OP_INT, 0x18), 1, 0, 0, VITS_E_UNMAPPED);
	CHECK(vits_slot(&cfg, 0x10) == 0 && vits_slot(&cfg, 0x18) == 1 && vits_slot(&cfg, 0) == -1);
	CHECK(strcmp(vits_err_name(VITS_E_DEVICE),
	             "foreign device ID, virtual-only devices all in use") == 0);
	CHECK(strcmp(vits_err_name(VITS_E_NR), "?") == 0);

	if (failures)
		return 1;
	printf("test_vits_cmd: ok\n");
	return 0;
}
