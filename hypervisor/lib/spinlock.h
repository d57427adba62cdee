/* SPDX-License-Identifier: Apache-2.0 */
/* Ticket-free test-and-set spinlock on compiler atomics (acquire/release). */
#ifndef LIB_SPINLOCK_H
#define LIB_SPINLOCK_H

#include "lib/types.h"

typedef struct {
	volatile u32 locked;
} spinlock_t;

#define SPINLOCK_INIT \
	{             \
		0     \
	}

static inline void spin_lock(spinlock_t *l)
{
	while (__atomic_exchange_n(&l->locked, 1u, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			;
}

static inline bool spin_trylock(spinlock_t *l)
{
	return __atomic_exchange_n(&l->locked, 1u, __ATOMIC_ACQUIRE) == 0;
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
	return r == 0;
#else /* the host unit tests */
	u32 unlocked = 0;

	return __atomic_compare_exchange_n(&l->locked, &unlocked, 1u, true, __ATOMIC_ACQUIRE,
	                                   __ATOMIC_RELAXED);
#endif
}

static inline void spin_unlock(spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0u, __ATOMIC_RELEASE);
}

#define READ_ONCE(x)     (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#endif
