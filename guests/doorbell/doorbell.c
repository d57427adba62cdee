// SPDX-License-Identifier: Apache-2.0
/*
 * doorbell: round trips over shared-memory region 0 and its doorbell.
 *
 * ping: waits until pong announced itself in the shared page, then for each
 *       round r writes r into the page, rings (BH_HC_DOORBELL), sleeps in WFI
 *       until the doorbell interrupt comes back and checks that pong wrote
 *       r + 1.
 * pong: announces itself, then for each ring reads r and answers r + 1 with
 *       a ring back.
 * reply: the peer of a Linux VM (linux/bhshm, docs/ipc.md): for each ring
 *       reads the text at offset 0 of the page, prints it and answers
 *       "re: <text>" at offset REPLY_OFF with a ring back.
 *
 * measure (ping, 0|1): the latency of each ring as the guests see it, one
 *       round at a time: from just before ping's BH_HC_DOORBELL to the first
 *       instruction of pong's doorbell handler (one way: the virtual counter
 *       is the same for both VMs), and to ping's own handler for the reply
 *       (round trip). pong stores its handler's counter value in the page.
 *       ping arms its wait before the ring and sleeps in WFI right after
 *       it, with no trap between: QEMU runs the vCPUs in turns, so work of
 *       the sender's after its ring would delay the receiver's turn and
 *       count as latency.
 * wait (pong, wfi|busy, default wfi): pong sleeps in WFI between rings, or
 *       spins on its ring count with interrupts unmasked.
 * stale (ping and pong, 0|1): instead of the rounds, rings that come while
 *       the previous one still waits, untaken, in pong's list register (pong
 *       spins with interrupts masked until it sees ring 1 pending at its
 *       virtual CPU interface, ping then rings STALE_FLOOD times: ring 2),
 *       then, once pong took them and sleeps in WFI with no trap since, a
 *       third ring, which must wake it at once: ping measures the round trip
 *       of ring 3 (pong sleeps at most STALE_NAP_NS; ping fails above
 *       STALE_MAX_NS: the hypervisor sent no kick for ring 3); pong prints
 *       its CPU's exits during ring 2's flood.
 *
 * Params: role (ping|pong|reply, default ping), rounds (default 10; at most
 *         MAX_SAMPLES with measure), measure, wait, stale.
 * Lines: "doorbell: <role>: shmem 0x<ipa> size <n> irq <intid> peers <p>",
 *        reply: "doorbell: reply: got '<text>'" per ring,
 *        measure: "result bench=doorbell rounds=<n> wait=<w> min_ns=<a>
 *        mean_ns=<x.xxx> max_ns=<b> rt_min_ns=<c> rt_mean_ns=<y.yyy> rt_max_ns=<d>",
 *        stale: ping "doorbell: stale: ring 3 round trip <n> us", pong
 *        "doorbell: stale: <n> rings while masked cost <e> exits",
 *        "doorbell: PASS (<rounds> round trips)" or "doorbell: FAIL (<reason>)".
 */
#include "bench.h"
#include "doorbell_chan.h"
#include "runtime.h"

#define WAIT_PEER_NS  (20 * NSEC_PER_SEC)
#define WAIT_ROUND_NS (5 * NSEC_PER_SEC)
#define WAIT_LINUX_NS (180 * NSEC_PER_SEC) /* a Linux peer boots first */
#define TEXT_MAX      200
#define REPLY_OFF     256
#define MAX_SAMPLES   2000
#define STALE_NAP_NS  NSEC_PER_SEC /* pong's longest sleep for ring 3 */
#define STALE_MAX_NS  (500 * NSEC_PER_MSEC)
#define STALE_FLOOD   1000   /* ring 2: this many doorbells */
#define ISR_I         BIT(7) /* ISR_EL1.I: an IRQ (here virtual) is pending */

static volatile u32 rings;
static volatile u64 ring_stamp;                           /* the counter at the last ring */
static u64 one_way[MAX_SAMPLES], round_trip[MAX_SAMPLES]; /* ticks */

