/* SPDX-License-Identifier: Apache-2.0 */
#include "core/virtio/virtio.h"

#include "core/config/config.h"
#include "core/irq/irq.h"
#include "core/mem/mem.h"
#include "core/vgic/vgic.h"
#include "core/virtio/vcopy.h"
#include "core/virtio/virtio_mmio.h"
#include "core/virtio/vblk.h"
#include "core/virtio/vnet.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "arch/aarch64/cpu.h"
#include "drivers/gic/gic.h"
#include "lib/log.h"
#include "lib/spinlock.h"
#include "lib/string.h"

#define VIRTIO_ID_NET 1
#define VIRTIO_ID_BLK 2
#define SLOT_SIZE     2048u
#define BLK_SLOT_SIZE (VBLK_SLOT_HDR + VBLK_PART)
#define CTRL_SIZE     4096u
#define CTRL_MAGIC    0x474e5249u /* "IRNG": the I/O VM reset the rings */
/* words of the control page (guests/lib/include/ioring.h struct ioring_ctrl,
 * blkring.h struct blkring_ctrl) */
#define CTRL_CLIENT_STATE   0x14 /* client_state: the bridge writes it for the client */
#define CTRL_IO_POLLING     0x48 /* io_polling */
#define CTRL_TX_WAIT        0x50 /* client_tx_wait: the bridge writes it for the client */
#define BLK_CTRL_IO_POLLING 0x50 /* blkring io_polling */
#define BLK_FEATURES                                                                        \
	(BIT(VIRTIO_F_VERSION_1) | BIT(VIRTIO_BLK_F_SIZE_MAX) | BIT(VIRTIO_BLK_F_SEG_MAX) | \
	 BIT(VIRTIO_BLK_F_BLK_SIZE) | BIT(VIRTIO_BLK_F_FLUSH) | BIT(VIRTIO_F_RING_EVENT_IDX))
#define BLK_SEG_MAX  (VIRTQ_MAX_SEGS - 2) /* data descriptors of a request */
#define BLK_SIZE_MAX (VBLK_DATA_MAX / BLK_SEG_MAX / VBLK_PART * VBLK_PART) /* bytes of one */
#define STATE_READY  1u
#define STATE_DONE   2u
#define NET_FEATURES                                                                      \
	(BIT(VIRTIO_F_VERSION_1) | BIT(VIRTIO_NET_F_CSUM) | BIT(VIRTIO_NET_F_HOST_TSO4) | \
	 BIT(VIRTIO_NET_F_MAC) | BIT(VIRTIO_NET_F_MRG_RXBUF) | BIT(VIRTIO_NET_F_STATUS) | \
	 BIT(VIRTIO_F_RING_EVENT_IDX))

struct virtio_dev {
	struct vm *vm;
	const struct cfg_virtio *cfg;
	u64 ring_ipa;      /* the client's region */
	struct vm *iovm;   /* the peer that maps it (the I/O VM) */
	u32 iovm_doorbell; /* its doorbell INTID for the region */
	spinlock_t lock;   /* regs, net and blk (LOCK_RANK_LEAF): the client's CPUs */
	struct virtio_mmio regs;
	struct vnet net;     /* a network device's */
	struct vblk *blk;    /* a block device's (blks[]) */
	u32 rx_pending;      /* the I/O VM rang: receive work for the client's CPU */
	u32 tx_wait;         /* the client_tx_wait value of its last wait */
	u64 tx_waits;        /* times it waited for room in the tx ring */
	u64 notifies, kicks; /* QueueNotify writes; receive SGIs sent */
	u64 doorbells, irqs; /* I/O VM doorbells rung; device interrupts raised */
	int error;           /* the virtqueue error that stopped the device, 0: none */
	u32 stops;           /* times it stopped (each error after a reset) */
	bool link;           /* a network device's link is up (dev_link) */
};

/* by VM id: its network (0) and block (1) devices */
static struct virtio_dev devs[CFG_MAX_CPUS][2];
static struct vblk blks[CFG_MAX_CPUS];

static const char *dev_name(const struct virtio_dev *d)
{
	return d->blk ? "virtio-blk" : "virtio-net";
}

/* --- the client's RAM and rings, through its stage 2 --- */

