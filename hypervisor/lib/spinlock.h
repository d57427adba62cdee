/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ticket-free test-and-set spinlock on compiler atomics (acquire/release).
 * Each lock has a rank (lib/lock_rank.h): SPINLOCK_INIT_RANK(rank) for a
 * static one, spin_set_rank(lock, rank) for one inside a structure. With
 * BULKHEAD_LOCK_CHECK (make DEBUG=1; host tests) every acquisition is
 * checked against the ranks the CPU holds (lib/spinlock.c); without it the
 * rank is not stored and the code is the same as with no ranks at all.
 */
#ifndef LIB_SPINLOCK_H
#define LIB_SPINLOCK_H

#include "lib/lock_rank.h"
#include "lib/types.h"

typedef struct {
	volatile u32 locked;
#ifdef BULKHEAD_LOCK_CHECK
	u32 rank;
#endif
} spinlock_t;

#ifdef BULKHEAD_LOCK_CHECK
#define SPINLOCK_INIT_RANK(r)            \
	{                                \
		.locked = 0, .rank = (r) \
	}
/* This CPU takes (got) / releases a lock of the rank: panics, naming both
 * ranks, on one taken while a lock of an equal or higher rank is held, or
 * with no rank. */
void spin_check_acquire(u32 rank);
void spin_check_release(u32 rank);
/* At boot: the function giving the calling CPU's index (before it is set:
 * CPU 0). */
void spin_check_set_cpu(u32 (*cpu)(void));
#define SPIN_RANK_OF(l) ((l)->rank)
#else
#define SPINLOCK_INIT_RANK(r) \
	{                     \
		.locked = 0   \
	}
#define spin_check_acquire(rank) ((void)0)
#define spin_check_release(rank) ((void)0)
#define spin_check_set_cpu(fn)   ((void)0)
#define SPIN_RANK_OF(l)          0
#endif

/* Gives a lock inside a zero-initialised structure its rank (at init,
 * before it is first taken); nothing to do without the check. */
static inline void spin_set_rank(spinlock_t *l, enum lock_rank r)
{
#ifdef BULKHEAD_LOCK_CHECK
	l->rank = r;
#else
	(void)l;
	(void)r;
#endif
}

static inline void spin_lock(spinlock_t *l)
{
	while (__atomic_exchange_n(&l->locked, 1u, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			;
	spin_check_acquire(SPIN_RANK_OF(l));
}

static inline bool spin_trylock(spinlock_t *l)
{
	bool got = __atomic_exchange_n(&l->locked, 1u, __ATOMIC_ACQUIRE) == 0;

	if (got)
		spin_check_acquire(SPIN_RANK_OF(l));
	return got;
}

/* One attempt, no retry even when the exclusive store fails spuriously:
 * for fast paths that have a slower path to decline to. (Written out: the
 * compiler's weak compare-and-swap costs two more instructions.) */
static inline bool spin_trylock_once(spinlock_t *l)
{
#ifdef __aarch64__
	u32 r;

	__asm__ volatile("ldaxr %w[r], %[m]\n\t"
	                 "cbnz %w[r], 1f\n\t"
	                 "stxr %w[r], %w[one], %[m]\n"
	                 "1:"
	                 : [r] "=&r"(r), [m] "+Q"(l->locked)
	                 : [one] "r"(1u)
	                 : "memory");
	if (r == 0)
		spin_check_acquire(SPIN_RANK_OF(l));
	return r == 0;
#else /* the host unit tests */
	u32 unlocked = 0;
	bool got = __atomic_compare_exchange_n(&l->locked, &unlocked, 1u, true, __ATOMIC_ACQUIRE,
	                                       __ATOMIC_RELAXED);

	if (got)
		spin_check_acquire(SPIN_RANK_OF(l));
	return got;
#endif
}

static inline void spin_unlock(spinlock_t *l)
{
	spin_check_release(SPIN_RANK_OF(l));
	__atomic_store_n(&l->locked, 0u, __ATOMIC_RELEASE);
}

#define READ_ONCE(x)     (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#endif
