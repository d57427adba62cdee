// SPDX-License-Identifier: Apache-2.0
/* Host unit test of the block request rings (guests/lib/blkring.c): layout,
 * every operation round trip with wrap-around, full rings, requests the
 * client may not submit, every kind of malformed request and response
 * dropped and counted without disturbing the slots around it, the region
 * check at its edges, and a two-thread client/server stress run. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blkring.h"
#include "check.h"

#define N 4

static struct blkring_slot req_slots[N], rsp_slots[N];
static u8 buf[BLKRING_DATA_MAX], out[BLKRING_DATA_MAX];

static void fill(u8 *b, u32 len, u32 tag)
{
	for (u32 i = 0; i < len; i++)
		b[i] = (u8)(tag * 131 + i * 7);
}

static int same(const u8 *b, u32 len, u32 tag)
{
	for (u32 i = 0; i < len; i++)
		if (b[i] != (u8)(tag * 131 + i * 7))
			return 0;
	return 1;
}

static void pair(struct blkring *prod, struct blkring *cons, struct blkring_slot *s)
{
	CHECK(blkring_attach(prod, s, N));
	blkring_reset(prod);
	CHECK(blkring_attach(cons, s, N));
}

static void test_layout(void)
{
	struct blkring r;

	CHECK(sizeof(struct blkring_slot) == BLKRING_SLOT_SIZE);
	CHECK(offsetof(struct blkring_slot, data) == BLKRING_HDR_SIZE);
	CHECK(sizeof(struct blkring_ctrl) == BLKRING_CTRL_SIZE);
	CHECK(offsetof(struct blkring_ctrl, sectors) == 24);
	CHECK(offsetof(struct blkring_ctrl, io_polling) == 80);
	CHECK(BLKRING_MAX_COUNT == 8);
	CHECK(blkring_region_size(16) == 4096 + 2 * 16 * 4160);
	CHECK(!blkring_attach(&r, req_slots, 0));
	CHECK(!blkring_attach(&r, req_slots, BLKRING_MAX_SLOTS + 1));
	CHECK(!blkring_attach(&r, NULL, 1));
}

static void test_region(void)
{
	CHECK(blkring_in_region(0, 8, 8));
	CHECK(!blkring_in_region(1, 8, 8));
	CHECK(blkring_in_region(8, 0, 8));
	CHECK(!blkring_in_region(9, 0, 8));
	CHECK(!blkring_in_region(~0ull, 8, 8));
	CHECK(!blkring_in_region(~0ull - 3, 8, ~0ull));
	CHECK(blkring_in_region(~0ull - 8, 8, ~0ull));
	CHECK(!blkring_in_region(0, 1, 0));
}

static void test_round_trip(void)
{
	struct blkring cq, sq, sr, cr;
	struct blkring_msg m;

	pair(&cq, &sq, req_slots);
	pair(&sr, &cr, rsp_slots);
	CHECK(blkring_take(&sq, &m, out) == 0);
	CHECK(blkring_complete(&cr, &m, out, sizeof(out)) == 0);
	for (u32 k = 0; k < 5 * N; k++) {
		u32 count = 1 + k % BLKRING_MAX_COUNT;
		u32 op = (u32[]){ BLKRING_OP_WRITE, BLKRING_OP_READ, BLKRING_OP_FLUSH,
			          BLKRING_OP_GET_ID }[k % 4];
		u32 n = op == BLKRING_OP_READ || op == BLKRING_OP_WRITE ? count : 0;
		u32 rlen = op == BLKRING_OP_READ     ? n * BLKRING_SECTOR
		           : op == BLKRING_OP_GET_ID ? 20
		                                     : 0;

		fill(buf, BLKRING_DATA_MAX, k);
		CHECK(blkring_submit(&cq, op, 1000ull * k, n, k + 7, buf) == 0);
		CHECK(blkring_pending(&sq));
		memset(out, 0, sizeof(out));
		CHECK(blkring_take(&sq, &m, out) == 1);
		CHECK(m.op == op && m.count == n && m.sector == 1000ull * k && m.tag == k + 7);
		CHECK(m.len == (op == BLKRING_OP_WRITE ? n * BLKRING_SECTOR : 0));
		CHECK(same(out, m.len, k));
		fill(buf, BLKRING_DATA_MAX, k + 1);
		CHECK(blkring_respond(&sr, &m, BLKRING_S_OK, buf, rlen) == 0);
		memset(out, 0, sizeof(out));
		CHECK(blkring_complete(&cr, &m, out, sizeof(out)) == 1);
		CHECK(m.tag == k + 7 && m.op == op && m.status == BLKRING_S_OK && m.len == rlen);
		CHECK(same(out, rlen, k + 1));
	}
	CHECK(sq.malformed == 0 && cr.malformed == 0 && sq.msgs == 5 * N);
	/* full: N requests fit, the next is refused and counted */
	for (u32 i = 0; i < N; i++)
		CHECK(blkring_submit(&cq, BLKRING_OP_READ, i, 1, i, NULL) == 0);
	CHECK(!blkring_can_put(&cq));
	CHECK(blkring_submit(&cq, BLKRING_OP_READ, 0, 1, 0, NULL) == -1);
	CHECK(cq.full == 1);
	for (u32 i = 0; i < N; i++) {
		CHECK(blkring_take(&sq, &m, out) == 1 && m.tag == i);
		CHECK(blkring_respond(&sr, &m, BLKRING_S_IOERR, NULL, 0) == 0);
	}
	CHECK(blkring_respond(&sr, &m, BLKRING_S_OK, NULL, 0) == -1 && sr.full == 1);
	for (u32 i = 0; i < N; i++)
		CHECK(blkring_complete(&cr, &m, out, 0) == 1 && m.status == BLKRING_S_IOERR);
}

