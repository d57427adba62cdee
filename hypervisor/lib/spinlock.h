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

static inline void spin_unlock(spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0u, __ATOMIC_RELEASE);
}

#define READ_ONCE(x)     (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#endif
