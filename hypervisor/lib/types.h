/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIB_TYPES_H
#define LIB_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#define ARRAY_SIZE(a)    (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a)   (((x) + ((a)-1)) & ~((__typeof__(x))(a)-1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a)-1))
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a)-1)) == 0)
#define BIT(n)           (1ull << (n))
#define GENMASK(h, l)    (((~0ull) >> (63 - (h))) & ~((1ull << (l)) - 1))
#define MIN(a, b)        ((a) < (b) ? (a) : (b))
#define MAX(a, b)        ((a) > (b) ? (a) : (b))

#define SZ_4K  0x1000ull
#define SZ_64K 0x10000ull
#define SZ_2M  0x200000ull
#define SZ_1G  0x40000000ull

#define __unused       __attribute__((unused))
#define __cold         __attribute__((cold)) /* set-up code in a hot file: built for size */
#define __noreturn     __attribute__((noreturn))
#define __aligned(n)   __attribute__((aligned(n)))
#define __section(s)   __attribute__((section(s)))
#define __printf(a, b) __attribute__((format(printf, a, b)))

#endif
