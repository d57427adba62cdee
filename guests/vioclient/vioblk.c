// SPDX-License-Identifier: Apache-2.0
/*
 * vioclient's virtio-blk front end: reads checked against a known pattern,
 * writes, flush, errors and a device reset, on any virtio-blk device.
 *
 * The disk's pattern (the test writes it into the image): the little-endian
 * u64 at byte offset o (a multiple of 8) is vioblk_word(o, seed) =
 * o * 0x9e3779b97f4a7c15 ^ seed.
 * Features: VERSION_1, and where offered FLUSH, RO, BLK_SIZE, RING_EVENT_IDX.
 * Params: seed (0x5eed: the image's pattern), reads (64: random 4 KiB reads),
 * seq_kib (1024: sequential reads from sector 0 in 64 KiB requests), depth (4:
 * requests in flight), write_kib (16: written with pattern wseed at
 * write_sector, default the last 64 KiB, flushed, read back; 0: no write),
 * wseed (0x77), reset (1: then resets the device, checks it came back
 * clean, sets it up again and repeats the random reads).
 * Lines: "vioclient: blk: capacity <sectors> sectors blk_size <b> features 0x<f>",
 * "vioclient: result bench=blk_randread reads=<n> iops=<n> elapsed_us=<n>",
 * "vioclient: result bench=blk_seqread kib=<n> kib_s=<n> elapsed_us=<n>",
 * "vioclient: blk: wrote <n> KiB at sector <s>, flushed, read back",
 * "vioclient: blk: read past the end: status 1 (IOERR)",
 * "vioclient: blk: reset: status 0x0 queue_ready 0", "vioclient: PASS (...)".
 * mode=hostile: the attacks of vioblk_hostile instead (docs/io.md "VirtIO").
 */
#include "vioclient.h"

#define F_RO       5
#define F_BLK_SIZE 6
#define F_FLUSH    9

#define T_IN    0
#define T_OUT   1
#define T_FLUSH 4

#define S_OK     0
#define S_IOERR  1
#define S_UNSUPP 2
#define S_NONE   0xff /* not completed yet */

#define SECTOR  512u
#define CHUNK   (64u * 1024)
#define DEPTH   8u
#define QSIZE   32u /* 3 descriptors per request */
#define TIMEOUT 5000000000ull

struct req_hdr {
	u32 type;
	u32 reserved;
	u64 sector;
};

static VIRTQ_MEM(QSIZE, 16) ring;
static struct virtq vq;
static struct req_hdr hdr[DEPTH];
static volatile u8 status[DEPTH];
static u8 data[DEPTH][CHUNK] __aligned(4096);
static bool busy[DEPTH];
static u32 inflight;
static struct vio *vb;
static u64 capacity, seed;
static u32 nbad;

static u64 vioblk_word(u64 off, u64 s)
{
	return off * 0x9e3779b97f4a7c15ull ^ s;
}

static void fill(u8 *p, u64 off, u32 len, u64 s)
{
	u32 i;

	for (i = 0; i < len; i += 8)
		*(u64 *)(p + i) = vioblk_word(off + i, s);
}

/* Byte offset of the first word that differs from the pattern, or ~0. */
static u64 check(const u8 *p, u64 off, u32 len, u64 s)
{
	u32 i;

	for (i = 0; i < len; i += 8)
		if (*(const u64 *)(p + i) != vioblk_word(off + i, s))
			return off + i;
	return ~0ull;
}

/* Queues request slot r: header, data (len bytes, 0: none), status. */
static void submit(u32 r, u32 type, u64 sector, u32 len)
{
	u16 head = (u16)(r * 3), d = head;

	hdr[r] = (struct req_hdr){ type, 0, sector };
	status[r] = S_NONE;
	ring.desc[d] =
	    (struct virtq_desc){ (uptr)&hdr[r], sizeof(hdr[r]), VIRTQ_DESC_F_NEXT, (u16)(d + 1) };
	if (len) {
		d++;
		ring.desc[d] = (struct virtq_desc){ (uptr)data[r], len,
			                            (u16)(VIRTQ_DESC_F_NEXT |
			                                  (type == T_IN ? VIRTQ_DESC_F_WRITE : 0)),
			                            (u16)(d + 1) };
	}
	d++;
	ring.desc[d] = (struct virtq_desc){ (uptr)&status[r], 1, VIRTQ_DESC_F_WRITE, 0 };
	busy[r] = true;
	inflight++;
	virtq_push(&vq, head);
}

