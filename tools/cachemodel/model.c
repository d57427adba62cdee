// SPDX-License-Identifier: GPL-2.0-or-later
/* The cache and DRAM model (model.h). */
#include "model.h"

#include <stdlib.h>

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint32_t log2u(uint64_t v)
{
	uint32_t n = 0;

	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

int cm_cache_init(struct cm_cache *c, uint64_t size, uint32_t ways, uint32_t line,
                  enum cm_repl repl, uint64_t seed)
{
	uint64_t lines;

	if (!is_pow2(line) || !ways || size % ((uint64_t)ways * line))
		return -1;
	lines = size / line;
	c->sets = (uint32_t)(lines / ways);
	if (!is_pow2(c->sets))
		return -1;
	c->ways = ways;
	c->line_shift = log2u(line);
	c->repl = repl;
	c->rng = seed ? seed : 0x9E3779B97F4A7C15ull;
	c->clock = 0;
	c->tag = calloc(lines, sizeof(*c->tag));
	c->stamp = calloc(lines, sizeof(*c->stamp));
	c->owner = calloc(lines, 1);
	c->dirty = calloc(lines, 1);
	if (!c->tag || !c->stamp || !c->owner || !c->dirty) {
		cm_cache_free(c);
		return -1;
	}
	return 0;
}

void cm_cache_free(struct cm_cache *c)
{
	free(c->tag);
	free(c->stamp);
	free(c->owner);
	free(c->dirty);
	c->tag = c->stamp = NULL;
	c->owner = c->dirty = NULL;
}

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* The way to fill in a set: an invalid way first, else by the policy. */
static uint32_t victim_way(struct cm_cache *c, uint64_t base)
{
	uint32_t w, best = 0;

	for (w = 0; w < c->ways; w++) {
		if (!c->tag[base + w])
			return w;
	}
	if (c->repl == CM_RANDOM)
		return (uint32_t)(xorshift64(&c->rng) % c->ways);
	for (w = 1; w < c->ways; w++) {
		if (c->stamp[base + w] < c->stamp[base + best])
			best = w;
	}
	return best;
}

/* The tag of pa's line, its set's first slot, and whether (and in which way) it is present. */
static bool find(const struct cm_cache *c, uint64_t pa, uint64_t *key, uint64_t *base,
                 uint32_t *way)
{
	uint64_t laddr = pa >> c->line_shift;
	uint32_t w;

	*key = (laddr << 1) | 1;
	*base = (laddr & (c->sets - 1)) * c->ways;
	for (w = 0; w < c->ways; w++) {
		if (c->tag[*base + w] == *key) {
			*way = w;
			return true;
		}
	}
	return false;
}

struct cm_result cm_cache_access(struct cm_cache *c, uint64_t pa, uint8_t owner, bool store)
{
	struct cm_result r = { 0 };
	uint64_t key, base;
	uint32_t w;

	if (find(c, pa, &key, &base, &w)) {
		c->stamp[base + w] = ++c->clock;
		c->dirty[base + w] |= store;
		r.hit = true;
		return r;
	}
	w = victim_way(c, base);
	if (c->tag[base + w]) {
		r.evicted = true;
		r.writeback = c->dirty[base + w];
		r.victim_owner = c->owner[base + w];
		r.victim_addr = (c->tag[base + w] >> 1) << c->line_shift;
	}
	c->tag[base + w] = key;
	c->stamp[base + w] = ++c->clock;
	c->owner[base + w] = owner;
	c->dirty[base + w] = store;
	return r;
}

bool cm_cache_mark_dirty(struct cm_cache *c, uint64_t pa)
{
	uint64_t key, base;
	uint32_t w;

	if (!find(c, pa, &key, &base, &w))
		return false;
	c->dirty[base + w] = 1;
	return true;
}

struct cm_result cm_cache_setway(struct cm_cache *c, uint32_t set, uint32_t way, bool invalidate)
{
	struct cm_result r = { 0 };
	uint64_t i;

	if (set >= c->sets || way >= c->ways)
		return r;
	i = (uint64_t)set * c->ways + way;
	if (!c->tag[i])
		return r;
	r.writeback = c->dirty[i];
	r.victim_owner = c->owner[i];
	r.victim_addr = (c->tag[i] >> 1) << c->line_shift;
	c->dirty[i] = 0;
	if (invalidate) {
		r.evicted = true;
		c->tag[i] = 0;
	}
	return r;
}

int cm_dram_init(struct cm_dram *d, const uint32_t *bits, uint32_t nbits, uint32_t row_shift)
{
	uint32_t i;

	if (nbits > CM_MAX_BANK_BITS || row_shift >= 64)
		return -1;
	for (i = 0; i < nbits; i++) {
		if (bits[i] >= row_shift)
			return -1;
		d->bits[i] = bits[i];
	}
	d->nbits = nbits;
	d->row_shift = row_shift;
	d->banks = calloc((size_t)1 << nbits, sizeof(*d->banks));
	if (!d->banks)
		return -1;
	d->enabled = true;
	return 0;
}

void cm_dram_free(struct cm_dram *d)
{
	free(d->banks);
	d->banks = NULL;
	d->enabled = false;
}

uint32_t cm_dram_bank(const struct cm_dram *d, uint64_t pa)
{
	uint32_t i, bank = 0;

	for (i = 0; i < d->nbits; i++)
		bank |= (uint32_t)((pa >> d->bits[i]) & 1) << i;
	return bank;
}

enum cm_row cm_dram_access(struct cm_dram *d, uint64_t pa, uint8_t owner, uint8_t *opener)
{
	struct cm_bank *b = &d->banks[cm_dram_bank(d, pa)];
	uint64_t row = pa >> d->row_shift;
	enum cm_row r = CM_ROW_CONFLICT;

	if (!b->open)
		r = CM_ROW_EMPTY;
	else if (b->row == row)
		r = CM_ROW_HIT;
	*opener = b->opener;
	b->open = true;
	b->row = row;
	b->opener = owner;
	return r;
}
