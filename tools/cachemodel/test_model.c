// SPDX-License-Identifier: GPL-2.0-or-later
/* Host unit test of the cache/DRAM model and the input parser (run by
 * tests/test_cachemodel.py with AddressSanitizer and UBSan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/host/check.h"
#include "mapfile.h"
#include "model.h"

#define LINE 64u

static void test_lru(void)
{
	struct cm_cache c;
	struct cm_result r;

	/* one set of two ways */
	CHECK(cm_cache_init(&c, 2 * LINE, 2, LINE, CM_LRU, 0) == 0);
	CHECK(c.sets == 1);
	r = cm_cache_access(&c, 0x1000, 1, false);
	CHECK(!r.hit && !r.evicted); /* invalid way first */
	r = cm_cache_access(&c, 0x2000, 2, true);
	CHECK(!r.hit && !r.evicted);
	CHECK(cm_cache_access(&c, 0x1010, 1, false).hit); /* same line: 0x1000 most recent */
	r = cm_cache_access(&c, 0x3000, 3, false);
	CHECK(!r.hit && r.evicted && r.victim_owner == 2 && r.victim_addr == 0x2000);
	CHECK(r.writeback); /* 0x2000 was stored to */
	r = cm_cache_access(&c, 0x2000, 2, false);
	CHECK(r.evicted && r.victim_owner == 1 && r.victim_addr == 0x1000 && !r.writeback);
	CHECK(cm_cache_mark_dirty(&c, 0x3000));
	CHECK(!cm_cache_mark_dirty(&c, 0x5000));
	r = cm_cache_access(&c, 0x4000, 1, false);
	CHECK(r.victim_addr == 0x3000 && r.writeback);
	cm_cache_free(&c);
}

static void test_sets(void)
{
	struct cm_cache c;
	struct cm_result r;
	uint32_t i;

	/* 1 MiB 16-way: 1024 sets; lines 64 KiB apart share a set */
	CHECK(cm_cache_init(&c, 1u << 20, 16, LINE, CM_LRU, 0) == 0);
	CHECK(c.sets == 1024);
	for (i = 0; i < 16; i++)
		CHECK(!cm_cache_access(&c, (uint64_t)i << 16, 1, false).evicted);
	CHECK(!cm_cache_access(&c, 0x40, 2, false).evicted); /* another set */
	r = cm_cache_access(&c, 16u << 16, 2, false);
	CHECK(r.evicted && r.victim_addr == 0 && r.victim_owner == 1);
	cm_cache_free(&c);
	CHECK(cm_cache_init(&c, 3 * LINE, 1, LINE, CM_LRU, 0) != 0); /* 3 sets */
	CHECK(cm_cache_init(&c, 4 * LINE, 2, 48, CM_LRU, 0) != 0);   /* 48-byte lines */
}

static void test_setway(void)
{
	struct cm_cache c;
	struct cm_result r;
	uint32_t i;

	/* one set of 4 random ways: filled, then invalidated by set/way, the next
	 * four fills all land in invalid ways (no eviction at all) */
	CHECK(cm_cache_init(&c, 4 * LINE, 4, LINE, CM_RANDOM, 7) == 0);
	for (i = 0; i < 4; i++)
		cm_cache_access(&c, (uint64_t)i * LINE * 2, 1, i == 2);
	r = cm_cache_setway(&c, 0, 9, true); /* no way 9 */
	CHECK(!r.evicted && !r.writeback);
	for (i = 0; i < 4; i++) {
		r = cm_cache_setway(&c, 0, i, i != 3); /* way 3: clean only */
		CHECK(r.victim_owner == 1);
	}
	r = cm_cache_setway(&c, 0, 0, true); /* already invalid */
	CHECK(!r.evicted && !r.writeback);
	r = cm_cache_setway(&c, 0, 3, true); /* cleaned before: no second write-back */
	CHECK(r.evicted && !r.writeback);
	for (i = 0; i < 4; i++)
		CHECK(!cm_cache_access(&c, 0x10000 + (uint64_t)i * LINE * 2, 2, false).evicted);
	cm_cache_free(&c);
}

static void test_random(void)
{
	struct cm_cache a, b;
	uint32_t i, same = 0, evictions = 0;

	CHECK(cm_cache_init(&a, 4 * LINE, 4, LINE, CM_RANDOM, 7) == 0);
	CHECK(cm_cache_init(&b, 4 * LINE, 4, LINE, CM_RANDOM, 7) == 0);
	for (i = 0; i < 200; i++) {
		struct cm_result ra = cm_cache_access(&a, (uint64_t)i * LINE * 3 % 4096, 1, false);
		struct cm_result rb = cm_cache_access(&b, (uint64_t)i * LINE * 3 % 4096, 1, false);

		same += ra.hit == rb.hit && ra.victim_addr == rb.victim_addr;
		evictions += ra.evicted;
		if (i < 4)
			CHECK(!ra.evicted); /* invalid ways first */
	}
	CHECK(same == 200); /* a fixed seed: the same victims */
	CHECK(evictions > 100);
	cm_cache_free(&a);
	cm_cache_free(&b);
}

