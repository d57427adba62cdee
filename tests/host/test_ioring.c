// SPDX-License-Identifier: Apache-2.0
/* Host unit test of the shared-memory frame rings (guests/lib/ioring.c):
 * round trips, wrap-around, full ring, every kind of malformed slot dropped
 * and counted without disturbing the frames around it, a consumer that
 * corrupts flags, and a two-thread producer/consumer stress run. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ioring.h"

#define N 8

static struct ioring_slot slots[N];

static void fill(u8 *buf, u32 len, u32 tag)
{
	for (u32 i = 0; i < len; i++)
		buf[i] = (u8)(tag * 31 + i);
}

static int same(const u8 *buf, u32 len, u32 tag)
{
	for (u32 i = 0; i < len; i++)
		if (buf[i] != (u8)(tag * 31 + i))
			return 0;
	return 1;
}

static void test_attach(void)
{
	struct ioring r;

	CHECK(!ioring_attach(&r, slots, 0));
	CHECK(!ioring_attach(&r, slots, IORING_MAX_SLOTS + 1));
	CHECK(!ioring_attach(&r, NULL, 4));
	CHECK(ioring_attach(&r, slots, N));
	CHECK(ioring_region_size(16) == 4096 + 2 * 16 * 2048);
	CHECK(sizeof(struct ioring_slot) == IORING_SLOT_SIZE);
	CHECK(sizeof(struct ioring_ctrl) == IORING_CTRL_SIZE);
}

static void test_round_trip(void)
{
	struct ioring p, c;
	u8 buf[IORING_DATA_MAX], out[IORING_DATA_MAX];
	u32 seq = 99, i, k;

	CHECK(ioring_attach(&p, slots, N));
	ioring_reset(&p);
	CHECK(ioring_attach(&c, slots, N));
	CHECK(ioring_recv(&c, out, sizeof(out), &seq) == 0);
	CHECK(!ioring_pending(&c));
	CHECK(ioring_send(&p, buf, 0) == -2);
	CHECK(ioring_send(&p, buf, IORING_DATA_MAX + 1) == -2);
	/* many laps: every length class, wrap-around */
	for (k = 0; k < 10 * N; k++) {
		u32 len = 1 + (k * 257) % IORING_DATA_MAX;

		fill(buf, len, k);
		CHECK(ioring_send(&p, buf, len) == 0);
		CHECK(ioring_pending(&c));
		CHECK(ioring_recv(&c, out, sizeof(out), &seq) == (int)len);
		CHECK(seq == k);
		CHECK(same(out, len, k));
	}
	/* full ring: N frames fit, the next one is refused and counted */
	for (i = 0; i < N; i++) {
		fill(buf, 64, i);
		CHECK(ioring_send(&p, buf, 64) == 0);
	}
	CHECK(!ioring_can_send(&p));
	CHECK(ioring_send(&p, buf, 64) == -1);
	CHECK(p.full == 1);
	for (i = 0; i < N; i++) {
		CHECK(ioring_recv(&c, out, sizeof(out), NULL) == 64);
		CHECK(same(out, 64, i));
	}
	CHECK(ioring_recv(&c, out, sizeof(out), NULL) == 0);
	CHECK(ioring_can_send(&p));
	CHECK(p.frames == 10 * N + N && c.frames == p.frames && c.bytes == p.bytes);
	CHECK(c.malformed == 0);
}

/* A producer (e.g. a misbehaving client) writes garbage into slots: each bad
 * slot is dropped and counted, the frames around it arrive intact. */
static void test_malformed(void)
{
	struct ioring p, c;
	u8 buf[256], out[128];
	int rc;

	CHECK(ioring_attach(&p, slots, N));
	ioring_reset(&p);
	CHECK(ioring_attach(&c, slots, N));
	for (u32 i = 0; i < 6; i++) {
		fill(buf, 100, i);
		CHECK(ioring_send(&p, buf, 100) == 0);
	}
	slots[1].flag = 0xdeadbeef; /* bad flag */
	slots[2].len = 0;           /* bad length */
	slots[3].len = 0xffffffff;  /* length beyond the slot */
	slots[4].index = 7;         /* index not the slot's position */
	c.pos = 0;
	CHECK(ioring_recv(&c, out, sizeof(out), NULL) == 100);
	CHECK(same(out, 100, 0));
	for (u32 i = 1; i <= 4; i++)
		CHECK(ioring_recv(&c, out, sizeof(out), NULL) == -1);
	CHECK(ioring_recv(&c, out, sizeof(out), NULL) == 100);
	CHECK(same(out, 100, 5));
	CHECK(c.malformed == 4);
	CHECK(c.bad[IORING_BAD_FLAG] == 1 && c.bad[IORING_BAD_LEN] == 2 &&
	      c.bad[IORING_BAD_INDEX] == 1);
	/* dropped slots were handed back: the producer can fill them again */
	for (u32 i = 0; i < N; i++)
		CHECK(ioring_send(&p, buf, 10) == 0);
	/* a frame longer than the consumer's buffer is dropped, not truncated */
	for (u32 i = 0; i < N; i++)
		CHECK(ioring_recv(&c, out, sizeof(out), NULL) == 10);
	CHECK(ioring_send(&p, buf, 200) == 0);
	rc = ioring_recv(&c, out, sizeof(out), NULL);
	CHECK(rc == -1);
	CHECK(c.bad[IORING_BAD_LEN] == 3);
	/* huge index values */
	CHECK(ioring_send(&p, buf, 10) == 0);
	slots[c.pos].index = 0x80000000u;
	CHECK(ioring_recv(&c, out, sizeof(out), NULL) == -1);
	CHECK(c.bad[IORING_BAD_INDEX] == 2);
}

