// SPDX-License-Identifier: Apache-2.0
/*
 * victim: the VM the attack suite (tests/qemu/test_attack.py) protects. It
 * checks, beside hostile neighbours, that nothing of its own changes and
 * that its timing holds:
 *
 *  - its identity: BH_HC_VM_INFO (vCPUs, RAM) matches the parameters
 *    `cpus` and `ram`, the parameter block says vm=<name> and its bytes
 *    never change (CRC of the 4 KiB page, checked at every beat);
 *  - a pattern of `pattern` bytes (4M) of seeded pseudo-random words in its
 *    free RAM, checksummed at every beat;
 *  - print latency: `prints` (200) console lines through its virtual
 *    PL011, at most one every `print_us` (500) microseconds (WFI in
 *    between, no catching up after a late wake-up), each timed in virtual
 *    time (CNTVCT) from the call to its return;
 *  - a heartbeat: `beats` (10) beats every `period_ms` (20), sleeping in WFI
 *    until the virtual timer fires; each beat's lateness is measured;
 *  - no foreign interrupt: all 16 SGIs are enabled with a counting handler
 *    and the victim never sends one, so none may arrive;
 *  - with `msis` (0: none) n > 0, its own MSIs: it owns an `edu` (the first
 *    on bus 0 of its ECAM at `ecam`, 0x3f000000), sets up its virtual ITS
 *    at `its` (0x08080000; docs/interrupts.md "Message-signalled
 *    interrupts": event 0 -> LPI 8200, event 1 -> LPI 8201, which it never
 *    raises) and, `beats` times, before every `msi_every` (10)th print
 *    (between two prints, not timed), has the edu raise its MSI n times, each waited for (up to 100
 *    ms) and acknowledged: every one must arrive as LPI 8200, and any other
 *    LPI, or one it did not raise, is foreign.
 *
 * Lines: "victim: print <k> of <n>, ..." (the timed lines),
 *        "victim: print median_ns=<n> p90_ns=<n> mean_ns=<n> max_ns=<n> lines=<n>",
 *        "victim: msi devid=<n> lpi 8200" (with `msis`),
 *        "victim: beat <i> late_us=<n>",
 *        "victim: msis sent=<n> lpis=<n> foreign_lpis=<n> first_ms=<n> last_ms=<n>
 *        max_ns=<n>" (with `msis`: the counter's time of its first and last
 *        MSI, the longest from raising one to its handler),
 *        "victim: heartbeat beats=<n> max_late_us=<n> pattern=ok params=ok
 *        foreign_irqs=0",
 *        then "victim: PASS" or "victim: FAIL <why>".
 */
#include "edu.h"
#include "gits.h"
#include "runtime.h"

static u64 crc_params;

