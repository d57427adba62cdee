/* SPDX-License-Identifier: Apache-2.0 */
/* Fixed-width types for the Bulkhead guest runtime (freestanding). */
#ifndef GUEST_TYPES_H
#define GUEST_TYPES_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long u64;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long s64;
typedef unsigned long uptr;

#define ARRAY_SIZE(a)    (sizeof(a) / sizeof((a)[0]))
#define BIT(n)           (1ul << (n))
#define ALIGN_UP(x, a)   (((x) + (a)-1) & ~((u64)(a)-1))
#define ALIGN_DOWN(x, a) ((x) & ~((u64)(a)-1))
#define KiB(x)           ((u64)(x) << 10)
#define MiB(x)           ((u64)(x) << 20)
#define GiB(x)           ((u64)(x) << 30)

#define __noreturn     __attribute__((noreturn))
#define __weak         __attribute__((weak))
#define __unused       __attribute__((unused))
#define __aligned(x)   __attribute__((aligned(x)))
#define __printf(a, b) __attribute__((format(printf, a, b)))

#define READ_ONCE(x)     (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#endif
