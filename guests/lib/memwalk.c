// SPDX-License-Identifier: Apache-2.0
/*
 * Memory kernels of the benchmark guests (see memwalk.h). Each exported
 * function calls its inline kernel with a constant stride for consecutive
 * lines, so that common case compiles to immediate offsets.
 */
#include "memwalk.h"

static inline u64 read_lines(const volatile u64 *p, u64 lines, u64 w)
{
	u64 sum = 0, i;

	for (i = 0; i + 8 <= lines; i += 8, p += 8 * w) {
		sum += p[0 * w];
		sum += p[1 * w];
		sum += p[2 * w];
		sum += p[3 * w];
		sum += p[4 * w];
		sum += p[5 * w];
		sum += p[6 * w];
		sum += p[7 * w];
	}
	for (; i < lines; i++, p += w)
		sum += p[0];
	return sum;
}

/* Line k of the walk gets val + k * inc. */
static inline void write_lines(volatile u64 *p, u64 lines, u64 w, u64 val, u64 inc)
{
	u64 i;

	for (i = 0; i + 8 <= lines; i += 8, p += 8 * w, val += 8 * inc) {
		p[0 * w] = val;
		p[1 * w] = val + 1 * inc;
		p[2 * w] = val + 2 * inc;
		p[3 * w] = val + 3 * inc;
		p[4 * w] = val + 4 * inc;
		p[5 * w] = val + 5 * inc;
		p[6 * w] = val + 6 * inc;
		p[7 * w] = val + 7 * inc;
	}
	for (; i < lines; i++, p += w, val += inc)
		p[0] = val;
}

static inline void rmw_lines(volatile u64 *p, u64 lines, u64 w)
{
	u64 i;

	for (i = 0; i + 4 <= lines; i += 4, p += 4 * w) {
		p[0 * w] += 1;
		p[1 * w] += 1;
		p[2 * w] += 1;
		p[3 * w] += 1;
	}
	for (; i < lines; i++, p += w)
		p[0] += 1;
}

u64 memwalk_read(const volatile u64 *p, u64 lines, u64 stride_words)
{
	if (stride_words == MEMWALK_LINE_WORDS)
		return read_lines(p, lines, MEMWALK_LINE_WORDS);
	return read_lines(p, lines, stride_words);
}

void memwalk_write(volatile u64 *p, u64 lines, u64 stride_words, u64 val)
{
	if (stride_words == MEMWALK_LINE_WORDS)
		write_lines(p, lines, MEMWALK_LINE_WORDS, val, 0);
	else
		write_lines(p, lines, stride_words, val, 0);
}

void memwalk_write_seq(volatile u64 *p, u64 lines, u64 stride_words, u64 first)
{
	if (stride_words == MEMWALK_LINE_WORDS)
		write_lines(p, lines, MEMWALK_LINE_WORDS, first, 1);
	else
		write_lines(p, lines, stride_words, first, 1);
}

void memwalk_rmw(volatile u64 *p, u64 lines, u64 stride_words)
{
	if (stride_words == MEMWALK_LINE_WORDS)
		rmw_lines(p, lines, MEMWALK_LINE_WORDS);
	else
		rmw_lines(p, lines, stride_words);
}
