// SPDX-License-Identifier: Apache-2.0
/*
 * blkserve: the shared disk (blkserve.h, docs/io.md "Shared disk").
 *
 * Each request is taken from its client's ring (checked there: blkring.c),
 * checked against the client's region (disk<i>_start, disk<i>_sectors) and
 * only then given to the device at the region's base: a request that
 * leaves the region gets IOERR and is counted (refused), and the device
 * never sees it. A request is taken only when the client's response slot is
 * free, so a client that never collects its responses stalls only itself.
 * Service order: iosched (weights disk<i>_weight, no caps), one request per
 * pick, at most one slot (4 KiB) each.
 * Params: disk_clients, disk_base, disk_sectors, disk<i>_{vm,shm,queue,weight,start,sectors};
 * max_ms (60000); stats_ms (1000).
 * A disk that is no use (blkdev_open refused it, or it is smaller than disk_sectors) fails
 * every request with IOERR, as one that fails while serving does: its clients see I/O errors,
 * the I/O VM goes on (the network too, when it serves both).
 * Lines: "iovm: disk <base> capacity <sectors> sectors, <n> clients, work-conserving" or
 * "iovm: disk (<driver>) at <base>: <why>: every request fails (IOERR)",
 * "iovm: ready", every stats_ms and at the end per client "iovm: disk client=<vm> reqs=..
 * read_bytes=.. written_bytes=.. refused=.. errors=.. malformed=.. iops=.. kib_s=.."
 * (iops, kib_s: served per time backlogged), at the end "iovm: disk client=<vm>
 * served_backlogged=.. backlog_us=.. share_permille=..", "iovm: disk device requests=..
 * errors=.. timeouts=.. doorbell_irqs=.. capacity_iops=.." (capacity: requests served per time
 * anyone was pending: what disk.iops states), "iovm: PASS" or "iovm: FAIL (<why>)".
 */
#include "blkserve.h"

#include "blkdev.h"
#include "blkring.h"
#include "ioring.h" /* the control-page states and polling flags, as for frames */
#include "iosched.h"
#include "runtime.h"
#include "vblk.h" /* the request types and statuses */

#define MAX_CLIENTS IOSCHED_MAX_CLIENTS
#define DEV_TIMEOUT 2000000000ull /* ns: a device request that takes longer fails the device */
#define ID_PREFIX   "bulkhead-disk"

struct bclient {
	const char *vm;
	u32 shm, queue, weight, doorbell_irq;
	u64 start, sectors;
	struct blkring_ctrl *ctrl;
	struct blkring req, rsp;
	u64 reqs, rd_bytes, wr_bytes, refused, errors;
	bool backlogged;
	u64 bl_start, bl_ticks, served_bl, slots_bl;
};

static struct bclient bc[MAX_CLIENTS];
static u32 nbc;
static struct iosched bsched;
static u8 iobuf[BLKRING_DATA_MAX] __aligned(4096);
static u64 doorbell_irqs;
/* The capacity measured: requests served per time someone was pending. */
static bool busy;
static u64 busy_since, busy_ticks, busy_reqs;
static u64 stats_ticks, next_stats; /* the counter lines' period and next time */

#define fail(...) rt_fail("iovm", __VA_ARGS__)

static u64 bparam(u32 i, const char *what, u64 def)
{
	char key[24];

	snprintf(key, sizeof(key), "disk%u_%s", i, what);
	return param_u64(key, def);
}

static void irq_doorbell(u32 intid)
{
	(void)intid; /* a wake-up only: the loop polls the rings */
	doorbell_irqs++;
}

