// SPDX-License-Identifier: Apache-2.0
/*
 * edudma: drives QEMU's `edu` PCI device (edu.h) through its VM's filtered
 * ECAM (docs/dma.md "PCI").
 *
 * Parameters:
 *   mode     attack (default) | bar | bench | each | flood | recolor | p2p | high
 *   ecam     the VM's ECAM IPA (0x3f000000)
 *   dma      ipa (the device translates through the VM's stage 2: SMMU) or
 *            pa (no SMMU: buffers are given by physical address, from
 *            BH_HC_IPA_INFO)
 *   intx     the function's INTx SPI (0: the completion is polled)
 *   msi      the VM's ITS doorbell (0: skip): before the mode runs, lists
 *            the first edu's capabilities and, at its MSI capability,
 *            writes a foreign message address, then the doorbell, the
 *            data and the control register (enable, 8 vectors), reading
 *            each back, then turns MSI off (docs/pci.md "MSI and MSI-X")
 * attack: a legitimate transfer (4 KiB of a pattern into the edu buffer and
 *   back into another buffer of its own RAM, verified, once polled and once
 *   with the INTx interrupt if `intx`), then transfers aimed at
 *   `victim` (a physical address: a write of 4 KiB of 0xbad0bad0...),
 *   `hyp` (a read of the hypervisor's image: the arm64 header's magic at
 *   +0x38 tells whether it leaked) and `unmapped` (a write), each 0 = skip.
 *   With several edu functions the k-th attack uses the (k+1)-th edu (the
 *   last one when there are fewer), so an SMMU that blocks a faulting
 *   device reports each attack on its own stream.
 * bar: lists the functions its ECAM shows on buses 0-`buses`, sizes BAR0,
 *   writes `bar_target` into BAR0 and checks that the BAR reads back
 *   unchanged and the device still answers at the old address.
 * each: every edu in turn (bus order) does one write of `bytes` (4096) to
 *   `unmapped` and is waited for: behind an SMMU, each device's faults
 *   are recorded one device at a time (no event queue overflow).
 * flood: for `ms` milliseconds of virtual time, keeps every edu busy with
 *   4 KiB writes to `unmapped` (a new one as soon as one ends): behind an
 *   SMMU, a continuous stream of translation faults.
 * p2p: DMA at device registers (issue #36 item 5): the first edu writes
 *   256 bytes of `fill` (0xff) over its own BAR0 (its command and DMA
 *   registers included), then the second (the first again with only one)
 *   writes them over the first's BAR0 (peer to peer); then checks that every
 *   edu still answers at its BAR and, with `after` set, that a legitimate
 *   transfer of the first edu into RAM now does not arrive (its stream was
 *   blocked by the fault policy).
 * high: DMA writes of 256 bytes to each of `addr0`..`addr3` (input
 *   addresses, e.g. beyond the stage-2 input size or the SMMU's IAS), one
 *   edu each (the last one when there are fewer), then the same checks.
 * bench: `count` transfers of `bytes` (RAM -> edu -> RAM, alternating),
 *   timed in virtual time, with the hypervisor's exit counters of its CPU
 *   before and after.
 * recolor: a verified transfer, then waits (at most `wait_ms` of virtual
 *   time) until its LLC colors change (someone recolors the VM, e.g. the
 *   console's Ctrl-T r), then the same verified transfer with the same
 *   buffers, which now sit on other frames: behind an SMMU the device
 *   follows the moved stage 2 (#32 item 1, docs/dma.md).
 */
#include "edu.h"
#include "runtime.h"

#define ARM64_MAGIC 0x644d5241u /* "ARM\x64" at +0x38 of an arm64 image */

static u8 buf_a[4096] __attribute__((aligned(4096)));
/* the legitimate transfers' buffers straddle a page boundary: in a colored
 * VM the two pages are not physically adjacent */
static u8 span_a[8192] __attribute__((aligned(4096)));
static u8 span_b[8192] __attribute__((aligned(4096)));
#define SPAN_OFF 2048
static u8 buf_c[4096] __attribute__((aligned(4096)));
#define EDU_MAX 8 /* a VM owns at most 8 functions (docs/pci.md) */

static uptr ecam, bar;
static uptr bars[EDU_MAX];
static u32 nedu;
static bool use_pa;
static volatile u32 irqs;
static u32 intx;

static uptr cfg(u32 bdf, u32 off)
{
	return ecam + ((uptr)bdf << 12) + off;
}