static bool ram_valid(void *ctx, u64 ipa, u64 len)
{
	struct virtio_dev *d = ctx;
	u64 pa;

	if (ipa + len < ipa)
		return false;
	for (u64 p = ALIGN_DOWN(ipa, SZ_4K); p < ipa + len; p += SZ_4K)
		if (!mem_ipa_to_pa(d->vm, p, &pa))
			return false;
	return true;
}

/* As mem_copy_from_vm / mem_copy_to_vm, page by page, with vcopy's words:
 * the bridge's one copy path for frames, requests and ring slots. */
static bool ram_copy(struct virtio_dev *d, u64 ipa, u8 *buf, u64 len, bool to_vm)
{
	while (len) {
		u64 pa, chunk = MIN(SZ_4K - (ipa & (SZ_4K - 1)), len);

		if (!mem_ipa_to_pa(d->vm, ipa, &pa))
			return false;
		if (to_vm)
			vcopy((void *)(uintptr_t)pa, buf, chunk);
		else
			vcopy(buf, (const void *)(uintptr_t)pa, chunk);
		ipa += chunk;
		buf += chunk;
		len -= chunk;
	}
	return true;
}

static bool ram_read(void *ctx, u64 ipa, void *dst, u64 len)
{
	return ram_copy(ctx, ipa, dst, len, false);
}

static bool ram_write(void *ctx, u64 ipa, const void *src, u64 len)
{
	return ram_copy(ctx, ipa, (u8 *)(uintptr_t)src, len, true);
}

/* A slot of the region (none crosses a page: slots are 2 KiB from a page). */
static struct vnet_slot *ring_slot(void *ctx, bool rx, u32 i)
{
	struct virtio_dev *d = ctx;
	u64 pa, ipa = d->ring_ipa + CTRL_SIZE + ((rx ? d->cfg->queue : 0) + (u64)i) * SLOT_SIZE;

	if (i >= d->cfg->queue || !mem_ipa_to_pa(d->vm, ipa, &pa))
		return NULL;
	return (struct vnet_slot *)(uintptr_t)pa;
}

/* Slot i of the block rings: its header (which never crosses a page:
 * slots are 64 bytes after a multiple of 64 from a page), its data copied
 * through the client's stage 2. */
static u64 blk_slot_ipa(const struct virtio_dev *d, bool rsp, u32 i)
{
	return d->ring_ipa + CTRL_SIZE + ((rsp ? d->cfg->queue : 0) + (u64)i) * BLK_SLOT_SIZE;
}

static struct vblk_slot *blk_slot(void *ctx, bool rsp, u32 i)
{
	struct virtio_dev *d = ctx;
	u64 pa;

	if (i >= d->cfg->queue || !mem_ipa_to_pa(d->vm, blk_slot_ipa(d, rsp, i), &pa))
		return NULL;
	return (struct vblk_slot *)(uintptr_t)pa;
}

static bool blk_copy(void *ctx, bool rsp, u32 i, u32 off, void *buf, u32 len, bool to_slot)
{
	struct virtio_dev *d = ctx;
	u64 ipa = blk_slot_ipa(d, rsp, i) + VBLK_SLOT_HDR + off;

	if (i >= d->cfg->queue || off > VBLK_PART || len > VBLK_PART - off)
		return false;
	return ram_copy(d, ipa, buf, len, to_slot);
}

/* A word of the region's control page, or NULL. */
static u32 *ctrl_word(struct virtio_dev *d, u32 off)
{
	u64 pa;

	return mem_ipa_to_pa(d->vm, d->ring_ipa + off, &pa) ? (u32 *)(uintptr_t)pa : NULL;
}

/* --- the bridge, under d->lock --- */

struct virtio_out {
	bool irq;      /* raise the device's interrupt */
	bool doorbell; /* ring the I/O VM */
};

#define STOP_LOG_LIMIT 8 /* stops logged per device; the rest only counted (stops=) */

static void dev_fail(struct virtio_dev *d, int err, const char *what, struct virtio_out *o)
{
	if (!d->error) {
		d->error = err;
		if (++d->stops <= STOP_LOG_LIMIT)
			log_info("vm %s: %s %s: virtqueue error %d, device stopped (needs reset)",
			         d->vm->cfg->name, dev_name(d), what, err);
		else if (d->stops == STOP_LOG_LIMIT + 1)
			log_info("vm %s: %s: further stops not reported (counted: stops=)",
			         d->vm->cfg->name, dev_name(d));
	}
	virtio_mmio_fail(&d->regs);
	o->irq = true;
}

