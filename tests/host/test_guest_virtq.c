// SPDX-License-Identifier: Apache-2.0
/* Host unit test of the guests' split-virtqueue driver side
 * (guests/lib/virtq.c; the hypervisor's device side has test_virtq.c): ring
 * positions and wrap-around of the 16-bit indices, the notification decision
 * with and without VIRTIO_F_RING_EVENT_IDX (the device's avail_event
 * anywhere relative to the batch, across the wrap), interrupt suppression,
 * and reading used entries, with this test playing the device. */
#include <string.h>

#include "check.h"
#include "virtq.h"

#define N 8

static struct virtq_desc desc[N];
static u16 avail_mem[3 + N];
static u32 used_mem[2 + 2 * N];
static struct virtq q;

static struct virtq_avail *avail(void)
{
	return (struct virtq_avail *)avail_mem;
}

static struct virtq_used *used(void)
{
	return (struct virtq_used *)used_mem;
}

static u16 *avail_event(void)
{
	return (u16 *)&used()->ring[N];
}

/* The device puts (id, len) on the used ring. */
static void device_use(u32 id, u32 len)
{
	struct virtq_used *u = used();

	u->ring[u->idx % N] = (struct virtq_used_elem){ id, len };
	u->idx++;
}

/* Publishes `count` chains with the driver's index starting at `start`
 * (set by hand), the device's avail_event at `ev`: whether it kicks. */
static bool kick_after(u16 start, u16 count, u16 ev)
{
	q.avail_idx = start;
	q.kicked_idx = start;
	*avail_event() = ev;
	for (u16 i = 0; i < count; i++)
		virtq_push(&q, (u16)(i % N));
	virtq_publish(&q);
	return virtq_kick_needed(&q);
}

static void test_init_and_push(void)
{
	memset(avail_mem, 0xa5, sizeof(avail_mem));
	memset(used_mem, 0xa5, sizeof(used_mem));
	virtq_init(&q, N, desc, avail_mem, used_mem, false);
	CHECK(avail()->idx == 0 && avail()->flags == 0 && used()->idx == 0);
	CHECK(avail_mem[2 + N] == 0);   /* used_event cleared too */
	for (u16 i = 0; i < 3 * N; i++) /* laps: entries land at idx % N */
		virtq_push(&q, (u16)(100 + i));
	CHECK(avail()->idx == 0); /* nothing visible before publish */
	virtq_publish(&q);
	CHECK(avail()->idx == 3 * N);
	CHECK(avail()->ring[0] == 100 + 2 * N && avail()->ring[N - 1] == 100 + 3 * N - 1);
}

static void test_no_notify_flag(void)
{
	virtq_init(&q, N, desc, avail_mem, used_mem, false);
	virtq_push(&q, 0);
	virtq_publish(&q);
	CHECK(virtq_kick_needed(&q));
	used()->flags = VIRTQ_USED_F_NO_NOTE;
	virtq_push(&q, 1);
	virtq_publish(&q);
	CHECK(!virtq_kick_needed(&q));
}

static void test_event_idx(void)
{
	virtq_init(&q, N, desc, avail_mem, used_mem, true);
	used()->flags = VIRTQ_USED_F_NO_NOTE; /* ignored with event_idx */
	/* batch [10, 13): kick iff avail_event in it */
	CHECK(kick_after(10, 3, 10));
	CHECK(kick_after(10, 3, 12));
	CHECK(!kick_after(10, 3, 13));
	CHECK(!kick_after(10, 3, 9));
	CHECK(!kick_after(10, 3, 200));
	/* across the 16-bit wrap: [65534, 1) */
	CHECK(kick_after(65534, 3, 65534));
	CHECK(kick_after(65534, 3, 0));
	CHECK(!kick_after(65534, 3, 1));
	CHECK(!kick_after(65534, 3, 65533));
	/* nothing new: never */
	CHECK(!kick_after(7, 0, 7));
	/* the next decision covers only what came after the last one */
	CHECK(!kick_after(20, 2, 23));
	virtq_push(&q, 0);
	virtq_push(&q, 1);
	virtq_push(&q, 2);
	virtq_publish(&q);
	CHECK(virtq_kick_needed(&q));  /* [22, 25) holds 23 */
	CHECK(!virtq_kick_needed(&q)); /* and nothing since */
}

static void test_used_and_irq(void)
{
	u32 id, len;

	virtq_init(&q, N, desc, avail_mem, used_mem, false);
	CHECK(!virtq_used_pending(&q) && !virtq_pop_used(&q, &id, &len));
	for (u32 lap = 0; lap < 3 * N; lap++) {
		device_use(lap % N, 1000 + lap);
		CHECK(virtq_used_pending(&q));
		CHECK(virtq_pop_used(&q, &id, &len) && id == lap % N && len == 1000 + lap);
		CHECK(!virtq_pop_used(&q, &id, &len));
	}
	/* ids and lengths come back unchecked: the caller checks them */
	device_use(0xdead, 0xffffffffu);
	CHECK(virtq_pop_used(&q, &id, &len) && id == 0xdead && len == 0xffffffffu);
	virtq_irq_disable(&q);
	CHECK(avail()->flags == VIRTQ_AVAIL_F_NO_INTR);
	virtq_irq_enable(&q);
	CHECK(avail()->flags == 0);

	virtq_init(&q, N, desc, avail_mem, used_mem, true);
	device_use(1, 1);
	device_use(2, 2);
	CHECK(virtq_pop_used(&q, &id, &len));
	virtq_irq_enable(&q); /* used_event: the next entry the driver will read */
	CHECK(avail_mem[2 + N] == 1 && avail()->flags == 0);
	virtq_irq_disable(&q);
	CHECK(avail()->flags == 0 && avail_mem[2 + N] == 1);
}

int main(void)
{
	test_init_and_push();
	test_no_notify_flag();
	test_event_idx();
	test_used_and_irq();
	if (failures)
		return 1;
	printf("test_guest_virtq: ok\n");
	return 0;
}
