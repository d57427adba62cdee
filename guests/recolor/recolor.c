// SPDX-License-Identifier: Apache-2.0
/*
 * recolor: BH_HC_RECOLOR end to end, three VMs sharing a control page (the
 * first shared-memory region; device-type accesses with the MMU off, so
 * coherent between VMs).
 *
 * role=victim: fills a 512 KiB buffer with a pseudo-random pattern, records
 *   the frame of every RAM page, then runs a heartbeat (it records the
 *   counter every few microseconds in a ring) until the manager has done
 *   each stage, and then checks: after refused requests, its colors, every
 *   frame and every stage-2 table page are unchanged; after a recoloring,
 *   every page of its RAM (full walk with BH_HC_IPA_INFO) and of its
 *   stage-2 tables (BH_HC_S2_INFO) has the new colors, no two share a
 *   frame, the pattern is intact, and none of its heartbeats falls inside
 *   the pause the hypervisor reported.
 * role=neighbour: asks to recolor the victim (not a manager: refused), then
 *   runs the same heartbeat and counts its beats inside each pause (it
 *   must keep running).
 * role=manager: refused requests (other VMs' colors, its own, bad colors,
 *   no such VM, every color), then four recolorings of the victim (to a
 *   disjoint set in the recolor pool, to a smaller overlapping one, to a
 *   larger overlapping one, back to its first colors on the frames it
 *   freed), then one the spare memory is too small for (refused).
 *
 * Parameters: role, victim (VM id, default 1), neighbour (default 2), hyp
 * (LLC bitmap of the hypervisor's colors, default 0xc000), from (the
 * victim's LLC bitmap at boot, default 0xf; 0xffff: uncolored),
 * to1..to4 (LLC bitmaps of the recolorings), big (of the refused one).
 * Lines: "recolor: <role>: ..." and "recolor: <role>: PASS"; on failure
 * "recolor: <role>: FAIL (...)" and exit status 1.
 */
#include "runtime.h"

#define BUF_WORDS  (512 * 1024 / 8)
#define MAX_PAGES  4096
#define RING       16384
#define BEAT_US    10
#define LAST_STAGE 6
#define MAX_TABLES 64

enum {
	C_READY,  /* victim: pattern written, frames recorded */
	C_DENIED, /* neighbour: its own request was refused */
	C_STAGE,  /* manager: 1 refusals, 2-5 recolorings, 6 refused (pool too small) */
	C_ACK,    /* victim: stage checked */
	C_LLC,    /* manager: the victim's LLC bitmap after the stage */
	C_PS,     /* pause start, end (counter) of the last recoloring */
	C_PE,
	C_NB_ACK, /* neighbour: stage counted */
	C_WORDS = 16,
};

static volatile u64 *ctl;
static u64 buf[BUF_WORDS];
static u64 frames[MAX_PAGES];
static u64 boot_frames[MAX_PAGES];
static u64 tables[MAX_TABLES];
static u32 ntables;
static u64 sorted[MAX_PAGES];
static u64 ring[RING];
static u32 ring_n;
static u64 last_beat, beat_ticks, max_gap;
static const char *role;

static int fail(const char *why, u64 a, u64 b)
{
	printf("recolor: %s: FAIL (%s: 0x%lx 0x%lx)\n", role, why, a, b);
	return 1;
}

static void beat(void)
{
	u64 t = timer_now();

	if (t - last_beat < beat_ticks)
		return;
	if (last_beat && t - last_beat > max_gap)
		max_gap = t - last_beat;
	ring[ring_n++ % RING] = t;
	last_beat = t;
}

/* Heartbeats strictly inside (a, b) among those still in the ring. */
static u64 beats_in(u64 a, u64 b)
{
	u64 n = 0;

	for (u32 i = 0; i < RING && i < ring_n; i++)
		n += ring[i] > a && ring[i] < b;
	return n;
}

