// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cache and DRAM model of the cachemodel plugin (docs/model.md): a shared
 * set-associative last-level cache, optional private L1 data caches, and DRAM
 * banks with one open row each. Every line and every open row remembers its
 * *owner* (the VM, shared-memory region or hypervisor whose physical page it
 * holds), so the model can say who evicted whose line and who closed whose
 * row. No QEMU dependency: the plugin glue (cachemodel.c) feeds it physical
 * addresses.
 */
#ifndef CACHEMODEL_MODEL_H
#define CACHEMODEL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define CM_MAX_OWNERS    32 /* owner 0: memory nobody owns (or outside RAM) */
#define CM_MAX_CPUS      64
#define CM_MAX_BANK_BITS 8

enum cm_repl { CM_LRU, CM_RANDOM };

struct cm_cache {
	uint32_t sets, ways, line_shift;
	enum cm_repl repl;
	uint64_t rng;   /* xorshift64 state (random replacement) */
	uint64_t clock; /* LRU time stamp source */
	uint64_t *tag;  /* sets * ways; 0: invalid, else (line address | 1) */
	uint64_t *stamp;
	uint8_t *owner;
	uint8_t *dirty;
};

/* What one cache access did. */
struct cm_result {
	bool hit;
	bool evicted;   /* a valid line was replaced */
	bool writeback; /* ... and it was dirty */
	uint8_t victim_owner;
	uint64_t victim_addr; /* line address of the replaced line */
};

/* Counters of one owner (one scope: whole run or measured phase). */
struct cm_counters {
	uint64_t accesses, misses; /* LLC */
	uint64_t el2_accesses;     /* accesses (to this owner's memory) made at EL2 */
	uint64_t l1_accesses, l1_misses;
	uint64_t evicted_by[CM_MAX_OWNERS]; /* this owner's LLC lines replaced by owner i's fills */
	uint64_t dram_accesses, dram_bytes, writebacks;
	uint64_t row_hits, row_empty, row_conflicts;
	uint64_t row_conflicts_by[CM_MAX_OWNERS]; /* conflicts where owner i had opened the row */
};

struct cm_bank {
	bool open;
	uint8_t opener;
	uint64_t row;
};

struct cm_dram {
	bool enabled;
	uint32_t nbits;
	uint32_t bits[CM_MAX_BANK_BITS];
	uint32_t row_shift;
	struct cm_bank *banks; /* 1 << nbits */
};

int cm_cache_init(struct cm_cache *c, uint64_t size, uint32_t ways, uint32_t line,
                  enum cm_repl repl, uint64_t seed);
void cm_cache_free(struct cm_cache *c);
/* Looks up (and on a miss fills, write-allocate) the line of pa for owner. */
struct cm_result cm_cache_access(struct cm_cache *c, uint64_t pa, uint8_t owner, bool store);
/* Marks the line of pa dirty (an L1 write-back reaching the LLC); false if
 * the line is not there. */
bool cm_cache_mark_dirty(struct cm_cache *c, uint64_t pa);
/* Data-cache maintenance by set/way (DC CSW: clean; DC ISW/CISW: the line
 * is invalid afterwards): the line it held as a victim in the result
 * (evicted when invalidated, writeback when it was dirty). Out-of-range set
 * or way: nothing. */
struct cm_result cm_cache_setway(struct cm_cache *c, uint32_t set, uint32_t way, bool invalidate);

int cm_dram_init(struct cm_dram *d, const uint32_t *bits, uint32_t nbits, uint32_t row_shift);
void cm_dram_free(struct cm_dram *d);
uint32_t cm_dram_bank(const struct cm_dram *d, uint64_t pa);
enum cm_row { CM_ROW_EMPTY, CM_ROW_HIT, CM_ROW_CONFLICT };
/* One DRAM access of owner at pa: opens its row in its bank. On a conflict
 * *opener is the owner that had opened the row the access closed. */
enum cm_row cm_dram_access(struct cm_dram *d, uint64_t pa, uint8_t owner, uint8_t *opener);

/*
 * The timing model (docs/model.md "Timing model"): each CPU's modelled time
 * is its instructions at a platform CPI plus its memory stalls (LLC hit,
 * DRAM row hit / empty / conflict latency) plus a queueing term shared by
 * every CPU whose DRAM line transfers fall in the same window of *modelled*
 * time. All in integer picoseconds: two runs give identical figures.
 *
 * Under -icount QEMU runs the vCPUs in turns (each up to the next timer
 * deadline), so a CPU's accesses of a window of modelled time arrive in
 * host order long before or after the other CPUs' accesses of that window.
 * The queueing term is therefore settled late: a line falls in the window
 * of its CPU's clock *without* queueing waits, and a window is settled (its
 * total demand known, each CPU's lines in it charged their wait) only once
 * every CPU that runs has a clock past its end; a CPU waiting (WFI) is not
 * waited for, and when it runs again its clock catches up with the slowest
 * running CPU's (the time it waited). Which window a line falls in thus
 * never depends on the order QEMU ran the CPUs in, only on its own CPU's
 * stream (and catch-ups); its wait depends on every CPU's lines in it.
 */
