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

#endif