struct wait_arg {
	u32 seen;
};

static void doorbell_irq(u32 intid)
{
	u64 now = timer_now();

	(void)intid;
	ring_stamp = now;
	atomic_add32(&rings, 1);
}

static bool rang(void *arg)
{
	struct wait_arg *w = arg;

	return atomic_load32(&rings) != w->seen;
}

#define fail(...) rt_fail("doorbell", __VA_ARGS__)

/* min, mean (in buf) and max of n samples in ticks, as ns */
static void stats(const u64 *a, u32 n, u64 *min, char *buf, u64 *max)
{
	u64 sum = 0;

	*min = ~0ull;
	*max = 0;
	for (u32 i = 0; i < n; i++) {
		sum += a[i];
		*min = a[i] < *min ? a[i] : *min;
		*max = a[i] > *max ? a[i] : *max;
	}
	*min = timer_ticks_to_ns(*min);
	*max = timer_ticks_to_ns(*max);
	bench_fixed(buf, timer_ticks_to_ns(sum), n);
}

static void report(u32 n, const char *wait)
{
	char mean[BENCH_FIXED_LEN], rt_mean[BENCH_FIXED_LEN];
	u64 min, max, rt_min, rt_max;

	stats(one_way, n, &min, mean, &max);
	stats(round_trip, n, &rt_min, rt_mean, &rt_max);
	printf("result bench=doorbell rounds=%u wait=%s min_ns=%lu mean_ns=%s max_ns=%lu "
	       "rt_min_ns=%lu rt_mean_ns=%s rt_max_ns=%lu\n",
	       n, wait, min, mean, max, rt_min, rt_mean, rt_max);
}

static int run_ping(struct doorbell_chan *c, u32 nrounds, bool measure)
{
	struct wait_arg w;
	u64 deadline = timer_now() + timer_ns_to_ticks(WAIT_PEER_NS), t0;
	u32 r, got;
	s64 ret;

	while (atomic_load32(&c->pong_ready) != DOORBELL_PONG_READY) {
		if (timer_now() > deadline)
			return fail("pong never became ready");
		timer_delay_us(200);
	}
	for (r = 1; r <= nrounds; r++) {
		w.seen = atomic_load32(&rings);
		atomic_store32(&c->ping_val, r);
		/* the wait set up first (its GIC enable traps): after the ring
		 * ping only sleeps in WFI, none of its own work counts */
		timer_wait_arm();
		deadline = timer_now() + timer_ns_to_ticks(WAIT_ROUND_NS);
		dsb_ish();
		t0 = timer_now();
		ret = bh_doorbell(0);
		if (!timer_wait_armed(rang, &w, deadline))
			return fail("no reply doorbell in round %u (ring returned %ld)", r, ret);
		if (ret < 1)
			return fail("BH_HC_DOORBELL returned %ld", ret);
		got = atomic_load32(&c->pong_val);
		if (got != r + 1) {
			return fail("round %u: pong wrote %u, expected %u", r, got, r + 1);
		}
		if (measure) {
			u64 stamp = atomic_load64(&c->pong_stamp);

			if (stamp < t0 || ring_stamp < stamp)
				return fail("round %u: stamps out of order", r);
			one_way[r - 1] = stamp - t0;
			round_trip[r - 1] = ring_stamp - t0;
		}
	}
	return 0;
}

/* Busy: interrupts unmasked, no WFI. */
static bool spin_until_rang(struct wait_arg *w, u64 timeout_ns)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(timeout_ns);

	while (!rang(w))
		if (timer_now() >= deadline)
			return false;
	return true;
}

