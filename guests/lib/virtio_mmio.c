// SPDX-License-Identifier: Apache-2.0
/* The driver side of a virtio-mmio transport (virtio_mmio.h). */
#include "virtio_mmio.h"

#include "arch.h"

#define VMMIO_RESET_POLLS 1000000u

u32 vmmio_read(const struct vmmio *d, u32 off)
{
	return mmio_read32(d->base + off);
}

void vmmio_write(const struct vmmio *d, u32 off, u32 val)
{
	mmio_write32(d->base + off, val);
}

int vmmio_probe(struct vmmio *d, uptr base)
{
	d->base = base;
	d->version = 0;
	d->device_id = 0;
	if (vmmio_read(d, VMMIO_MAGIC) != VMMIO_MAGIC_VALUE)
		return -1;
	d->version = vmmio_read(d, VMMIO_VERSION);
	d->device_id = vmmio_read(d, VMMIO_DEVICE_ID);
	return 0;
}

bool vmmio_reset(const struct vmmio *d)
{
	u32 i;

	vmmio_write(d, VMMIO_STATUS, 0);
	for (i = 0; i < VMMIO_RESET_POLLS; i++) {
		if (vmmio_read(d, VMMIO_STATUS) == 0)
			return true;
		cpu_relax();
	}
	return false;
}

u32 vmmio_status(const struct vmmio *d)
{
	return vmmio_read(d, VMMIO_STATUS);
}

void vmmio_status_set(const struct vmmio *d, u32 bits)
{
	vmmio_write(d, VMMIO_STATUS, vmmio_status(d) | bits);
}

u64 vmmio_device_features(const struct vmmio *d)
{
	u64 f;

	vmmio_write(d, VMMIO_DEV_FEAT_SEL, 1);
	f = (u64)vmmio_read(d, VMMIO_DEV_FEATURES) << 32;
	vmmio_write(d, VMMIO_DEV_FEAT_SEL, 0);
	return f | vmmio_read(d, VMMIO_DEV_FEATURES);
}

bool vmmio_features_ok(const struct vmmio *d, u64 features)
{
	vmmio_write(d, VMMIO_DRV_FEAT_SEL, 0);
	vmmio_write(d, VMMIO_DRV_FEATURES, (u32)features);
	vmmio_write(d, VMMIO_DRV_FEAT_SEL, 1);
	vmmio_write(d, VMMIO_DRV_FEATURES, (u32)(features >> 32));
	vmmio_status_set(d, VIRTIO_ST_FEATURES_OK);
	return (vmmio_status(d) & VIRTIO_ST_FEATURES_OK) != 0;
}

u32 vmmio_queue_max(const struct vmmio *d, u32 sel)
{
	vmmio_write(d, VMMIO_QUEUE_SEL, sel);
	return vmmio_read(d, VMMIO_QUEUE_NUM_MAX);
}

bool vmmio_queue_ready(const struct vmmio *d, u32 sel)
{
	vmmio_write(d, VMMIO_QUEUE_SEL, sel);
	return vmmio_read(d, VMMIO_QUEUE_READY) != 0;
}

static void vmmio_write64(const struct vmmio *d, u32 off, u64 val)
{
	vmmio_write(d, off, (u32)val);
	vmmio_write(d, off + 4, (u32)(val >> 32));
}

int vmmio_queue_setup(const struct vmmio *d, u32 sel, u32 size, u64 desc, u64 avail, u64 used)
{
	if (vmmio_queue_ready(d, sel))
		return -1;
	if (vmmio_read(d, VMMIO_QUEUE_NUM_MAX) < size)
		return -2;
	vmmio_write(d, VMMIO_QUEUE_NUM, size);
	vmmio_write64(d, VMMIO_QUEUE_DESC, desc);
	vmmio_write64(d, VMMIO_QUEUE_DRIVER, avail);
	vmmio_write64(d, VMMIO_QUEUE_DEVICE, used);
	dsb_sy(); /* the rings' initial contents before the device may use them */
	vmmio_write(d, VMMIO_QUEUE_READY, 1);
	return 0;
}

void vmmio_notify(const struct vmmio *d, u32 sel)
{
	vmmio_write(d, VMMIO_QUEUE_NOTIFY, sel);
}

u32 vmmio_irq_ack(const struct vmmio *d)
{
	u32 s = vmmio_read(d, VMMIO_IRQ_STATUS);

	if (s)
		vmmio_write(d, VMMIO_IRQ_ACK, s);
	return s;
}

u8 vmmio_config8(const struct vmmio *d, u32 off)
{
	return *(volatile const u8 *)(d->base + VMMIO_CONFIG + off);
}

u32 vmmio_config32(const struct vmmio *d, u32 off)
{
	return vmmio_read(d, VMMIO_CONFIG + off);
}

u64 vmmio_config64(const struct vmmio *d, u32 off)
{
	u32 gen, lo, hi;

	do {
		gen = vmmio_read(d, VMMIO_CONFIG_GEN);
		lo = vmmio_config32(d, off);
		hi = vmmio_config32(d, off + 4);
	} while (vmmio_read(d, VMMIO_CONFIG_GEN) != gen);
	return (u64)hi << 32 | lo;
}

void vmmio_fail(const struct vmmio *d)
{
	vmmio_status_set(d, VIRTIO_ST_FAILED);
}

const char *vmmio_open(struct vmmio *d, uptr base, u32 id, u64 wanted, u64 *features)
{
	u64 offered;

	if (vmmio_probe(d, base))
		return "no virtio-mmio transport there (magic)";
	if (d->version != 1 && d->version != 2)
		return "unknown transport version";
	if (d->device_id != id)
		return d->device_id ? "another kind of device on this transport"
		                    : "no device behind this transport";
	if (!vmmio_reset(d))
		return "the device did not complete its reset";
	vmmio_status_set(d, VIRTIO_ST_ACK);
	vmmio_status_set(d, VIRTIO_ST_DRIVER);
	offered = vmmio_device_features(d);
	/* A legacy (version 1) transport offers no VERSION_1 either: refused here. */
	if (!(offered & BIT(VIRTIO_F_VERSION_1))) {
		vmmio_fail(d);
		return "device offers no VIRTIO_F_VERSION_1";
	}
	if (d->version != 2) {
		vmmio_fail(d);
		return "VERSION_1 on a legacy transport";
	}
	*features = (offered & wanted) | BIT(VIRTIO_F_VERSION_1);
	if (!vmmio_features_ok(d, *features)) {
		vmmio_fail(d);
		return "the device did not accept the features (FEATURES_OK)";
	}
	return NULL;
}
