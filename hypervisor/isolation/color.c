/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Color-compliant address arithmetic (see color.h).
 *
 * Searching upwards from addr for a = (a & mask) == value: let h be the
 * highest masked bit where addr disagrees with value. Bits above h already
 * agree, so the answer keeps them if it can:
 *  - addr has 0 at h (value wants 1): set bit h, clear every free bit
 *    below it and write value into the masked bits below it;
 *  - addr has 1 at h (value wants 0): no address with these upper bits
 *    works; the free bits above h, read as one counter that skips the
 *    masked bits, must be incremented. Setting all masked bits and all bits
 *    up to h before adding 1 makes the carry run through them; clearing
 *    the masked bits again and inserting value gives the answer.
 * Searching downwards mirrors this: clear bit h and fill the free bits
 * below with ones, or decrement the free-bit counter above h (clearing the
 * masked bits first makes the borrow run through them).
 */
#include "isolation/color.h"

#include "lib/bits.h"

/* Index of the highest set bit of x (x != 0). */
static inline unsigned color_msb(u64 x)
{
	return 63u - (unsigned)__builtin_clzll(x);
}

/* Bits 0..h inclusive. */
static inline u64 color_upto(unsigned h)
{
	return h >= 63 ? ~0ull : (2ull << h) - 1;
}

u64 color_next(u64 mask, u64 value, u64 addr)
{
	u64 diff = (addr ^ value) & mask;
	unsigned h;
	u64 low;

	if (!diff)
		return addr;
	h = color_msb(diff);
	low = color_upto(h);
	if (value & BIT(h)) {
		/* raise bit h; lowest possible bits below it */
		return (addr & ~low) | BIT(h) | (value & (low >> 1));
	} else {
		u64 t = addr | mask | low;

		if (t == ~0ull)
			return COLOR_NONE; /* the counter would overflow */
		return ((t + 1) & ~mask) | value;
	}
}

u64 color_prev(u64 mask, u64 value, u64 addr)
{
	u64 diff = (addr ^ value) & mask;
	unsigned h;
	u64 low;

	if (!diff)
		return addr;
	h = color_msb(diff);
	low = color_upto(h);
	if (!(value & BIT(h))) {
		/* drop bit h; highest possible bits below it */
		return (addr & ~low) | (~mask & (low >> 1)) | (value & (low >> 1));
	} else {
		u64 t = addr & ~mask & ~low;

		if (!t)
			return COLOR_NONE; /* the counter would underflow */
		return ((t - 1) & ~mask) | value;
	}
}

u64 color_set_next(const struct cfg_color *c, u64 addr)
{
	u64 best = COLOR_NONE;

	for (u32 i = 0; i < c->nvalues; i++) {
		u64 a = color_next(c->mask, c->values[i], addr);

		if (a < best)
			best = a;
	}
	return best;
}

u64 color_set_prev(const struct cfg_color *c, u64 addr)
{
	u64 best = COLOR_NONE;

	for (u32 i = 0; i < c->nvalues; i++) {
		u64 a = color_prev(c->mask, c->values[i], addr);

		if (a != COLOR_NONE && (best == COLOR_NONE || a > best))
			best = a;
	}
	return best;
}

bool color_set_match(const struct cfg_color *c, u64 addr)
{
	for (u32 i = 0; i < c->nvalues; i++)
		if ((addr & c->mask) == c->values[i])
			return true;
	return false;
}