static void test_dram(void)
{
	static const uint32_t bits[] = { 16, 17 };
	struct cm_dram d = { 0 };
	uint8_t opener = 0xff;

	CHECK(cm_dram_init(&d, bits, 2, 17) != 0); /* a row bit below a bank bit */
	CHECK(cm_dram_init(&d, bits, 2, 18) == 0);
	CHECK(cm_dram_bank(&d, 0x30000) == 3 && cm_dram_bank(&d, 0x50000) == 1);
	CHECK(cm_dram_access(&d, 0x00000, 1, &opener) == CM_ROW_EMPTY);
	CHECK(cm_dram_access(&d, 0x00040, 2, &opener) == CM_ROW_HIT);
	CHECK(cm_dram_access(&d, 0x40000, 3, &opener) == CM_ROW_CONFLICT && opener == 2);
	CHECK(cm_dram_access(&d, 0x10000, 3, &opener) == CM_ROW_EMPTY); /* bank 1 */
	CHECK(cm_dram_access(&d, 0x00000, 1, &opener) == CM_ROW_CONFLICT && opener == 3);
	cm_dram_free(&d);
}

static const struct cm_timing_params TP = {
	.cpi_ps = 1000,
	.llc_hit_ps = 10000,
	.row_ps = { 60000, 50000, 80000 }, /* empty, hit, conflict */
	.line_ps = 10000,
	.window_ps = 100000, /* capacity: 10 lines per window */
};

static void test_timing_alone(void)
{
	static struct cm_timing t;

	CHECK(cm_timing_init(&t, &TP, 2) == 0);
	CHECK(t.capacity == 10);
	cm_time_run(&t, 0, 50);
	CHECK(t.cpu[0].clock == 50000 && t.cpu[0].insns == 50 && t.cpu[0].started);
	cm_time_stall(&t, 0, TP.llc_hit_ps);
	cm_time_dram(&t, 0, CM_ROW_CONFLICT, true);
	cm_time_dram(&t, 0, CM_ROW_HIT, false); /* a write-back: no latency */
	CHECK(t.cpu[0].clock == 50000 + 10000 + 80000 && t.cpu[0].stall == 90000);
	/* the fill fell in window 0 (clock 60 ns), settled once the clock
	 * passed it; the write-back in window 1, still open */
	CHECK(t.next == 1 && t.windows == 1);
	cm_time_settle_all(&t);
	/* alone, nobody else's line is ahead of its fills: no queueing wait */
	CHECK(t.windows == 2 && t.cpu[0].queue == 0 && t.cpu[0].lines == 2);
	/* beside one other CPU, at most its two lines in flight are ahead */
	CHECK(cm_time_fill_wait_ps(&t, 9, 5, 1) == 2 * TP.line_ps);
	CHECK(cm_time_fill_wait_ps(&t, 6, 5, 1) == cm_time_wait_ps(&t, 6) &&
	      cm_time_wait_ps(&t, 6) < TP.line_ps);
	CHECK(cm_time_wait_ps(&t, 0) == 0 && cm_time_wait_ps(&t, 5) == 5000); /* rho 0.5: s/2 */
	CHECK(cm_time_wait_ps(&t, 9) > cm_time_wait_ps(&t, 8));
	CHECK(cm_time_wait_ps(&t, 1000) == cm_time_wait_ps(&t, 9)); /* saturates at 95% (9 of 10) */
	cm_timing_free(&t);
	CHECK(cm_timing_init(&t, &(struct cm_timing_params){ .line_ps = 10, .window_ps = 5 }, 1) !=
	      0);
	CHECK(cm_timing_init(&t, &TP, 0) != 0);
}

/* Two CPUs each put lines into windows 0..9; the host order (one CPU's whole
 * turn, then the other's, or interleaved) does not change any clock. */
static void two_cpus(struct cm_timing *t, bool turns)
{
	uint32_t i, c;

	CHECK(cm_timing_init(t, &TP, 2) == 0);
	cm_time_run(t, 0, 0);
	cm_time_run(t, 1, 0);
	if (turns) {
		for (c = 0; c < 2; c++) {
			for (i = 0; i < 40; i++) {
				cm_time_run(t, c, 20);
				cm_time_dram(t, c, CM_ROW_HIT, true);
			}
		}
	} else {
		for (i = 0; i < 40; i++) {
			for (c = 0; c < 2; c++) {
				cm_time_run(t, c, 20);
				cm_time_dram(t, c, CM_ROW_HIT, true);
			}
		}
	}
	cm_time_settle_all(t);
}

