/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The register model of a virtio-mmio transport, version 2 (VIRTIO 1.2,
 * 4.2.2): what a guest's access to the transport's page reads and does.
 * Pure, host-tested and fuzzed (tests/host/test_virtio_mmio.c,
 * fuzz_virtio_mmio.c): every offset, size and value comes from the guest.
 *
 * - identification: magic "virt", version 2, the device ID, vendor "BHVM";
 * - features: DeviceFeatures / DriverFeatures in 32-bit words by their
 *   selectors; FEATURES_OK is kept only when the driver's features are a
 *   subset of the offered ones and include VERSION_1, and the driver's
 *   features are read only from then on;
 * - queues: QueueSel; QueueNumMax; QueueNum (a power of two up to the
 *   maximum), the ring addresses and QueueReady 1 only while the queue is
 *   not ready (QueueReady 1 with no size is refused: the glue checks the
 *   rings, virtq_setup); QueueNotify of a ready queue once DRIVER_OK is
 *   set and the device does not need a reset;
 * - InterruptStatus / InterruptACK; Status (0 resets; NEEDS_RESET sticks
 *   until a reset); ConfigGeneration; no shared memory regions;
 * - the device's configuration space at 0x100, read only, 1, 2 or 4 bytes
 *   naturally aligned (past its end reads 0).
 * Registers are 32-bit, naturally aligned; any other access is refused.
 */
#ifndef CORE_VIRTIO_MMIO_H
#define CORE_VIRTIO_MMIO_H

#include "lib/types.h"

#define VIRTIO_MMIO_SIZE       0x1000u /* the trapped page */
#define VIRTIO_MMIO_QUEUES     2u
#define VIRTIO_MMIO_CONFIG     0x100u
#define VIRTIO_MMIO_CONFIG_MAX 24u

/* Status bits */
#define VIRTIO_ST_ACK         1u
#define VIRTIO_ST_DRIVER      2u
#define VIRTIO_ST_DRIVER_OK   4u
#define VIRTIO_ST_FEATURES_OK 8u
#define VIRTIO_ST_NEEDS_RESET 64u
#define VIRTIO_ST_FAILED      128u

/* InterruptStatus bits */
#define VIRTIO_INT_USED   1u
#define VIRTIO_INT_CONFIG 2u

#define VIRTIO_F_RING_EVENT_IDX 29
#define VIRTIO_F_VERSION_1      32

struct virtio_mmio_queue {
	u16 num;
	bool ready;
	u64 desc, avail, used;
};

struct virtio_mmio {
	u32 device_id;
	u16 num_max;
	u64 dev_features; /* offered */
	u64 drv_features; /* the driver's (what it accepted once FEATURES_OK) */
	bool drv_high;    /* the driver wrote a feature word above 63 (not offered) */
	u32 dev_sel, drv_sel, queue_sel;
	u32 status, isr, generation;
	struct virtio_mmio_queue q[VIRTIO_MMIO_QUEUES];
	u8 config[VIRTIO_MMIO_CONFIG_MAX];
	u32 config_len;
	u32 refused; /* accesses and writes refused */
};

enum virtio_mmio_act {
	VIRTIO_MMIO_NONE,
	VIRTIO_MMIO_NOTIFY,    /* QueueNotify of queue *queue */
	VIRTIO_MMIO_RESET,     /* Status 0: the device was reset */
	VIRTIO_MMIO_READY,     /* QueueReady 1 of queue *queue: the glue sets it up or refuses */
	VIRTIO_MMIO_DRIVER_OK, /* DRIVER_OK was set */
	VIRTIO_MMIO_ACK,       /* InterruptACK */
	VIRTIO_MMIO_REFUSED,   /* an access the transport refuses (the guest gets an abort) */
};

/* A device: its ID, offered features, queue size and configuration space
 * (len at most VIRTIO_MMIO_CONFIG_MAX); reset. */
void virtio_mmio_init(struct virtio_mmio *m, u32 device_id, u64 features, u16 num_max,
                      const u8 *config, u32 len);
/* Back to the state after init (Status 0): features, queues, interrupts. */
void virtio_mmio_reset(struct virtio_mmio *m);
/* The device stops (DEVICE_NEEDS_RESET, a configuration-change interrupt). */
void virtio_mmio_fail(struct virtio_mmio *m);
/* Config byte off (< the init's len) becomes val: a new ConfigGeneration
 * and a configuration-change interrupt when it changed. */
void virtio_mmio_config_set(struct virtio_mmio *m, u32 off, u8 val);
/* Whether queue i is usable: ready, DRIVER_OK and not failed. */
bool virtio_mmio_live(const struct virtio_mmio *m, u32 i);
/* Whether the driver accepted feature bit f (FEATURES_OK). */
bool virtio_mmio_has(const struct virtio_mmio *m, u32 f);

/* A read of size bytes at off: false (refused) for a bad access. */
bool virtio_mmio_read(struct virtio_mmio *m, u32 off, u32 size, u32 *val);
/* A write; queue is set for NOTIFY and READY. */
enum virtio_mmio_act virtio_mmio_write(struct virtio_mmio *m, u32 off, u32 size, u32 val,
                                       u32 *queue);

#endif
