/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lock-rank check (lib/spinlock.h, built with BULKHEAD_LOCK_CHECK): per
 * CPU, the set of ranks it holds, one bit each. A lock taken while a lock of
 * an equal or higher rank is held, or with no rank, panics; the CPU's set is
 * cleared first, so that the panic's own output is not checked again.
 */
#include "lib/spinlock.h"

#ifdef BULKHEAD_LOCK_CHECK
#include "lib/log.h"

#define SPIN_CHECK_CPUS 64 /* CPUs with an index beyond are not checked */

static u32 spin_held[SPIN_CHECK_CPUS];
static u32 (*spin_cpu)(void);

void spin_check_set_cpu(u32 (*cpu)(void))
{
	spin_cpu = cpu;
}

static u32 *spin_held_here(void)
{
	u32 cpu = spin_cpu ? spin_cpu() : 0;

	return cpu < SPIN_CHECK_CPUS ? &spin_held[cpu] : NULL;
}

void spin_check_acquire(u32 rank)
{
	u32 *held = spin_held_here();
	u32 above;

	if (!held)
		return;
	above = rank < LOCK_RANK_COUNT ? *held >> rank : *held;
	if (rank == LOCK_RANK_NONE || rank >= LOCK_RANK_COUNT || above) {
		u32 was = *held;

		*held = 0;
		panic("lock order: a lock of rank %u taken holding ranks 0x%x (lib/lock_rank.h)",
		      rank, was);
	}
	*held |= 1u << rank;
}

void spin_check_release(u32 rank)
{
	u32 *held = spin_held_here();

	if (held && rank < LOCK_RANK_COUNT)
		*held &= ~(1u << rank);
}
#endif