static void test_timing_order(void)
{
	static struct cm_timing a, b, solo;
	uint32_t i;

	two_cpus(&a, true);
	two_cpus(&b, false);
	CHECK(a.cpu[0].clock == b.cpu[0].clock && a.cpu[1].clock == b.cpu[1].clock);
	CHECK(a.cpu[0].queue == b.cpu[0].queue && a.cpu[0].queue > 0);
	/* alone, the same stream waits less: the other CPU's lines share its windows */
	CHECK(cm_timing_init(&solo, &TP, 2) == 0);
	for (i = 0; i < 40; i++) {
		cm_time_run(&solo, 0, 20);
		cm_time_dram(&solo, 0, CM_ROW_HIT, true);
	}
	cm_time_settle_all(&solo);
	CHECK(solo.cpu[0].queue < a.cpu[0].queue && solo.cpu[0].clock == a.cpu[0].clock);
	cm_timing_free(&a);
	cm_timing_free(&b);
	cm_timing_free(&solo);
	/* write-backs take bandwidth (they make the others wait) but their CPU
	 * does not wait for them */
	CHECK(cm_timing_init(&a, &TP, 2) == 0);
	cm_time_run(&a, 0, 0);
	cm_time_run(&a, 1, 0);
	for (i = 0; i < 8; i++) {
		cm_time_dram(&a, 0, CM_ROW_HIT, false);
		cm_time_dram(&a, 1, CM_ROW_HIT, true);
	}
	cm_time_settle_all(&a);
	CHECK(a.cpu[0].queue == 0 && a.cpu[0].stall == 0 && a.cpu[1].queue > 0);
	cm_timing_free(&a);
}

static void test_timing_wait_phase(void)
{
	static struct cm_timing t;

	CHECK(cm_timing_init(&t, &TP, 3) == 0);
	cm_time_run(&t, 0, 0);
	cm_time_run(&t, 1, 0); /* starts at CPU 0's time */
	cm_time_run(&t, 0, 100);
	cm_time_run(&t, 1, 400);
	cm_time_wait(&t, 0);
	cm_time_run(&t, 2, 10); /* starts at the slowest running CPU's time */
	CHECK(t.cpu[2].clock == 400000 + 10000 && t.cpu[2].waited == 400000);
	cm_time_run(&t, 0, 0); /* woken: catches up with the running CPUs (1, 2) */
	CHECK(t.cpu[0].clock == 400000 && t.cpu[0].waited == 300000);
	cm_time_phase(&t, 0, true);
	cm_time_run(&t, 0, 5);
	cm_time_stall(&t, 0, 7);
	cm_time_dram(&t, 0, CM_ROW_EMPTY, true);
	cm_time_phase(&t, 0, false);
	cm_time_run(&t, 0, 1000);
	cm_time_run(&t, 1, 1000);
	cm_time_run(&t, 2, 1000);
	CHECK(t.cpu[0].phase_insns == 5 && t.cpu[0].phase_lines == 1 &&
	      t.cpu[0].phase_stall == 60007);
	/* settled after the phase ended, its line's wait still counts to it */
	CHECK(t.cpu[0].phase_ps == 5000 + 7 + 60000 + t.cpu[0].phase_queue);
	CHECK(t.cpu[0].phase_queue == 0); /* nobody else's line in its window */
	cm_timing_free(&t);
}

static int load(const char *text, struct cm_config *cfg, char *err)
{
	char path[] = "/tmp/cmtestXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	int ret;

	fputs(text, f);
	fclose(f);
	ret = cm_config_load(path, cfg, err, 200);
	remove(path);
	return ret;
}

/* Timing mode (online queueing): two CPUs interleaved fill by fill in
 * lock-step; each fill's queueing wait goes on its CPU's clock at once (a
 * closed loop: it pushes the CPU's later lines into later windows), and
 * settling windows charges nothing more. */