static void test_client_refusals(void)
{
	struct blkring cq, sq;

	pair(&cq, &sq, req_slots);
	CHECK(blkring_submit(&cq, BLKRING_OP_READ, 0, 0, 0, NULL) == -2);
	CHECK(blkring_submit(&cq, BLKRING_OP_READ, 0, BLKRING_MAX_COUNT + 1, 0, NULL) == -2);
	CHECK(blkring_submit(&cq, BLKRING_OP_WRITE, 0, 1, 0, NULL) == -2);
	CHECK(blkring_submit(&cq, BLKRING_OP_FLUSH, 0, 1, 0, NULL) == -2);
	CHECK(blkring_submit(&cq, 3, 0, 0, 0, NULL) == -2);
	CHECK(blkring_submit(&cq, BLKRING_OP_READ, ~0ull - 2, 4, 0, NULL) == -2);
	CHECK(blkring_submit(&cq, BLKRING_OP_READ, ~0ull - 4, 4, 0, NULL) == 0);
	CHECK(cq.msgs == 1 && cq.pos == 1);
	CHECK(blkring_respond(&cq, &(struct blkring_msg){ 0 }, 3, NULL, 0) == -2);
	CHECK(blkring_respond(&cq, &(struct blkring_msg){ 0 }, 0, buf, BLKRING_DATA_MAX + 1) == -2);
	CHECK(blkring_respond(&cq, &(struct blkring_msg){ 0 }, 0, NULL, 1) == -2);
}

/* A hostile client's raw slots between honest requests: each is dropped and
 * counted by kind, the honest ones still arrive in order. */
