/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/linering.h"

#define RING_MASK (LINERING_SIZE - 1u)

void linering_reset(struct linering *r)
{
	r->head = 0;
	r->tail = 0;
	r->dropped_lines = 0;
	r->dropped_bytes = 0;
}

bool linering_put(struct linering *r, const char *text, u32 len, bool open)
{
	u32 head = r->head;
	u32 tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

	if (len > LINERING_LINE_MAX)
		len = LINERING_LINE_MAX;
	if (LINERING_SIZE - (head - tail) < len + LINERING_HDR) {
		r->dropped_lines++;
		r->dropped_bytes += len;
		return false;
	}
	r->buf[head & RING_MASK] = (char)len;
	r->buf[(head + 1u) & RING_MASK] = (char)open;
	for (u32 i = 0; i < len; i++)
		r->buf[(head + LINERING_HDR + i) & RING_MASK] = text[i];
	__atomic_store_n(&r->head, head + LINERING_HDR + len, __ATOMIC_RELEASE);
	return true;
}

bool linering_pending(const struct linering *r)
{
	return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
}

bool linering_get(struct linering *r, char *out, u32 *len, bool *open)
{
	u32 head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	u32 tail = r->tail;
	u32 n;

	if (head == tail)
		return false;
	n = (u8)r->buf[tail & RING_MASK];
	if (head - tail > LINERING_SIZE || n + LINERING_HDR > head - tail) {
		__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
		return false;
	}
	for (u32 i = 0; i < n; i++)
		out[i] = r->buf[(tail + LINERING_HDR + i) & RING_MASK];
	*open = r->buf[(tail + 1u) & RING_MASK] != 0;
	__atomic_store_n(&r->tail, tail + LINERING_HDR + n, __ATOMIC_RELEASE);
	*len = n;
	return true;
}