const char *color_rt_build(struct color_rt_set *s, u64 llc, u64 bank, u64 llc_mask, u64 bank_mask)
{
	u64 all_l = color_all(llc_mask), all_b = color_all(bank_mask), lm, bm;

	if (!llc_mask && !bank_mask)
		return "the platform declares no coloring";
	llc = llc ? llc : all_l;
	bank = bank ? bank : all_b;
	if ((llc & ~all_l) || (bank & ~all_b))
		return "colors beyond the platform's";
	lm = llc == all_l ? 0 : llc_mask;
	bm = bank == all_b ? 0 : bank_mask;
	s->set = (struct cfg_color){ .mask = lm | bm, .nvalues = 0, .values = s->values };
	if (!s->set.mask)
		return "every color: a set must leave some out";
	for (unsigned c = 0; c < 64; c++) {
		if (lm ? !(llc & BIT(c)) : c > 0)
			continue;
		for (unsigned b = 0; b < 64; b++) {
			u64 v;

			if (bm ? !(bank & BIT(b)) : b > 0)
				continue;
			v = color_deposit(c, lm) | color_deposit(b, bm);
			if (color_extract(v, lm) != (lm ? c : 0) ||
			    color_extract(v, bm) != (bm ? b : 0))
				continue; /* disagree on a bit of both kinds */
			if (s->set.nvalues == COLOR_RT_MAX_PATTERNS)
				return "too many LLC x bank combinations";
			s->values[s->set.nvalues++] = v;
		}
	}
	return s->set.nvalues ? NULL : "the LLC and bank colors disagree on their common bits";
}

bool color_sets_meet(const struct cfg_color *a, const struct cfg_color *b)
{
	u64 common = a->mask & b->mask;

	for (u32 i = 0; i < a->nvalues; i++)
		for (u32 j = 0; j < b->nvalues; j++)
			if (!((a->values[i] ^ b->values[j]) & common))
				return true;
	return false;
}

/* A decimal color number 0-63 at *s. */
static bool color_parse_num(const char **s, unsigned *out)
{
	unsigned v = 0, n = 0;

	while (**s >= '0' && **s <= '9' && n < 3) {
		v = v * 10 + (unsigned)(**s - '0');
		(*s)++;
		n++;
	}
	*out = v;
	return n > 0 && v < 64;
}

bool color_parse_list(const char **s, u64 *bitmap)
{
	u64 out = 0;

	for (;;) {
		unsigned lo, hi;

		if (!color_parse_num(s, &lo))
			return false;
		hi = lo;
		if (**s == '-') {
			(*s)++;
			if (!color_parse_num(s, &hi) || hi < lo)
				return false;
		}
		for (unsigned c = lo; c <= hi; c++)
			out |= BIT(c);
		if (**s != ',')
			break;
		(*s)++;
	}
	if (**s && **s != ' ')
		return false;
	*bitmap = out;
	return true;
}

u64 color_extract(u64 x, u64 mask)
{
	return bits_extract(x, mask);
}

u64 color_deposit(u64 n, u64 mask)
{
	u64 out = 0;

	for (unsigned k = 0; mask && k < 64; k++, mask &= mask - 1)
		if (n & BIT(k))
			out |= mask & -mask;
	return out;
}

u64 color_all(u64 bits)
{
	unsigned n = (unsigned)__builtin_popcountll(bits);

	if (n >= 6)
		return ~0ull;
	return BIT(1u << n) - 1;
}

/* Appends decimal v at buf[*pos] while it fits (keeping room for the NUL). */
static void color_put_num(char *buf, size_t size, size_t *pos, unsigned v)
{
	char tmp[4];
	unsigned n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < sizeof(tmp));
	while (n--) {
		if (*pos + 1 < size)
			buf[*pos] = tmp[n];
		(*pos)++;
	}
}

static void color_put_char(char *buf, size_t size, size_t *pos, char ch)
{
	if (*pos + 1 < size)
		buf[*pos] = ch;
	(*pos)++;
}

size_t color_format_list(char *buf, size_t size, u64 bitmap)
{
	size_t pos = 0;
	bool first = true;

	if (!bitmap) {
		for (const char *s = "none"; *s; s++)
			color_put_char(buf, size, &pos, *s);
	}
	for (unsigned c = 0; c < 64; c++) {
		unsigned end = c;

		if (!(bitmap & BIT(c)))
			continue;
		while (end + 1 < 64 && (bitmap & BIT(end + 1)))
			end++;
		if (!first)
			color_put_char(buf, size, &pos, ',');
		first = false;
		color_put_num(buf, size, &pos, c);
		if (end > c) {
			color_put_char(buf, size, &pos, '-');
			color_put_num(buf, size, &pos, end);
		}
		c = end;
	}
	if (size)
		buf[pos < size ? pos : size - 1] = '\0';
	return pos;
}