static void kick(void)
{
	virtq_publish(&vq);
	if (virtq_kick_needed(&vq))
		vmmio_notify(&vb->mmio, 0);
}

static bool any_used(void *arg)
{
	(void)arg;
	virtq_irq_enable(&vq);
	return virtq_used_pending(&vq);
}

/* Waits for one completion: its slot, or -1 (timeout or a bad used entry). */
static int complete(void)
{
	u32 id, len;

	if (!virtq_pop_used(&vq, &id, &len)) {
		if (!vio_wait(vb, any_used, NULL, TIMEOUT) || !virtq_pop_used(&vq, &id, &len))
			return -1;
	}
	if (id % 3 || id / 3 >= DEPTH || !busy[id / 3]) {
		nbad++;
		return -1;
	}
	busy[id / 3] = false;
	inflight--;
	return (int)(id / 3);
}

/* One request, waited for: its status, or -1. */
static int sync_req(u32 type, u64 sector, u32 len)
{
	int r;

	submit(0, type, sector, len);
	kick();
	r = complete();
	return r < 0 ? -1 : status[r];
}

static u32 lcg_next(u64 *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return (u32)(*x >> 33);
}

/* `reads` random 4 KiB reads, `depth` in flight, each checked. */
static const char *rand_reads(u32 reads, u32 depth, const char *tag)
{
	static char why[96];
	u64 x = seed, t0 = timer_now(), blocks = capacity / 8, bad;
	u32 issued = 0, done = 0, r;
	int c;

	for (r = 0; r < depth && issued < reads; r++, issued++)
		submit(r, T_IN, (lcg_next(&x) % blocks) * 8, 4096);
	kick();
	while (done < issued) {
		if ((c = complete()) < 0)
			return "a read did not complete";
		if (status[c] != S_OK)
			return "a read failed";
		bad = check(data[c], hdr[c].sector * SECTOR, 4096, seed);
		if (bad != ~0ull) {
			snprintf(why, sizeof(why), "pattern differs at byte 0x%lx", bad);
			return why;
		}
		done++;
		if (issued < reads) {
			submit((u32)c, T_IN, (lcg_next(&x) % blocks) * 8, 4096);
			issued++;
			kick();
		}
	}
	t0 = timer_ticks_to_ns(timer_now() - t0);
	printf("vioclient: result bench=blk_randread%s reads=%u iops=%lu elapsed_us=%lu\n", tag,
	       reads, t0 ? reads * (u64)1000000000 / t0 : 0, t0 / 1000);
	return NULL;
}

/* kib KiB from sector 0 in CHUNK requests, `depth` in flight, checked. */
static const char *seq_reads(u32 kib, u32 depth)
{
	u64 total = (u64)kib * 1024, next = 0, t0 = timer_now(), ns;
	u32 r, pending = 0;
	int c;

	if (total > capacity * SECTOR)
		total = capacity * SECTOR / CHUNK * CHUNK;
	for (r = 0; r < depth && next < total; r++, next += CHUNK, pending++)
		submit(r, T_IN, next / SECTOR, CHUNK);
	kick();
	while (pending) {
		if ((c = complete()) < 0 || status[c] != S_OK)
			return "a sequential read failed";
		if (check(data[c], hdr[c].sector * SECTOR, CHUNK, seed) != ~0ull)
			return "sequential data differs from the pattern";
		pending--;
		if (next < total) {
			submit((u32)c, T_IN, next / SECTOR, CHUNK);
			next += CHUNK;
			pending++;
			kick();
		}
	}
	ns = timer_ticks_to_ns(timer_now() - t0);
	printf("vioclient: result bench=blk_seqread kib=%lu kib_s=%lu elapsed_us=%lu\n",
	       total / 1024, ns ? total * (u64)1000000000 / 1024 / ns : 0, ns / 1000);
	return NULL;
}

