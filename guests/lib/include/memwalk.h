/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory kernels of the benchmark guests (bandwidth, interferer, stride):
 * walk `lines` 64-byte lines starting at p, one 8-byte access per line, the
 * accesses stride_words u64 words apart (MEMWALK_LINE_WORDS: consecutive
 * lines), in address order. The accesses are volatile and the loops
 * unrolled (8 lines per iteration, 4 for rmw), so every access is done and
 * the loop overhead stays small.
 */
#ifndef GUEST_MEMWALK_H
#define GUEST_MEMWALK_H

#include "bench.h"
#include "types.h"

#define MEMWALK_LINE_WORDS (BENCH_LINE / 8) /* stride_words of consecutive lines */

/* Load each line's word; returns the sum of the values read. */
u64 memwalk_read(const volatile u64 *p, u64 lines, u64 stride_words);
/* Store val into each line's word. */
void memwalk_write(volatile u64 *p, u64 lines, u64 stride_words, u64 val);
/* Store first, first + 1, ... into the lines' words, in walking order. */
void memwalk_write_seq(volatile u64 *p, u64 lines, u64 stride_words, u64 first);
/* Add 1 to each line's word (load, add, store). */
void memwalk_rmw(volatile u64 *p, u64 lines, u64 stride_words);

#endif
