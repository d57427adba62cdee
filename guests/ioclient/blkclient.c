// SPDX-License-Identifier: Apache-2.0
/*
 * ioclient's block modes (blkclient.h): a bare-metal client of the shared
 * disk (docs/io.md "Shared disk") that speaks the block ring directly,
 * until the hypervisor's virtio-blk bridge exists; and the same workload
 * on a virtio-blk device of its own (the reference without the I/O VM).
 *
 * The pattern: the u64 at byte o of the client's region is
 * o * 0x9e3779b97f4a7c15 ^ wseed (wseed: param, default a hash of the VM's
 * name), so each client's data is its own and a test can check the image.
 * mode=blk: get-id, writes its whole region (at most write_kib, default all)
 *   with the pattern in 4 KiB requests, flushes, reads it back sequentially
 *   and then with `reads` (200) random 4 KiB reads, checking every word; then
 *   three requests outside its region (a read just past its end, a write
 *   straddling it, a read at sector 2^40), each of which must fail with
 *   IOERR and leave nothing written; then the I/O VM's counters for it.
 * mode=blkflood: first `bad` (0) malformed request slots (a bad flag, index, op, counts 0
 *   and 9, a wrapping sector, in turn), waiting until the I/O VM dropped them; then random 4 KiB
 *   reads, its whole ring in flight, until `until_ms` (2000) of virtual time or `requests` (0: no
 *   limit) have passed.
 * mode=blkdev: the workload of mode=blk (writes, sequential and random reads)
 *   on the virtio-blk device at `base` (0x0a000000) with lib/vblk.c: without
 *   the hypervisor, or passed through to this VM (which then needs
 *   introspection: the device is given host physical addresses): the
 *   reference figures.
 * Params: blk_shm, blk_queue, blk_sectors (from the disk: section), depth
 * (blk_queue), timeout_ms (30000).
 * Lines: "ioclient: blk: id <id> sectors <n> queue <q>", "ioclient: result bench=blk_seqwrite
 * kib=.. kib_s=.. elapsed_us=..", "ioclient: result bench=blk_seqread kib=.. kib_s=..
 * elapsed_us=..", "ioclient: result bench=blk_randread reads=.. iops=.. elapsed_us=.." (virtual
 * counter time), "ioclient: blk: outside the region: read=1 write=1 far=1" (the statuses),
 * "ioclient: blk: seen by the I/O VM: reqs=.. read=.. written=.. refused=.. errors=..
 * malformed=..", "ioclient: blkflood: reqs=.. errors=..", "ioclient: PASS (...)" or "ioclient: FAIL
 * (<why>)".
 */
#include "blkclient.h"

#include "blkring.h"
#include "ioring.h" /* control-page states and polling flags */
#include "runtime.h"
#include "vblk.h"

#define BLOCK    4096u
#define SECTORS  (BLOCK / BLKRING_SECTOR)
#define MAXDEPTH BLKRING_MAX_SLOTS

/* Where requests go: the block ring, or (blkdev) the device itself. */
struct target {
	int (*submit)(u32 op, u64 sector, u32 count, u32 tag, const void *data);
	/* 1 and the response (data into buf), 0 none yet, -1 a bad response */
	int (*complete)(struct blkring_msg *m, void *buf);
	void (*wait)(void);
};

static struct blkring rq, rs;
static struct blkring_ctrl *ctrl;
static u32 shm;
static struct vblk dev;
static u8 wbuf[BLOCK] __aligned(4096), rbuf[BLOCK] __aligned(4096);
static u64 wseed, sectors, deadline;
/* blkdev: the one completed request waiting to be collected */
static struct blkring_msg dev_done;
static bool dev_has;

#define fail(...) (done(), rt_fail("ioclient", __VA_ARGS__))

static void done(void)
{
	if (ctrl)
		ioring_store_release(&ctrl->client_state, IORING_STATE_DONE);
}

static u64 word(u64 off)
{
	return off * 0x9e3779b97f4a7c15ull ^ wseed;
}

static void fill(u8 *p, u64 off)
{
	for (u32 i = 0; i < BLOCK; i += 8)
		*(u64 *)(p + i) = word(off + i);
}

static bool intact(const u8 *p, u64 off)
{
	for (u32 i = 0; i < BLOCK; i += 8)
		if (*(const u64 *)(p + i) != word(off + i))
			return false;
	return true;
}

/* --- the block ring ------------------------------------------------------ */

static int ring_submit(u32 op, u64 sector, u32 count, u32 tag, const void *data)
{
	int rc = blkring_submit(&rq, op, sector, count, tag, data);

	if (rc == 0 && !ioring_peer_polling(&ctrl->io_polling))
		bh_doorbell(shm);
	return rc;
}