static const char *write_back(u64 sector, u32 kib, u64 wseed)
{
	u32 off;

	if (vio_has(vb, F_RO)) {
		printf("vioclient: blk: read-only device: no writes\n");
		return NULL;
	}
	for (off = 0; off < kib * 1024; off += CHUNK) {
		u32 n = kib * 1024 - off < CHUNK ? kib * 1024 - off : CHUNK;

		fill(data[0], sector * SECTOR + off, n, wseed);
		if (sync_req(T_OUT, sector + off / SECTOR, n) != S_OK)
			return "a write failed";
	}
	if (vio_has(vb, F_FLUSH) && sync_req(T_FLUSH, 0, 0) != S_OK)
		return "the flush failed";
	for (off = 0; off < kib * 1024; off += CHUNK) {
		u32 n = kib * 1024 - off < CHUNK ? kib * 1024 - off : CHUNK;

		memset(data[0], 0, n);
		if (sync_req(T_IN, sector + off / SECTOR, n) != S_OK)
			return "reading back failed";
		if (check(data[0], sector * SECTOR + off, n, wseed) != ~0ull)
			return "what was read back differs from what was written";
	}
	printf("vioclient: blk: wrote %u KiB at sector %lu, %s, read back\n", kib, sector,
	       vio_has(vb, F_FLUSH) ? "flushed" : "no flush feature");
	return NULL;
}

static const char *bring_up(uptr base)
{
	const char *why =
	    vio_open(vb, base, VIRTIO_ID_BLOCK,
	             BIT(F_RO) | BIT(F_BLK_SIZE) | BIT(F_FLUSH) | BIT(VIRTIO_F_RING_EVENT_IDX));

	if (why)
		return why;
	capacity = vmmio_config64(&vb->mmio, 0);
	if (capacity < 2 * CHUNK / SECTOR) {
		vmmio_fail(&vb->mmio);
		return "capacity below 128 KiB";
	}
	why = vio_queue(vb, 0, &vq, QSIZE, ring.desc, ring.avail, ring.used);
	if (why)
		return why;
	vio_start(vb);
	return NULL;
}

/* Resets the device, checks it reads back clean, brings it up again. */
static const char *reset(uptr base)
{
	u32 st, ready;

	if (!vmmio_reset(&vb->mmio))
		return "the device did not complete its reset";
	st = vmmio_status(&vb->mmio);
	ready = vmmio_queue_ready(&vb->mmio, 0);
	printf("vioclient: blk: reset: status 0x%x queue_ready %u\n", st, ready);
	if (st || ready)
		return "the device was not clean after its reset";
	inflight = 0;
	memset(busy, 0, sizeof(busy));
	return bring_up(base);
}

/* --- hostile mode (mode=hostile) --- */

static bool reset_or_used(void *arg)
{
	(void)arg;
	virtq_irq_enable(&vq);
	return (vmmio_status(&vb->mmio) & VIRTIO_ST_NEEDS_RESET) || virtq_used_pending(&vq);
}

/* One malformed or hostile request at descriptors 0-2 (see vioblk_hostile). */
static void attack(const char *a)
{
	u16 w = VIRTQ_DESC_F_WRITE, n = VIRTQ_DESC_F_NEXT;

	hdr[0] = (struct req_hdr){ T_IN, 0, 0 };
	status[0] = S_NONE;
	ring.desc[0] = (struct virtq_desc){ (uptr)&hdr[0], sizeof(hdr[0]), n, 1 };
	ring.desc[1] = (struct virtq_desc){ (uptr)data[0], 4096, (u16)(n | w), 2 };
	ring.desc[2] = (struct virtq_desc){ (uptr)&status[0], 1, w, 0 };
	if (!strcmp(a, "loop"))
		ring.desc[2] = (struct virtq_desc){ (uptr)&status[0], 1, (u16)(n | w), 0 };
	else if (!strcmp(a, "past"))
		hdr[0].sector = capacity + 8;
	else if (!strcmp(a, "huge"))
		ring.desc[1].len = 0xfffffff0u;
	else if (!strcmp(a, "rostatus"))
		ring.desc[2].flags = 0;
	virtq_push(&vq, 0);
	kick();
}

