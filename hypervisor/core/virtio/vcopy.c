/* SPDX-License-Identifier: Apache-2.0 */
#include "core/virtio/vcopy.h"

typedef u64 __attribute__((may_alias)) u64_alias;

void vcopy(void *dst, const void *src, u64 n)
{
	u8 *d = dst;
	const u8 *s = src;

	if (n >= 16) {
		u32 sh;
		const u64_alias *w;

		for (; (uintptr_t)d & 7; n--)
			*d++ = *s++;
		sh = (u32)((uintptr_t)s & 7) * 8;
		w = (const u64_alias *)((uintptr_t)s & ~(uintptr_t)7);
		if (!sh) {
			for (; n >= 8; n -= 8, d += 8, s += 8)
				*(u64_alias *)d = *w++;
		} else {
			/* src's own aligned words shifted together (-mstrict-align:
			 * no unaligned access; each word read holds a byte of src) */
			u64 lo = *w++;

			for (; n >= 8; n -= 8, d += 8, s += 8) {
				u64 hi = *w++;

				*(u64_alias *)d = lo >> sh | hi << (64 - sh);
				lo = hi;
			}
		}
	}
	while (n--)
		*d++ = *s++;
}
