// SPDX-License-Identifier: GPL-2.0-or-later
/* The cache and DRAM model (model.h). */
#include "model.h"

#include <stdlib.h>
#include <string.h>

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

/* ---- the timing model ------------------------------------------------------ */

int cm_timing_init(struct cm_timing *t, const struct cm_timing_params *p, uint32_t ncpus)
{
	memset(t, 0, sizeof(*t));
	if (!ncpus || ncpus > CM_MAX_CPUS || !p->line_ps || p->window_ps < p->line_ps)
		return -1;
	t->p = *p;
	t->ncpus = ncpus;
	t->capacity = p->window_ps / p->line_ps;
	t->lines = calloc((size_t)CM_TIME_RING * ncpus, sizeof(*t->lines));
	t->fills = calloc((size_t)CM_TIME_RING * ncpus, sizeof(*t->fills));
	t->pfills = calloc((size_t)CM_TIME_RING * ncpus, sizeof(*t->pfills));
	if (!t->lines || !t->fills || !t->pfills) {
		cm_timing_free(t);
		return -1;
	}
	return 0;
}

void cm_timing_free(struct cm_timing *t)
{
	free(t->lines);
	free(t->fills);
	free(t->pfills);
	t->lines = t->fills = t->pfills = NULL;
}

uint64_t cm_time_wait_ps(const struct cm_timing *t, uint64_t lines)
{
	/* M/D/1: a line waits line_ps * rho / (2 (1 - rho)) on average, rho =
	 * lines / capacity, saturating at CM_TIME_RHO_MAX % */
	uint64_t k = t->capacity, cap = k * CM_TIME_RHO_MAX / 100;
	uint64_t l = lines < cap ? lines : cap;

	if (k <= l)
		return 0; /* a capacity of one line: no queue modelled */
	return t->p.line_ps * l / (2 * (k - l));
}

static void charge(struct cm_time_cpu *c, uint64_t ps)
{
	c->clock += ps;
	if (c->in_phase)
		c->phase_ps += ps;
}

uint64_t cm_time_fill_wait_ps(const struct cm_timing *t, uint64_t lines, uint64_t mine,
                              uint32_t others)
{
	/* a finite population: at most CM_TIME_OUTSTANDING lines of each other
	 * CPU can be ahead of one of this CPU's fills */
	uint64_t wait = cm_time_wait_ps(t, lines);
	uint64_t ahead = lines - mine, most = (uint64_t)CM_TIME_OUTSTANDING * others;
	uint64_t cap = t->p.line_ps * (ahead < most ? ahead : most);

	return wait < cap ? wait : cap;
}

static void settle(struct cm_timing *t, uint64_t w)
{
	size_t base = (size_t)(w % CM_TIME_RING) * t->ncpus;
	uint32_t *ln = &t->lines[base], *fl = &t->fills[base], *pf = &t->pfills[base];
	uint64_t total = 0;
	uint32_t i, active = 0;

	for (i = 0; i < t->ncpus; i++) {
		total += ln[i];
		active += ln[i] != 0;
	}
	if (total) {
		t->windows++;
		if (total > t->busiest)
			t->busiest = total;
		for (i = 0; i < t->ncpus; i++) {
			struct cm_time_cpu *c = &t->cpu[i];
			uint64_t wait =
			    cm_time_fill_wait_ps(t, total, ln[i], active - (ln[i] != 0));
			uint64_t q = t->online ? 0 : fl[i] * wait;
			uint64_t pq = t->online ? 0 : pf[i] * wait;

			/* not on the clock (windows are keyed to the clock without
			 * waits: host order cannot move a line to another window);
			 * the wait of lines made in the phase counts to the phase,
			 * wherever the CPU is now */
			c->queue += q;
			c->phase_ps += pq;
			c->phase_queue += pq;
			ln[i] = fl[i] = pf[i] = 0;
		}
		t->pending -= total;
	}
	t->next = w + 1;
}

/* Settles the windows every running CPU's clock has passed. */
static void settle_passed(struct cm_timing *t)
{
	uint64_t horizon = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < t->ncpus; i++) {
		if (t->cpu[i].busy && t->cpu[i].clock / t->p.window_ps < horizon)
			horizon = t->cpu[i].clock / t->p.window_ps;
	}
	if (horizon == UINT64_MAX)
		return; /* nobody runs: settled when someone does, or at the end */
	if (t->online) {
		if (!horizon)
			return;
		horizon--; /* the previous window is still read (online_wait) */
	}
	while (t->next < horizon) {
		if (!t->pending) {
			t->next = horizon;
			break;
		}
		settle(t, t->next);
	}
}

