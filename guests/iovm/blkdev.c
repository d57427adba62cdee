// SPDX-License-Identifier: Apache-2.0
/* The I/O VM's disk interface: dispatch to the selected driver (blkdev.h),
 * and the virtio-blk driver's adapter (lib/vblk.c). */
#include "blkdev.h"

#include "runtime.h"
#include "sdhci.h"
#include "vblk.h"

static struct vblk vdisk;
static struct blkdev_stats vstats;

static const char *virtio_open(uptr base)
{
	return vblk_open(&vdisk, base, bh_pa_of);
}

static int virtio_request(u32 type, u64 sector, void *buf, u32 len, u64 timeout_ns)
{
	/* without VIRTIO_BLK_F_FLUSH the device writes through */
	if (type == VBLK_T_FLUSH && !(vdisk.features & BIT(VBLK_F_FLUSH)))
		return VBLK_S_OK;
	return vblk_request(&vdisk, type, sector, buf, len, timeout_ns);
}

static u64 virtio_capacity(void)
{
	return vdisk.capacity;
}

static const struct blkdev_stats *virtio_stats(void)
{
	vstats = (struct blkdev_stats){ vdisk.requests, vdisk.errors, vdisk.timeouts };
	return &vstats;
}

static const struct blkdev_ops virtio_ops = { "virtio", virtio_open, virtio_request,
	                                      virtio_capacity, virtio_stats };
static const struct blkdev_ops *const blkdev_drivers[] = { &virtio_ops, &sdhci_ops };
static const struct blkdev_ops *bd = &virtio_ops;
static const char *failed; /* why the disk is no use, NULL while it works */

const char *blkdev_open(const char *driver, uptr base)
{
	u32 i;

	if (!driver)
		driver = "virtio";
	for (i = 0; i < sizeof(blkdev_drivers) / sizeof(blkdev_drivers[0]); i++) {
		if (!strcmp(blkdev_drivers[i]->name, driver)) {
			bd = blkdev_drivers[i];
			failed = bd->open(base);
			return failed;
		}
	}
	failed = "unknown disk driver (virtio, sdhci)";
	return failed;
}

void blkdev_fail(const char *why)
{
	failed = why;
}

int blkdev_request(u32 type, u64 sector, void *buf, u32 len, u64 timeout_ns)
{
	if (failed)
		return -1;
	return bd->request(type, sector, buf, len, timeout_ns);
}

u64 blkdev_capacity(void)
{
	return bd->capacity();
}

const struct blkdev_stats *blkdev_stats(void)
{
	return bd->stats();
}

const char *blkdev_name(void)
{
	return bd->name;
}
