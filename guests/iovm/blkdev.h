/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The I/O VM's disk, one interface over its drivers (as netdev.h for the
 * NIC): virtio-blk over virtio-mmio (QEMU virt, lib/vblk.c) and an SD card
 * behind an SD host controller (Zynq UltraScale+ sd0/sd1, sdhci.c). The
 * `disk_driver` parameter names the driver (the toolchain derives it from
 * the device's compatible string). One request at a time, polled.
 */
#ifndef IOVM_BLKDEV_H
#define IOVM_BLKDEV_H

#include "types.h"

#define BLKDEV_SECTOR 512u

/* Operations: the virtio-blk request types (vblk.h); statuses: VBLK_S_*. */
struct blkdev_stats {
	u64 requests, errors, timeouts;
};

struct blkdev_ops {
	const char *name;
	/* Brings up the device at base: NULL, or why it was refused. */
	const char *(*open)(uptr base);
	/* One request (VBLK_T_IN/OUT/FLUSH; len a multiple of a sector, at most
	 * 4 KiB, buf in one page) waited for at most timeout_ns: VBLK_S_* , -1
	 * if the device failed (every later call then returns -1), -2 for a bad
	 * argument. */
	int (*request)(u32 type, u64 sector, void *buf, u32 len, u64 timeout_ns);
	u64 (*capacity)(void); /* sectors */
	const struct blkdev_stats *(*stats)(void);
};

/* Selects the driver ("virtio" or "sdhci"; NULL: virtio) and opens the
 * device at base: NULL, or why not (an unknown driver, the driver's reason;
 * the disk is then failed, as by blkdev_fail). */
const char *blkdev_open(const char *driver, uptr base);
/* A disk that is no use (open refused, or too small for the configuration):
 * every later request returns -1, as a device that failed, and never
 * reaches it. */
void blkdev_fail(const char *why);
int blkdev_request(u32 type, u64 sector, void *buf, u32 len, u64 timeout_ns);
u64 blkdev_capacity(void);
const struct blkdev_stats *blkdev_stats(void);
const char *blkdev_name(void);

#endif