static u64 dma_addr(const void *p)
{
	struct bh_ipa_info info;

	if (!use_pa)
		return (u64)(uptr)p;
	if (bh_ipa_info((u64)(uptr)p, &info) != BH_OK)
		return 0;
	return info.pa;
}

static void edu_irq(u32 id)
{
	(void)id;
	irqs++;
	mmio_write32(bar + EDU_IRQACK, mmio_read32(bar + EDU_IRQST));
}

/* One transfer; true when the device reported it done in time. */
static bool edu_dma(u64 src, u64 dst, u32 cnt, u32 cmd)
{
	u64 end = timer_now_ns() + 2000000000ull;
	u32 seen = irqs;

	mmio_write64(bar + EDU_SRC, src);
	mmio_write64(bar + EDU_DST, dst);
	mmio_write64(bar + EDU_CNT, cnt);
	mmio_write64(bar + EDU_CMD, EDU_RUN | cmd);
	if (cmd & EDU_IRQ) {
		while (irqs == seen && timer_now_ns() < end)
			wfi();
		return irqs != seen;
	}
	while (mmio_read64(bar + EDU_CMD) & EDU_RUN)
		if (timer_now_ns() >= end)
			return false;
	return true;
}

static u32 edu_bdf[EDU_MAX];

static u32 find_edu(u32 buses, bool list)
{
	u32 found = ~0u, n = 0;

	for (u32 bus = 0; bus <= buses; bus++)
		for (u32 dev = 0; dev < 32; dev++) {
			u32 bdf = bus << 8 | dev << 3, id = mmio_read32(cfg(bdf, 0));

			if ((id & 0xffff) == 0xffff)
				continue;
			n++;
			if (list)
				printf("edudma: ecam sees %02x:%02x.0 %04x:%04x\n", bus, dev,
				       id & 0xffff, id >> 16);
			if (id == (EDU_DEVICE << 16 | EDU_VENDOR) && nedu < EDU_MAX)
				edu_bdf[nedu++] = bdf;
			if (id == (EDU_DEVICE << 16 | EDU_VENDOR) && found == ~0u)
				found = bdf;
		}
	if (list)
		printf("edudma: ecam functions=%u\n", n);
	return found;
}

static int fail(const char *why)
{
	printf("edudma: FAIL %s\n", why);
	return 1;
}

static bool legit(u32 cmd_irq, const char *how)
{
	u8 *sa = span_a + SPAN_OFF, *sb = span_b + SPAN_OFF;
	u64 a = dma_addr(sa), b = dma_addr(sb);
	struct bh_ipa_info p0, p1;
	bool split = bh_ipa_info((u64)(uptr)span_b, &p0) == BH_OK &&
	             bh_ipa_info((u64)(uptr)span_b + 4096, &p1) == BH_OK && p1.pa != p0.pa + 4096;

	memset(span_a, 0, sizeof(span_a));
	for (u32 i = 0; i < 4096; i++)
		sa[i] = (u8)(i * 7 + 3 + cmd_irq);
	memset(span_b, 0, sizeof(span_b));
	dsb_sy();
	if (!a || !b)
		return false;
	if (!edu_dma(a, EDU_BUF, 4096, cmd_irq) || !edu_dma(EDU_BUF, b, 4096, EDU_TO_RAM | cmd_irq))
		return false;
	dsb_sy();
	if (memcmp(sa, sb, 4096) || span_b[SPAN_OFF - 1] || span_b[SPAN_OFF + 4096])
		return false;
	printf("edudma: legit %s ok bytes=4096 src=%lx dst=%lx pages_adjacent=%d\n", how, a, b,
	       !split);
	return true;
}

/* The edu of the k-th attack (0-based). */
static void use_edu(u32 k)
{
	bar = bars[k + 1 < nedu ? k + 1 : nedu - 1];
}

