/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/pcienum.h"

#define PCI_HDR_MULTI 0x80u
#define PCI_WIN_GRAIN 0x100000ull /* bridge memory windows: 1 MiB */
#define PCI_MIN_BAR   SZ_4K
#define PCI_NO_WINDOW 0x0000fff0u /* base 0xfff00000 above limit 0: closed */
#define PCIENUM_SLOTS (PCIENUM_MAX_FUNCS * 6)

static u32 rd(struct pcienum *e, u32 bdf, u32 off)
{
	return e->ops.read(e->ops.ctx, bdf, off);
}

static void wr(struct pcienum *e, u32 bdf, u32 off, u32 val)
{
	e->ops.write(e->ops.ctx, bdf, off, val);
}

/* Sizes BAR i (and i + 1 for a 64-bit one); returns how many it used. */
static u32 pcienum_size_bar(struct pcienum *e, struct pcienum_func *f, u32 i, u32 nbars)
{
	u32 off = PCI_BAR0 + 4 * i, orig = rd(e, f->bdf, off), lo, hi = 0, orig_hi = 0;
	struct pcienum_bar *b = &f->bar[i];
	u64 mask;

	if (orig & 1) { /* I/O space */
		wr(e, f->bdf, off, ~0u);
		lo = rd(e, f->bdf, off) & ~3u;
		wr(e, f->bdf, off, orig);
		b->flags = PCI_BAR_IO;
		b->size = lo ? (u64)((~lo + 1) & 0xffffu) : 0;
		return 1;
	}
	b->flags = (orig & 8) ? PCI_BAR_PREFETCH : 0;
	if (((orig >> 1) & 3) == 2 && i + 1 < nbars) {
		orig_hi = rd(e, f->bdf, off + 4);
		wr(e, f->bdf, off, ~0u);
		wr(e, f->bdf, off + 4, ~0u);
		lo = rd(e, f->bdf, off);
		hi = rd(e, f->bdf, off + 4);
		wr(e, f->bdf, off, orig);
		wr(e, f->bdf, off + 4, orig_hi);
		b->flags |= PCI_BAR_MEM64;
		f->bar[i + 1] = (struct pcienum_bar){ 0, 0, PCI_BAR_UPPER };
		mask = ((u64)hi << 32) | (lo & ~0xfu);
		b->size = mask ? ~mask + 1 : 0;
		return 2;
	}
	wr(e, f->bdf, off, ~0u);
	lo = rd(e, f->bdf, off) & ~0xfu;
	wr(e, f->bdf, off, orig);
	b->size = lo ? (u64)(u32)(~lo + 1) : 0;
	return 1;
}

static void pcienum_scan_bus(struct pcienum *e, u32 bus);

/* A bridge's PCIENUM_ALIAS_*, from its PCIe capability (bounded walk). */
static u8 pcienum_bridge_alias(struct pcienum *e, u32 bdf)
{
	u32 ptr;

	if (!((rd(e, bdf, PCI_COMMAND) >> 16) & PCI_STATUS_CAP_LIST))
		return PCIENUM_ALIAS_BRIDGE;
	ptr = rd(e, bdf, PCI_CAP_PTR) & 0xfc;
	for (u32 n = 0; n < 48 && ptr >= 0x40; n++) {
		u32 cap = rd(e, bdf, ptr);

		if ((cap & 0xff) == PCI_CAP_ID_EXP)
			return ((cap >> 20) & 0xf) == PCI_EXP_TYPE_PCI_BRIDGE
			           ? PCIENUM_ALIAS_SECONDARY
			           : PCIENUM_ALIAS_NONE;
		ptr = (cap >> 8) & 0xfc;
	}
	return PCIENUM_ALIAS_BRIDGE; /* no PCIe capability: conventional PCI */
}