static void used_irq(struct virtio_dev *d, const struct virtq_mem *m, struct virtq *q,
                     struct virtio_out *o)
{
	if (virtq_need_irq(q, m)) {
		d->regs.isr |= VIRTIO_INT_USED;
		o->irq = true;
	}
}

/* Transmit: bounded by the queue size, once more if the driver added while
 * the device asked for its next notification. A full tx ring leaves the
 * chains queued and asks the I/O VM for a doorbell when it frees a slot
 * (client_tx_wait, a new value per wait), then looks once more. */
static void dev_tx(struct virtio_dev *d, const struct virtq_mem *m, const struct vnet_rings *r,
                   struct virtio_out *o)
{
	u32 *magic = ctrl_word(d, 0), *wait = ctrl_word(d, CTRL_TX_WAIT);
	bool waited = false;
	int n;

	if (!magic || !wait || __atomic_load_n(magic, __ATOMIC_ACQUIRE) != CTRL_MAGIC) {
		/* the I/O VM has not set the rings up: no link yet, the frames are
		 * dropped (checked all the same) */
		n = vnet_tx_drop(&d->net, m, d->net.q[1].num);
		if (n < 0)
			dev_fail(d, n, "transmit", o);
		else
			used_irq(d, m, &d->net.q[1], o);
		virtq_want_notify(&d->net.q[1], m);
		return;
	}
	for (u32 pass = 0; pass < 3; pass++) {
		u64 full = d->net.st.tx_full;

		n = vnet_tx(&d->net, m, r, d->net.q[1].num);
		if (n < 0) {
			dev_fail(d, n, "transmit", o);
			return;
		}
		if (n)
			o->doorbell = true;
		used_irq(d, m, &d->net.q[1], o);
		if (d->net.st.tx_full != full) {
			if (waited)
				break; /* still full: the I/O VM rings once it frees a slot */
			if (++d->tx_wait == 0)
				d->tx_wait = 1;
			__atomic_store_n(wait, d->tx_wait, __ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the wait before the last look */
			waited = true;
			d->tx_waits++;
			continue;
		}
		if (!virtq_want_notify(&d->net.q[1], m))
			break;
	}
}

static void dev_rx(struct virtio_dev *d, const struct virtq_mem *m, const struct vnet_rings *r,
                   struct virtio_out *o)
{
	int n = vnet_rx_all(&d->net, m, r);

	if (n < 0) {
		dev_fail(d, n, "receive", o);
		return;
	}
	used_irq(d, m, &d->net.q[0], o);
}

/* Block: the I/O VM's responses into the client's buffers, then its new
 * requests into the request ring (bounded by the ring and the queue size;
 * once more if it added while the device asked for its next notification).
 * Before the I/O VM has set the rings up, requests wait in the virtqueue
 * (it rings the client once it has). */
static void dev_blk(struct virtio_dev *d, const struct virtq_mem *m, struct virtio_out *o)
{
	struct vblk_rings r = {
		.slot = blk_slot, .copy = blk_copy, .ctx = d, .nslots = d->cfg->queue
	};
	u32 *magic = ctrl_word(d, 0);
	bool used = false;
	int n;

	if (!magic || __atomic_load_n(magic, __ATOMIC_ACQUIRE) != VBLK_CTRL_MAGIC)
		return;
	n = vblk_complete(d->blk, m, &r, r.nslots);
	if (n < 0) {
		dev_fail(d, n, "completion", o);
		return;
	}
	used = n > 0;
	for (u32 pass = 0; pass < 2; pass++) {
		n = vblk_submit(d->blk, m, &r, d->blk->q.num, &used);
		if (n < 0) {
			dev_fail(d, n, "request", o);
			return;
		}
		if (n)
			o->doorbell = true;
		if (!virtq_want_notify(&d->blk->q, m))
			break;
	}
	if (used)
		used_irq(d, m, &d->blk->q, o);
}

/* Raises what the bridge decided, outside the device's lock. */
static void dev_out(struct virtio_dev *d, const struct virtio_out *o)
{
	u32 *polling = ctrl_word(d, d->blk ? BLK_CTRL_IO_POLLING : CTRL_IO_POLLING);

	if (o->irq) {
		d->irqs++;
		vgic_inject(d->vm, NULL, d->cfg->irq);
	}
	if (o->doorbell && d->iovm && d->iovm->state == VM_RUNNING) {
		/* as ioring_peer_polling: the slots before the I/O VM's flag */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!polling || __atomic_load_n(polling, __ATOMIC_RELAXED) != 1) {
			d->doorbells++;
			vgic_inject(d->iovm, NULL, d->iovm_doorbell);
		}
	}
}

