/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: what a client controls in shared I/O (docs/io.md). A
 * hostile producer writes any flag, length, index and data into the slots
 * of a frame ring (guests/lib/ioring.c) between the consumer's reads, with
 * any receive buffer size; the consumer never reads or writes out of bounds
 * (AddressSanitizer, a canary after its buffer), returns 0, -1 or a length
 * within its buffer and the data area, keeps its position in the ring and
 * counts every dropped slot by kind. The I/O VM's scheduler
 * (guests/iovm/iosched.c) is driven with input-chosen weights, caps,
 * pending masks and times: it returns a pending, allowed client, or -1
 * only when no pending client is allowed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ioring.h"
#include "iosched.h"

#define NS 8

static struct ioring_slot slots[NS];
static uint8_t buf[1 + 127 * 17 + 64]; /* the largest cap below, and a canary */

static uint32_t take32(const uint8_t *d, size_t size, size_t *i)
{
	uint32_t v = 0;

	for (int k = 0; k < 4; k++)
		v = v << 8 | (*i < size ? d[(*i)++] : 0);
	return v;
}

static void fuzz_ring(const uint8_t *d, size_t size, size_t *i)
{
	static const uint32_t flags[] = { IORING_EMPTY, IORING_FULL, 0xdeadbeef, IORING_FULL };
	struct ioring p, c;
	uint64_t frames = 0;

	if (!ioring_attach(&p, slots, NS) || !ioring_attach(&c, slots, NS))
		abort();
	ioring_reset(&p);
	while (*i + 1 < size && d[*i] != 0xff) {
		uint8_t op = d[(*i)++];

		if (op < 96) { /* a hostile raw slot */
			uint32_t flag = op & 4 ? take32(d, size, i) : flags[op & 3];
			uint32_t len = op & 8 ? take32(d, size, i) : (uint32_t)(op * 37) % 2100;
			uint32_t index = op & 16 ? take32(d, size, i) : p.pos;

			ioring_put_raw(&p, flag, len, index, d + *i, (uint32_t)(size - *i) % 64);
		} else if (op < 128) { /* an honest frame, in place */
			uint8_t *slot = ioring_reserve(&p);

			if (slot) {
				memset(slot, op, 64);
				if (ioring_publish(&p, 1 + op % 64) != 0)
					abort();
			}
		} else { /* the consumer, with a buffer of some size */
			uint32_t cap = 1 + (uint32_t)(op - 128) * 17;
			uint64_t bad = c.malformed;
			int n;

			memset(buf + cap, 0xa5, 64);
			n = ioring_recv(&c, buf, cap, NULL);
			if (n < -1 || n > (int)cap || n > (int)IORING_DATA_MAX)
				abort();
			for (int k = 0; k < 64; k++)
				if (buf[cap + k] != 0xa5)
					abort();
			if (n > 0)
				frames++;
			if (n == -1 && c.malformed != bad + 1)
				abort();
			if (c.pos >= NS || c.frames != frames)
				abort();
			if (c.malformed != c.bad[IORING_BAD_FLAG] + c.bad[IORING_BAD_LEN] +
			                       c.bad[IORING_BAD_INDEX])
				abort();
		}
	}
}

static void fuzz_sched(const uint8_t *d, size_t size, size_t *i)
{
	struct iosched s;
	uint32_t w[IOSCHED_MAX_CLIENTS], n;
	uint64_t cap[IOSCHED_MAX_CLIENTS], t = 0;

	if (*i >= size)
		return;
	n = 1 + d[(*i)++] % IOSCHED_MAX_CLIENTS;
	for (uint32_t k = 0; k < n; k++) {
		w[k] = *i < size ? d[(*i)++] % 101 : 1;
		cap[k] = *i < size && d[*i] & 1 ? d[*i] * 1000ull : 0;
		(*i)++;
	}
	if (!iosched_init(&s, n, w, cap))
		abort();
	while (*i + 1 < size) {
		uint32_t pending = d[(*i)++] & ((1u << n) - 1);
		int k;

		t += d[(*i)++] * 97ull;
		k = iosched_pick(&s, pending, t);
		if (k >= (int)n || k < -1)
			abort();
		if (k >= 0 && !(pending >> k & 1))
			abort();
		if (k < 0)
			for (uint32_t j = 0; j < n; j++)
				if ((pending >> j & 1) && !cap[j])
					abort(); /* an uncapped pending client is always allowed */
		if (k < 0 && pending && iosched_next_allowed(&s, pending, t) == 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i = 0;

	fuzz_ring(data, size, &i);
	if (i < size)
		i++; /* the 0xff separator */
	fuzz_sched(data, size, &i);
	return 0;
}
