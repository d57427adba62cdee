// SPDX-License-Identifier: Apache-2.0
/*
 * dmaint: a DMA interference generator (docs/qos.md). It owns `channels`
 * channels of the ZynqMP's FPD DMA (ZDMA, passed through: zdma0..zdma<n-1>,
 * channel i at `base` + i x 0x10000) and keeps them busy copying `size`
 * bytes from a source to a destination buffer in its RAM, round robin:
 * whenever a channel is idle, the bytes of its finished transfer are counted
 * and the next one starts.
 *
 *  - mode simple: one transfer per start, source and destination in the
 *    channel's descriptor registers;
 *  - mode linked: a scatter-gather list of `descs` linked descriptors in
 *    memory for each side; the source chunks are gathered in order and
 *    scattered to the destination in reverse chunk order.
 *
 * The device reads and writes physical addresses: the buffers' PAs come
 * from BH_HC_IPA_INFO (the VM needs `dma_isolation: none`, no SMMU). The
 * first transfer of every channel in every period is verified: the
 * destination is cleared before it and its checksum (FNV-1a over the words,
 * chunks in the expected order) must equal the source's, whose first word
 * carries the period number; the channel's own byte counter
 * (ZDMA_CH_TOTAL_BYTE) must agree with the count.
 *
 * Params: channels (1-8, default 1), size (bytes per transfer, multiple of
 *         64, default 64K), mode (simple|linked, default simple), descs
 *         (linked: descriptors per list, 1-64, default 8), period_us (default
 *         10000), periods (default 5; with sync 0: until the benchmark is
 *         done), base (default 0xFD500000), sync (shared-memory index of the
 *         start barrier, lib/include/bench.h: acknowledged once transfers
 *         run, the last period ends when the benchmark is done);
 *         misdirect (simple mode, for the tests: 1 sends every copy to a
 *         spare buffer instead of the destination, so the check must fail).
 * Lines: "dmaint: qos regulator 0 of <n>: read=<x> write=<x> cntl=<x>" (packed
 *         as BH_HC_QOS_GET reports them) or "dmaint: no QoS-400 regulator
 *         programmed",
 *        "result bench=dmaint period=<k> mode=<m> channels=<c> size=<s>
 *         transfers=<t> bytes=<b> ns=<t> mbps=<x.xxx> start_ns=<t0> end_ns=<t1>"
 *         per period of virtual time (bench_stamp_ns; printed 64 at a time or at
 *         the end, not between periods), "result bench=regulator ..."
 *         if the VM is regulated (bench_report_regulator), then
 *         "dmaint: PASS (<t> transfers, <b> bytes, <v> verified)" or
 *         "dmaint: FAIL (<reason>)".
 *
 * QEMU's ZDMA model copies at once inside the register write that starts a
 * transfer and models no bus: the figures are functional, not bandwidth.
 */
#include "bench.h"
#include "runtime.h"

#define CH_ISR        0x100u
#define CH_CTRL0      0x110u
#define CH_STATUS     0x11cu
#define CH_SRC_DSCR0  0x128u /* address low, high, size, control */
#define CH_DST_DSCR0  0x138u
#define CH_SRC_START  0x158u /* low, high */
#define CH_DST_START  0x160u
#define CH_TOTAL_BYTE 0x188u
#define CH_CTRL2      0x200u

#define CTRL0_OVR_FETCH  (1u << 7)
#define CTRL0_POINT_MEM  (1u << 6) /* descriptors in memory (scatter-gather) */
#define DSCR_TYPE_LINKED (1u << 1) /* next descriptor address after this one */
#define DSCR_CMD_STOP    (2u << 3)
#define ISR_ERRORS       0x3f1u /* AXI and accounting errors, invalid APB access */
#define STATE_ERROR      3u

#define MAX_CHANNELS 8
#define MAX_DESCS    64
#define LINE         64

/* One ZDMA descriptor with its link (the model reads `next` at +16). */
struct zdesc {
	u64 addr;
	u32 size;
	u32 ctrl;
	u64 next;
	u64 pad;
};

