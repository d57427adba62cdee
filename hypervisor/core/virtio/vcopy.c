/* SPDX-License-Identifier: Apache-2.0 */
#include "core/virtio/vcopy.h"

typedef u64 __attribute__((may_alias)) u64_alias;

/* Four words a step (two LDP/STP pairs; shifted together when src sits off
 * the word by another amount than dst): a 1448-byte TCP segment is 45
 * steps, where a word a step took 181 (bench/virtio_exits.py --tcp). */
void vcopy(void *dst, const void *src, u64 n)
{
	u8 *d = dst;
	const u8 *s = src;

	if (n >= 16) {
		u64 done;
		u32 sh;
		const u64_alias *w;
		u64_alias *o;

		for (; (uintptr_t)d & 7; n--)
			*d++ = *s++;
		sh = (u32)((uintptr_t)s & 7) * 8;
		w = (const u64_alias *)((uintptr_t)s & ~(uintptr_t)7);
		o = (u64_alias *)(void *)d;
		done = n & ~(u64)7;
		if (!sh) {
			for (; n >= 32; n -= 32, w += 4, o += 4) {
				u64 a = w[0], b = w[1], c = w[2], e = w[3];

				o[0] = a;
				o[1] = b;
				o[2] = c;
				o[3] = e;
			}
			for (; n >= 8; n -= 8)
				*o++ = *w++;
		} else {
			/* src's own aligned words shifted together (-mstrict-align:
			 * no unaligned access; each word read holds a byte of src) */
			u32 rs = 64 - sh;
			u64 lo = *w++;

			for (; n >= 32; n -= 32, w += 4, o += 4) {
				u64 a = w[0], b = w[1], c = w[2], e = w[3];

				o[0] = lo >> sh | a << rs;
				o[1] = a >> sh | b << rs;
				o[2] = b >> sh | c << rs;
				o[3] = c >> sh | e << rs;
				lo = e;
			}
			for (; n >= 8; n -= 8) {
				u64 hi = *w++;

				*o++ = lo >> sh | hi << rs;
				lo = hi;
			}
		}
		d += done;
		s += done;
	}
	while (n--)
		*d++ = *s++;
}