static int ring_complete(struct blkring_msg *m, void *buf)
{
	return blkring_complete(&rs, m, buf, BLOCK);
}

static bool rs_ready(void *arg)
{
	(void)arg;
	return blkring_pending(&rs);
}

static void ring_wait(void)
{
	timer_wait_until(rs_ready, NULL, 1000000);
}

static const struct target ring = { ring_submit, ring_complete, ring_wait };

/* --- the device itself (blkdev) -------------------------------------------- */

static int dev_submit(u32 op, u64 sector, u32 count, u32 tag, const void *data)
{
	int st;

	if (dev_has)
		return -1; /* one at a time: "full" */
	if (op == BLKRING_OP_WRITE)
		memcpy(rbuf, data, count * BLKRING_SECTOR);
	st = vblk_request(&dev, op, sector, rbuf,
	                  op == BLKRING_OP_FLUSH ? 0 : count * BLKRING_SECTOR, 2000000000ull);
	dev_done = (struct blkring_msg){ .op = op, .count = count, .sector = sector, .tag = tag };
	dev_done.status = st < 0 ? BLKRING_S_IOERR : (u32)st;
	dev_done.len = op == BLKRING_OP_READ && st == VBLK_S_OK ? count * BLKRING_SECTOR : 0;
	dev_has = true;
	return 0;
}

static int dev_complete(struct blkring_msg *m, void *buf)
{
	if (!dev_has)
		return 0;
	*m = dev_done;
	if (m->len)
		memcpy(buf, rbuf, m->len);
	dev_has = false;
	return 1;
}

static void dev_wait(void)
{
}

static const struct target direct = { dev_submit, dev_complete, dev_wait };

/* --- the workload ------------------------------------------------------------- */

/* The next response, waited for: 1, or 0 on a timeout or a bad response. */
static int next(const struct target *t, struct blkring_msg *m, void *buf)
{
	int got;

	while ((got = t->complete(m, buf)) == 0) {
		if (timer_now() > deadline)
			return 0;
		t->wait();
	}
	return got == 1;
}

static u32 lcg(u64 *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return (u32)(*x >> 33);
}

/* n 4 KiB requests of op, depth in flight: block i's sector is at[i]
 * (random when rnd, else i * 8); writes carry the pattern, reads are
 * checked against it. NULL or why it failed; *ns: the virtual time taken. */
static const char *stream(const struct target *t, u32 op, u32 n, u32 depth, bool rnd, u64 *ns)
{
	static u64 at[MAXDEPTH];
	struct blkring_msg m;
	u64 x = wseed, t0 = timer_now(), blocks = sectors / SECTORS;
	u32 issued = 0, got = 0;

	while (got < n) {
		while (issued < n && issued - got < depth) {
			u64 s = rnd ? (lcg(&x) % blocks) * SECTORS : (u64)issued * SECTORS;

			if (op == BLKRING_OP_WRITE)
				fill(wbuf, s * BLKRING_SECTOR);
			if (t->submit(op, s, SECTORS, issued, wbuf) != 0)
				break;
			at[issued % MAXDEPTH] = s;
			issued++;
		}
		if (!next(t, &m, rbuf))
			return "a request did not complete (or a bad response)";
		if (m.tag != got || m.op != op)
			return "a response out of order";
		if (m.status != BLKRING_S_OK)
			return op == BLKRING_OP_READ ? "a read failed" : "a write failed";
		if (op == BLKRING_OP_READ &&
		    (m.len != BLOCK || !intact(rbuf, at[got % MAXDEPTH] * BLKRING_SECTOR)))
			return "what was read differs from the pattern";
		got++;
	}
	*ns = timer_ticks_to_ns(timer_now() - t0);
	return NULL;
}

/* One request, waited for: its status, or -1. */
static int one(const struct target *t, u32 op, u64 sector, u32 count, void *data)
{
	struct blkring_msg m;

	if (t->submit(op, sector, count, 0xffff, data) != 0 || !next(t, &m, rbuf) ||
	    m.tag != 0xffff)
		return -1;
	return (int)m.status;
}

static void print_rate(const char *bench, u32 blocks, u64 ns)
{
	if (!ns)
		ns = 1;
	if (!strcmp(bench, "blk_randread"))
		printf("ioclient: result bench=%s reads=%u iops=%lu elapsed_us=%lu\n", bench,
		       blocks, blocks * (u64)1000000000 / ns, ns / 1000);
	else
		printf("ioclient: result bench=%s kib=%u kib_s=%lu elapsed_us=%lu\n", bench,
		       blocks * 4, blocks * (u64)4000000000 / ns, ns / 1000);
}