static void test_malformed_requests(void)
{
	static const struct {
		u32 flag, index_off, op, count;
		u64 sector;
		enum blkring_bad why;
	} bad[] = {
		{ 0x12345678, 0, BLKRING_OP_READ, 1, 0, BLKRING_BAD_FLAG },
		{ BLKRING_FULL, 1, BLKRING_OP_READ, 1, 0, BLKRING_BAD_INDEX },
		{ BLKRING_FULL, 0, 2, 1, 0, BLKRING_BAD_OP },
		{ BLKRING_FULL, 0, BLKRING_OP_WRITE, 0, 0, BLKRING_BAD_COUNT },
		{ BLKRING_FULL, 0, BLKRING_OP_READ, 9, 0, BLKRING_BAD_COUNT },
		{ BLKRING_FULL, 0, BLKRING_OP_READ, 0xffffffff, 0, BLKRING_BAD_COUNT },
		{ BLKRING_FULL, 0, BLKRING_OP_GET_ID, 1, 0, BLKRING_BAD_COUNT },
		{ BLKRING_FULL, 0, BLKRING_OP_READ, 8, ~0ull - 3, BLKRING_BAD_SECTOR },
	};
	struct blkring cq, sq;
	struct blkring_msg m;
	u64 kinds[BLKRING_BAD_KINDS] = { 0 };

	pair(&cq, &sq, req_slots);
	for (u32 i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct blkring_msg raw = { .op = bad[i].op,
			                   .count = bad[i].count,
			                   .sector = bad[i].sector,
			                   .len = 0xffffffff };

		fill(buf, BLKRING_DATA_MAX, i);
		CHECK(blkring_submit(&cq, BLKRING_OP_WRITE, i, 2, i, buf) == 0);
		blkring_put_raw(&cq, bad[i].flag, (cq.pos + bad[i].index_off) % N, &raw, buf, 64);
		kinds[bad[i].why]++;
		CHECK(blkring_take(&sq, &m, out) == 1 && m.tag == i &&
		      same(out, 2 * BLKRING_SECTOR, i));
		CHECK(blkring_take(&sq, &m, out) == -1);
		CHECK(blkring_take(&sq, &m, out) == 0);
	}
	for (u32 k = 0; k < BLKRING_BAD_KINDS; k++)
		CHECK(sq.bad[k] == kinds[k]);
	CHECK(sq.malformed == sizeof(bad) / sizeof(bad[0]) && sq.msgs == sq.malformed);
}

static void test_malformed_responses(void)
{
	struct blkring sr, cr;
	struct blkring_msg m = { .op = BLKRING_OP_READ, .count = 1, .tag = 5 };
	struct blkring_msg raw = m;

	pair(&sr, &cr, rsp_slots);
	raw.status = 7;
	blkring_put_raw(&sr, BLKRING_FULL, sr.pos, &raw, buf, 0);
	CHECK(blkring_complete(&cr, &m, out, sizeof(out)) == -1 && cr.bad[BLKRING_BAD_OP] == 1);
	raw.status = 0;
	raw.len = BLKRING_DATA_MAX + 1;
	blkring_put_raw(&sr, BLKRING_FULL, sr.pos, &raw, buf, 0);
	CHECK(blkring_complete(&cr, &m, out, sizeof(out)) == -1 && cr.bad[BLKRING_BAD_COUNT] == 1);
	/* a response longer than the client's buffer */
	CHECK(blkring_respond(&sr, &m, BLKRING_S_OK, buf, 512) == 0);
	CHECK(blkring_complete(&cr, &m, out, 511) == -1 && cr.bad[BLKRING_BAD_COUNT] == 2);
	CHECK(blkring_complete(&cr, &m, out, sizeof(out)) == 0 && cr.malformed == 3);
}

#define STRESS 20000u

static void *client(void *arg)
{
	struct blkring *cq = arg;
	static u8 data[BLKRING_DATA_MAX];

	for (u32 k = 0; k < STRESS;) {
		fill(data, BLKRING_DATA_MAX, k);
		if (blkring_submit(cq, BLKRING_OP_WRITE, k, 1 + k % 8, k, data) == 0)
			k++;
	}
	return NULL;
}

static void test_stress(void)
{
	struct blkring cq, sq;
	struct blkring_msg m;
	pthread_t t;
	u32 k = 0;

	pair(&cq, &sq, req_slots);
	CHECK(pthread_create(&t, NULL, client, &cq) == 0);
	while (k < STRESS) {
		int got = blkring_take(&sq, &m, out);

		CHECK(got >= 0);
		if (got == 1) {
			CHECK(m.tag == k && m.sector == k && m.count == 1 + k % 8);
			CHECK(same(out, m.len, k));
			k++;
		}
	}
	pthread_join(t, NULL);
	CHECK(sq.malformed == 0);
}

int main(void)
{
	test_layout();
	test_region();
	test_round_trip();
	test_client_refusals();
	test_malformed_requests();
	test_malformed_responses();
	test_stress();
	if (failures)
		return 1;
	printf("test_blkring: ok\n");
	return 0;
}