void cm_time_run(struct cm_timing *t, uint32_t cpu, uint64_t n)
{
	struct cm_time_cpu *c;

	if (cpu >= t->ncpus)
		return;
	c = &t->cpu[cpu];
	if (!c->busy) {
		/* it waited: until the slowest running CPU's time (they ran
		 * meanwhile), or the latest time any CPU reached if none runs */
		uint64_t lo = UINT64_MAX, hi = 0;
		uint32_t i;

		for (i = 0; i < t->ncpus; i++) {
			if (i == cpu || !t->cpu[i].started)
				continue;
			if (t->cpu[i].busy && t->cpu[i].clock < lo)
				lo = t->cpu[i].clock;
			if (t->cpu[i].clock > hi)
				hi = t->cpu[i].clock;
		}
		if (lo == UINT64_MAX)
			lo = hi;
		if (lo > c->clock) {
			c->waited += lo - c->clock;
			charge(c, lo - c->clock);
		}
		c->busy = c->started = true;
	}
	c->insns += n;
	charge(c, n * t->p.cpi_ps);
	if (c->in_phase)
		c->phase_insns += n;
	settle_passed(t);
}

void cm_time_stall(struct cm_timing *t, uint32_t cpu, uint64_t ps)
{
	if (cpu >= t->ncpus)
		return;
	t->cpu[cpu].stall += ps;
	if (t->cpu[cpu].in_phase)
		t->cpu[cpu].phase_stall += ps;
	charge(&t->cpu[cpu], ps);
}

/* Lines in window w (0 if it is settled or not yet open): all CPUs', and cpu's. */
static uint64_t window_lines(const struct cm_timing *t, uint64_t w, uint32_t cpu, uint64_t *mine,
                             uint32_t *others)
{
	size_t base = (size_t)(w % CM_TIME_RING) * t->ncpus;
	uint64_t total = 0;
	uint32_t i;

	*mine = 0;
	if (w < t->next || w >= t->next + CM_TIME_RING)
		return 0;
	for (i = 0; i < t->ncpus; i++) {
		total += t->lines[base + i];
		if (i == cpu)
			*mine = t->lines[base + i];
		else if (t->lines[base + i])
			(*others)++;
	}
	return total;
}

/* Timing mode: the queueing wait of a fill of cpu at modelled time `at`,
 * from the lines of the window_ps before it (this window's so far and the
 * previous window's share of the span). */
static uint64_t online_wait(const struct cm_timing *t, uint32_t cpu, uint64_t at)
{
	uint64_t w = at / t->p.window_ps, into = at % t->p.window_ps;
	uint64_t mine, prev_mine = 0, lines, prev = 0;
	uint32_t others = 0, prev_others = 0;

	lines = window_lines(t, w, cpu, &mine, &others);
	if (w) {
		uint64_t keep = t->p.window_ps - into;

		prev =
		    window_lines(t, w - 1, cpu, &prev_mine, &prev_others) * keep / t->p.window_ps;
		prev_mine = prev_mine * keep / t->p.window_ps;
	}
	lines += prev;
	mine += prev_mine;
	if (prev_others > others)
		others = prev_others;
	if (!lines || mine > lines)
		return 0;
	return cm_time_fill_wait_ps(t, lines, mine, others);
}

void cm_time_dram(struct cm_timing *t, uint32_t cpu, enum cm_row row, bool fill)
{
	struct cm_time_cpu *c;
	uint64_t w;
	size_t slot;

	if (cpu >= t->ncpus)
		return;
	c = &t->cpu[cpu];
	w = c->clock / t->p.window_ps;
	if (w < t->next) {
		w = t->next; /* behind the settled windows: in the oldest open one */
		t->late++;
	}
	while (w >= t->next + CM_TIME_RING) {
		/* too far ahead of the slowest running CPU: settled early */
		if (!t->pending) {
			t->next = w - CM_TIME_RING + 1;
			break;
		}
		settle(t, t->next);
		t->forced++;
	}
	slot = (size_t)(w % CM_TIME_RING) * t->ncpus + cpu;
	t->lines[slot]++;
	t->fills[slot] += fill;
	t->pfills[slot] += fill && c->in_phase;
	t->pending++;
	c->lines++;
	if (c->in_phase)
		c->phase_lines++;
	if (fill)
		cm_time_stall(t, cpu, t->p.row_ps[row]);
	if (fill && t->online) {
		uint64_t q = online_wait(t, cpu, c->clock);

		c->online += q;
		if (c->in_phase)
			c->phase_queue += q;
		charge(c, q);
	}
	settle_passed(t);
}

void cm_time_wait(struct cm_timing *t, uint32_t cpu)
{
	if (cpu < t->ncpus)
		t->cpu[cpu].busy = false;
}

uint64_t cm_time_slowest(const struct cm_timing *t)
{
	uint64_t lo = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < t->ncpus; i++) {
		if (t->cpu[i].busy && t->cpu[i].clock < lo)
			lo = t->cpu[i].clock;
	}
	return lo;
}

void cm_time_phase(struct cm_timing *t, uint32_t cpu, bool in)
{
	if (cpu < t->ncpus)
		t->cpu[cpu].in_phase = in;
}

void cm_time_settle_all(struct cm_timing *t)
{
	while (t->pending)
		settle(t, t->next);
}
