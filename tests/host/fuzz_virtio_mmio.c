/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a guest's accesses to its virtio-mmio transport
 * (core/virtio/virtio_mmio.c). Any sequence of reads and writes of any
 * offset, size and value: the identification never changes, FEATURES_OK
 * means the driver's features are offered ones with VERSION_1, DRIVER_OK
 * comes only with FEATURES_OK, a queue's size is a power of two up to the
 * maximum and does not change while it is ready, a notification names a
 * live queue, DEVICE_NEEDS_RESET sticks until a reset, config space reads
 * give the device's bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/virtio/virtio_mmio.h"

#define FEATURES (BIT(VIRTIO_F_VERSION_1) | BIT(5) | BIT(15) | BIT(16) | BIT(29))

static const u8 cfg[8] = { 0x02, 1, 2, 3, 4, 5, 1, 0 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_mmio m;
	struct virtio_mmio_queue before[VIRTIO_MMIO_QUEUES];

	virtio_mmio_init(&m, 1, FEATURES, 256, cfg, sizeof(cfg));
	for (size_t i = 0; i + 8 <= size; i += 8) {
		u32 off = (data[i] | (u32)data[i + 1] << 8) & 0x1fff;
		u32 sz = 1u << (data[i + 2] & 3), val, q = 1000, v;
		bool write = data[i + 3] & 1, needs_reset = m.status & VIRTIO_ST_NEEDS_RESET;

		memcpy(&val, data + i + 4, 4);
		memcpy(before, m.q, sizeof(before));
		if (write) {
			enum virtio_mmio_act a = virtio_mmio_write(&m, off, sz, val, &q);

			if (a == VIRTIO_MMIO_NOTIFY &&
			    (q >= VIRTIO_MMIO_QUEUES || !virtio_mmio_live(&m, q)))
				abort();
			if (a == VIRTIO_MMIO_READY) {
				if (q >= VIRTIO_MMIO_QUEUES || !m.q[q].num || before[q].ready)
					abort();
				m.q[q].ready = data[i + 3] & 2; /* the glue's set-up: either way */
			}
			if (a == VIRTIO_MMIO_RESET &&
			    (m.status || m.isr || m.q[0].ready || m.q[1].ready))
				abort();
			if (needs_reset && a != VIRTIO_MMIO_RESET &&
			    !(m.status & VIRTIO_ST_NEEDS_RESET))
				abort();
			for (u32 k = 0; k < VIRTIO_MMIO_QUEUES; k++)
				if (before[k].ready && m.q[k].ready &&
				    memcmp(&before[k], &m.q[k], sizeof(before[k])))
					abort(); /* a ready queue is fixed */
		} else if (virtio_mmio_read(&m, off, sz, &v)) {
			if (sz < 4 && v >> (8 * sz))
				abort();
			if (off == 0 && v != 0x74726976u)
				abort();
			if (off >= 0x100 && off < 0x108 && sz == 1 && v != cfg[off - 0x100])
				abort();
		} else if (off < 0x1000 && sz == 4 && !(off & 3)) {
			abort(); /* aligned 32-bit reads of the page are served */
		}
		if ((m.status & VIRTIO_ST_FEATURES_OK) &&
		    ((m.drv_features & ~FEATURES) || !(m.drv_features & BIT(VIRTIO_F_VERSION_1)) ||
		     m.drv_high))
			abort();
		if ((m.status & VIRTIO_ST_DRIVER_OK) && !(m.status & VIRTIO_ST_FEATURES_OK))
			abort();
		for (u32 k = 0; k < VIRTIO_MMIO_QUEUES; k++)
			if (m.q[k].num > 256 || (m.q[k].num & (m.q[k].num - 1)) ||
			    (m.q[k].ready && !m.q[k].num))
				abort();
	}
	return 0;
}