static int setup_client(u32 i, u64 disk_sectors)
{
	struct bclient *c = &bc[i];
	struct bh_shmem_info sh;
	char key[24];
	void *mem;

	snprintf(key, sizeof(key), "disk%u_vm", i);
	c->vm = param_str(key);
	c->shm = (u32)bparam(i, "shm", ~0ull);
	c->queue = (u32)bparam(i, "queue", 0);
	c->weight = (u32)bparam(i, "weight", 1);
	c->start = bparam(i, "start", 0);
	c->sectors = bparam(i, "sectors", 0);
	if (!c->vm || !c->sectors || c->start > disk_sectors ||
	    c->sectors > disk_sectors - c->start)
		return fail("disk client %u: missing disk%u_vm or a region beyond the disk", i, i);
	if (bh_shmem_info(c->shm, &sh) != BH_OK || sh.size < blkring_region_size(c->queue))
		return fail("disk client %s: no region %u for %u slots", c->vm, c->shm, c->queue);
	mem = (void *)sh.ipa;
	c->ctrl = blkring_ctrl(mem);
	if (!blkring_attach(&c->req, blkring_req_mem(mem), c->queue) ||
	    !blkring_attach(&c->rsp, blkring_rsp_mem(mem, c->queue), c->queue))
		return fail("disk client %s: bad queue size %u", c->vm, c->queue);
	blkring_reset(&c->req);
	blkring_reset(&c->rsp);
	c->ctrl->version = BLKRING_VERSION;
	c->ctrl->nslots = c->queue;
	c->ctrl->slot_size = BLKRING_SLOT_SIZE;
	WRITE_ONCE(c->ctrl->sectors, c->sectors);
	ioring_store_release(&c->ctrl->magic, BLKRING_CTRL_MAGIC);
	ioring_store_release(&c->ctrl->io_state, IORING_STATE_READY);
	/* requests may wait for the rings (a virtio-blk client's, queued by the
	 * hypervisor's bridge until now): one doorbell says they are set up */
	bh_doorbell(c->shm);
	c->doorbell_irq = sh.doorbell_irq;
	gic_doorbell_setup(c->doorbell_irq, irq_doorbell, false); /* enabled only while idle */
	return 0;
}

/* The client's counters in its control page. */
static void publish(struct bclient *c)
{
	struct blkring_ctrl *k = c->ctrl;

	WRITE_ONCE(k->st_requests, c->reqs);
	WRITE_ONCE(k->st_read, c->rd_bytes);
	WRITE_ONCE(k->st_written, c->wr_bytes);
	WRITE_ONCE(k->st_refused, c->refused);
	WRITE_ONCE(k->st_errors, c->errors);
	WRITE_ONCE(k->st_malformed, c->req.malformed);
}

/* The device's answer to one in-region request of c (data in iobuf). */
static u32 device(struct bclient *c, const struct blkring_msg *m, u32 *len)
{
	int st;

	*len = 0;
	switch (m->op) {
	case BLKRING_OP_READ:
	case BLKRING_OP_WRITE:
		st = blkdev_request(m->op == BLKRING_OP_READ ? VBLK_T_IN : VBLK_T_OUT,
		                    c->start + m->sector, iobuf, m->count * BLKRING_SECTOR,
		                    DEV_TIMEOUT);
		if (st == VBLK_S_OK && m->op == BLKRING_OP_READ) {
			*len = m->count * BLKRING_SECTOR;
			c->rd_bytes += *len;
		} else if (st == VBLK_S_OK) {
			c->wr_bytes += m->count * BLKRING_SECTOR;
		}
		break;
	case BLKRING_OP_FLUSH:
		st = blkdev_request(VBLK_T_FLUSH, 0, NULL, 0, DEV_TIMEOUT);
		break;
	default: /* GET_ID: the client's own disk, not the device's serial */
		memset(iobuf, 0, BLKRING_ID_LEN);
		snprintf((char *)iobuf, BLKRING_ID_LEN, ID_PREFIX "%u", (u32)(c - bc));
		*len = BLKRING_ID_LEN;
		return BLKRING_S_OK;
	}
	if (st != VBLK_S_OK) {
		c->errors++;
		*len = 0;
		return st == VBLK_S_UNSUPP ? BLKRING_S_UNSUPP : BLKRING_S_IOERR;
	}
	return BLKRING_S_OK;
}

