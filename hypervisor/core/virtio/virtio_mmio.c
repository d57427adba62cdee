/* SPDX-License-Identifier: Apache-2.0 */
#include "core/virtio/virtio_mmio.h"

#include "lib/string.h"

enum {
	R_MAGIC = 0x000,
	R_VERSION = 0x004,
	R_DEVICE_ID = 0x008,
	R_VENDOR_ID = 0x00c,
	R_DEV_FEATURES = 0x010,
	R_DEV_FEATURES_SEL = 0x014,
	R_DRV_FEATURES = 0x020,
	R_DRV_FEATURES_SEL = 0x024,
	R_QUEUE_SEL = 0x030,
	R_QUEUE_NUM_MAX = 0x034,
	R_QUEUE_NUM = 0x038,
	R_QUEUE_READY = 0x044,
	R_QUEUE_NOTIFY = 0x050,
	R_INT_STATUS = 0x060,
	R_INT_ACK = 0x064,
	R_STATUS = 0x070,
	R_QUEUE_DESC_LO = 0x080,
	R_QUEUE_DESC_HI = 0x084,
	R_QUEUE_AVAIL_LO = 0x090,
	R_QUEUE_AVAIL_HI = 0x094,
	R_QUEUE_USED_LO = 0x0a0,
	R_QUEUE_USED_HI = 0x0a4,
	R_SHM_LEN_LO = 0x0b0,
	R_SHM_LEN_HI = 0x0b4,
	R_SHM_BASE_LO = 0x0b8,
	R_SHM_BASE_HI = 0x0bc,
	R_CONFIG_GEN = 0x0fc,
};

#define MAGIC  0x74726976u /* "virt" */
#define VENDOR 0x4d564842u /* "BHVM" */

void virtio_mmio_init(struct virtio_mmio *m, u32 device_id, u64 features, u16 num_max,
                      const u8 *config, u32 len)
{
	memset(m, 0, sizeof(*m));
	m->device_id = device_id;
	m->dev_features = features;
	m->num_max = num_max;
	m->config_len = MIN(len, VIRTIO_MMIO_CONFIG_MAX);
	memcpy(m->config, config, m->config_len);
}

void virtio_mmio_reset(struct virtio_mmio *m)
{
	m->drv_features = 0;
	m->drv_high = false;
	m->dev_sel = m->drv_sel = m->queue_sel = 0;
	m->status = m->isr = 0;
	memset(m->q, 0, sizeof(m->q));
}

void virtio_mmio_fail(struct virtio_mmio *m)
{
	if (m->status & VIRTIO_ST_NEEDS_RESET)
		return;
	m->status |= VIRTIO_ST_NEEDS_RESET;
	m->isr |= VIRTIO_INT_CONFIG;
	m->generation++;
}

void virtio_mmio_config_set(struct virtio_mmio *m, u32 off, u8 val)
{
	if (off >= m->config_len || m->config[off] == val)
		return;
	m->config[off] = val;
	m->isr |= VIRTIO_INT_CONFIG;
	m->generation++;
}

bool virtio_mmio_live(const struct virtio_mmio *m, u32 i)
{
	return i < VIRTIO_MMIO_QUEUES && m->q[i].ready &&
	       (m->status & (VIRTIO_ST_DRIVER_OK | VIRTIO_ST_NEEDS_RESET)) == VIRTIO_ST_DRIVER_OK;
}

bool virtio_mmio_has(const struct virtio_mmio *m, u32 f)
{
	return f < 64 && (m->status & VIRTIO_ST_FEATURES_OK) && (m->drv_features & BIT(f));
}

static struct virtio_mmio_queue *sel(struct virtio_mmio *m)
{
	return m->queue_sel < VIRTIO_MMIO_QUEUES ? &m->q[m->queue_sel] : NULL;
}

static u32 word(u64 v, u32 sel)
{
	return sel == 0 ? (u32)v : sel == 1 ? (u32)(v >> 32) : 0;
}

static bool config_read(const struct virtio_mmio *m, u32 off, u32 size, u32 *val)
{
	u32 rel = off - VIRTIO_MMIO_CONFIG;

	if ((size != 1 && size != 2 && size != 4) || (off & (size - 1)))
		return false;
	*val = 0;
	for (u32 i = 0; i < size; i++)
		if (rel + i < m->config_len)
			*val |= (u32)m->config[rel + i] << (8 * i);
	return true;
}

bool virtio_mmio_read(struct virtio_mmio *m, u32 off, u32 size, u32 *val)
{
	const struct virtio_mmio_queue *q = sel(m);

	if (off >= VIRTIO_MMIO_SIZE)
		goto refused;
	if (off >= VIRTIO_MMIO_CONFIG) {
		if (!config_read(m, off, size, val))
			goto refused;
		return true;
	}
	if (size != 4 || (off & 3))
		goto refused;
	switch (off) {
	case R_MAGIC:
		*val = MAGIC;
		break;
	case R_VERSION:
		*val = 2;
		break;
	case R_DEVICE_ID:
		*val = m->device_id;
		break;
	case R_VENDOR_ID:
		*val = VENDOR;
		break;
	case R_DEV_FEATURES:
		*val = word(m->dev_features, m->dev_sel);
		break;
	case R_QUEUE_NUM_MAX:
		*val = q ? m->num_max : 0;
		break;
	case R_QUEUE_READY:
		*val = q ? q->ready : 0;
		break;
	case R_INT_STATUS:
		*val = m->isr;
		break;
	case R_STATUS:
		*val = m->status;
		break;
	case R_SHM_LEN_LO:
	case R_SHM_LEN_HI:
	case R_SHM_BASE_LO:
	case R_SHM_BASE_HI:
		*val = ~0u; /* no shared memory region */
		break;
	case R_CONFIG_GEN:
		*val = m->generation;
		break;
	default:
		*val = 0; /* write-only and reserved registers */
		break;
	}
	return true;
refused:
	m->refused++;
	return false;
}