static void attack(void)
{
	u64 victim = param_u64("victim", 0), hyp = param_u64("hyp", 0);
	u64 unmapped = param_u64("unmapped", 0);
	u32 *w = (u32 *)buf_a;

	if (victim) {
		use_edu(0);
		for (u32 i = 0; i < sizeof(buf_a) / 4; i++)
			w[i] = 0xbad0bad0u;
		dsb_sy();
		edu_dma(dma_addr(buf_a), EDU_BUF, sizeof(buf_a), 0);
		printf("edudma: attack victim write dst=%lx done=%d\n", victim,
		       edu_dma(EDU_BUF, victim, sizeof(buf_a), EDU_TO_RAM));
	}
	if (hyp) {
		use_edu(1);
		/* the edu buffer first holds a marker, then the read of the image */
		memset(buf_c, 0x5a, sizeof(buf_c));
		dsb_sy();
		edu_dma(dma_addr(buf_c), EDU_BUF, 256, 0);
		bool done = edu_dma(hyp, EDU_BUF, 256, 0);
		memset(buf_c, 0, sizeof(buf_c));
		dsb_sy();
		edu_dma(EDU_BUF, dma_addr(buf_c), 256, EDU_TO_RAM);
		dsb_sy();
		printf("edudma: attack hyp read src=%lx done=%d magic=%x leaked=%d\n", hyp, done,
		       *(u32 *)(buf_c + 0x38), *(u32 *)(buf_c + 0x38) == ARM64_MAGIC);
	}
	use_edu(2);
	if (unmapped)
		printf("edudma: attack unmapped write dst=%lx done=%d\n", unmapped,
		       edu_dma(EDU_BUF, unmapped, sizeof(buf_a), EDU_TO_RAM));
}

static int bar_mode(u32 bdf)
{
	u64 target = param_u64("bar_target", 0);
	u32 old = mmio_read32(cfg(bdf, 0x10)), size, now;

	mmio_write32(cfg(bdf, 0x10), 0xffffffffu);
	size = ~(mmio_read32(cfg(bdf, 0x10)) & ~0xfu) + 1;
	mmio_write32(cfg(bdf, 0x10), old);
	printf("edudma: bar0=%x size=%x\n", old, size);
	if (size != 0x100000 || mmio_read32(cfg(bdf, 0x10)) != old)
		return fail("BAR0 size probe");
	mmio_write32(cfg(bdf, 0x10), (u32)target);
	now = mmio_read32(cfg(bdf, 0x10));
	mmio_write32(bar + EDU_ALIVE, 0x12345678u);
	printf("edudma: bar move to %lx: reads %x, device at %x alive=%d\n", target, now, old,
	       mmio_read32(bar + EDU_ALIVE) == ~0x12345678u);
	if (now != old || mmio_read32(bar + EDU_ALIVE) != ~0x12345678u)
		return fail("the BAR moved");
	return 0;
}

static int flood(void)
{
	u64 target = param_u64("unmapped", 0x100000000ull), end, started = 0;

	end = timer_now_ns() + param_u64("ms", 300) * 1000000ull;
	while (timer_now_ns() < end)
		for (u32 k = 0; k < nedu; k++) {
			if (mmio_read64(bars[k] + EDU_CMD) & EDU_RUN)
				continue;
			mmio_write64(bars[k] + EDU_SRC, EDU_BUF);
			mmio_write64(bars[k] + EDU_DST, target);
			mmio_write64(bars[k] + EDU_CNT, 4096);
			mmio_write64(bars[k] + EDU_CMD, EDU_RUN | EDU_TO_RAM);
			started++;
		}
	printf("edudma: flood done devices=%u transfers=%lu\n", nedu, started);
	return 0;
}

/* Every edu still answers at its BAR: liveness is the complement. */
static bool edus_alive(void)
{
	bool ok = true;

	for (u32 k = 0; k < nedu; k++) {
		mmio_write32(bars[k] + EDU_ALIVE, 0x5a5a1234u + k);
		ok &= mmio_read32(bars[k] + EDU_ALIVE) == ~(0x5a5a1234u + k) &&
		      mmio_read32(bars[k] + EDU_ID) == 0x010000edu;
	}
	return ok;
}

/* After a fault that blocked the first edu: a transfer of its buffer (all
 * `fill`) into RAM completes on the device side but no byte arrives. */
static bool first_blocked(void)
{
	memset(buf_c, 0, sizeof(buf_c));
	dsb_sy();
	bar = bars[0];
	bool done = edu_dma(EDU_BUF, dma_addr(buf_c), 256, EDU_TO_RAM);
	dsb_sy();
	u32 arrived = 0;
	for (u32 i = 0; i < 256; i++)
		arrived += buf_c[i] != 0;
	printf("edudma: after the fault: transfer done=%d bytes_arrived=%u\n", done, arrived);
	return done && !arrived;
}