/* Each attack in `attacks` (default all): loop (the status descriptor
 * chained back to the header), past (a read 8 sectors past the end), huge
 * (a data descriptor of 0xfffffff0 bytes), rostatus (a status descriptor
 * the device cannot write). The device either flags DEVICE_NEEDS_RESET
 * (the client resets it and sets it up again) or uses the request; then 8
 * random reads checked against the pattern show it works.
 * Lines: "vioclient: hostile: <a>: status 0x<s>, needs reset" or
 * "vioclient: hostile: <a>: used, request status <n>",
 * "vioclient: hostile: <a>: recovered", then
 * "vioclient: PASS (blk hostile: <n> attacks, recovered from each)". */
static int vioblk_hostile(uptr base, u32 depth)
{
	static const char *const all[] = { "loop", "past", "huge", "rostatus" };
	const char *list = param_str_default("attacks", "loop,past,huge,rostatus"), *why;
	u32 n = 0, id, len;

	for (u32 i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		u32 st;

		if (!has_word(list, all[i]))
			continue;
		attack(all[i]);
		if (!vio_wait(vb, reset_or_used, NULL, TIMEOUT))
			return rt_fail("vioclient", "hostile: %s: neither used nor a reset",
			               all[i]);
		st = vmmio_status(&vb->mmio);
		if (st & VIRTIO_ST_NEEDS_RESET) {
			printf("vioclient: hostile: %s: status 0x%x, needs reset\n", all[i], st);
			if ((why = reset(base)))
				return vio_fail(vb, all[i], why);
		} else {
			if (!virtq_pop_used(&vq, &id, &len) || id != 0)
				return rt_fail("vioclient", "hostile: %s: a bad used entry",
				               all[i]);
			printf("vioclient: hostile: %s: used, request status %u\n", all[i],
			       status[0]);
		}
		busy[0] = false;
		inflight = 0;
		if ((why = rand_reads(8, depth, "_hostile")))
			return vio_fail(vb, all[i], why);
		printf("vioclient: hostile: %s: recovered\n", all[i]);
		n++;
	}
	printf("vioclient: PASS (blk hostile: %u attacks, recovered from each)\n", n);
	return 0;
}

int vioblk_run(struct vio *v, uptr base)
{
	u32 reads = (u32)param_u64("reads", 64), depth = (u32)param_u64("depth", 4);
	u32 write_kib = (u32)param_u64("write_kib", 16);
	const char *why;
	int st;

	vb = v;
	seed = param_u64("seed", 0x5eed);
	if (!depth || depth > DEPTH)
		return rt_fail("vioclient", "depth %u: 1 to %u", depth, DEPTH);
	why = bring_up(base);
	if (why)
		return rt_fail("vioclient", "blk: %s (transport version %u, status 0x%x)", why,
		               v->mmio.version, vmmio_status(&v->mmio));
	printf("vioclient: blk: capacity %lu sectors blk_size %u features 0x%lx\n", capacity,
	       vio_has(v, F_BLK_SIZE) ? vmmio_config32(&v->mmio, 20) : SECTOR, v->features);
	if (!strcmp(param_str_default("mode", "normal"), "hostile"))
		return vioblk_hostile(base, depth);
	if ((why = rand_reads(reads, depth, "")) ||
	    (why = seq_reads((u32)param_u64("seq_kib", 1024), depth)))
		return vio_fail(vb, "blk", why);
	if (write_kib) {
		u64 sector = param_u64("write_sector", capacity - 128);

		if (sector + write_kib * 2ull > capacity || write_kib > 1024)
			return rt_fail("vioclient", "blk: write_sector/write_kib past the end");
		if ((why = write_back(sector, write_kib, param_u64("wseed", 0x77))))
			return vio_fail(vb, "blk", why);
	}
	st = sync_req(T_IN, capacity, 4096);
	printf("vioclient: blk: read past the end: status %d%s\n", st,
	       st == S_IOERR ? " (IOERR)" : "");
	if (st != S_IOERR)
		return rt_fail("vioclient", "blk: a read past the end was not refused");
	if (param_u64("reset", 1)) {
		if ((why = reset(base)) ||
		    (why = rand_reads(reads < 16 ? reads : 16, depth, "_after_reset")))
			return vio_fail(vb, "blk", why);
	}
	printf("vioclient: PASS (blk: %u random reads, sequential reads, %s)\n", reads,
	       write_kib && !vio_has(v, F_RO) ? "write + read back" : "no writes");
	return 0;
}
