// SPDX-License-Identifier: Apache-2.0
/* A polled virtio-blk driver, one request at a time (vblk.h), on the
 * transport and split-virtqueue library (virtio_mmio.c, virtq.c). */
#include "vblk.h"

#include "arch.h"
#include "timer.h"
#include "virtq.h"

#define QSIZE 4u /* one request: header, data, status */

struct req_hdr {
	u32 type;
	u32 reserved;
	u64 sector;
};

/* Each ring part, the header and the status in their own page, so one
 * translation covers each. */
static struct {
	VIRTQ_MEM(QSIZE, 4096);
	struct req_hdr hdr __aligned(4096);
	volatile u8 status __aligned(4096);
} mem;
static struct virtq vq;
static bool dead;

static u64 dma_of(const struct vblk *b, const void *p)
{
	return b->dma ? b->dma(p) : (uptr)p;
}

const char *vblk_open(struct vblk *b, uptr base, u64 (*dma)(const void *p))
{
	const char *why;
	u64 d, a, u;
	int rc;

	b->dma = dma;
	b->requests = b->errors = b->timeouts = 0;
	dead = true;
	why = vmmio_open(&b->mmio, base, VIRTIO_ID_BLOCK, BIT(VBLK_F_RO) | BIT(VBLK_F_FLUSH),
	                 &b->features);
	if (why)
		return why;
	d = dma_of(b, mem.desc);
	a = dma_of(b, mem.avail);
	u = dma_of(b, mem.used);
	if (!d || !a || !u || !dma_of(b, &mem.hdr) || !dma_of(b, (const void *)&mem.status)) {
		vmmio_fail(&b->mmio);
		return "no device address for the virtqueue";
	}
	virtq_init(&vq, QSIZE, mem.desc, mem.avail, mem.used, false);
	rc = vmmio_queue_setup(&b->mmio, 0, QSIZE, d, a, u);
	if (rc) {
		vmmio_fail(&b->mmio);
		return rc == -1 ? "the queue is live after the reset" : "the queue is too small";
	}
	b->capacity = vmmio_config64(&b->mmio, 0);
	vmmio_status_set(&b->mmio, VIRTIO_ST_DRIVER_OK);
	dead = false;
	return NULL;
}

static bool args_ok(u32 type, const void *buf, u32 len)
{
	if (len > VBLK_MAX_LEN || (len && ((uptr)buf & 0xfff) + len > 4096))
		return false;
	if (type == VBLK_T_IN || type == VBLK_T_OUT)
		return len && len % VBLK_SECTOR == 0;
	return type != VBLK_T_GET_ID || len;
}

int vblk_request(struct vblk *b, u32 type, u64 sector, void *buf, u32 len, u64 timeout_ns)
{
	u64 deadline, data = len ? dma_of(b, buf) : 0;
	u16 d = 0;
	u32 id, used_len;

	if (dead)
		return -1;
	if (!args_ok(type, buf, len) || (len && !data))
		return -2;
	mem.hdr = (struct req_hdr){ type, 0, sector };
	mem.status = 0xff;
	mem.desc[0] =
	    (struct virtq_desc){ dma_of(b, &mem.hdr), sizeof(mem.hdr), VIRTQ_DESC_F_NEXT, 1 };
	if (len) {
		d++;
		mem.desc[d] = (struct virtq_desc){
			data, len,
			(u16)(VIRTQ_DESC_F_NEXT | (type == VBLK_T_OUT ? 0 : VIRTQ_DESC_F_WRITE)),
			(u16)(d + 1)
		};
	}
	d++;
	mem.desc[d] =
	    (struct virtq_desc){ dma_of(b, (const void *)&mem.status), 1, VIRTQ_DESC_F_WRITE, 0 };
	virtq_push(&vq, 0);
	virtq_publish(&vq);
	dsb_sy();
	vmmio_notify(&b->mmio, 0);
	b->requests++;
	deadline = timer_now() + timer_ns_to_ticks(timeout_ns);
	while (!virtq_pop_used(&vq, &id, &used_len)) {
		if (timer_now() >= deadline) {
			b->timeouts++;
			dead = true;
			vmmio_fail(&b->mmio);
			return -1;
		}
		cpu_relax();
	}
	if (id != 0 || mem.status > VBLK_S_UNSUPP) {
		b->errors++;
		dead = true;
		vmmio_fail(&b->mmio);
		return -1;
	}
	if (mem.status != VBLK_S_OK)
		b->errors++;
	return mem.status;
}
