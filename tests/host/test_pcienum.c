// SPDX-License-Identifier: Apache-2.0
/* Host test of lib/pcienum.c against a model of an ECAM with endpoints and
 * a PCI-to-PCI bridge: bus numbering, BAR sizing, assignment inside each
 * VM's window, bridge windows, the INTx swizzle. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "lib/pcienum.h"

struct mfunc {
	u32 bdf; /* bus as wired: bus numbers of functions below the bridge follow its secondary */
	u32 cfg[64];
	u64 bar_size[6]; /* sizes of the model's BARs (0: unimplemented) */
	bool below;      /* behind the bridge */
};

static struct mfunc model[8];
static u32 nmodel;
static u32 bridge_sec; /* the model bridge's secondary bus, as programmed */

static struct mfunc *mfind(u32 bdf)
{
	for (u32 i = 0; i < nmodel; i++) {
		u32 bus = model[i].below ? bridge_sec : 0;

		if (model[i].below && !bridge_sec)
			continue;
		if (PCI_BDF(bus, PCI_BDF_DEV(model[i].bdf), PCI_BDF_FN(model[i].bdf)) == bdf)
			return &model[i];
	}
	return NULL;
}

static u32 mread(void *ctx, u32 bdf, u32 off)
{
	struct mfunc *f = mfind(bdf);

	(void)ctx;
	return f ? f->cfg[off / 4] : 0xffffffffu;
}

static void mwrite(void *ctx, u32 bdf, u32 off, u32 val)
{
	struct mfunc *f = mfind(bdf);
	u32 i = (off - PCI_BAR0) / 4;

	(void)ctx;
	if (!f)
		return;
	if (off >= PCI_BAR0 && off < PCI_BAR0 + 24 && ((f->cfg[3] >> 16) & 0x7f) == 0) {
		u32 type = f->cfg[off / 4] & 0xf;
		u64 size = f->bar_size[i];

		if (i && (f->cfg[off / 4 - 1] & 6) == 4 && f->bar_size[i - 1]) { /* upper half */
			f->cfg[off / 4] = val & (u32)(~(f->bar_size[i - 1] - 1) >> 32);
			return;
		}
		f->cfg[off / 4] = size ? ((val & (u32) ~(size - 1)) | type) : 0;
		return;
	}
	if (off == PCI_PRIMARY_BUS)
		bridge_sec = (val >> 8) & 0xff;
	f->cfg[off / 4] = val;
}

static struct mfunc *add(u32 dev, u32 fn, u32 id, u32 hdr, u32 pin, bool below)
{
	struct mfunc *f = &model[nmodel++];

	memset(f, 0, sizeof(*f));
	f->bdf = PCI_BDF(0, dev, fn);
	f->below = below;
	f->cfg[0] = id;
	f->cfg[3] = hdr << 16;
	f->cfg[15] = pin << 8;
	f->cfg[1] = 0x7; /* decoding and mastering as found */
	return f;
}

static void bar(struct mfunc *f, u32 i, u64 size, u32 type)
{
	f->bar_size[i] = size;
	f->cfg[4 + i] = type;
	if ((type & 6) == 4)
		f->bar_size[i + 1] = 0;
}