static void pcienum_add(struct pcienum *e, u32 bdf, u32 id, u32 hdr)
{
	struct pcienum_func *f;
	u32 nbars;

	if (e->nfuncs >= PCIENUM_MAX_FUNCS) {
		e->overflow = true;
		return;
	}
	f = &e->funcs[e->nfuncs++];
	*f = (struct pcienum_func){ .bdf = bdf,
		                    .vendor = (u16)id,
		                    .device = (u16)(id >> 16),
		                    .header = (u8)(hdr & 0x7f),
		                    .owner = PCIENUM_NO_OWNER,
		                    .win_limit = 0 };
	if (f->header == 1)
		f->alias = pcienum_bridge_alias(e, bdf);
	/* nothing decodes or masters until a VM's function is set up */
	wr(e, bdf, PCI_COMMAND, 0);
	f->pin = (u8)(rd(e, bdf, PCI_INTERRUPT) >> 8);
	nbars = f->header == 0 ? 6 : f->header == 1 ? 2 : 0;
	for (u32 i = 0; i < nbars;)
		i += pcienum_size_bar(e, f, i, nbars);
	if (f->header != 1)
		return;
	if (e->next_bus > e->bus_last) {
		e->overflow = true; /* no bus number left: the bridge stays closed */
		wr(e, bdf, PCI_PRIMARY_BUS, PCI_BDF_BUS(bdf));
		return;
	}
	f->sec_bus = (u8)e->next_bus++;
	/* open to the end of the range while scanning below, then narrowed */
	wr(e, bdf, PCI_PRIMARY_BUS, PCI_BDF_BUS(bdf) | (u32)f->sec_bus << 8 | e->bus_last << 16);
	pcienum_scan_bus(e, f->sec_bus);
	f = pcienum_find(e, bdf); /* the array may only have grown: same slot */
	f->sub_bus = (u8)(e->next_bus - 1);
	wr(e, bdf, PCI_PRIMARY_BUS,
	   PCI_BDF_BUS(bdf) | (u32)f->sec_bus << 8 | (u32)f->sub_bus << 16);
	wr(e, bdf, PCI_MEM_BASE, PCI_NO_WINDOW);
	wr(e, bdf, PCI_PREF_BASE, PCI_NO_WINDOW);
	wr(e, bdf, PCI_PREF_BASE_UP, 0);
	wr(e, bdf, PCI_PREF_LIMIT_UP, 0);
}

static void pcienum_scan_bus(struct pcienum *e, u32 bus)
{
	for (u32 dev = 0; dev < 32; dev++) {
		for (u32 fn = 0; fn < 8; fn++) {
			u32 bdf = PCI_BDF(bus, dev, fn), id = rd(e, bdf, PCI_VENDOR_ID);
			u32 hdr;

			if ((id & 0xffff) == 0xffff || (id & 0xffff) == 0) {
				if (fn == 0)
					break;
				continue;
			}
			hdr = (rd(e, bdf, PCI_HEADER_TYPE & ~3u) >> 16) & 0xff;
			pcienum_add(e, bdf, id, hdr);
			if (fn == 0 && !(hdr & PCI_HDR_MULTI))
				break;
		}
	}
}

u32 pcienum_scan(struct pcienum *e)
{
	e->nfuncs = 0;
	e->overflow = false;
	e->next_bus = e->bus_first + 1;
	if (e->bus_first > e->bus_last || e->bus_last > 255)
		return 0;
	pcienum_scan_bus(e, e->bus_first);
	return e->nfuncs;
}

struct pcienum_func *pcienum_find(struct pcienum *e, u32 bdf)
{
	for (u32 i = 0; i < e->nfuncs; i++)
		if (e->funcs[i].bdf == bdf)
			return &e->funcs[i];
	return NULL;
}

static const struct pcienum_func *pcienum_bridge_to(const struct pcienum *e, u32 bus)
{
	for (u32 i = 0; i < e->nfuncs; i++)
		if (e->funcs[i].header == 1 && e->funcs[i].sec_bus == bus)
			return &e->funcs[i];
	return NULL;
}

int pcienum_root_pin(const struct pcienum *e, const struct pcienum_func *f)
{
	u32 pin;

	if (f->pin < 1 || f->pin > 4)
		return -1;
	pin = f->pin - 1u;
	for (u32 depth = 0; depth < 256; depth++) {
		pin = (pin + PCI_BDF_DEV(f->bdf)) % 4;
		if (PCI_BDF_BUS(f->bdf) == e->bus_first)
			return (int)pin;
		f = pcienum_bridge_to(e, PCI_BDF_BUS(f->bdf));
		if (!f)
			return -1;
	}
	return -1;
}

u32 pcienum_requester_id(const struct pcienum *e, const struct pcienum_func *f,
                         const struct pcienum_func **by)
{
	u32 rid = f->bdf;

	*by = NULL;
	for (u32 depth = 0; depth < 256 && PCI_BDF_BUS(f->bdf) != e->bus_first; depth++) {
		const struct pcienum_func *br = pcienum_bridge_to(e, PCI_BDF_BUS(f->bdf));

		if (!br)
			break;
		if (br->alias == PCIENUM_ALIAS_BRIDGE)
			rid = br->bdf;
		else if (br->alias == PCIENUM_ALIAS_SECONDARY)
			rid = PCI_BDF(br->sec_bus, 0, 0);
		if (br->alias != PCIENUM_ALIAS_NONE)
			*by = br;
		f = br;
	}
	return rid;
}

bool pcienum_alias_shared(const struct pcienum *e, const struct pcienum_func **a,
                          const struct pcienum_func **b, const struct pcienum_func **by)
{
	for (u32 i = 0; i < e->nfuncs; i++) {
		const struct pcienum_func *fi = &e->funcs[i], *bi;
		u32 ri = pcienum_requester_id(e, fi, &bi);

		if (fi->owner == PCIENUM_NO_OWNER || !bi)
			continue;
		for (u32 j = i + 1; j < e->nfuncs; j++) {
			const struct pcienum_func *fj = &e->funcs[j], *bj;

			if (fj->owner == PCIENUM_NO_OWNER || fj->owner == fi->owner ||
			    pcienum_requester_id(e, fj, &bj) != ri)
				continue;
			*a = fi;
			*b = fj;
			*by = bi;
			return true;
		}
	}
	return false;
}