/* ioring_put_raw (hostile test guests): whatever header it writes, the
 * consumer drops and counts the malformed slots and stays in step. */
static void test_put_raw(void)
{
	struct ioring p, c;
	u8 buf[64], out[128];

	CHECK(ioring_attach(&p, slots, N));
	ioring_reset(&p);
	CHECK(ioring_attach(&c, slots, N));
	fill(buf, sizeof(buf), 9);
	ioring_put_raw(&p, 0xdeadbeef, sizeof(buf), p.pos, buf, sizeof(buf));
	ioring_put_raw(&p, IORING_FULL, 5000, p.pos, buf, sizeof(buf));
	ioring_put_raw(&p, IORING_FULL, sizeof(buf), 999, buf, sizeof(buf));
	ioring_put_raw(&p, IORING_FULL, sizeof(buf), p.pos, buf, sizeof(buf)); /* well formed */
	CHECK(p.pos == 4);
	for (u32 i = 0; i < 3; i++)
		CHECK(ioring_recv(&c, out, sizeof(out), NULL) == -1);
	CHECK(ioring_recv(&c, out, sizeof(out), NULL) == (int)sizeof(buf));
	CHECK(same(out, sizeof(buf), 9));
	CHECK(c.bad[IORING_BAD_FLAG] == 1 && c.bad[IORING_BAD_LEN] == 1 &&
	      c.bad[IORING_BAD_INDEX] == 1 && c.malformed == 3);
	CHECK(ioring_recv(&c, out, sizeof(out), NULL) == 0);
}

/* A consumer that writes garbage flags only blocks its own ring: the producer
 * sees "full", never writes into it, and counts it. */
static void test_bad_consumer(void)
{
	struct ioring p;
	u8 buf[16] = { 0 };

	CHECK(ioring_attach(&p, slots, N));
	ioring_reset(&p);
	slots[0].flag = 0x12345678;
	CHECK(!ioring_can_send(&p));
	CHECK(ioring_send(&p, buf, sizeof(buf)) == -1);
	CHECK(p.full == 1 && p.pos == 0);
	slots[0].flag = IORING_EMPTY;
	CHECK(ioring_send(&p, buf, sizeof(buf)) == 0);
}

/* Two threads, one producer and one consumer, no lock: every frame arrives
 * once, in order, intact. */
#define STRESS_FRAMES 200000u
static struct ioring_slot sslots[4];

static void *producer(void *arg)
{
	struct ioring *p = arg;
	u8 buf[64];

	for (u32 k = 0; k < STRESS_FRAMES;) {
		u32 len = 1 + k % sizeof(buf);

		fill(buf, len, k);
		if (ioring_send(p, buf, len) == 0)
			k++;
	}
	return NULL;
}

static void test_stress(void)
{
	struct ioring p, c;
	pthread_t t;
	u8 out[64];
	u32 k = 0, seq, bad = 0;

	CHECK(ioring_attach(&p, sslots, 4));
	ioring_reset(&p);
	CHECK(ioring_attach(&c, sslots, 4));
	CHECK(pthread_create(&t, NULL, producer, &p) == 0);
	while (k < STRESS_FRAMES) {
		int n = ioring_recv(&c, out, sizeof(out), &seq);

		if (n == 0)
			continue;
		if (n != (int)(1 + k % sizeof(out)) || seq != k || !same(out, (u32)n, k))
			bad++;
		k++;
	}
	pthread_join(t, NULL);
	CHECK(bad == 0);
	CHECK(c.malformed == 0);
	CHECK(c.frames == STRESS_FRAMES);
}

/* The two-step producer (in-place copy): a reserved slot is not visible
 * until published, a bad length publishes nothing, a full ring reserves
 * nothing (counted); the control page's polling flags. */
static void test_reserve_publish(void)
{
	struct ioring p, c;
	struct ioring_ctrl ctrl;
	u8 out[IORING_DATA_MAX];
	u8 *d;
	u32 i;

	CHECK(ioring_attach(&p, slots, N));
	ioring_reset(&p);
	CHECK(ioring_attach(&c, slots, N));
	d = ioring_reserve(&p);
	CHECK(d != NULL);
	fill(d, 100, 7);
	CHECK(!ioring_pending(&c)); /* not published yet */
	CHECK(ioring_publish(&p, 0) == -2 && ioring_publish(&p, IORING_DATA_MAX + 1) == -2);
	CHECK(!ioring_pending(&c) && p.frames == 0);
	CHECK(ioring_publish(&p, 100) == 0);
	CHECK(ioring_recv(&c, out, sizeof(out), NULL) == 100 && same(out, 100, 7));
	for (i = 0; i < N; i++) {
		d = ioring_reserve(&p);
		CHECK(d != NULL);
		if (d) {
			fill(d, 64, i);
			CHECK(ioring_publish(&p, 64) == 0);
		}
	}
	CHECK(ioring_reserve(&p) == NULL && p.full == 1);
	for (i = 0; i < N; i++)
		CHECK(ioring_recv(&c, out, sizeof(out), NULL) == 64 && same(out, 64, i));
	memset(&ctrl, 0, sizeof(ctrl));
	CHECK(!ioring_peer_polling(&ctrl.io_polling));
	ioring_set_polling(&ctrl.io_polling, true);
	CHECK(ioring_peer_polling(&ctrl.io_polling) && ctrl.io_polling == 1);
	ctrl.client_polling = 0x5a5a5a5a; /* garbage is "not polling": a doorbell, harmless */
	CHECK(!ioring_peer_polling(&ctrl.client_polling));
}

int main(void)
{
	test_attach();
	test_round_trip();
	test_malformed();
	test_put_raw();
	test_bad_consumer();
	test_stress();
	test_reserve_publish();
	if (failures)
		return 1;
	printf("test_ioring: ok\n");
	return 0;
}