int main(void)
{
	struct pcienum e = { .ops = { mread, mwrite, NULL }, .bus_first = 0, .bus_last = 15 };
	struct pcienum_func *host, *edu, *nvme, *vnet, *bridge, *child;
	const struct pcienum_func *bad = NULL;

	add(0, 0, 0x00081b36, 0, 0, false);                       /* host bridge */
	bar(add(2, 0, 0x11e81234, 0, 1, false), 0, 0x100000, 0);  /* edu: 1 MiB */
	bar(add(3, 0, 0x00101b36, 0x80, 1, false), 0, 0x4000, 4); /* nvme: 64-bit 16 KiB */
	bar(&model[2], 4, 0x1000, 0);
	bar(add(3, 1, 0x10411af4, 0, 2, false), 1, 0x1000, 0); /* fn 1 of a multi-function device */
	bar(&model[3], 4, 0x4000, 0xc);                        /* 64-bit prefetchable */
	model[3].cfg[4] = 0x1;                                 /* BAR0: I/O */
	model[3].bar_size[0] = 0x20;
	bar(add(4, 0, 0x000e1b36, 1, 1, false), 0, 0, 0);       /* PCI-to-PCI bridge */
	bar(add(1, 0, 0x11e81234, 0, 1, true), 0, 0x100000, 0); /* edu behind it */
	add(5, 0, 0, 0, 0, false);                              /* vendor 0: absent */

	CHECK(pcienum_scan(&e) == 6);
	CHECK(!e.overflow);
	host = pcienum_find(&e, PCI_BDF(0, 0, 0));
	edu = pcienum_find(&e, PCI_BDF(0, 2, 0));
	nvme = pcienum_find(&e, PCI_BDF(0, 3, 0));
	vnet = pcienum_find(&e, PCI_BDF(0, 3, 1));
	bridge = pcienum_find(&e, PCI_BDF(0, 4, 0));
	child = pcienum_find(&e, PCI_BDF(1, 1, 0));
	CHECK(host && edu && nvme && vnet && bridge && child);
	if (failures)
		return 1;
	CHECK(bridge->header == 1 && bridge->sec_bus == 1 && bridge->sub_bus == 1);
	CHECK(model[4].cfg[PCI_PRIMARY_BUS / 4] == 0x010100);
	CHECK(edu->vendor == 0x1234 && edu->device == 0x11e8 && edu->pin == 1);
	CHECK(edu->bar[0].size == 0x100000 && edu->bar[0].flags == 0);
	CHECK(edu->bar[1].size == 0);
	CHECK(nvme->bar[0].size == 0x4000 && nvme->bar[0].flags == PCI_BAR_MEM64);
	CHECK(nvme->bar[1].flags == PCI_BAR_UPPER && nvme->bar[1].size == 0);
	CHECK(nvme->bar[4].size == 0x1000);
	CHECK(vnet->bar[0].flags == PCI_BAR_IO && vnet->bar[0].size == 0x20);
	CHECK(vnet->bar[4].size == 0x4000 &&
	      vnet->bar[4].flags == (PCI_BAR_MEM64 | PCI_BAR_PREFETCH));
	for (u32 i = 0; i < nmodel; i++) /* nothing decodes or masters after the scan */
		CHECK((model[i].cfg[1] & 0xffff) == 0 || model[i].cfg[0] == 0);

	/* the model bridge has no PCIe capability: conventional PCI, its own ID */
	{
		const struct pcienum_func *by;

		CHECK(bridge->alias == PCIENUM_ALIAS_BRIDGE);
		CHECK(pcienum_requester_id(&e, child, &by) == PCI_BDF(0, 4, 0) && by == bridge);
		CHECK(pcienum_requester_id(&e, edu, &by) == PCI_BDF(0, 2, 0) && !by);
	}

	/* swizzle: slot + pin at the root; behind the bridge via its slot */
	CHECK(pcienum_root_pin(&e, edu) == 2);   /* (0 + 2) % 4 */
	CHECK(pcienum_root_pin(&e, vnet) == 0);  /* (1 + 3) % 4 */
	CHECK(pcienum_root_pin(&e, child) == 1); /* (0 + 1) = 1 at the bridge, + 4 -> 1 */
	CHECK(pcienum_root_pin(&e, host) == -1);

	/* VM 0: edu + nvme in [0x10000000, +16 MiB); VM 1: vnet + child in its own */
	edu->owner = nvme->owner = 0;
	vnet->owner = child->owner = 1;
	CHECK(pcienum_assign(&e, 0, 0x10000000, 0x1000000));
	CHECK(edu->bar[0].addr == 0x10000000);
	CHECK(nvme->bar[0].addr == 0x10100000);
	CHECK(nvme->bar[4].addr == 0x10104000);
	CHECK(model[1].cfg[4] == 0x10000000);
	CHECK(model[2].cfg[4] == 0x10100004 && model[2].cfg[5] == 0);
	CHECK(vnet->bar[0].addr == 0); /* I/O: never assigned */
	/* does not fit: nothing written */
	CHECK(!pcienum_assign(&e, 1, 0x11000000, 0x100000));
	CHECK(child->bar[0].addr == 0 && vnet->bar[4].addr == 0);
	CHECK(pcienum_assign(&e, 1, 0x11000000, 0x1000000));
	CHECK(child->bar[0].addr == 0x11000000 && vnet->bar[4].addr == 0x11100000);
	CHECK(pcienum_bridge_windows(&e, &bad));
	CHECK(bridge->win_base == 0x11000000 && bridge->win_limit == 0x110fffff);
	CHECK(model[4].cfg[PCI_MEM_BASE / 4] == (0x1100u | 0x1100u << 16));
	CHECK((model[4].cfg[1] & 0xffff) == (PCI_CMD_MEM | PCI_CMD_MASTER));
	/* a window that would cover another function's BAR is refused */
	child->bar[0].addr = 0x10000000;
	CHECK(!pcienum_bridge_windows(&e, &bad) && bad == bridge);
	/* two owners behind one conventional bridge share its alias */
	{
		const struct pcienum_func *a = NULL, *b = NULL, *by = NULL;

		CHECK(!pcienum_alias_shared(&e, &a, &b, &by)); /* one function below it */
		bridge->owner = 0;                             /* a bridge's owner does not count */
		CHECK(!pcienum_alias_shared(&e, &a, &b, &by));
		bridge->owner = PCIENUM_NO_OWNER;
		e.funcs[e.nfuncs] = *child;
		e.funcs[e.nfuncs].bdf = PCI_BDF(1, 2, 0);
		e.nfuncs++;
		CHECK(!pcienum_alias_shared(&e, &a, &b, &by)); /* both VM 1's */
		e.funcs[e.nfuncs - 1].owner = 0;
		CHECK(pcienum_alias_shared(&e, &a, &b, &by) && by == bridge &&
		      ((a == child && b == &e.funcs[e.nfuncs - 1]) ||
		       (b == child && a == &e.funcs[e.nfuncs - 1])));
		/* behind a PCIe bridge (a root port) each keeps its own ID */
		bridge->alias = PCIENUM_ALIAS_NONE;
		CHECK(!pcienum_alias_shared(&e, &a, &b, &by));
		CHECK(pcienum_requester_id(&e, child, &by) == PCI_BDF(1, 1, 0) && !by);
		/* behind a PCIe-to-PCI bridge: (secondary bus, devfn 0) */
		bridge->alias = PCIENUM_ALIAS_SECONDARY;
		CHECK(pcienum_requester_id(&e, child, &by) == PCI_BDF(1, 0, 0) && by == bridge);
		CHECK(pcienum_alias_shared(&e, &a, &b, &by) && by == bridge);
		e.nfuncs--;
		bridge->alias = PCIENUM_ALIAS_BRIDGE;
	}
	/* a bridge's PCIe capability decides its alias: type 7 PCIe-to-PCI,
	 * another type (4: a root port) none */
	{
		struct pcienum e3 = { .ops = { mread, mwrite, NULL },
			              .bus_first = 0,
			              .bus_last = 15 };
		struct mfunc *m = &model[4];
		const struct pcienum_func *by;

		m->cfg[1] |= PCI_STATUS_CAP_LIST << 16;
		m->cfg[PCI_CAP_PTR / 4] = 0x40;
		m->cfg[0x40 / 4] = 0x48u << 8 | 0x01u; /* power management, next 0x48 */
		m->cfg[0x48 / 4] = (u32)(PCI_EXP_TYPE_PCI_BRIDGE << 4 | 2) << 16 | PCI_CAP_ID_EXP;
		bridge_sec = 0;
		CHECK(pcienum_scan(&e3) == 6);
		CHECK(pcienum_find(&e3, PCI_BDF(0, 4, 0))->alias == PCIENUM_ALIAS_SECONDARY);
		CHECK(pcienum_requester_id(&e3, pcienum_find(&e3, PCI_BDF(1, 1, 0)), &by) ==
		      PCI_BDF(1, 0, 0));
		m->cfg[1] |= PCI_STATUS_CAP_LIST << 16;
		m->cfg[0x48 / 4] = (u32)(4 << 4 | 2) << 16 | PCI_CAP_ID_EXP;
		bridge_sec = 0;
		CHECK(pcienum_scan(&e3) == 6);
		CHECK(pcienum_find(&e3, PCI_BDF(0, 4, 0))->alias == PCIENUM_ALIAS_NONE);
		m->cfg[1] |= PCI_STATUS_CAP_LIST << 16;
		m->cfg[0x48 / 4] = 0x40u << 8 | 0x05u; /* MSI pointing back: a loop, no PCIe */
		bridge_sec = 0;
		CHECK(pcienum_scan(&e3) == 6);
		CHECK(pcienum_find(&e3, PCI_BDF(0, 4, 0))->alias == PCIENUM_ALIAS_BRIDGE);
		m->cfg[1] &= 0xffffu;
	}
	/* an empty range and a bridge without a bus number left */
	{
		struct pcienum e2 = { .ops = { mread, mwrite, NULL },
			              .bus_first = 0,
			              .bus_last = 0 };

		bridge_sec = 0;
		CHECK(pcienum_scan(&e2) == 5 && e2.overflow);
		e2.bus_first = 3;
		e2.bus_last = 2;
		CHECK(pcienum_scan(&e2) == 0);
	}
	if (failures)
		return 1;
	printf("test_pcienum: ok\n");
	return 0;
}