static int workload(const struct target *t, u32 depth, u32 reads, u32 write_kib)
{
	u32 blocks = (u32)(sectors / SECTORS);
	const char *why;
	u64 ns;

	if (write_kib && write_kib / 4 < blocks)
		blocks = write_kib / 4;
	if (!blocks)
		return fail("a region below 4 KiB");
	if ((why = stream(t, BLKRING_OP_WRITE, blocks, depth, false, &ns)))
		return fail("blk: writing: %s", why);
	print_rate("blk_seqwrite", blocks, ns);
	if (one(t, BLKRING_OP_FLUSH, 0, 0, NULL) != BLKRING_S_OK)
		return fail("blk: the flush failed");
	if ((why = stream(t, BLKRING_OP_READ, blocks, depth, false, &ns)))
		return fail("blk: reading back: %s", why);
	print_rate("blk_seqread", blocks, ns);
	sectors = (u64)blocks * SECTORS; /* random reads where the pattern is */
	if ((why = stream(t, BLKRING_OP_READ, reads, depth, true, &ns)))
		return fail("blk: random reads: %s", why);
	print_rate("blk_randread", reads, ns);
	return 0;
}

static void wake(u32 intid)
{
	(void)intid; /* a wake-up from WFI only: the loop looks at the ring */
}

static int attach(u32 q)
{
	struct bh_shmem_info sh;
	void *mem;
	u64 until;

	shm = (u32)param_u64("blk_shm", ~0ull);
	if (bh_shmem_info(shm, &sh) != BH_OK || sh.size < blkring_region_size(q))
		return fail("no shared-memory region %u for %u slots", shm, q);
	mem = (void *)sh.ipa;
	if (!blkring_attach(&rq, blkring_req_mem(mem), q) ||
	    !blkring_attach(&rs, blkring_rsp_mem(mem, q), q))
		return fail("bad blk_queue %u", q);
	ctrl = blkring_ctrl(mem);
	gic_init();
	gic_doorbell_setup(sh.doorbell_irq, wake, true);
	until = timer_now() + timer_ns_to_ticks(20 * NSEC_PER_SEC);
	while (ioring_load_acquire(&ctrl->magic) != BLKRING_CTRL_MAGIC ||
	       ioring_load_acquire(&ctrl->io_state) != IORING_STATE_READY) {
		if (timer_now() > until)
			return fail("the I/O VM did not get ready");
		timer_delay_us(100);
	}
	ioring_set_polling(&ctrl->client_polling, false);
	ioring_store_release(&ctrl->client_state, IORING_STATE_READY);
	return 0;
}

static int run_blk(u32 q, u32 depth)
{
	struct blkring_msg m;
	int rd, wr, far;
	char id[BLKRING_ID_LEN + 1];

	if (ring_submit(BLKRING_OP_GET_ID, 0, 0, 0, NULL) || !next(&ring, &m, rbuf) ||
	    m.status != BLKRING_S_OK || m.len != BLKRING_ID_LEN)
		return fail("blk: get-id failed");
	memcpy(id, rbuf, BLKRING_ID_LEN);
	id[BLKRING_ID_LEN] = 0;
	printf("ioclient: blk: id %s sectors %lu queue %u\n", id, sectors, q);
	if (READ_ONCE(ctrl->sectors) != sectors)
		return fail("blk: the I/O VM says %lu sectors, the parameters %lu",
		            READ_ONCE(ctrl->sectors), sectors);
	if (workload(&ring, depth, (u32)param_u64("reads", 200), (u32)param_u64("write_kib", 0)))
		return 1;
	sectors = param_u64("blk_sectors", 0);
	memset(wbuf, 0xee, BLOCK); /* must never reach the disk */
	rd = one(&ring, BLKRING_OP_READ, sectors, SECTORS, NULL);
	wr = one(&ring, BLKRING_OP_WRITE, sectors - SECTORS / 2, SECTORS, wbuf);
	far = one(&ring, BLKRING_OP_READ, 1ull << 40, SECTORS, NULL);
	printf("ioclient: blk: outside the region: read=%d write=%d far=%d\n", rd, wr, far);
	if (rd != BLKRING_S_IOERR || wr != BLKRING_S_IOERR || far != BLKRING_S_IOERR)
		return fail("blk: a request outside the region was not refused");
	printf("ioclient: blk: seen by the I/O VM: reqs=%lu read=%lu written=%lu refused=%lu "
	       "errors=%lu malformed=%lu\n",
	       READ_ONCE(ctrl->st_requests), READ_ONCE(ctrl->st_read), READ_ONCE(ctrl->st_written),
	       READ_ONCE(ctrl->st_refused), READ_ONCE(ctrl->st_errors),
	       READ_ONCE(ctrl->st_malformed));
	done();
	printf(
	    "ioclient: PASS (blk: region written, read back, random reads, 3 outside refused)\n");
	return 0;
}

/* blkflood bad=n: n malformed request slots first (each kind in turn), then
 * waits until the I/O VM has dropped them all (the slots are EMPTY again). */
