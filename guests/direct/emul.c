// SPDX-License-Identifier: Apache-2.0
/*
 * direct, mode=emul: a direct VM's emulated interrupt sources
 * (docs/interrupts.md "Emulated sources"): the virtual PL011's receive
 * interrupt and a shared-memory doorbell. In direct mode each is a spare
 * physical SPI the hypervisor sets pending; the toolchain gives the UART's
 * INTID as the parameter `console_irq` and the doorbell's by
 * BH_HC_SHMEM_INFO. Both are edge-triggered: the receive handler drains the
 * FIFO until RXFE (no new edge comes while data stays).
 *
 * vCPU 0 answers `rings` doorbells as guests/doorbell's pong (shared page
 * layout, r -> r + 1 and a ring back, so an ordinary VM running
 * `doorbell role=ping` beside it checks every round) and receives `lines`
 * lines of console input with the FIFO on (IFLS 1/2: RX and RT both
 * needed).
 *
 * Params: lines (3), rings (10), wait_s (60), console_irq (the toolchain's).
 * Lines: "direct: emul console_irq=<a> doorbell_irq=<b>",
 *        "direct: emul line <i> '<text>'" per line,
 *        "direct: emul tx irqs=<UART interrupts: TX unmasked, 3 characters>",
 *        "direct: emul irq_exits=<interrupt exits of its CPU meanwhile>",
 *        "direct: emul pmintenset=<value read back after setting bit 31>",
 *        "direct: emul rx irqs=<n> lines=<l> rings=<r> answered=<a>",
 *        then "direct: PASS" or "direct: FAIL (<reason>)".
 */
#include "doorbell_chan.h"
#include "runtime.h"

#define UART_LCR_H   0x02c
#define UART_IFLS    0x034
#define UART_IMSC    0x038
#define UART_LCR_FEN (1u << 4)
#define UART_INT_RX  (1u << 4)
#define UART_INT_TX  (1u << 5)
#define UART_INT_RT  (1u << 6)
#define LINE_MAX     64
#define LINES_MAX    8

#define fail(...) rt_fail("direct", __VA_ARGS__)

static volatile u32 rx_irqs, nlines, rings;
static u32 want_lines, len;
static char lines[LINES_MAX][LINE_MAX];

static void emul_uart_irq(u32 intid)
{
	int c;

	(void)intid;
	atomic_add32(&rx_irqs, 1);
	while ((c = uart_getc()) >= 0) { /* edge-triggered: drain until RXFE */
		if (nlines >= want_lines)
			continue;
		if (c == '\r' || c == '\n') {
			if (len) {
				lines[nlines][len] = '\0';
				len = 0;
				atomic_add32(&nlines, 1);
			}
		} else if (len < LINE_MAX - 1) {
			lines[nlines][len++] = (char)c;
		}
	}
}

static volatile u64 ring_stamp; /* the counter at the last doorbell interrupt */

static void emul_ring_irq(u32 intid)
{
	(void)intid;
	ring_stamp = timer_now();
	atomic_add32(&rings, 1);
}

struct emul_wait {
	u32 rings, lines;
};

/* A new doorbell interrupt or a new line. */
static bool emul_progress(void *arg)
{
	struct emul_wait *w = arg;

	return atomic_load32(&rings) != w->rings || atomic_load32(&nlines) != w->lines;
}

int direct_emul(void)
{
	u32 console_irq = (u32)param_u64("console_irq", UART_INTID);
	u32 want_rings = (u32)param_u64("rings", 10);
	u64 end = timer_now() + timer_ns_to_ticks(param_u64("wait_s", 60) * NSEC_PER_SEC);
	struct emul_wait w = { 0, 0 };
	struct bh_cpu_exits ex0, ex1;
	struct bh_shmem_info sh;
	struct doorbell_chan *c;
	u32 answered = 0, last = 0;
	s64 ret;

	want_lines = (u32)param_u64("lines", 3);
	if (want_lines > LINES_MAX)
		return fail("lines %u above %u", want_lines, LINES_MAX);
	ret = bh_shmem_info(0, &sh);
	if (ret != BH_OK)
		return fail("BH_HC_SHMEM_INFO(0) returned %ld", ret);
	printf("direct: emul console_irq=%u doorbell_irq=%u\n", console_irq, sh.doorbell_irq);
	c = (struct doorbell_chan *)(uptr)sh.ipa;
	gic_init();
	irq_register(console_irq, emul_uart_irq);
	gic_spi_setup(console_irq, true);
	irq_register(sh.doorbell_irq, emul_ring_irq);
	gic_spi_setup(sh.doorbell_irq, true);
	irq_local_enable();
	mmio_write32(UART_BASE + UART_LCR_H, UART_LCR_FEN);
	mmio_write32(UART_BASE + UART_IFLS, 2u << 3); /* receive at 1/2 */
	mmio_write32(UART_BASE + UART_IMSC, UART_INT_RX | UART_INT_RT);
	bh_cpu_exits(BH_CPU_SELF, &ex0);
	atomic_store32(&c->pong_ready, DOORBELL_PONG_READY);
	dsb_ish();
	/* a ring is answered only after its interrupt: polling cannot pass */
	while (atomic_load32(&nlines) < want_lines || answered < want_rings) {
		u64 now = timer_now();

		if (now >= end ||
		    !timer_wait_until(emul_progress, &w, timer_ticks_to_ns(end - now)))
			break;
		w.lines = atomic_load32(&nlines);
		if (atomic_load32(&rings) == w.rings)
			continue;
		w.rings = atomic_load32(&rings);
		if (atomic_load32(&c->ping_val) == last)
			continue;
		last = atomic_load32(&c->ping_val);
		/* the stamp: ping measure=1's one-way latency */
		ret = doorbell_chan_pong(c, last, ring_stamp);
		if (ret < 1)
			return fail("BH_HC_DOORBELL returned %ld", ret);
		answered++;
	}
	/* the transmit interrupt: pending when unmasked, again after each
	 * character written while unmasked (the TX FIFO empties at once) */
	{
		u32 before = atomic_load32(&rx_irqs);

		mmio_write32(UART_BASE + UART_IMSC, UART_INT_TX);
		uart_putc('t');
		uart_putc('x');
		uart_putc('\n');
		timer_delay_us(100);
		mmio_write32(UART_BASE + UART_IMSC, 0);
		printf("direct: emul tx irqs=%u\n", atomic_load32(&rx_irqs) - before);
	}
	/* the interrupts came with no interrupt exit of this CPU */
	bh_cpu_exits(BH_CPU_SELF, &ex1);
	printf("direct: emul irq_exits=%lu\n", ex1.irq_exits - ex0.irq_exits);
	/* the guest PMU's overflow interrupt is offered (a spare PPI, pmu_irq):
	 * PMINTENSET_EL1 keeps what is written (guests/pmu takes the interrupt) */
	write_sysreg(1ul << 31, pmintenset_el1);
	isb();
	printf("direct: emul pmintenset=0x%lx\n", read_sysreg(pmintenset_el1));
	write_sysreg(1ul << 31, pmintenclr_el1);
	for (u32 i = 0; i < nlines; i++)
		printf("direct: emul line %u '%s'\n", i, lines[i]);
	printf("direct: emul rx irqs=%u lines=%u rings=%u answered=%u\n", rx_irqs, nlines, rings,
	       answered);
	if (nlines < want_lines || answered < want_rings)
		return fail("emul: %u of %u lines, %u of %u rings answered", nlines, want_lines,
		            answered, want_rings);
	printf("direct: PASS\n");
	return 0;
}