static int run_pong(struct doorbell_chan *c, u32 nrounds, bool busy)
{
	struct wait_arg w;
	u32 handled = 0, last = 0, v;
	s64 ret;

	w.seen = atomic_load32(&rings);
	atomic_store32(&c->pong_ready, DOORBELL_PONG_READY);
	dsb_ish();
	while (handled < nrounds) {
		if (!(busy ? spin_until_rang(&w, WAIT_PEER_NS)
		           : timer_wait_until(rang, &w, WAIT_PEER_NS)))
			return fail("no ring from ping after round %u", handled);
		w.seen = atomic_load32(&rings);
		v = atomic_load32(&c->ping_val);
		if (v == last)
			continue; /* nothing new */
		last = v;
		ret = doorbell_chan_pong(c, v, ring_stamp);
		if (ret < 1)
			return fail("BH_HC_DOORBELL returned %ld", ret);
		handled++;
	}
	return 0;
}

/* Spins (interrupts as they are) until *word is val. */
static bool spin_until(volatile u32 *word, u32 val)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(WAIT_ROUND_NS);

	while (atomic_load32(word) != val)
		if (timer_now() >= deadline)
			return false;
	return true;
}

/* stale=1, ping's side: ring 1, then STALE_FLOOD rings (ring 2) while
 * ring 1 waits in pong's list register, then ring 3 to a pong asleep; the
 * round trip of ring 3. */
static int run_stale_ping(struct doorbell_chan *c)
{
	struct wait_arg w;
	u64 t0, us;

	if (!spin_until(&c->pong_ready, DOORBELL_PONG_READY))
		return fail("pong never became ready");
	timer_wait_arm();
	atomic_store32(&c->ping_val, 1);
	dsb_ish();
	bh_doorbell(0);
	if (!spin_until(&c->pong_val, 1))
		return fail("stale: pong never saw ring 1 pending");
	for (u32 i = 0; i < STALE_FLOOD; i++)
		bh_doorbell(0); /* ring 2: ring 1 still waits in pong's list register */
	atomic_store32(&c->ping_val, 2);
	if (!spin_until(&c->pong_val, 2))
		return fail("stale: pong never went to sleep");
	timer_delay_us(100); /* pong in WFI */
	w.seen = atomic_load32(&rings);
	atomic_store32(&c->ping_val, 3);
	dsb_ish();
	t0 = timer_now();
	bh_doorbell(0); /* ring 3 */
	if (!timer_wait_armed(rang, &w, t0 + timer_ns_to_ticks(WAIT_ROUND_NS)))
		return fail("stale: no reply to ring 3");
	us = timer_ticks_to_ns(ring_stamp - t0) / NSEC_PER_USEC;
	printf("doorbell: stale: ring 3 round trip %lu us\n", us);
	if (us * NSEC_PER_USEC > STALE_MAX_NS)
		return fail("stale: ring 3 woke pong only after %lu us (its sleep's end)", us);
	return 0;
}

static bool ring3(void *arg)
{
	const struct doorbell_chan *c = arg;

	return atomic_load32(&c->ping_val) == 3 && atomic_load32(&rings) >= 2;
}

/* stale=1, pong's side: nothing between taking rings 1 and 2 and sleeping
 * for ring 3 traps (the timer's interrupt enabled first). Its CPU's exits
 * while ring 2's flood came: the first of them kicked it, no more. */
static int run_stale_pong(struct doorbell_chan *c)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(WAIT_PEER_NS);
	struct bh_cpu_exits before, after;

	timer_wait_arm();
	irq_local_disable();
	atomic_store32(&c->pong_ready, DOORBELL_PONG_READY);
	dsb_ish();
	while (!(read_sysreg(isr_el1) & ISR_I))
		if (timer_now() >= deadline)
			return fail("stale: ring 1 never became pending");
	bh_cpu_exits(BH_CPU_SELF, &before);
	atomic_store32(&c->pong_val, 1);
	if (!spin_until(&c->ping_val, 2))
		return fail("stale: no ring 2");
	bh_cpu_exits(BH_CPU_SELF, &after);
	printf("doorbell: stale: %u rings while masked cost %lu exits\n", STALE_FLOOD,
	       after.exits - before.exits);
	irq_local_enable(); /* rings 1 and 2 */
	isb();
	irq_local_disable();
	atomic_store32(&c->pong_val, 2);
	timer_wait_armed(ring3, c, timer_now() + timer_ns_to_ticks(STALE_NAP_NS));
	irq_local_enable();
	if (bh_doorbell(0) < 1)
		return fail("stale: BH_HC_DOORBELL failed");
	return 0;
}

