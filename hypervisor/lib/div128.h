/* SPDX-License-Identifier: Apache-2.0 */
/*
 * 128-bit unsigned division without libgcc's __udivti3/__umodti3 (2.5 KiB
 * of .text the hypervisor does not need: every division of 128-bit values
 * is on a cold path, set-up, hypercalls and log lines). Shift and subtract,
 * at most 128 steps; multiplication stays the compiler's (MUL/UMULH).
 */
#ifndef LIB_DIV128_H
#define LIB_DIV128_H

#include "lib/types.h"

typedef unsigned __int128 u128;

/* n / d, and n % d in *rem when rem is not NULL; d = 0 gives 0 (and rem n). */
u128 div128(u128 n, u128 d, u128 *rem);

/* a * b / d as 64 bits, the quotient saturated at ~0 (d = 0 gives ~0). */
u64 muldiv64(u64 a, u64 b, u64 d);

#endif
