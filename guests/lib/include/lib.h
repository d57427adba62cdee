/* SPDX-License-Identifier: Apache-2.0 */
/* Small freestanding library: string functions, spinlocks, atomics. */
#ifndef GUEST_LIB_H
#define GUEST_LIB_H

#include "types.h"

void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
/* Sorts n values in place, ascending (Shell sort: a few thousand values). */
void sort_u64(u64 *a, u64 n);
int strncmp(const char *a, const char *b, size_t n);

/* Ticket-free test-and-set spinlock (LDAXR/STXR, release with STLR). */
typedef struct {
	volatile u32 locked;
} spinlock_t;

#define SPINLOCK_INIT \
	{             \
		0     \
	}

void spin_lock(spinlock_t *lock);
bool spin_trylock(spinlock_t *lock);
void spin_unlock(spinlock_t *lock);
/* Lock with IRQs masked on this vCPU; returns the previous DAIF. */
u64 spin_lock_irqsave(spinlock_t *lock);
void spin_unlock_irqrestore(spinlock_t *lock, u64 flags);

/* Atomic read-modify-write (LDAXR/STLXR); return the new value. */
u32 atomic_add32(volatile u32 *p, u32 v);
u64 atomic_add64(volatile u64 *p, u64 v);
/* Compare-and-swap; returns true if *p was old and is now new. */
bool atomic_cas32(volatile u32 *p, u32 old, u32 new_val);

static inline u32 atomic_load32(const volatile u32 *p)
{
	u32 v;

	__asm__ volatile("ldar %w0, [%1]" : "=r"(v) : "r"(p) : "memory");
	return v;
}

static inline void atomic_store32(volatile u32 *p, u32 v)
{
	__asm__ volatile("stlr %w0, [%1]" : : "rZ"(v), "r"(p) : "memory");
}

static inline u64 atomic_load64(const volatile u64 *p)
{
	u64 v;

	__asm__ volatile("ldar %x0, [%1]" : "=r"(v) : "r"(p) : "memory");
	return v;
}

static inline void atomic_store64(volatile u64 *p, u64 v)
{
	__asm__ volatile("stlr %x0, [%1]" : : "rZ"(v), "r"(p) : "memory");
}

#endif