struct channel {
	uptr regs;
	u8 *src, *dst;
	u64 src_pa, dst_pa;
	struct zdesc *sd, *dd; /* linked: source and destination lists */
	u64 sd_pa, dd_pa;
	bool busy, verify;
	u64 expect;  /* checksum the verified transfer must produce */
	u64 counted; /* bytes this period */
	u64 total;
};

static struct channel chans[MAX_CHANNELS];
static u32 nch, ndescs;
static u64 size, chunk;
static bool linked;
static const char *fail;
static u64 spare_pa; /* misdirect: where the copies go instead */

static void dc_range(uptr start, u64 len, bool invalidate)
{
	for (uptr a = start & ~(uptr)(LINE - 1); a < start + len; a += LINE) {
		if (invalidate)
			__asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
		else
			__asm__ volatile("dc cvac, %0" : : "r"(a) : "memory");
	}
	dsb_sy();
}

/* The PA of [ipa, ipa + len), which must be physically contiguous. */
static u64 pa_of(const void *p, u64 len)
{
	struct bh_ipa_info a, b;
	uptr ipa = (uptr)p;

	if (bh_ipa_info(ipa, &a) != BH_OK || bh_ipa_info(ipa + len - 1, &b) != BH_OK ||
	    b.pa - a.pa != len - 1) {
		fail = "buffer not physically contiguous (BH_HC_IPA_INFO)";
		return 0;
	}
	return a.pa;
}