/* The link comes up when the I/O VM has set the rings up (it rings the
 * client then): VIRTIO_NET_S_LINK_UP and a configuration change. It stays
 * up: the rings outlive the device. */
static void dev_link(struct virtio_dev *d, struct virtio_out *o)
{
	u32 *magic = ctrl_word(d, 0);

	if (d->link || !magic || __atomic_load_n(magic, __ATOMIC_ACQUIRE) != CTRL_MAGIC)
		return;
	d->link = true;
	virtio_mmio_config_set(&d->regs, 6, 1);
	o->irq = true;
}

static void dev_work(struct virtio_dev *d, bool tx, bool rx)
{
	struct virtq_mem m = { .read = ram_read, .write = ram_write, .valid = ram_valid, .ctx = d };
	struct vnet_rings r = { .slot = ring_slot, .ctx = d, .nslots = d->cfg->queue };
	struct virtio_out o = { false, false };

	/* a ring that came while the client's VM was not running (virtio_sgi
	 * leaves it) is served now: else it would hold back every later kick */
	if (__atomic_exchange_n(&d->rx_pending, 0, __ATOMIC_ACQ_REL))
		rx = tx = true;
	spin_lock(&d->lock);
	if (!d->blk)
		dev_link(d, &o);
	if (d->blk && virtio_mmio_live(&d->regs, 0))
		dev_blk(d, &m, &o);
	if (!d->blk && rx && virtio_mmio_live(&d->regs, 0))
		dev_rx(d, &m, &r, &o);
	if (!d->blk && tx && virtio_mmio_live(&d->regs, 1))
		dev_tx(d, &m, &r, &o);
	spin_unlock(&d->lock);
	dev_out(d, &o);
}

/* --- the transport --- */

static void dev_reset_locked(struct virtio_dev *d)
{
	struct vnet keep = d->net;

	virtio_mmio_reset(&d->regs);
	d->error = 0;
	if (d->blk) {
		/* requests in flight are forgotten, their responses dropped */
		vblk_reset(d->blk);
		return;
	}
	/* The rings' positions are the I/O VM's too: they outlive the device
	 * (the I/O VM resets the rings only when it starts). */
	d->net = (struct vnet){
		.st = keep.st, .tx_pos = keep.tx_pos, .rx_pos = keep.rx_pos, .seq = keep.seq
	};
	d->error = 0;
}

/* QueueReady 1: the queue is set up if its rings are in the client's RAM. */
static void queue_ready(struct virtio_dev *d, u32 i)
{
	struct virtq_mem m = { .read = ram_read, .write = ram_write, .valid = ram_valid, .ctx = d };
	struct virtio_mmio_queue *q = &d->regs.q[i];
	struct virtq *vq = d->blk ? (i ? NULL : &d->blk->q) : &d->net.q[i];

	if (vq && virtq_setup(vq, &m, q->num, q->desc, q->avail, q->used,
	                      virtio_mmio_has(&d->regs, VIRTIO_F_RING_EVENT_IDX)))
		q->ready = true;
	else
		d->regs.refused++;
}

/* The client's state in its control page, as a ring client writes it. */
static void client_state(struct virtio_dev *d, u32 state)
{
	u32 *w = ctrl_word(d, CTRL_CLIENT_STATE);

	if (w)
		__atomic_store_n(w, state, __ATOMIC_RELEASE);
}

static void driver_ok(struct virtio_dev *d)
{
	if (d->blk) {
		client_state(d, STATE_READY);
		return;
	}
	d->net.mrg = virtio_mmio_has(&d->regs, VIRTIO_NET_F_MRG_RXBUF);
	d->net.csum = virtio_mmio_has(&d->regs, VIRTIO_NET_F_CSUM);
	d->net.tso = d->net.csum && virtio_mmio_has(&d->regs, VIRTIO_NET_F_HOST_TSO4);
	client_state(d, STATE_READY);
}