/* One request (or one malformed slot) of c: bounded work. */
static void serve(struct bclient *c)
{
	struct blkring_msg m;
	u32 status, len = 0;
	int got = blkring_take(&c->req, &m, iobuf);

	if (got == 1) {
		if ((m.op == BLKRING_OP_READ || m.op == BLKRING_OP_WRITE) &&
		    !blkring_in_region(m.sector, m.count, c->sectors)) {
			c->refused++;
			status = BLKRING_S_IOERR;
		} else {
			status = device(c, &m, &len);
		}
		c->reqs++;
		/* cannot be full: taken only with a free response slot */
		blkring_respond(&c->rsp, &m, status, iobuf, len);
	}
	publish(c);
	if (got == 1 && !ioring_peer_polling(&c->ctrl->client_polling))
		bh_doorbell(c->shm);
}

/* Bit i: client i has a request slot waiting and a free response slot. */
static u32 pending_mask(void)
{
	u32 m = 0, i;

	for (i = 0; i < nbc; i++)
		if (blkring_pending(&bc[i].req) && blkring_can_put(&bc[i].rsp))
			m |= 1u << i;
	return m;
}

static void track(u64 t, u32 pending, int served)
{
	u32 i;

	for (i = 0; i < nbc; i++) {
		struct bclient *c = &bc[i];
		bool pend = pending >> i & 1;

		if (pend && !c->backlogged) {
			c->backlogged = true;
			c->bl_start = t;
		} else if (!pend && c->backlogged) {
			c->backlogged = false;
			c->bl_ticks += t - c->bl_start;
		}
		if (served >= 0 && c->backlogged) {
			c->slots_bl++;
			c->served_bl += (u32)served == i;
		}
	}
}

static void busy_track(u64 t, bool serving)
{
	if (serving && !busy) {
		busy = true;
		busy_since = t;
	} else if (!serving && busy) {
		busy = false;
		busy_ticks += t - busy_since;
	}
	busy_reqs += serving;
}

static u64 backlog_ticks(const struct bclient *c, u64 now)
{
	return c->bl_ticks + (c->backlogged ? now - c->bl_start : 0);
}

static void print_stats(u64 now)
{
	char line[256];
	u32 i;

	for (i = 0; i < nbc; i++) {
		const struct bclient *c = &bc[i];
		u64 bl = backlog_ticks(c, now);
		u64 iops = bl ? c->served_bl * timer_freq() / bl : 0;
		int n = snprintf(line, sizeof(line),
		                 "iovm: disk client=%s reqs=%lu read_bytes=%lu written_bytes=%lu "
		                 "refused=%lu errors=%lu malformed=%lu iops=%lu\n",
		                 c->vm, c->reqs, c->rd_bytes, c->wr_bytes, c->refused, c->errors,
		                 c->req.malformed, iops);

		if (n > 0)
			bh_console_write(line, (u64)n < sizeof(line) ? (u64)n : sizeof(line) - 1);
	}
}

static void report(u64 now)
{
	const struct blkdev_stats *ds;
	u32 i;

	print_stats(now);
	for (i = 0; i < nbc; i++) {
		struct bclient *c = &bc[i];

		printf("iovm: disk client=%s served_backlogged=%lu backlog_us=%lu "
		       "share_permille=%lu\n",
		       c->vm, c->served_bl, timer_ticks_to_ns(backlog_ticks(c, now)) / 1000,
		       c->slots_bl ? c->served_bl * 1000 / c->slots_bl : 0);
		ioring_store_release(&c->ctrl->io_state, IORING_STATE_DONE);
	}
	busy_track(now, false);
	ds = blkdev_stats();
	printf("iovm: disk device requests=%lu errors=%lu timeouts=%lu doorbell_irqs=%lu "
	       "capacity_iops=%lu\n",
	       ds->requests, ds->errors, ds->timeouts, doorbell_irqs,
	       busy_ticks ? busy_reqs * timer_freq() / busy_ticks : 0);
}

