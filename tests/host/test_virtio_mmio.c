// SPDX-License-Identifier: Apache-2.0
/* Host test of core/virtio/virtio_mmio.c: the virtio-mmio version 2
 * register model (identification, feature negotiation and FEATURES_OK,
 * queue set-up only while not ready, notifications only when live,
 * interrupt status and acknowledge, reset, DEVICE_NEEDS_RESET, the
 * configuration space with the MAC, bad accesses refused). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/virtio/virtio_mmio.h"

#define FEATURES (BIT(VIRTIO_F_VERSION_1) | BIT(5) | BIT(15) | BIT(VIRTIO_F_RING_EVENT_IDX))

static const u8 cfg[8] = { 0x02, 0, 0, 0, 0, 0x0a, 1, 0 };

static u32 rd(struct virtio_mmio *m, u32 off)
{
	u32 v = 0xdead;

	CHECK(virtio_mmio_read(m, off, 4, &v));
	return v;
}

static enum virtio_mmio_act wr(struct virtio_mmio *m, u32 off, u32 val)
{
	u32 q = 99;

	return virtio_mmio_write(m, off, 4, val, &q);
}

/* what Linux's virtio_mmio does to bring a device up, up to DRIVER_OK */
static void bring_up(struct virtio_mmio *m, u64 feat)
{
	u32 q;

	CHECK(wr(m, 0x70, 0) == VIRTIO_MMIO_RESET);
	wr(m, 0x70, VIRTIO_ST_ACK);
	wr(m, 0x70, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER);
	wr(m, 0x24, 0);
	wr(m, 0x20, (u32)feat);
	wr(m, 0x24, 1);
	wr(m, 0x20, (u32)(feat >> 32));
	wr(m, 0x70, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER | VIRTIO_ST_FEATURES_OK);
	for (u32 i = 0; i < 2; i++) {
		wr(m, 0x30, i);
		CHECK(rd(m, 0x44) == 0);
		CHECK(rd(m, 0x34) == 256);
		wr(m, 0x38, 256);
		wr(m, 0x80, 0x40000000 + 0x10000 * i);
		wr(m, 0x84, 0);
		wr(m, 0x90, 0x40001000 + 0x10000 * i);
		wr(m, 0xa0, 0x40002000 + 0x10000 * i);
		CHECK(virtio_mmio_write(m, 0x44, 4, 1, &q) == VIRTIO_MMIO_READY && q == i);
		m->q[i].ready = true; /* the glue's set-up succeeded */
	}
}