static bool virtio_mmio(struct vcpu *v, struct mmio_access *a, void *dev)
{
	struct virtio_dev *d = dev;
	enum virtio_mmio_act act = VIRTIO_MMIO_NONE;
	u32 q = 0, val;
	bool ok = true;

	(void)v;
	if (a->size > 4)
		return false;
	spin_lock(&d->lock);
	if (!a->write) {
		ok = virtio_mmio_read(&d->regs, (u32)a->off, a->size, &val);
		a->val = val;
	} else {
		act = virtio_mmio_write(&d->regs, (u32)a->off, a->size, (u32)a->val, &q);
		if (act == VIRTIO_MMIO_RESET)
			dev_reset_locked(d);
		else if (act == VIRTIO_MMIO_READY)
			queue_ready(d, q);
		else if (act == VIRTIO_MMIO_DRIVER_OK)
			driver_ok(d);
		else if (act == VIRTIO_MMIO_NOTIFY)
			d->notifies++;
	}
	spin_unlock(&d->lock);
	if (act == VIRTIO_MMIO_NOTIFY)
		/* the transmit queue; the receive queue's new buffers take what
		 * waits in the rx ring (and a blocked transmit may go on) */
		dev_work(d, true, q == 0);
	return ok && act != VIRTIO_MMIO_REFUSED;
}

/* --- receive work on the client's CPU --- */

static void virtio_sgi(u32 intid)
{
	u32 cpu = cpu_index();

	(void)intid;
	for (u32 i = 0; i < vm_count * 2; i++) {
		struct virtio_dev *d = &devs[i / 2][i % 2];

		if (d->cfg && d->vm->vcpus[0]->pcpu == cpu && d->vm->state == VM_RUNNING &&
		    __atomic_exchange_n(&d->rx_pending, 0, __ATOMIC_ACQ_REL))
			dev_work(d, true, true);
	}
}

bool virtio_ring(struct vm *vm, u32 shm)
{
	for (u32 k = 0; k < 2; k++) {
		struct virtio_dev *d = &devs[vm->id][k];

		if (!d->cfg || d->cfg->shm != shm)
			continue;
		if (!__atomic_exchange_n(&d->rx_pending, 1, __ATOMIC_ACQ_REL)) {
			d->kicks++;
			gic_send_sgi(VIRTIO_SGI, vm->vcpus[0]->pcpu_mpidr);
		}
		return true;
	}
	return false;
}

void virtio_vm_reset(struct vm *vm)
{
	for (u32 k = 0; k < 2; k++) {
		struct virtio_dev *d = &devs[vm->id][k];

		if (!d->cfg)
			continue;
		spin_lock(&d->lock);
		dev_reset_locked(d);
		spin_unlock(&d->lock);
	}
}

static void blk_stop_log(const struct virtio_dev *d)
{
	const struct vblk_stats *st = &d->blk->st;

	log_info("vm %s: virtio-blk notifies=%lu reqs=%lu parts=%lu ioerr=%lu unsupp=%lu "
	         "ring_full=%lu rsp_bad=%lu stale=%lu kicks=%lu doorbells=%lu irqs=%lu "
	         "refused=%u stops=%u error=%d",
	         d->vm->cfg->name, d->notifies, st->reqs, st->parts, st->ioerr, st->unsupp,
	         st->ring_full, st->rsp_bad, st->stale, d->kicks, d->doorbells, d->irqs,
	         d->regs.refused, d->stops, d->error);
}

static void dev_stop(struct virtio_dev *d)
{
	struct vm *vm = d->vm;

	spin_lock(&d->lock);
	virtio_mmio_fail(&d->regs); /* nothing moves any more */
	client_state(d, STATE_DONE);
	spin_unlock(&d->lock);
	if (d->blk) {
		blk_stop_log(d);
		return;
	}
	log_info(
	    "vm %s: virtio-net notifies=%lu tx=%lu rx=%lu tx_full=%lu tx_waits=%lu tx_runt=%lu "
	    "tx_nolink=%lu tx_bad=%lu tx_tso=%lu rx_wait=%lu rx_short=%lu rx_bad=%lu kicks=%lu "
	    "doorbells=%lu irqs=%lu refused=%u stops=%u error=%d",
	    vm->cfg->name, d->notifies, d->net.st.tx_frames, d->net.st.rx_frames, d->net.st.tx_full,
	    d->tx_waits, d->net.st.tx_runt, d->net.st.tx_nolink, d->net.st.tx_bad, d->net.st.tx_tso,
	    d->net.st.rx_wait, d->net.st.rx_short, d->net.st.rx_bad, d->kicks, d->doorbells,
	    d->irqs, d->regs.refused, d->stops, d->error);
}