#define CM_TIME_RING        16384 /* windows kept open ahead of the settled ones */
#define CM_TIME_RHO_MAX     95    /* % of a window's capacity the M/D/1 wait saturates at */
#define CM_TIME_OUTSTANDING 2     /* lines per CPU in flight (a fill and a write-back) */

struct cm_timing_params {
	uint64_t cpi_ps;     /* picoseconds per instruction (CPI / clock) */
	uint64_t llc_hit_ps; /* an access served by the LLC (missed L1) */
	uint64_t row_ps[3];  /* a line fill from DRAM, by enum cm_row */
	uint64_t line_ps;    /* one 64 B line at the sustainable DRAM bandwidth */
	uint64_t window_ps;  /* the queueing term's window of modelled time */
};

struct cm_time_cpu {
	uint64_t clock; /* modelled time without the queueing waits, ps (windows are keyed to it) */
	uint64_t insns; /* instructions */
	uint64_t stall; /* LLC and DRAM latency stalls, ps */
	uint64_t queue; /* queueing waits, ps: modelled time = clock + queue */
	uint64_t waited; /* catch-ups after waiting (WFI), ps */
	uint64_t online; /* queueing waits charged at once (timing mode), ps; in clock */
	uint64_t lines;  /* DRAM line transfers */
	bool started, busy, in_phase;
	/* the same, counted while in a marked phase */
	uint64_t phase_ps, phase_insns, phase_stall, phase_queue, phase_lines;
};

struct cm_timing {
	struct cm_timing_params p;
	uint32_t ncpus;
	uint64_t capacity; /* lines per window at the sustainable bandwidth */
	struct cm_time_cpu cpu[CM_MAX_CPUS];
	uint64_t next;    /* the oldest window not settled */
	uint64_t pending; /* lines in open windows */
	uint32_t *lines;  /* [CM_TIME_RING][ncpus]: lines per open window and CPU */
	uint32_t *fills;  /* ... of them, fills (the CPU waits for them; write-backs it does not) */
	uint32_t *pfills; /* ... of those, made in a marked phase */
	uint64_t windows, busiest, late, forced; /* settled windows with traffic, most lines in one,
	                                            lines placed late, windows settled early */
	/*
	 * Timing mode (the CPUs run side by side in lock-step, docs/model.md
	 * "Timing mode"): a fill's queueing wait is charged at once, from the
	 * lines every CPU placed in the last window_ps of modelled time before
	 * it (a sliding window over the current and the previous window), so
	 * that it delays the CPU's later accesses (a closed loop); windows are
	 * then only counted, never charged when settled.
	 */
	bool online;
};

int cm_timing_init(struct cm_timing *t, const struct cm_timing_params *p, uint32_t ncpus);
void cm_timing_free(struct cm_timing *t);
/* cpu executes n instructions (a waiting CPU runs again first: catch-up). */
void cm_time_run(struct cm_timing *t, uint32_t cpu, uint64_t n);
/* A latency stall of cpu (an LLC hit, ...). */
void cm_time_stall(struct cm_timing *t, uint32_t cpu, uint64_t ps);
/* One DRAM line transfer of cpu, in the window of its clock; fill: the CPU
 * waits for it (the row latency), else a write-back (bandwidth only). */
void cm_time_dram(struct cm_timing *t, uint32_t cpu, enum cm_row row, bool fill);
/* cpu waits (WFI) until it next runs. */
void cm_time_wait(struct cm_timing *t, uint32_t cpu);
/* The slowest running CPU's modelled clock (UINT64_MAX: none runs). */
uint64_t cm_time_slowest(const struct cm_timing *t);
void cm_time_phase(struct cm_timing *t, uint32_t cpu, bool in);
/* Settles every open window (at the end of the run). */
void cm_time_settle_all(struct cm_timing *t);
/* The queueing wait of one line in a window holding `lines` lines. */
uint64_t cm_time_wait_ps(const struct cm_timing *t, uint64_t lines);
/* ... of one fill of a CPU with `mine` of them, beside `others` other CPUs
 * with traffic in the window: at most CM_TIME_OUTSTANDING lines of each
 * other CPU are ahead of it (a finite population). */
uint64_t cm_time_fill_wait_ps(const struct cm_timing *t, uint64_t lines, uint64_t mine,
                              uint32_t others);

#endif
