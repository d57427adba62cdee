// SPDX-License-Identifier: Apache-2.0
/* The guest's side of a GICv3 ITS (include/gits.h). */
#include "gits.h"

#include "arch.h"
#include "edu.h"
#include "gic.h"
#include "timer.h"

#define GICR_CTLR      0x0000
#define GICR_PROPBASER 0x0070
#define GICR_PENDBASER 0x0078
#define PCI_CAP_MSI    0x05

void gits_cmd(struct gits *g, u64 d0, u64 d1, u64 d2, u64 d3)
{
	u64 *c = &g->queue[g->cw / 8];

	c[0] = d0;
	c[1] = d1;
	c[2] = d2;
	c[3] = d3;
	g->cw = (g->cw + 32) % g->bytes;
}

static bool queue_done(void *arg)
{
	struct gits *g = arg;
	u64 r = mmio_read64(g->base + GITS_CREADR);

	return (r & GITS_STALLED) || r == g->cw;
}

bool gits_kick(struct gits *g, u64 timeout_ns)
{
	dsb_ish();
	mmio_write64(g->base + GITS_CWRITER, g->cw);
	timer_wait_until(queue_done, g, timeout_ns);
	return mmio_read64(g->base + GITS_CREADR) == g->cw;
}

void gits_queue_at(struct gits *g, u64 base)
{
	/* InnerCache RaWaWb, Inner Shareable, 4 KiB pages' count - 1 */
	u64 attrs = 7ull << 59 | 1ull << 10 | (g->bytes / 4096 - 1);

	mmio_write32(g->base + GITS_CTLR, 0);
	mmio_write64(g->base + GITS_CBASER, GITS_VALID | attrs | base);
	g->cw = 0;
	mmio_write64(g->base + GITS_CWRITER, 0);
	mmio_write32(g->base + GITS_CTLR, 1);
}

void gits_lpis_on(uptr prop, u32 idbits, uptr pend)
{
	uptr rd = GICR_BASE + cpu_id() * GICR_STRIDE;

	dsb_ish();
	mmio_write64(rd + GICR_PROPBASER, prop | (idbits - 1));
	mmio_write64(rd + GICR_PENDBASER, pend);
	mmio_write32(rd + GICR_CTLR, 1);
}

uptr gits_edu_find(uptr ecam, u32 slot, u32 *devid)
{
	for (; slot < 32; slot++) {
		uptr c = ecam + ((uptr)slot << 15);

		if (mmio_read32(c) == ((u32)EDU_DEVICE << 16 | EDU_VENDOR)) {
			*devid = slot << 3;
			return c;
		}
	}
	return 0;
}

static u32 msi_cap(uptr cfg)
{
	u32 a = mmio_read32(cfg + 0x34) & 0xfc;

	while (a >= 0x40 && (mmio_read32(cfg + a) & 0xff) != PCI_CAP_MSI)
		a = (mmio_read32(cfg + a) >> 8) & 0xfc;
	return a >= 0x40 ? a : 0;
}

void gits_edu_msi_data(uptr cfg, u32 data)
{
	u32 a = msi_cap(cfg);
	bool is64 = (mmio_read32(cfg + a) >> 16) & 0x80;

	if (a)
		mmio_write32(cfg + a + (is64 ? 0xc : 0x8), data);
}

uptr gits_edu_msi(uptr cfg, u64 doorbell, u32 data)
{
	u32 a = msi_cap(cfg);
	bool is64;

	mmio_write32(cfg + 0x04, (mmio_read32(cfg + 0x04) & 0xffff) | 0x6); /* memory, master */
	if (!a)
		return 0;
	is64 = (mmio_read32(cfg + a) >> 16) & 0x80;
	mmio_write32(cfg + a + 4, (u32)doorbell);
	if (is64)
		mmio_write32(cfg + a + 8, (u32)(doorbell >> 32));
	gits_edu_msi_data(cfg, data);
	mmio_write32(cfg + a, 0x00010000); /* MSI enable, one vector */
	return mmio_read32(cfg + 0x10) & ~0xfu;
}