void virtio_vm_stop(struct vm *vm)
{
	for (u32 k = 0; k < 2; k++)
		if (devs[vm->id][k].cfg)
			dev_stop(&devs[vm->id][k]);
}

/* The peer VM mapping the client's region and its doorbell there. */
static void find_iovm(struct virtio_dev *d, const struct cfg_virtio *cv)
{
	u32 shm = d->vm->cfg->shmem[cv->shm].shmem;

	for (u32 i = 0; i < vm_count; i++) {
		const struct cfg_vm *c = vms[i].cfg;

		if (&vms[i] == d->vm)
			continue;
		for (u32 k = 0; k < c->nshmem; k++)
			if (c->shmem[k].shmem == shm && c->shmem[k].doorbell_irq) {
				d->iovm = &vms[i];
				d->iovm_doorbell = c->shmem[k].doorbell_irq;
			}
	}
}

/* Device k (0 network, 1 block) of VM i, as its configuration says. */
static void dev_init(u32 i, u32 k, const struct cfg_virtio *c)
{
	struct virtio_dev *d = &devs[i][k];
	u8 config[VIRTIO_MMIO_CONFIG_MAX] = { 0 };
	u32 type = k ? VIRTIO_ID_BLK : VIRTIO_ID_NET;

	if (c->type != type || c->shm >= vms[i].cfg->nshmem)
		panic("vm %s: bad virtio device", vms[i].cfg->name);
	d->vm = &vms[i];
	d->ring_ipa = vms[i].cfg->shmem[c->shm].ipa;
	spin_set_rank(&d->lock, LOCK_RANK_LEAF);
	find_iovm(d, c);
	if (k) {
		/* capacity (le64), size_max, seg_max (le32), no geometry, blk_size */
		u32 size_max = BLK_SIZE_MAX, seg_max = BLK_SEG_MAX, blk_size = VBLK_SECTOR;

		d->blk = &blks[i];
		d->blk->capacity = c->sectors;
		vblk_reset(d->blk);
		memcpy(config, &c->sectors, 8);
		memcpy(config + 8, &size_max, 4);
		memcpy(config + 12, &seg_max, 4);
		memcpy(config + 20, &blk_size, 4);
		virtio_mmio_init(&d->regs, type, BLK_FEATURES, VIRTQ_MAX_SIZE, config, 24);
	} else {
		for (u32 b = 0; b < 6; b++)
			config[b] = c->mac[b];
		config[6] = 0; /* status: no VIRTIO_NET_S_LINK_UP before the rings (dev_link) */
		virtio_mmio_init(&d->regs, type, NET_FEATURES, VIRTQ_MAX_SIZE, config, 8);
	}
	d->cfg = c;
	mmio_register(d->vm, c->ipa, VIRTIO_MMIO_SIZE, virtio_mmio, d);
	log_info("vm %s: %s at %lx (SPI %u), bridged to its region %u", d->vm->cfg->name,
	         dev_name(d), c->ipa, c->irq, c->shm);
}

void virtio_init(void)
{
	bool any = false;

	for (u32 i = 0; i < vm_count; i++) {
		if (vms[i].cfg->virtio) {
			dev_init(i, 0, vms[i].cfg->virtio);
			any = true;
		}
		if (vms[i].cfg->virtio_blk) {
			dev_init(i, 1, vms[i].cfg->virtio_blk);
			any = true;
		}
	}
	if (any)
		irq_register_hyp(VIRTIO_SGI, virtio_sgi);
}

void virtio_cpu_init(void)
{
	const struct vcpu *v = cpu_this()->vcpu;

	if (v && (v->vm->cfg->virtio || v->vm->cfg->virtio_blk))
		gic_enable(VIRTIO_SGI);
}