static bool all_done(void)
{
	u32 i;

	for (i = 0; i < nbc; i++)
		if (ioring_load_acquire(&bc[i].ctrl->client_state) != IORING_STATE_DONE ||
		    blkring_pending(&bc[i].req))
			return false;
	return true;
}

static bool wake_cond(void *arg)
{
	(void)arg;
	return pending_mask() != 0;
}

static void idle(bool on)
{
	u32 i;

	for (i = 0; i < nbc; i++) {
		ioring_set_polling(&bc[i].ctrl->io_polling, !on);
		if (bc[i].doorbell_irq >= 32 && bc[i].doorbell_irq < 1020)
			gic_irq_set(bc[i].doorbell_irq, on);
	}
}

/* The disk and its clients from the disk_* parameters; 0 or 1 (failed). */
int blkserve_setup(void)
{
	u64 base = param_u64("disk_base", 0), sectors = param_u64("disk_sectors", 0);
	u32 w[MAX_CLIENTS], i;
	const char *why;

	nbc = (u32)param_u64("disk_clients", 0);
	if (!base || !sectors || nbc == 0 || nbc > MAX_CLIENTS)
		return fail("disk_base, disk_sectors and disk_clients (1-%u) are required",
		            MAX_CLIENTS);
	if (!bh_present())
		return fail("no hypervisor");
	/* A disk that is no use fails its clients' requests (IOERR), as one that
	 * fails later does; the I/O VM goes on (and serves the network). */
	why = blkdev_open(param_str("disk_driver"), base);
	if (!why && blkdev_capacity() < sectors) {
		printf("iovm: the disk has %lu sectors, the configuration %lu\n", blkdev_capacity(),
		       sectors);
		blkdev_fail(why = "smaller than the configuration");
	}
	if (why)
		printf("iovm: disk (%s) at 0x%lx: %s: every request fails (IOERR)\n", blkdev_name(),
		       base, why);
	for (i = 0; i < nbc; i++) {
		if (setup_client(i, sectors))
			return 1;
		w[i] = bc[i].weight;
	}
	iosched_init(&bsched, nbc, w, NULL);
	stats_ticks = timer_ns_to_ticks(param_u64("stats_ms", 1000) * 1000000ull);
	next_stats = timer_now() + stats_ticks;
	if (!why)
		printf("iovm: disk 0x%lx capacity %lu sectors, %u clients, work-conserving\n", base,
		       blkdev_capacity(), nbc);
	idle(false);
	return 0;
}

bool blkserve_step(u64 t)
{
	u32 pending = pending_mask();
	int k = -1;

	if (stats_ticks && t >= next_stats) { /* while serving too */
		print_stats(t);
		next_stats = t + stats_ticks;
	}
	if (pending)
		k = iosched_pick(&bsched, pending, t);
	track(t, pending, k);
	busy_track(t, k >= 0);
	if (k < 0)
		return false;
	serve(&bc[k]);
	return true;
}

bool blkserve_pending(void)
{
	return pending_mask() != 0;
}

bool blkserve_done(void)
{
	return all_done();
}

void blkserve_idle(bool on)
{
	idle(on);
}

void blkserve_report(void)
{
	report(timer_now());
}

int blkserve_main(void)
{
	u64 end;

	gic_init();
	if (blkserve_setup())
		return 1;
	printf("iovm: ready\n");
	end = timer_now() + timer_ns_to_ticks(param_u64("max_ms", 60000) * 1000000ull);
	for (;;) {
		u64 t = timer_now();

		if (blkserve_step(t))
			continue;
		if (all_done())
			break;
		if (t > end) {
			report(t);
			return fail("disk clients not done after %lu ms",
			            param_u64("max_ms", 60000));
		}
		idle(true);
		timer_wait_until(wake_cond, NULL, 1000000);
		idle(false);
	}
	report(timer_now());
	printf("iovm: PASS\n");
	return 0;
}