static int p2p(void)
{
	u64 own = bars[0];
	u32 peer = nedu > 1 ? 1 : 0;

	/* all ones: a command register written so starts a transfer; every
	 * edu's buffer loaded at once (each transfer takes 100 ms) */
	memset(buf_a, (int)param_u64("fill", 0xff), sizeof(buf_a));
	dsb_sy();
	for (u32 k = 0; k < nedu; k++) {
		mmio_write64(bars[k] + EDU_SRC, dma_addr(buf_a));
		mmio_write64(bars[k] + EDU_DST, EDU_BUF);
		mmio_write64(bars[k] + EDU_CNT, 256);
		mmio_write64(bars[k] + EDU_CMD, EDU_RUN);
	}
	for (u32 k = 0; k < nedu; k++)
		while (mmio_read64(bars[k] + EDU_CMD) & EDU_RUN)
			;
	for (u32 k = 0; k < 2; k++) {
		bar = bars[k ? peer : 0];
		printf("edudma: p2p %s write dst=%lx done=%d\n", k ? "peer-bar" : "own-bar", own,
		       edu_dma(EDU_BUF, own, 256, EDU_TO_RAM));
	}
	/* a transfer the writes started would end during this one */
	if (param_u64("after", 0) && !first_blocked())
		return fail("the faulting edu's DMA still arrives");
	if (!edus_alive())
		return fail("an edu stopped answering at its BAR");
	printf("edudma: p2p alive=%u\n", nedu);
	return 0;
}

static int high(void)
{
	static const char *const keys[] = { "addr0", "addr1", "addr2", "addr3" };
	u32 k = 0;

	for (; k < 4 && param_str(keys[k]); k++) {
		u64 a = param_u64(keys[k], 0);

		bar = bars[k < nedu ? k : nedu - 1];
		printf("edudma: high write dst=%lx done=%d\n", a,
		       edu_dma(EDU_BUF, a, 256, EDU_TO_RAM));
	}
	if (!k)
		return fail("no addr0");
	if (!edus_alive())
		return fail("an edu stopped answering at its BAR");
	printf("edudma: high addresses=%u\n", k);
	return 0;
}

static int each(void)
{
	u64 target = param_u64("unmapped", 0x100000000ull);
	u32 bytes = (u32)param_u64("bytes", 4096);

	for (u32 k = 0; k < nedu; k++) {
		bar = bars[k];
		printf("edudma: each device %u at %02x:%02x.0 done=%d\n", k, edu_bdf[k] >> 8,
		       (edu_bdf[k] >> 3) & 31, edu_dma(EDU_BUF, target, bytes, EDU_TO_RAM));
	}
	return 0;
}

static int bench(void)
{
	u32 count = (u32)param_u64("count", 8), bytes = (u32)param_u64("bytes", 4096);
	struct bh_cpu_exits e0, e1;
	u64 a = dma_addr(buf_a), t0, t1;

	if (bytes > sizeof(buf_a) || !a)
		return fail("bench parameters");
	bh_cpu_exits(BH_CPU_SELF, &e0);
	t0 = timer_now_ns();
	for (u32 i = 0; i < count; i++)
		if (!edu_dma(i & 1 ? EDU_BUF : a, i & 1 ? a : EDU_BUF, bytes,
		             i & 1 ? EDU_TO_RAM : 0))
			return fail("bench transfer");
	t1 = timer_now_ns();
	bh_cpu_exits(BH_CPU_SELF, &e1);
	printf("result bench=edudma transfers=%u bytes=%lu ns=%lu exits=%lu irq_exits=%lu\n", count,
	       (u64)count * bytes, t1 - t0, e1.exits - e0.exits - 1, e1.irq_exits - e0.irq_exits);
	return 0;
}

static int recolor_mode(void)
{
	struct bh_color_info c0, c1;
	struct bh_ipa_info p0, p1;
	u64 end = timer_now_ns() + param_u64("wait_ms", 20000) * 1000000ull;

	if (bh_color_info(&c0) != BH_OK || bh_ipa_info((u64)(uptr)span_b, &p0) != BH_OK)
		return fail("color info");
	if (!legit(0, "before-recolor"))
		return fail("DMA before the recoloring");
	printf("edudma: waiting for the recoloring (llc %lx)\n", c0.llc_colors);
	c1 = c0;
	while (c1.llc_colors == c0.llc_colors && timer_now_ns() < end) {
		timer_delay_ms(1);
		if (bh_color_info(&c1) != BH_OK)
			return fail("color info");
	}
	if (c1.llc_colors == c0.llc_colors)
		return fail("not recolored in time");
	if (bh_ipa_info((u64)(uptr)span_b, &p1) != BH_OK)
		return fail("ipa info");
	printf("edudma: recolored llc %lx -> %lx, buffer pa %lx -> %lx\n", c0.llc_colors,
	       c1.llc_colors, p0.pa, p1.pa);
	if (!legit(0, "after-recolor"))
		return fail("DMA after the recoloring");
	return 0;
}