/* FNV-1a over 64-bit words; the destination's chunks in source order. */
static u64 fnv(u64 h, const u64 *w, u64 n)
{
	for (u64 i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return h;
}

static u64 checksum(const u8 *buf, bool reversed)
{
	u64 h = 0xcbf29ce484222325ull;
	u32 n = linked ? ndescs : 1;

	for (u32 k = 0; k < n; k++) {
		u32 at = reversed ? n - 1 - k : k;
		h = fnv(h, (const u64 *)(buf + (u64)at * chunk), chunk / 8);
	}
	return h;
}

static void setup_lists(struct channel *c)
{
	for (u32 k = 0; k < ndescs; k++) {
		bool last = k + 1 == ndescs;

		c->sd[k] =
		    (struct zdesc){ c->src_pa + k * chunk, (u32)chunk,
			            DSCR_TYPE_LINKED | (last ? DSCR_CMD_STOP : 0),
			            last ? 0 : c->sd_pa + (k + 1) * sizeof(struct zdesc), 0 };
		/* scatter: source chunk k lands in destination chunk n - 1 - k */
		c->dd[k] =
		    (struct zdesc){ c->dst_pa + (u64)(ndescs - 1 - k) * chunk, (u32)chunk,
			            DSCR_TYPE_LINKED,
			            last ? 0 : c->dd_pa + (k + 1) * sizeof(struct zdesc), 0 };
	}
	dc_range((uptr)c->sd, ndescs * sizeof(struct zdesc), false);
	dc_range((uptr)c->dd, ndescs * sizeof(struct zdesc), false);
}

static void start(struct channel *c)
{
	uptr r = c->regs;

	mmio_write32(r + CH_ISR, 0xfff); /* clear (w1c) */
	if (linked) {
		mmio_write32(r + CH_CTRL0, CTRL0_OVR_FETCH | CTRL0_POINT_MEM);
		mmio_write32(r + CH_SRC_START, (u32)c->sd_pa);
		mmio_write32(r + CH_SRC_START + 4, (u32)(c->sd_pa >> 32));
		mmio_write32(r + CH_DST_START, (u32)c->dd_pa);
		mmio_write32(r + CH_DST_START + 4, (u32)(c->dd_pa >> 32));
	} else {
		mmio_write32(r + CH_CTRL0, CTRL0_OVR_FETCH);
		mmio_write32(r + CH_SRC_DSCR0, (u32)c->src_pa);
		mmio_write32(r + CH_SRC_DSCR0 + 4, (u32)(c->src_pa >> 32));
		mmio_write32(r + CH_SRC_DSCR0 + 8, (u32)size);
		mmio_write32(r + CH_SRC_DSCR0 + 12, 0);
		u64 dst = spare_pa ? spare_pa : c->dst_pa;

		mmio_write32(r + CH_DST_DSCR0, (u32)dst);
		mmio_write32(r + CH_DST_DSCR0 + 4, (u32)(dst >> 32));
		mmio_write32(r + CH_DST_DSCR0 + 8, (u32)size);
		mmio_write32(r + CH_DST_DSCR0 + 12, 0);
	}
	c->busy = true;
	mmio_write32(r + CH_CTRL2, 1);
}

/* Prepares a verified transfer: a new first source word, a cleared destination. */
static void arm_verify(struct channel *c, u64 stamp)
{
	*(volatile u64 *)c->src = stamp;
	memset(c->dst, 0, size);
	c->expect = checksum(c->src, false);
	dc_range((uptr)c->src, size, false);
	dc_range((uptr)c->dst, size, true);
	c->verify = true;
}

/* Whether c finished; checks a verified transfer. */
static bool poll(struct channel *c, u64 *verified)
{
	uptr r = c->regs;

	if (mmio_read32(r + CH_CTRL2) & 1)
		return false;
	c->busy = false;
	if ((mmio_read32(r + CH_ISR) & ISR_ERRORS) ||
	    (mmio_read32(r + CH_STATUS) & 3) == STATE_ERROR) {
		fail = "the channel reported an error (ZDMA_CH_ISR/STATUS)";
		return true;
	}
	c->counted += size;
	if (c->verify) {
		dc_range((uptr)c->dst, size, true);
		if (checksum(c->dst, linked) != c->expect)
			fail =
			    "destination checksum differs from the source's: the DMA did not copy";
		c->verify = false;
		(*verified)++;
	}
	return true;
}

/* A period's figures, printed in batches of PERIODS_HELD or at the end,
 * not between periods: QEMU's ZDMA moves nothing while the loop starts no
 * transfer, and a console line can hold this CPU a long while (the UART
 * full on a loaded host), so a line after each period paused the
 * interference, once past the end of the benchmark it was to cover. */
#define PERIODS_HELD 64

struct period_line {
	u64 p, bytes, ns, t0, t1;
};

static struct period_line held[PERIODS_HELD];
static u32 nheld;

static void print_periods(const char *mode)
{
	for (u32 k = 0; k < nheld; k++) {
		const struct period_line *l = &held[k];
		u64 kbps = l->ns ? l->bytes * 1000000 / l->ns : 0;

		printf("result bench=dmaint period=%lu mode=%s channels=%u size=%lu transfers=%lu "
		       "bytes=%lu ns=%lu mbps=%lu.%03lu start_ns=%lu end_ns=%lu\n",
		       l->p, mode, nch, size, l->bytes / size, l->bytes, l->ns, kbps / 1000,
		       kbps % 1000, bench_stamp_ns(l->t0), bench_stamp_ns(l->t1));
	}
	nheld = 0;
}

int main(const char *params)
{
	const char *mode = param_str_default("mode", "simple");
	uptr base = param_u64("base", 0xFD500000u);
	bool synced = bench_sync_open();
	u64 period_us = param_u64("period_us", 10000),
	    periods = param_u64("periods", synced ? 0 : 5);
	u64 transfers = 0, bytes = 0, verified = 0, p;
	uptr mem;

	(void)params;
	nch = (u32)param_u64("channels", 1);
	size = param_u64("size", 64 * 1024);
	ndescs = (u32)param_u64("descs", 8);
	linked = !strcmp(mode, "linked");
	if (!linked && strcmp(mode, "simple")) {
		printf("dmaint: FAIL (mode must be simple or linked)\n");
		return 1;
	}
	if (!linked)
		ndescs = 1;
	chunk = size / ndescs;
	if (!nch || nch > MAX_CHANNELS || !size || size % LINE || size >> 30 || !ndescs ||
	    ndescs > MAX_DESCS || size % ndescs || chunk % LINE || !period_us ||
	    (!periods && !synced)) {
		printf("dmaint: FAIL (bad parameters)\n");
		return 1;
	}
	mem = (rt_free_start() + 0xfff) & ~(uptr)0xfff;
	if (mem + nch * (2 * size + 2 * MAX_DESCS * sizeof(struct zdesc)) + size > rt_free_end()) {
		printf("dmaint: FAIL (buffers do not fit in RAM)\n");
		return 1;
	}
	for (u32 i = 0; i < nch; i++) {
		struct channel *c = &chans[i];

		c->regs = base + i * 0x10000u;
		c->src = (u8 *)mem;
		c->dst = (u8 *)(mem + size);
		c->sd = (struct zdesc *)(mem + 2 * size);
		c->dd = c->sd + MAX_DESCS;
		mem += 2 * size + 2 * MAX_DESCS * sizeof(struct zdesc);
		for (u64 w = 0; w < size / 8; w++) /* a per-channel pattern */
			((u64 *)c->src)[w] = (w + 1) * 0x9e3779b97f4a7c15ull ^ ((u64)i << 56);
		c->src_pa = pa_of(c->src, size);
		c->dst_pa = pa_of(c->dst, size);
		c->sd_pa = pa_of(c->sd, 2 * MAX_DESCS * sizeof(struct zdesc));
		c->dd_pa = c->sd_pa + MAX_DESCS * sizeof(struct zdesc);
		if (fail)
			break;
		if (linked)
			setup_lists(c);
		mmio_write32(c->regs + CH_TOTAL_BYTE,
		             mmio_read32(c->regs + CH_TOTAL_BYTE)); /* w1c */
	}
	if (param_u64("misdirect", 0) && !linked && !fail)
		spare_pa = pa_of((void *)mem, size);
	printf("dmaint: %u channel(s) at 0x%lx, mode %s, %lu bytes per transfer%s\n", nch, base,
	       mode, size, linked ? " in linked descriptors" : "");
	{
		/* the QoS-400 regulator as the hypervisor reads it back (regulator 0;
		 * it is the FPD DMA's when this VM's qos: block set one) */
		struct bh_ret q = bh_call(BH_HC_QOS_GET, 0, 0, 0, 0, 0);

		if (q.x0 == BH_OK)
			printf("dmaint: qos regulator 0 of %lu: read=%lx write=%lx cntl=%lx\n",
			       q.x4, q.x1, q.x2, q.x3);
		else
			printf("dmaint: no QoS-400 regulator programmed\n");
	}
	for (p = 0; (!periods || p < periods) && !fail; p++) {
		u64 t0 = timer_now(), end = t0 + timer_ns_to_ticks(period_us * 1000), pb = 0, t1;

		for (u32 i = 0; i < nch; i++)
			arm_verify(&chans[i], (p + 1) << 32 | i);
		do {
			for (u32 i = 0; i < nch && !fail; i++) {
				struct channel *c = &chans[i];

				if (c->busy && !poll(c, &verified))
					continue;
				if (!fail)
					start(c);
			}
			if (synced)
				bench_sync_ack(); /* transfers run */
		} while (!fail && timer_now() < end);
		for (u32 i = 0; i < nch && !fail; i++) /* let the last transfers finish */
			while (chans[i].busy && !poll(&chans[i], &verified))
				cpu_relax();
		t1 = timer_now();
		for (u32 i = 0; i < nch; i++) {
			pb += chans[i].counted;
			chans[i].total += chans[i].counted;
			chans[i].counted = 0;
		}
		transfers += pb / size;
		bytes += pb;
		held[nheld++] = (struct period_line){ p, pb, timer_ticks_to_ns(t1 - t0), t0, t1 };
		if (nheld == PERIODS_HELD)
			print_periods(mode);
		if (synced && bench_sync_stop()) {
			p++;
			break;
		}
	}
	print_periods(mode);
	for (u32 i = 0; i < nch && !fail; i++)
		if (mmio_read32(chans[i].regs + CH_TOTAL_BYTE) != (u32)chans[i].total)
			fail = "ZDMA_CH_TOTAL_BYTE disagrees with the bytes counted";
	if (!fail && verified != nch * p)
		fail = "not every period verified a transfer";
	if (fail) {
		printf("dmaint: FAIL (%s)\n", fail);
		return 1;
	}
	bench_report_regulator(1);
	printf("dmaint: PASS (%lu transfers, %lu bytes, %lu verified)\n", transfers, bytes,
	       verified);
	return 0;
}
