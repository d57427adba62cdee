/* SPDX-License-Identifier: Apache-2.0 */
/* What attack.c shares with the modes in files of their own (its.c). */
#ifndef ATTACK_ATTACK_H
#define ATTACK_ATTACK_H

#include "types.h"

#define NCPU_MAX 8

extern volatile u64 extra[NCPU_MAX]; /* a mode's own count (violations) */
extern u64 seed;

u64 rnd(u64 *state);
void garbage_access(u64 addr, u32 size, bool write, u64 val);

/* mode its (its.c): one vCPU's pass; its report line (vCPU 0, at the end) */
u64 run_its(u32 cpu, u64 end);
void its_report(void);

#endif