/* The msi parameter: what the filtered ECAM lets through to the MSI registers. */
static void msi_probe(u32 bdf, u64 doorbell)
{
	u32 at = mmio_read32(cfg(bdf, 0x34)) & 0xfc;

	printf("edudma: status %x\n", mmio_read32(cfg(bdf, 0x04)) >> 16);
	for (u32 n = 0; at >= 0x40 && n < 48; n++) {
		u32 hdr = mmio_read32(cfg(bdf, at)), data = (hdr >> 16) & 0x80 ? 0xc : 0x8;

		printf("edudma: cap %x at %x\n", hdr & 0xff, at);
		if ((hdr & 0xff) == 0x05) {
			mmio_write32(cfg(bdf, at + 4), 0x40000000);
			printf("edudma: msi address %x after a foreign one\n",
			       mmio_read32(cfg(bdf, at + 4)));
			mmio_write32(cfg(bdf, at + 4), (u32)doorbell);
			printf("edudma: msi address %x after the doorbell\n",
			       mmio_read32(cfg(bdf, at + 4)));
			mmio_write32(cfg(bdf, at + data), 0x21);
			mmio_write32(cfg(bdf, at), 0x00710000); /* enable, 8 vectors */
			printf("edudma: msi data %x control %x\n", mmio_read32(cfg(bdf, at + data)),
			       mmio_read32(cfg(bdf, at)) >> 16);
			mmio_write32(cfg(bdf, at), 0);
		}
		at = (hdr >> 8) & 0xfc;
	}
}

int main(const char *params)
{
	const char *mode = param_str_default("mode", "attack");
	u32 bdf, cmd;

	(void)params;
	ecam = (uptr)param_u64("ecam", 0x3f000000);
	use_pa = !strcmp(param_str_default("dma", "ipa"), "pa");
	intx = (u32)param_u64("intx", 0);
	bdf = find_edu((u32)param_u64("buses", 0), true);
	if (bdf == ~0u)
		return fail("no edu function in the ECAM");
	for (u32 k = 0; k < nedu; k++) {
		u32 b = edu_bdf[k];

		bars[k] = mmio_read32(cfg(b, 0x10)) & ~0xfu;
		cmd = mmio_read32(cfg(b, 0x04));
		mmio_write32(cfg(b, 0x04), (cmd & 0xffff) | 0x6); /* memory space, bus master */
		printf("edudma: edu at %02x:%02x.0, BAR0 %lx, command %x -> %x\n", b >> 8,
		       (b >> 3) & 31, bars[k], cmd & 0xffff, mmio_read32(cfg(b, 0x04)) & 0xffff);
		if (mmio_read32(bars[k] + EDU_ID) != 0x010000edu)
			return fail("edu identification register");
	}
	bar = bars[0];
	if (param_u64("msi", 0))
		msi_probe(bdf, param_u64("msi", 0));
	if (!strcmp(mode, "bar"))
		return bar_mode(bdf) ? 1 : (printf("edudma: PASS (bar)\n"), 0);
	if (!strcmp(mode, "flood"))
		return flood() ? 1 : (printf("edudma: PASS (flood)\n"), 0);
	if (!strcmp(mode, "p2p"))
		return p2p() ? 1 : (printf("edudma: PASS (p2p)\n"), 0);
	if (!strcmp(mode, "high"))
		return high() ? 1 : (printf("edudma: PASS (high)\n"), 0);
	if (!strcmp(mode, "each"))
		return each() ? 1 : (printf("edudma: PASS (each)\n"), 0);
	if (!strcmp(mode, "bench"))
		return bench() ? 1 : (printf("edudma: PASS (bench)\n"), 0);
	if (!strcmp(mode, "recolor"))
		return recolor_mode() ? 1 : (printf("edudma: PASS (recolor)\n"), 0);
	if (!legit(0, "polled"))
		return fail("legitimate DMA into its own memory");
	if (intx) {
		gic_init();
		irq_register(intx, edu_irq);
		gic_spi_setup(intx, false);
		if (!legit(EDU_IRQ, "intx"))
			return fail("legitimate DMA with its INTx interrupt");
		printf("edudma: intx %u irqs=%u\n", intx, irqs);
	}
	attack();
	printf("edudma: PASS (attack)\n");
	return 0;
}