static int write_bad(u32 n)
{
	static const struct {
		u32 flag, index_off, op, count;
		u64 sector;
	} kinds[] = {
		{ 0xdeadbeef, 0, BLKRING_OP_READ, SECTORS, 0 },
		{ BLKRING_FULL, 1, BLKRING_OP_READ, SECTORS, 0 },
		{ BLKRING_FULL, 0, 3, SECTORS, 0 },
		{ BLKRING_FULL, 0, BLKRING_OP_WRITE, 0, 0 },
		{ BLKRING_FULL, 0, BLKRING_OP_READ, 9, 0 },
		{ BLKRING_FULL, 0, BLKRING_OP_READ, SECTORS, ~0ull - 3 },
	};
	u32 i;

	for (i = 0; i < n; i++) {
		struct blkring_msg m = { .op = kinds[i % 6].op,
			                 .count = kinds[i % 6].count,
			                 .sector = kinds[i % 6].sector,
			                 .len = 0xffffffff };

		while (!blkring_can_put(&rq))
			if (timer_now() > deadline)
				return fail(
				    "blkflood: the I/O VM did not drop the malformed slots");
		blkring_put_raw(&rq, kinds[i % 6].flag,
		                (rq.pos + kinds[i % 6].index_off) % rq.nslots, &m, wbuf, 64);
		bh_doorbell(shm);
	}
	for (i = 0; i < rq.nslots; i++)
		while (ioring_load_acquire(&rq.slots[i].flag) != BLKRING_EMPTY)
			if (timer_now() > deadline)
				return fail(
				    "blkflood: the I/O VM did not drop the malformed slots");
	printf("ioclient: blkflood: %u malformed slots dropped\n", n);
	return 0;
}

static int run_flood(u32 depth)
{
	u64 until = timer_now() + timer_ns_to_ticks(param_u64("until_ms", 2000) * 1000000ull);
	u64 limit = param_u64("requests", 0), x = wseed, reqs = 0, errors = 0;
	u64 blocks = sectors / SECTORS;
	u32 inflight = 0;
	struct blkring_msg m;

	if (write_bad((u32)param_u64("bad", 0)))
		return 1;
	while (timer_now() < until && (!limit || reqs < limit)) {
		while (inflight < depth &&
		       ring_submit(BLKRING_OP_READ, (lcg(&x) % blocks) * SECTORS, SECTORS, 0,
		                   NULL) == 0)
			inflight++;
		if (!next(&ring, &m, rbuf))
			return fail("blkflood: a request did not complete");
		inflight--;
		reqs++;
		errors += m.status != BLKRING_S_OK;
	}
	for (; inflight && next(&ring, &m, rbuf); inflight--) { /* the last ones in flight */
		reqs++;
		errors += m.status != BLKRING_S_OK;
	}
	printf("ioclient: blkflood: reqs=%lu errors=%lu\n", reqs, errors);
	done();
	printf("ioclient: PASS (blkflood)\n");
	return 0;
}

static int run_dev(void)
{
	/* under the hypervisor (a device passed through, no SMMU): host physical addresses */
	const char *why =
	    vblk_open(&dev, param_u64("base", 0x0a000000), bh_present() ? bh_pa_of : NULL);

	if (why)
		return fail("blkdev: %s", why);
	sectors = dev.capacity;
	printf("ioclient: blkdev: capacity %lu sectors\n", sectors);
	if (workload(&direct, 1, (u32)param_u64("reads", 200), (u32)param_u64("write_kib", 1024)))
		return 1;
	printf("ioclient: PASS (blkdev)\n");
	return 0;
}

int blkclient_main(const char *mode)
{
	u32 q = (u32)param_u64("blk_queue", 0), depth = (u32)param_u64("depth", q);
	const char *vm = param_str_default("vm", "?");

	wseed = param_u64("wseed", 0);
	if (!wseed) /* FNV-1a (64-bit) of the VM's name */
		for (wseed = 0xcbf29ce484222325ull; *vm; vm++)
			wseed = (wseed ^ (u8)*vm) * 0x100000001b3ull;
	deadline = timer_now() + timer_ns_to_ticks(param_u64("timeout_ms", 30000) * 1000000ull);
	if (!strcmp(mode, "blkdev"))
		return run_dev();
	sectors = param_u64("blk_sectors", 0);
	if (!depth || depth > q || sectors < SECTORS)
		return fail("blk_queue, depth (1..blk_queue) and blk_sectors are required");
	if (attach(q))
		return 1;
	if (!strcmp(mode, "blk"))
		return run_blk(q, depth);
	if (!strcmp(mode, "blkflood"))
		return run_flood(depth);
	return fail("unknown mode '%s' (blk, blkflood, blkdev)", mode);
}