static int run_reply(volatile char *page, u32 nrounds)
{
	struct wait_arg w = { .seen = 0 };
	char text[TEXT_MAX + 1];
	static const char re[] = "re: ";
	u32 n, k;
	s64 ret;

	for (u32 r = 1; r <= nrounds; r++) {
		if (!timer_wait_until(rang, &w, r == 1 ? WAIT_LINUX_NS : WAIT_PEER_NS))
			return fail("no ring from the peer in round %u", r);
		w.seen = atomic_load32(&rings);
		dsb_ish();
		for (n = 0; n < TEXT_MAX && page[n]; n++)
			text[n] = page[n];
		text[n] = '\0';
		printf("doorbell: reply: got '%s'\n", text);
		for (k = 0; re[k]; k++)
			page[REPLY_OFF + k] = re[k];
		for (u32 i = 0; i <= n; i++)
			page[REPLY_OFF + k + i] = text[i];
		dsb_ish();
		ret = bh_doorbell(0);
		if (ret < 1)
			return fail("BH_HC_DOORBELL returned %ld", ret);
	}
	return 0;
}

int main(const char *params)
{
	const char *role = param_str_default("role", "ping");
	u32 nrounds = (u32)param_u64("rounds", 10);
	bool measure = param_u64("measure", 0) != 0, stale = param_u64("stale", 0) != 0;
	const char *wait = param_str_default("wait", "wfi");
	struct bh_shmem_info sh;
	bool ping = false, reply = false;
	s64 ret;
	int rc;

	(void)params;
	if (!strcmp(role, "ping"))
		ping = true;
	else if (!strcmp(role, "reply"))
		reply = true;
	else if (strcmp(role, "pong"))
		return fail("unknown role '%s' (want ping, pong or reply)", role);
	if (strcmp(wait, "wfi") && strcmp(wait, "busy"))
		return fail("unknown wait '%s' (want wfi or busy)", wait);
	if (measure && nrounds > MAX_SAMPLES)
		return fail("rounds %u above %u with measure", nrounds, MAX_SAMPLES);
	if (!bh_present())
		return fail("no hypervisor");
	ret = bh_shmem_info(0, &sh);
	if (ret != BH_OK)
		return fail("BH_HC_SHMEM_INFO(0) returned %ld", ret);
	printf("doorbell: %s: shmem 0x%lx size %lu irq %u peers %u\n", role, sh.ipa, sh.size,
	       sh.doorbell_irq, sh.npeers);
	if (sh.size < (reply ? REPLY_OFF + 4 + TEXT_MAX + 1 : sizeof(struct doorbell_chan)))
		return fail("shared region too small: %lu bytes", sh.size);
	if (sh.doorbell_irq < 32 || sh.doorbell_irq >= 1020)
		return fail("no doorbell SPI for this VM (irq %u)", sh.doorbell_irq);
	if (sh.npeers < 1)
		return fail("no peers");

	gic_init();
	irq_register(sh.doorbell_irq, doorbell_irq);
	gic_spi_setup(sh.doorbell_irq, true);

	if (stale && !reply)
		rc = ping ? run_stale_ping((struct doorbell_chan *)sh.ipa)
		          : run_stale_pong((struct doorbell_chan *)sh.ipa);
	else if (reply)
		rc = run_reply((volatile char *)sh.ipa, nrounds);
	else if (ping)
		rc = run_ping((struct doorbell_chan *)sh.ipa, nrounds, measure);
	else
		rc = run_pong((struct doorbell_chan *)sh.ipa, nrounds, !strcmp(wait, "busy"));
	if (rc)
		return rc;
	if (ping && measure)
		report(nrounds, wait);
	if (stale)
		printf("doorbell: PASS (stale: 3 rings, 1 reply)\n");
	else
		printf("doorbell: PASS (%u round trips)\n", nrounds);
	return 0;
}