static u64 pattern(u64 i)
{
	u64 x = (i + 1) * 0x9e3779b97f4a7c15ull;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static u64 wait_ctl(u32 word, u64 at_least)
{
	u64 v;

	while ((v = ctl[word]) < at_least)
		beat();
	return v;
}

/* Walks every RAM page: with record, stores the frames; otherwise checks
 * them: unchanged (same) or all of the LLC colors llc and distinct. */
static int walk(u64 npages, bool record, bool same, u64 llc)
{
	for (u64 i = 0; i < npages; i++) {
		struct bh_ipa_info pi;

		if (bh_ipa_info(RT_RAM_BASE + i * 4096, &pi) != BH_OK)
			return fail("BH_HC_IPA_INFO refused a RAM page", i, 0);
		if (record) {
			frames[i] = pi.pa;
		} else if (same) {
			if (pi.pa != frames[i])
				return fail("a refused request moved a page", frames[i], pi.pa);
		} else {
			if (pi.llc_color >= 64 || !(llc & BIT(pi.llc_color)))
				return fail("page not of the new colors", pi.pa, pi.llc_color);
			frames[i] = pi.pa;
		}
	}
	if (!record && !same) {
		for (u64 i = 0; i < npages; i++)
			sorted[i] = frames[i];
		sort_u64(sorted, npages);
		for (u64 i = 1; i < npages; i++)
			if (sorted[i] == sorted[i - 1])
				return fail("two pages share a frame", sorted[i], i);
	}
	return 0;
}

/* Walks the VM's stage-2 table pages (BH_HC_S2_INFO): with same, checks
 * they are where they were; otherwise that each has one of the LLC colors
 * llc, is no frame of the VM's RAM and no other table page; records them. */
static int walk_tables(u64 npages, bool same, u64 llc)
{
	struct bh_ipa_info pi;
	u32 n;

	for (n = 0; bh_s2_info(n, &pi) == BH_OK; n++) {
		if (n == MAX_TABLES)
			return fail("too many table pages", n, 0);
		if (same) {
			if (n >= ntables || pi.pa != tables[n])
				return fail("a refused request moved a table page", pi.pa, n);
			continue;
		}
		if (llc && (pi.llc_color >= 64 || !(llc & BIT(pi.llc_color))))
			return fail("table page not of the VM's colors", pi.pa, pi.llc_color);
		for (u64 i = 0; i < npages; i++)
			if (frames[i] == pi.pa)
				return fail("a table page is a RAM frame", pi.pa, i);
		for (u32 k = 0; k < n; k++)
			if (tables[k] == pi.pa)
				return fail("two table pages share a frame", pi.pa, k);
		tables[n] = pi.pa;
	}
	if (!n || (same && n != ntables))
		return fail("table page count", n, ntables);
	ntables = n;
	return 0;
}

static int victim(void)
{
	struct bh_vm_info vi;
	struct bh_color_info ci;
	u64 npages, sum = 0;

	if (bh_vm_info(&vi) != BH_OK || bh_color_info(&ci) != BH_OK)
		return fail("info calls failed", 0, 0);
	npages = vi.ram_bytes / 4096;
	if (npages > MAX_PAGES)
		return fail("too much RAM for the frame table", npages, MAX_PAGES);
	for (u64 i = 0; i < BUF_WORDS; i++) {
		buf[i] = pattern(i);
		sum += buf[i];
	}
	if (walk(npages, true, false, 0))
		return 1;
	for (u64 i = 0; i < npages; i++)
		boot_frames[i] = frames[i];
	if (walk_tables(npages, false, ci.llc_colors))
		return 1;
	printf("recolor: victim: %lu pages, LLC 0x%lx, pattern sum 0x%lx, %u stage-2 table pages\n",
	       npages, ci.llc_colors, sum, ntables);
	ctl[C_READY] = 1;
	for (u64 stage = 1; stage <= LAST_STAGE; stage++) {
		u64 s = 0, inside, home = 0;

		wait_ctl(C_STAGE, stage);
		if (bh_color_info(&ci) != BH_OK)
			return fail("BH_HC_COLOR_INFO failed", 0, 0);
		if (ci.llc_colors != ctl[C_LLC])
			return fail("colors", ci.llc_colors, ctl[C_LLC]);
		if (stage == 1 || stage == LAST_STAGE) {
			if (walk(npages, false, true, 0) || walk_tables(npages, true, 0))
				return 1;
			printf("recolor: victim: stage %lu: refused requests changed nothing "
			       "(LLC 0x%lx, %lu pages where they were)\n",
			       stage, ci.llc_colors, npages);
		} else {
			if (walk(npages, false, false, ci.llc_colors) ||
			    walk_tables(npages, false, ci.llc_colors))
				return 1;
			printf(
			    "recolor: victim: stage %lu: %u stage-2 table pages, all of LLC 0x%lx, "
			    "none a RAM frame\n",
			    stage, ntables, ci.llc_colors);
			for (u64 i = 0; i < BUF_WORDS; i++) {
				if (buf[i] != pattern(i))
					return fail("pattern changed", i, buf[i]);
				s += buf[i];
			}
			inside = beats_in(ctl[C_PS], ctl[C_PE]);
			if (s != sum || inside)
				return fail("checksum or heartbeat during the pause", s, inside);
			for (u64 i = 0; i < npages; i++)
				home += frames[i] == boot_frames[i];
			printf("recolor: victim: stage %lu: LLC 0x%lx, all %lu pages of it, "
			       "sum 0x%lx ok, paused %lu us, 0 heartbeats in the pause, "
			       "%lu on boot frames\n",
			       stage, ci.llc_colors, npages, s,
			       timer_ticks_to_ns(ctl[C_PE] - ctl[C_PS]) / 1000, home);
		}
		ctl[C_ACK] = stage;
	}
	printf("recolor: victim: max heartbeat gap %lu us\n", timer_ticks_to_ns(max_gap) / 1000);
	return 0;
}

static int neighbour(void)
{
	u32 victim_id = (u32)param_u64("victim", 1);
	s64 r;

	wait_ctl(C_READY, 1);
	r = bh_recolor(victim_id, 0xf0, 0, NULL);
	if (r != BH_E_DENIED)
		return fail("a non-manager's request was not denied", (u64)r, 0);
	printf("recolor: neighbour: own request denied (%ld)\n", r);
	ctl[C_DENIED] = 1;
	for (u64 stage = 2; stage < LAST_STAGE; stage++) {
		u64 inside;

		wait_ctl(C_STAGE, stage);
		inside = beats_in(ctl[C_PS], ctl[C_PE]);
		printf("recolor: neighbour: stage %lu: %lu heartbeats during the victim's "
		       "%lu us pause\n",
		       stage, inside, timer_ticks_to_ns(ctl[C_PE] - ctl[C_PS]) / 1000);
		ctl[C_NB_ACK] = stage;
	}
	printf("recolor: neighbour: max heartbeat gap %lu us\n", timer_ticks_to_ns(max_gap) / 1000);
	return 0;
}

/* A request that must be refused with code want. */
static int refuse(u32 vm, u64 llc, u64 bank, s64 want, const char *what)
{
	s64 r = bh_recolor(vm, llc, bank, NULL);

	printf("recolor: manager: %s: %ld\n", what, r);
	return r == want ? 0 : fail(what, (u64)r, (u64)want);
}

static int recolor_to(u32 vm, u64 llc, u64 stage)
{
	struct bh_recolor out;
	u64 t0 = timer_now();
	s64 r = bh_recolor(vm, llc, 0, &out);
	u64 t1 = timer_now();

	if (r != BH_OK)
		return fail("recoloring refused", (u64)r, llc);
	printf("recolor: manager: stage %lu: LLC 0x%lx: %lu pages moved, call %lu us, "
	       "pause %lu us\n",
	       stage, llc, out.moved, timer_ticks_to_ns(t1 - t0) / 1000,
	       timer_ticks_to_ns(out.pause_end - out.pause_start) / 1000);
	ctl[C_LLC] = llc;
	ctl[C_PS] = out.pause_start;
	ctl[C_PE] = out.pause_end;
	return 0;
}

static int manager(void)
{
	u32 v = (u32)param_u64("victim", 1), nb = (u32)param_u64("neighbour", 2);
	const u64 to[LAST_STAGE - 2] = { param_u64("to1", 0xf0), param_u64("to2", 0x30),
		                         param_u64("to3", 0xf0), param_u64("to4", 0xf) };
	struct bh_color_info ci;
	int bad = 0;

	wait_ctl(C_READY, 1);
	wait_ctl(C_DENIED, 1);
	if (bh_color_info(&ci) != BH_OK)
		return fail("BH_HC_COLOR_INFO failed", 0, 0);
	ctl[C_LLC] = param_u64("from", 0xf); /* the victim's colors at boot */
	bad |= refuse(v, 0xf00, 0, BH_E_CONFLICT, "victim to the neighbour's colors");
	bad |= refuse(v, ci.llc_colors, 0, BH_E_CONFLICT, "victim to the manager's colors");
	bad |= refuse(v, param_u64("hyp", 0xc000), 0, BH_E_CONFLICT,
	              "victim to the hypervisor's colors");
	bad |= refuse(v, 0x10000, 0, BH_E_INVALID, "victim to a color the platform lacks");
	bad |= refuse(v, 0, 0, BH_E_INVALID, "victim to every color");
	bad |= refuse(99, 0xf0, 0, BH_E_INVALID, "no such VM");
	if (ctl[C_LLC] != 0xffff) /* uncolored (every color): no color of its to refuse */
		bad |= refuse(nb, 0x3, 0, BH_E_CONFLICT, "neighbour to the victim's colors");
	if (bad)
		return 1;
	ctl[C_STAGE] = 1;
	wait_ctl(C_ACK, 1);
	for (u64 stage = 2; stage < LAST_STAGE; stage++) {
		if (recolor_to(v, to[stage - 2], stage))
			return 1;
		ctl[C_STAGE] = stage;
		wait_ctl(C_ACK, stage);
		wait_ctl(C_NB_ACK, stage);
	}
	if (refuse(v, param_u64("big", 0x80), 0, BH_E_NO_MEMORY,
	           "victim to a set the spare memory is too small for"))
		return 1;
	ctl[C_STAGE] = LAST_STAGE;
	wait_ctl(C_ACK, LAST_STAGE);
	return 0;
}

int main(const char *params)
{
	struct bh_shmem_info si;
	int ret;

	(void)params;
	role = param_str_default("role", "victim");
	if (bh_shmem_info(0, &si) != BH_OK)
		return fail("no control page", 0, 0);
	ctl = (volatile u64 *)si.ipa;
	beat_ticks = timer_ns_to_ticks(BEAT_US * 1000);
	if (!strcmp(role, "manager"))
		ret = manager();
	else if (!strcmp(role, "neighbour"))
		ret = neighbour();
	else
		ret = victim();
	if (!ret)
		printf("recolor: %s: PASS\n", role);
	return ret;
}