/* FEATURES_OK: kept only for a subset of the offered features with VERSION_1. */
static u32 features_ok(const struct virtio_mmio *m, u32 status)
{
	if (!(status & VIRTIO_ST_FEATURES_OK) || (m->status & VIRTIO_ST_FEATURES_OK))
		return status;
	if (m->drv_high || (m->drv_features & ~m->dev_features) ||
	    !(m->drv_features & BIT(VIRTIO_F_VERSION_1)))
		return status & ~VIRTIO_ST_FEATURES_OK;
	return status;
}

static enum virtio_mmio_act status_write(struct virtio_mmio *m, u32 val)
{
	u32 old = m->status;

	if (val == 0) {
		virtio_mmio_reset(m);
		return VIRTIO_MMIO_RESET;
	}
	val &= 0xff & ~VIRTIO_ST_NEEDS_RESET;
	if (!(val & VIRTIO_ST_FEATURES_OK) && (old & VIRTIO_ST_FEATURES_OK)) {
		m->refused++; /* features are final until a reset */
		val |= VIRTIO_ST_FEATURES_OK;
	}
	val = features_ok(m, val);
	if ((val & VIRTIO_ST_DRIVER_OK) && !(val & VIRTIO_ST_FEATURES_OK))
		val &= ~VIRTIO_ST_DRIVER_OK; /* not before the features are agreed */
	m->status = val | (old & VIRTIO_ST_NEEDS_RESET);
	if ((m->status & VIRTIO_ST_DRIVER_OK) && !(old & VIRTIO_ST_DRIVER_OK))
		return VIRTIO_MMIO_DRIVER_OK;
	return VIRTIO_MMIO_NONE;
}

/* A write to the selected queue's size, addresses or ready. */
static enum virtio_mmio_act queue_write(struct virtio_mmio *m, u32 off, u32 val, u32 *queue)
{
	struct virtio_mmio_queue *q = sel(m);
	u64 *addr = NULL;

	if (!q || (q->ready && !(off == R_QUEUE_READY && val == 0)))
		goto refused;
	switch (off) {
	case R_QUEUE_NUM:
		if (!val || val > m->num_max || (val & (val - 1)))
			goto refused;
		q->num = (u16)val;
		return VIRTIO_MMIO_NONE;
	case R_QUEUE_READY:
		if (val == 0) {
			q->ready = false;
			return VIRTIO_MMIO_NONE;
		}
		if (val != 1 || !q->num)
			goto refused;
		*queue = m->queue_sel;
		return VIRTIO_MMIO_READY;
	case R_QUEUE_DESC_LO:
	case R_QUEUE_DESC_HI:
		addr = &q->desc;
		break;
	case R_QUEUE_AVAIL_LO:
	case R_QUEUE_AVAIL_HI:
		addr = &q->avail;
		break;
	default:
		addr = &q->used;
		break;
	}
	if (off & 4)
		*addr = (*addr & 0xffffffffull) | (u64)val << 32;
	else
		*addr = (*addr & ~0xffffffffull) | val;
	return VIRTIO_MMIO_NONE;
refused:
	m->refused++;
	return VIRTIO_MMIO_NONE;
}

enum virtio_mmio_act virtio_mmio_write(struct virtio_mmio *m, u32 off, u32 size, u32 val,
                                       u32 *queue)
{
	if (off >= VIRTIO_MMIO_CONFIG && off < VIRTIO_MMIO_SIZE &&
	    (size == 1 || size == 2 || size == 4) && !(off & (size - 1))) {
		m->refused++; /* the configuration space is read only: dropped */
		return VIRTIO_MMIO_NONE;
	}
	if (size != 4 || (off & 3) || off >= VIRTIO_MMIO_CONFIG) {
		m->refused++;
		return VIRTIO_MMIO_REFUSED;
	}
	switch (off) {
	case R_DEV_FEATURES_SEL:
		m->dev_sel = val;
		return VIRTIO_MMIO_NONE;
	case R_DRV_FEATURES_SEL:
		m->drv_sel = val;
		return VIRTIO_MMIO_NONE;
	case R_DRV_FEATURES:
		if (m->status & VIRTIO_ST_FEATURES_OK) {
			m->refused++;
		} else if (m->drv_sel < 2) {
			u32 sh = 32 * m->drv_sel;

			m->drv_features = (m->drv_features & ~(0xffffffffull << sh)) | (u64)val
			                                                                   << sh;
		} else if (val) {
			m->drv_high = true;
		}
		return VIRTIO_MMIO_NONE;
	case R_QUEUE_SEL:
		m->queue_sel = val;
		return VIRTIO_MMIO_NONE;
	case R_QUEUE_NUM:
	case R_QUEUE_READY:
	case R_QUEUE_DESC_LO:
	case R_QUEUE_DESC_HI:
	case R_QUEUE_AVAIL_LO:
	case R_QUEUE_AVAIL_HI:
	case R_QUEUE_USED_LO:
	case R_QUEUE_USED_HI:
		return queue_write(m, off, val, queue);
	case R_QUEUE_NOTIFY:
		if (!virtio_mmio_live(m, val))
			return VIRTIO_MMIO_NONE;
		*queue = val;
		return VIRTIO_MMIO_NOTIFY;
	case R_INT_ACK:
		m->isr &= ~val;
		return VIRTIO_MMIO_ACK;
	case R_STATUS:
		return status_write(m, val);
	default:
		m->refused++; /* read-only and reserved registers */
		return VIRTIO_MMIO_NONE;
	}
}