static void pcienum_write_bar(struct pcienum *e, const struct pcienum_func *f, u32 i)
{
	const struct pcienum_bar *b = &f->bar[i];
	u32 off = PCI_BAR0 + 4 * i;

	wr(e, f->bdf, off, (u32)b->addr);
	if (b->flags & PCI_BAR_MEM64)
		wr(e, f->bdf, off + 4, (u32)(b->addr >> 32));
}

bool pcienum_assign(struct pcienum *e, u32 vm, u64 base, u64 size)
{
	u16 slot[PCIENUM_SLOTS];
	u64 at[PCIENUM_SLOTS];
	u32 n = 0;
	u64 cur = base;

	for (u32 k = 0; k < e->nfuncs; k++)
		for (u32 i = 0; i < 6; i++) {
			const struct pcienum_bar *b = &e->funcs[k].bar[i];

			if (e->funcs[k].owner == vm && b->size &&
			    !(b->flags & (PCI_BAR_IO | PCI_BAR_UPPER)))
				slot[n++] = (u16)(k * 6 + i);
		}
	/* insertion sort, largest first */
	for (u32 a = 1; a < n; a++) {
		u16 s = slot[a];
		u64 sz = e->funcs[s / 6].bar[s % 6].size;
		u32 b = a;

		for (; b > 0 && e->funcs[slot[b - 1] / 6].bar[slot[b - 1] % 6].size < sz; b--)
			slot[b] = slot[b - 1];
		slot[b] = s;
	}
	for (u32 a = 0; a < n; a++) {
		u64 sz = MAX(e->funcs[slot[a] / 6].bar[slot[a] % 6].size, PCI_MIN_BAR);

		if (sz & (sz - 1))
			return false; /* a BAR size is a power of two */
		cur = ALIGN_UP(cur, sz);
		if (cur < base || cur - base > size || sz > size - (cur - base))
			return false;
		at[a] = cur;
		cur += sz;
	}
	for (u32 a = 0; a < n; a++) {
		struct pcienum_func *f = &e->funcs[slot[a] / 6];

		f->bar[slot[a] % 6].addr = at[a];
		pcienum_write_bar(e, f, slot[a] % 6);
	}
	return true;
}

static bool pcienum_below(const struct pcienum_func *bridge, const struct pcienum_func *f)
{
	u32 bus = PCI_BDF_BUS(f->bdf);

	return bus >= bridge->sec_bus && bus <= bridge->sub_bus;
}

bool pcienum_bridge_windows(struct pcienum *e, const struct pcienum_func **bad)
{
	for (u32 k = 0; k < e->nfuncs; k++) {
		struct pcienum_func *br = &e->funcs[k];
		u64 lo = ~0ull, hi = 0;

		if (br->header != 1 || !br->sec_bus)
			continue;
		for (u32 j = 0; j < e->nfuncs; j++)
			for (u32 i = 0; i < 6; i++) {
				const struct pcienum_bar *b = &e->funcs[j].bar[i];

				if (!pcienum_below(br, &e->funcs[j]) || !b->addr ||
				    (b->flags & PCI_BAR_IO))
					continue;
				lo = MIN(lo, b->addr);
				hi = MAX(hi, b->addr + MAX(b->size, PCI_MIN_BAR));
			}
		if (!hi) {
			br->win_base = 1;
			br->win_limit = 0;
			wr(e, br->bdf, PCI_MEM_BASE, PCI_NO_WINDOW);
			continue;
		}
		br->win_base = ALIGN_DOWN(lo, PCI_WIN_GRAIN);
		br->win_limit = ALIGN_UP(hi, PCI_WIN_GRAIN) - 1;
		if (br->win_limit >> 32) {
			*bad = br;
			return false;
		}
		for (u32 j = 0; j < e->nfuncs; j++)
			for (u32 i = 0; i < 6; i++) {
				const struct pcienum_bar *b = &e->funcs[j].bar[i];

				if (pcienum_below(br, &e->funcs[j]) || !b->addr ||
				    (b->flags & PCI_BAR_IO))
					continue;
				if (b->addr <= br->win_limit && b->addr + b->size > br->win_base) {
					*bad = br;
					return false;
				}
			}
		wr(e, br->bdf, PCI_MEM_BASE,
		   (u32)(br->win_base >> 16) | (u32)((br->win_limit >> 16) & 0xfff0u) << 16);
		wr(e, br->bdf, PCI_COMMAND, PCI_CMD_MEM | PCI_CMD_MASTER);
	}
	return true;
}