static u64 mix(u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static u64 sum_bytes(const volatile u8 *p, u64 n)
{
	u64 h = 0x9e3779b97f4a7c15ull;

	for (u64 i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static u64 pattern_sum(const volatile u64 *p, u64 words)
{
	u64 h = 0;

	for (u64 i = 0; i < words; i++)
		h |= p[i] ^ mix(i + 1);
	return h;
}

#define PRINTS_MAX 1024

static u64 lat[PRINTS_MAX];
static volatile u32 foreign_irqs;

static void foreign_irq(u32 intid)
{
	(void)intid;
	foreign_irqs++;
}

/* ---- its own MSIs (`msis`) ---- */
#define MSI_LPI 8200u

static u8 prop[8192] __attribute__((aligned(4096))); /* LPIs 8192-16383 (14 ID bits) */
static u8 pend[8192] __attribute__((aligned(65536)));
static u8 devtab[4096] __attribute__((aligned(65536)));
static u8 itt[256] __attribute__((aligned(256)));
static u64 cmdq[4096 / 8] __attribute__((aligned(4096)));
static struct gits its = { .queue = cmdq, .bytes = sizeof(cmdq) };
static uptr edu_bar;
static volatile u32 msi_sent, msi_lpis, foreign_lpis;
static u64 msi_first, msi_last; /* the counter at the first and last MSI */
static volatile u64 msi_at;     /* the counter when the handler last ran */
static u64 msi_max_ns;          /* the longest from raising one to its handler */

static void lpi_irq(u32 intid)
{
	if (intid == MSI_LPI && msi_lpis < msi_sent) {
		msi_at = timer_now();
		msi_lpis++;
	} else
		foreign_lpis++;
}

static bool msi_came(void *arg)
{
	(void)arg;
	return msi_lpis >= msi_sent;
}

/* its ITS set up for its edu's event 0 (and event 1, never raised) */
static bool msi_setup(void)
{
	u32 devid = 0;
	uptr cfg = gits_edu_find(param_u64("ecam", 0x3f000000), 0, &devid);

	its.base = param_u64("its", GITS_BASE_DEFAULT);
	if (!cfg)
		return false;
	prop[MSI_LPI - 8192] = prop[MSI_LPI + 1 - 8192] = 0xa0 | 1; /* priority, enabled */
	gits_lpis_on((uptr)prop, 14, (uptr)pend);
	mmio_write64(its.base + GITS_BASER, GITS_VALID | 7ull << 59 | 1ull << 10 | 1ull << 56 |
	                                        7ull << 48 | 2ull << 8 | (uptr)devtab);
	gits_queue_at(&its, (uptr)cmdq);
	irq_register_lpi(lpi_irq);
	gits_cmd(&its, GITS_MAPD | (u64)devid << 32, 1, GITS_VALID | (uptr)itt, 0);
	gits_cmd(&its, GITS_MAPC, 0, GITS_VALID, 0); /* collection 0 -> vCPU 0 */
	gits_cmd(&its, GITS_MAPTI | (u64)devid << 32, 0 | (u64)MSI_LPI << 32, 0, 0);
	gits_cmd(&its, GITS_MAPTI | (u64)devid << 32, 1 | (u64)(MSI_LPI + 1) << 32, 0, 0);
	gits_cmd(&its, GITS_SYNC, 0, 0, 0);
	if (!gits_kick(&its, 100 * NSEC_PER_MSEC))
		return false;
	edu_bar = gits_edu_msi(cfg, its.base + GITS_TRANSLATER, 0);
	printf("victim: msi devid=%u lpi %u\n", devid, MSI_LPI);
	return edu_bar != 0;
}

/* n MSIs of its edu, each waited for; false when one did not arrive */
static bool msi_round(u64 n)
{
	for (u64 i = 0; i < n; i++) {
		msi_sent++;
		msi_last = timer_now();
		msi_first = msi_first ? msi_first : msi_last;
		mmio_write32(edu_bar + EDU_IRQRAISE, 1);
		timer_wait_until(msi_came, NULL, 100 * NSEC_PER_MSEC);
		mmio_write32(edu_bar + EDU_IRQACK, 1);
		if (msi_lpis != msi_sent)
			return false;
		if (timer_ticks_to_ns(msi_at - msi_last) > msi_max_ns)
			msi_max_ns = timer_ticks_to_ns(msi_at - msi_last);
	}
	return true;
}

static int fail(const char *why)
{
	printf("victim: FAIL %s\n", why);
	return 1;
}

int main(const char *params)
{
	const u64 prints = param_u64("prints", 200);
	const u64 beats = param_u64("beats", 10);
	const u64 period_ms = param_u64("period_ms", 20);
	const u64 msis = param_u64("msis", 0);
	const u64 msi_every = param_u64("msi_every", 10) ? param_u64("msi_every", 10) : 1;
	const u64 print_ticks = timer_ns_to_ticks(param_u64("print_us", 500) * NSEC_PER_USEC);
	u64 words = param_u64("pattern", 4u << 20) / 8;
	const volatile u8 *pblock = (const volatile u8 *)rt_boot_arg();
	volatile u64 *pat = (volatile u64 *)rt_free_start();
	struct bh_vm_info info;
	u64 total = 0, worst = 0, late_max = 0, next, n;

	if (bh_vm_info(&info) != BH_OK)
		return fail("BH_HC_VM_INFO");
	if (info.ncpus != param_u64("cpus", 1) || info.ram_bytes != param_u64("ram", 16u << 20))
		return fail("VM info differs from the parameters");
	if (!param_str("vm") || strcmp(param_str("vm"), "victim") != 0 || !params)
		return fail("parameter block");
	crc_params = sum_bytes(pblock, 4096);
	if (words * 8 > rt_free_end() - rt_free_start())
		words = (rt_free_end() - rt_free_start()) / 8;
	for (u64 i = 0; i < words; i++)
		pat[i] = mix(i + 1);
	if (pattern_sum(pat, words) != 0)
		return fail("pattern not written");

	gic_init();
	for (u32 sgi = 0; sgi < 16; sgi++) {
		irq_register(sgi, foreign_irq);
		gic_irq_enable(sgi);
	}
	if (msis && !msi_setup())
		return fail("MSI set-up");
	next = timer_now();
	for (u64 k = 0; k < prints; k++) {
		u64 t0, dt;

		next += print_ticks;
		timer_sleep_until(next);
		t0 = timer_now();

		printf("victim: print %lu of %lu, a line of ordinary length\n", k, prints);
		dt = timer_ticks_to_ns(timer_now() - t0);
		total += dt;
		if (k < PRINTS_MAX)
			lat[k] = dt;
		if (dt > worst)
			worst = dt;
		/* `beats` rounds of its MSIs, one every `msi_every` prints (untimed) */
		if (msis && k % msi_every == 0 && msi_sent < beats * msis && !msi_round(msis))
			return fail("an MSI of its own did not arrive");
		if (timer_now() > next) /* woken late: no burst to catch up */
			next = timer_now();
	}
	n = prints < PRINTS_MAX ? prints : PRINTS_MAX;
	for (u64 i = 1; i < n; i++) /* insertion sort: n is small */
		for (u64 j = i; j > 0 && lat[j - 1] > lat[j]; j--) {
			u64 t = lat[j];
			lat[j] = lat[j - 1];
			lat[j - 1] = t;
		}
	printf("victim: print median_ns=%lu p90_ns=%lu mean_ns=%lu max_ns=%lu lines=%lu\n",
	       n ? lat[n / 2] : 0, n ? lat[n * 9 / 10] : 0, prints ? total / prints : 0, worst,
	       prints);

	next = timer_now();
	for (u64 i = 1; i <= beats; i++) {
		u64 late;

		next += timer_ns_to_ticks(period_ms * NSEC_PER_MSEC);
		timer_sleep_until(next);
		late = timer_ticks_to_ns(timer_now() - next) / NSEC_PER_USEC;
		if (late > late_max)
			late_max = late;
		if (pattern_sum(pat, words) != 0)
			return fail("pattern changed");
		if (sum_bytes(pblock, 4096) != crc_params)
			return fail("parameter block changed");
		if (bh_vm_info(&info) != BH_OK || info.ncpus != param_u64("cpus", 1) ||
		    info.vcpu != 0)
			return fail("VM info changed");
		if (foreign_irqs || foreign_lpis)
			return fail("foreign interrupt");
		printf("victim: beat %lu late_us=%lu\n", i, late);
		next = timer_now() > next ? timer_now() : next;
	}
	if (msis)
		printf("victim: msis sent=%u lpis=%u foreign_lpis=%u first_ms=%lu last_ms=%lu "
		       "max_ns=%lu\n",
		       msi_sent, msi_lpis, foreign_lpis,
		       timer_ticks_to_ns(msi_first) / NSEC_PER_MSEC,
		       timer_ticks_to_ns(msi_last) / NSEC_PER_MSEC, msi_max_ns);
	printf("victim: heartbeat beats=%lu max_late_us=%lu pattern=ok params=ok foreign_irqs=%u\n",
	       beats, late_max, foreign_irqs + foreign_lpis);
	printf("victim: PASS\n");
	return 0;
}