int main(void)
{
	struct virtio_mmio m;
	u32 v, q = 0;

	virtio_mmio_init(&m, 1, FEATURES, 256, cfg, sizeof(cfg));
	CHECK(rd(&m, 0x000) == 0x74726976u && rd(&m, 0x004) == 2 && rd(&m, 0x008) == 1);
	CHECK(rd(&m, 0x010) == (u32)FEATURES);
	wr(&m, 0x14, 1);
	CHECK(rd(&m, 0x010) == 1); /* VERSION_1 is bit 32 */
	wr(&m, 0x14, 2);
	CHECK(rd(&m, 0x010) == 0);
	CHECK(rd(&m, 0xb0) == ~0u); /* no shared memory */
	/* configuration space: the MAC by bytes, the status word */
	CHECK(virtio_mmio_read(&m, 0x105, 1, &v) && v == 0x0a);
	CHECK(virtio_mmio_read(&m, 0x106, 2, &v) && v == 1);
	CHECK(virtio_mmio_read(&m, 0x100, 4, &v) && v == 0x02);
	CHECK(virtio_mmio_read(&m, 0x200, 4, &v) && v == 0); /* past its end */
	CHECK(!virtio_mmio_read(&m, 0x101, 2, &v));          /* unaligned */
	CHECK(!virtio_mmio_read(&m, 0x002, 2, &v));          /* registers are 32-bit */
	CHECK(!virtio_mmio_read(&m, 0x1000, 4, &v));
	CHECK(virtio_mmio_write(&m, 0x100, 1, 0xff, &q) == VIRTIO_MMIO_NONE); /* read only */
	CHECK(virtio_mmio_read(&m, 0x100, 1, &v) && v == 0x02);
	CHECK(virtio_mmio_write(&m, 0x071, 1, 0xff, &q) == VIRTIO_MMIO_REFUSED);
	/* the device changes a config byte (a link coming up): a new generation
	 * and a configuration-change interrupt, once; past the config: nothing */
	v = rd(&m, 0xfc);
	virtio_mmio_config_set(&m, 6, 0);
	CHECK(virtio_mmio_read(&m, 0x106, 1, &q) && q == 0);
	CHECK(rd(&m, 0xfc) == v + 1 && (rd(&m, 0x60) & VIRTIO_INT_CONFIG));
	virtio_mmio_config_set(&m, 6, 0);
	virtio_mmio_config_set(&m, sizeof(cfg), 1);
	CHECK(rd(&m, 0xfc) == v + 1);
	virtio_mmio_config_set(&m, 6, 1);
	CHECK(rd(&m, 0xfc) == v + 2);
	CHECK(wr(&m, 0x64, VIRTIO_INT_CONFIG) == VIRTIO_MMIO_ACK && rd(&m, 0x60) == 0);
	q = 0;

	/* features the device does not offer, or no VERSION_1: no FEATURES_OK */
	wr(&m, 0x70, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER);
	wr(&m, 0x24, 0);
	wr(&m, 0x20, BIT(6));
	wr(&m, 0x24, 1);
	wr(&m, 0x20, 1);
	wr(&m, 0x70, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER | VIRTIO_ST_FEATURES_OK);
	CHECK(!(rd(&m, 0x70) & VIRTIO_ST_FEATURES_OK));
	wr(&m, 0x24, 0);
	wr(&m, 0x20, BIT(5));
	wr(&m, 0x24, 1);
	wr(&m, 0x20, 0);
	wr(&m, 0x70, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER | VIRTIO_ST_FEATURES_OK);
	CHECK(!(rd(&m, 0x70) & VIRTIO_ST_FEATURES_OK));
	wr(&m, 0x24, 2);
	wr(&m, 0x20, 1); /* a word above 63 */
	wr(&m, 0x24, 1);
	wr(&m, 0x20, 1);
	wr(&m, 0x70, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER | VIRTIO_ST_FEATURES_OK);
	CHECK(!(rd(&m, 0x70) & VIRTIO_ST_FEATURES_OK));
	/* DRIVER_OK without FEATURES_OK is not taken */
	CHECK(wr(&m, 0x70, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER | VIRTIO_ST_DRIVER_OK) ==
	      VIRTIO_MMIO_NONE);
	CHECK(!(rd(&m, 0x70) & VIRTIO_ST_DRIVER_OK));

	bring_up(&m, BIT(VIRTIO_F_VERSION_1) | BIT(5) | BIT(VIRTIO_F_RING_EVENT_IDX));
	CHECK(rd(&m, 0x70) & VIRTIO_ST_FEATURES_OK);
	CHECK(virtio_mmio_has(&m, 5) && virtio_mmio_has(&m, VIRTIO_F_RING_EVENT_IDX) &&
	      !virtio_mmio_has(&m, 15));
	/* features are final */
	wr(&m, 0x24, 0);
	wr(&m, 0x20, (u32)FEATURES);
	CHECK(!virtio_mmio_has(&m, 15));
	/* no notification before DRIVER_OK */
	CHECK(virtio_mmio_write(&m, 0x50, 4, 1, &q) == VIRTIO_MMIO_NONE);
	CHECK(wr(&m, 0x70, 0xf) == VIRTIO_MMIO_DRIVER_OK);
	CHECK(virtio_mmio_live(&m, 0) && virtio_mmio_live(&m, 1) && !virtio_mmio_live(&m, 2));
	CHECK(virtio_mmio_write(&m, 0x50, 4, 1, &q) == VIRTIO_MMIO_NOTIFY && q == 1);
	CHECK(virtio_mmio_write(&m, 0x50, 4, 5, &q) == VIRTIO_MMIO_NONE);
	/* a ready queue's set-up cannot change */
	wr(&m, 0x30, 1);
	v = m.refused;
	wr(&m, 0x38, 16);
	wr(&m, 0x80, 0x50000000);
	CHECK(m.q[1].num == 256 && m.q[1].desc == 0x40010000 && m.refused == v + 2);
	wr(&m, 0x30, 7); /* no such queue */
	CHECK(rd(&m, 0x34) == 0 && rd(&m, 0x44) == 0);
	wr(&m, 0x38, 16);
	CHECK(m.refused == v + 3);
	/* interrupts */
	m.isr = VIRTIO_INT_USED;
	CHECK(rd(&m, 0x60) == 1);
	CHECK(wr(&m, 0x64, 1) == VIRTIO_MMIO_ACK && rd(&m, 0x60) == 0);
	/* the device fails: NEEDS_RESET sticks, a config interrupt, no more notifications */
	v = rd(&m, 0xfc);
	virtio_mmio_fail(&m);
	CHECK((rd(&m, 0x70) & VIRTIO_ST_NEEDS_RESET) && (rd(&m, 0x60) & VIRTIO_INT_CONFIG));
	CHECK(rd(&m, 0xfc) == v + 1);
	CHECK(!virtio_mmio_live(&m, 0));
	CHECK(virtio_mmio_write(&m, 0x50, 4, 0, &q) == VIRTIO_MMIO_NONE);
	wr(&m, 0x70, 0xf);
	CHECK(rd(&m, 0x70) & VIRTIO_ST_NEEDS_RESET);
	/* a reset clears everything but the device's identity */
	CHECK(wr(&m, 0x70, 0) == VIRTIO_MMIO_RESET);
	CHECK(rd(&m, 0x70) == 0 && rd(&m, 0x60) == 0 && !m.q[0].ready && m.q[1].num == 0);
	CHECK(!virtio_mmio_has(&m, 5));
	/* queue size: a power of two up to the maximum; ready needs a size */
	wr(&m, 0x30, 0);
	CHECK(virtio_mmio_write(&m, 0x44, 4, 1, &q) == VIRTIO_MMIO_NONE);
	wr(&m, 0x38, 100);
	wr(&m, 0x38, 512);
	CHECK(m.q[0].num == 0);
	wr(&m, 0x38, 64);
	CHECK(m.q[0].num == 64);
	if (failures)
		return 1;
	printf("test_virtio_mmio: ok\n");
	return 0;
}