static void test_timing_online(void)
{
	static struct cm_timing t, solo;
	uint32_t i, c;

	CHECK(cm_timing_init(&t, &TP, 2) == 0);
	CHECK(cm_timing_init(&solo, &TP, 1) == 0);
	t.online = solo.online = true;
	cm_time_run(&t, 0, 0);
	cm_time_run(&t, 1, 0);
	cm_time_run(&solo, 0, 0);
	for (i = 0; i < 40; i++) {
		for (c = 0; c < 2; c++) {
			cm_time_run(&t, c, 20);
			cm_time_dram(&t, c, CM_ROW_HIT, true);
		}
		cm_time_run(&solo, 0, 20);
		cm_time_dram(&solo, 0, CM_ROW_HIT, true);
	}
	/* alone: no wait; side by side: both wait, on their clocks */
	CHECK(solo.cpu[0].online == 0 && solo.cpu[0].clock == 40 * (20000 + 50000));
	for (c = 0; c < 2; c++) {
		CHECK(t.cpu[c].online > 0);
		CHECK(t.cpu[c].clock == solo.cpu[0].clock + t.cpu[c].online);
	}
	cm_time_settle_all(&t);
	CHECK(t.cpu[0].queue == 0 && t.cpu[1].queue == 0); /* nothing charged twice */
	/* the slowest running CPU; none once both wait */
	CHECK(cm_time_slowest(&t) ==
	      (t.cpu[0].clock < t.cpu[1].clock ? t.cpu[0].clock : t.cpu[1].clock));
	cm_time_wait(&t, 0);
	CHECK(cm_time_slowest(&t) == t.cpu[1].clock);
	cm_time_wait(&t, 1);
	CHECK(cm_time_slowest(&t) == UINT64_MAX);
	cm_timing_free(&t);
	cm_timing_free(&solo);
}

static void test_mapfile(void)
{
	struct cm_config cfg;
	char err[200];

	CHECK(load("# input\nllc 0x100000 16 64 random 5\nl1d 0x8000 4 64\ndram 18 16 17\n"
	           "ram 0x40000000 0x100000\nowner 1 hyp hypervisor\nowner 2 vm a\n"
	           "cpu 1 2\nrange 0x40000000 0x2000 1\nrange 0x40003000 0x1000 2\n",
	           &cfg, err) == 0);
	CHECK(cfg.llc_size == 0x100000 && cfg.llc_ways == 16 && cfg.llc_repl == CM_RANDOM &&
	      cfg.llc_seed == 5);
	CHECK(cfg.l1_size == 0x8000 && cfg.row_shift == 18 && cfg.dram_nbits == 2 &&
	      cfg.dram_bits[1] == 17);
	CHECK(cfg.nowners == 3 && !strcmp(cfg.owner_name[2], "a") && cfg.cpu_owner[1] == 2);
	CHECK(cfg.page_owner[0] == 1 && cfg.page_owner[1] == 1 && cfg.page_owner[2] == 0 &&
	      cfg.page_owner[3] == 2);
	free(cfg.page_owner);

	CHECK(load("llc 0x100000 16 64 lru 1\nram 0x40000000 0x100000\nrange 0x3ffff000 0x2000 1\n",
	           &cfg, err) != 0);
	CHECK(strstr(err, ":3: range") != NULL);
	free(cfg.page_owner);
	CHECK(load("llc 0x100000 16 64 lru 1\nram 0x40000000 0x100000\n"
	           "timing 833 12500 80000 60000 100000 32000 1000000\ntiming_l1d 0x8000 4 64\n"
	           "regulator 2 0x40280828 100000\n",
	           &cfg, err) == 0);
	CHECK(cfg.timing && cfg.tp.cpi_ps == 833 && cfg.tp.row_ps[CM_ROW_HIT] == 60000 &&
	      cfg.tp.row_ps[CM_ROW_CONFLICT] == 100000 && cfg.tp.window_ps == 1000000);
	CHECK(cfg.tl1_size == 0x8000 && cfg.reg_addr[2] == 0x40280828 &&
	      cfg.reg_period_ns[2] == 100000 && !cfg.reg_addr[1]);
	free(cfg.page_owner);
	CHECK(load("llc 0x100000 16 64 lru 1\ntiming 1 2 3 4 5 10 9\n", &cfg, err) != 0);
	CHECK(strstr(err, ":2: timing: want") != NULL);
	CHECK(load("llc 0x100000 16 64 lru 1\nregulator 99 0x1000 5\n", &cfg, err) != 0);
	CHECK(load("llc 0x100000 16 64 lru 1\nbogus 1\n", &cfg, err) != 0);
	CHECK(strstr(err, ":2: unknown keyword 'bogus'") != NULL);
	CHECK(load("llc 0x100000 16 64 fifo 1\n", &cfg, err) != 0);
	CHECK(load("ram 0x40000000 0x100000\n", &cfg, err) != 0 && strstr(err, "no llc"));
	free(cfg.page_owner);
}

int main(void)
{
	test_lru();
	test_sets();
	test_setway();
	test_random();
	test_dram();
	test_mapfile();
	test_timing_alone();
	test_timing_order();
	test_timing_wait_phase();
	test_timing_online();
	if (failures)
		return 1;
	printf("test_model: ok\n");
	return 0;
}
