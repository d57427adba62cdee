/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: what a client controls in the block request ring
 * (guests/lib/blkring.c, docs/io.md). A hostile client writes any flag,
 * index, op, count, sector, status and length into request slots between
 * the I/O VM's reads, mixed with honest requests; the I/O VM's side never
 * reads or writes out of bounds (AddressSanitizer, a canary after its data
 * buffer), returns only well-formed requests (a known op, count in range,
 * sector + count not wrapping, len that of a write's sectors), keeps its
 * position in the ring and counts every dropped slot by kind. The same
 * input then drives the response ring the other way round (a hostile
 * server against a client with any buffer size). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blkring.h"

#define NS 4

static struct blkring_slot slots[NS];
static uint8_t data[BLKRING_DATA_MAX + 64];
static const uint8_t source[BLKRING_DATA_MAX]; /* an honest side's data */

static uint64_t take(const uint8_t *d, size_t size, size_t *i, int bytes)
{
	uint64_t v = 0;

	for (int k = 0; k < bytes; k++)
		v = v << 8 | (*i < size ? d[(*i)++] : 0);
	return v;
}

static void check_counts(const struct blkring *c)
{
	uint64_t sum = 0;

	for (int k = 0; k < BLKRING_BAD_KINDS; k++)
		sum += c->bad[k];
	if (c->pos >= NS || sum != c->malformed)
		abort();
}

static void check_canary(uint32_t cap)
{
	for (uint32_t k = 0; k < 64; k++)
		if (data[cap + k] != 0xa5)
			abort();
}

static void check_request(int got, const struct blkring_msg *m)
{
	if (got < -1 || got > 1)
		abort();
	if (got != 1)
		return;
	switch (m->op) {
	case BLKRING_OP_READ:
	case BLKRING_OP_WRITE:
		if (m->count == 0 || m->count > BLKRING_MAX_COUNT || m->sector > ~0ull - m->count)
			abort();
		if (m->len != (m->op == BLKRING_OP_WRITE ? m->count * BLKRING_SECTOR : 0))
			abort();
		break;
	case BLKRING_OP_FLUSH:
	case BLKRING_OP_GET_ID:
		if (m->count || m->len)
			abort();
		break;
	default:
		abort();
	}
}

/* One side is honest (the consumer), the other writes anything. */
static void fuzz(const uint8_t *d, size_t size, size_t *i, int requests)
{
	static const uint32_t flags[] = { BLKRING_EMPTY, BLKRING_FULL, 0xdeadbeef, BLKRING_FULL };
	struct blkring p, c;

	if (!blkring_attach(&p, slots, NS) || !blkring_attach(&c, slots, NS))
		abort();
	blkring_reset(&p);
	while (*i + 1 < size && d[*i] != 0xff) {
		uint8_t op = d[(*i)++];

		if (op < 128) { /* a hostile raw slot */
			struct blkring_msg raw;
			uint32_t flag = op & 4 ? (uint32_t)take(d, size, i, 4) : flags[op & 3];
			uint32_t index = op & 8 ? (uint32_t)take(d, size, i, 1) : p.pos;

			raw.op = op & 16 ? (uint32_t)take(d, size, i, 4) : op % 9;
			raw.count = op & 32 ? (uint32_t)take(d, size, i, 4) : op % 10;
			raw.sector = op & 64 ? take(d, size, i, 8) : op;
			raw.status = (uint32_t)take(d, size, i, 1) % 4;
			raw.len = (uint32_t)take(d, size, i, 2) % 4200;
			raw.tag = op;
			blkring_put_raw(&p, flag, index, &raw, d + *i, (uint32_t)(size - *i) % 64);
		} else if (op < 160) { /* an honest message */
			struct blkring_msg m = { .op = op % 2, .count = 1 + op % 8 };
			int r = requests
			            ? blkring_submit(&p, m.op, op, m.count, op, source)
			            : blkring_respond(&p, &m, op % 3, source, op % 2 ? 512 : 0);

			if (r != 0 && r != -1)
				abort();
		} else { /* the honest consumer, with a buffer of some size */
			uint32_t cap = requests ? BLKRING_DATA_MAX : (uint32_t)(op - 160) * 43;
			uint64_t bad = c.malformed;
			struct blkring_msg m;
			int got;

			memset(data + cap, 0xa5, 64);
			got = requests ? blkring_take(&c, &m, data)
			               : blkring_complete(&c, &m, data, cap);
			check_canary(cap);
			if (requests)
				check_request(got, &m);
			else if (got < -1 || got > 1 || (got == 1 && (m.len > cap || m.status > 2)))
				abort();
			if ((got == -1) != (c.malformed == bad + 1))
				abort();
			check_counts(&c);
		}
	}
	if (*i < size)
		(*i)++; /* the 0xff separator */
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	size_t i = 0;

	fuzz(d, size, &i, 1);
	fuzz(d, size, &i, 0);
	return 0;
}
