// SPDX-License-Identifier: Apache-2.0
/* Helpers shared by the benchmark guests (see bench.h). */
#include "bench.h"
#include "runtime.h"

/* ---- vCPUs ---------------------------------------------------------------- */

u32 bench_ncpus(u32 def)
{
	struct bh_vm_info info;
	u64 want = param_u64("cpus", 0);
	u32 have = 0;

	if (bh_vm_info(&info) == BH_OK && info.ncpus)
		have = info.ncpus;
	if (!have)
		have = want ? (u32)want : def;
	else if (want && want < have)
		have = (u32)want;
	if (have > RT_MAX_CPUS)
		have = RT_MAX_CPUS;
	return have ? have : 1;
}

bool bench_start_cpus(u32 n, u64 ctx)
{
	s64 ret;
	u32 i;

	for (i = 1; i < n; i++) {
		ret = psci_cpu_on_index(i, ctx);
		if (ret != PSCI_SUCCESS) {
			printf("bench: CPU_ON vcpu %u failed (%ld)\n", i, ret);
			return false;
		}
	}
	return true;
}

static volatile u32 barrier_count;
static volatile u32 barrier_gen;

void bench_barrier(u32 n)
{
	u32 gen = atomic_load32(&barrier_gen);

	if (atomic_add32(&barrier_count, 1) == n) {
		atomic_store32(&barrier_count, 0);
		atomic_store32(&barrier_gen, gen + 1);
		return;
	}
	while (atomic_load32(&barrier_gen) == gen)
		cpu_relax();
}

/* ---- memory --------------------------------------------------------------- */

u64 bench_stride(u64 size)
{
	return ALIGN_UP(size, 4096);
}

uptr bench_buffers(u32 n, u64 *size)
{
	uptr base = ALIGN_UP(rt_free_start(), 4096);
	uptr end = rt_free_end();
	u64 avail = end > base ? end - base : 0;
	u64 want = ALIGN_DOWN(*size, BENCH_LINE);

	if (!n)
		n = 1;
	if (bench_stride(want) * n > avail)
		want = ALIGN_DOWN(avail / n, 4096);
	if (want < BENCH_LINE) {
		*size = 0;
		return 0;
	}
	*size = want;
	return base;
}

u64 bench_llc_size(u64 def)
{
	u64 clidr = read_sysreg(clidr_el1), ccsidr, line, ways, sets, size;
	int level, last = -1;

	/* Ctype<n>: 0 none, 1 instruction only, 2 data, 3 separate, 4 unified. */
	for (level = 0; level < 7; level++) {
		u64 type = (clidr >> (3 * level)) & 7;

		if (!type)
			break;
		if (type >= 2)
			last = level;
	}
	if (last < 0)
		return def;
	write_sysreg((u64)last << 1, csselr_el1); /* data or unified cache */
	isb();
	ccsidr = read_sysreg(ccsidr_el1);
	line = 1ul << ((ccsidr & 7) + 4);
	ways = ((ccsidr >> 3) & 0x3ff) + 1;
	sets = ((ccsidr >> 13) & 0x7fff) + 1;
	size = line * ways * sets;
	return size ? size : def;
}

/* ---- formatting ----------------------------------------------------------- */

const char *bench_fixed(char *buf, u64 num, u64 den)
{
	u64 whole, frac;

	if (!den) {
		snprintf(buf, BENCH_FIXED_LEN, "0.000");
		return buf;
	}
	whole = num / den;
	frac = ((num % den) * 1000 + den / 2) / den;
	if (frac >= 1000) {
		whole++;
		frac -= 1000;
	}
	snprintf(buf, BENCH_FIXED_LEN, "%lu.%03lu", whole, frac);
	return buf;
}

const char *bench_mbps(char *buf, u64 bytes, u64 ns)
{
	/* bytes / ns = GB/s; x 1000 = MB/s. */
	return bench_fixed(buf, bytes * 1000, ns);
}

/* ---- time stamps and the regulator ----------------------------------------- */

u64 bench_stamp_ns(u64 ticks)
{
	return timer_ticks_to_ns(ticks);
}

void bench_report_regulator(u32 n)
{
	struct bh_bw_stats st;
	u64 throttles = 0, stalled = 0, max = 0;

	for (u32 i = 0; i < n; i++) {
		if (bh_bw_stats(i, &st) != BH_OK)
			return; /* not regulated (or no such vCPU): nothing to report */
		throttles += st.throttles;
		stalled += st.stalled_ns;
		if (st.max > max)
			max = st.max;
	}
	printf("result bench=regulator vcpus=%u throttles=%lu stalled_ns=%lu max=%lu\n", n,
	       throttles, stalled, max);
}

/* ---- start/stop handshake -------------------------------------------------- */

static struct bench_sync *sync_page;
static u32 sync_npeers;
static u32 sync_vm_id;
static u32 sync_token; /* controller: the session's token */
static u32 sync_stale; /* peer: a finished session's token found at start */

bool bench_sync_open(void)
{
	struct bh_shmem_info shm;
	struct bh_vm_info vm;
	const char *s = param_str("sync");
	u64 index;

	sync_page = NULL;
	if (!s || !parse_u64(s, &index) || index > 0xffffffffu)
		return false;
	if (bh_shmem_info((u32)index, &shm) != BH_OK || shm.size < sizeof(struct bench_sync))
		return false;
	if (bh_vm_info(&vm) != BH_OK || vm.vm_id >= BENCH_MAX_VMS)
		return false;
	sync_page = (struct bench_sync *)(uptr)shm.ipa;
	sync_npeers = shm.npeers;
	sync_vm_id = vm.vm_id;
	dmb_ish();
	sync_stale = sync_page->done == sync_page->token ? sync_page->token : 0;
	return true;
}

bool bench_sync_active(void)
{
	return sync_page != NULL;
}

u32 bench_sync_peers(void)
{
	return sync_page ? sync_npeers : 0;
}

static u32 sync_count_acks(void)
{
	u32 i, n = 0;

	for (i = 0; i < BENCH_MAX_VMS; i++)
		if (i != sync_vm_id && sync_page->ack[i] == sync_token)
			n++;
	return n;
}

u32 bench_sync_start(u64 timeout_ns)
{
	u64 deadline, t;
	u32 token, acks;

	if (!sync_page)
		return 0;
	t = timer_now();
	token = (u32)((t ^ (t >> 29)) * 0x9e3779b97f4a7c15ul >> 32) | 1u;
	if (token == sync_page->token)
		token += 2;
	sync_token = token;
	sync_page->done = 0;
	dmb_ish();
	sync_page->token = token;
	dsb_ish();
	deadline = timer_now() + timer_ns_to_ticks(timeout_ns);
	while ((acks = sync_count_acks()) < sync_npeers && timer_now() < deadline)
		timer_delay_us(10);
	dmb_ish();
	return acks;
}

void bench_sync_finish(void)
{
	if (!sync_page || !sync_token)
		return;
	dmb_ish();
	sync_page->done = sync_token;
	dsb_ish();
}

bool bench_sync_begin(const char *name)
{
	u32 peers, ready;

	if (!bench_sync_open())
		return true;
	peers = bench_sync_peers();
	ready = bench_sync_start(param_u64("sync_timeout_ms", 10000) * NSEC_PER_MSEC);
	printf("%s: sync: %u of %u interfering VMs ready\n", name, ready, peers);
	if (ready < peers) {
		printf("%s: FAIL (interferers not ready)\n", name);
		return false;
	}
	return true;
}

void bench_sync_ack(void)
{
	u32 token;

	if (!sync_page)
		return;
	token = sync_page->token;
	if (!token || token == sync_stale)
		return;
	if (sync_page->ack[sync_vm_id] != token) {
		dmb_ish();
		sync_page->ack[sync_vm_id] = token;
		dsb_ish();
	}
}

bool bench_sync_stop(void)
{
	u32 token;

	if (!sync_page)
		return false;
	token = sync_page->token;
	dmb_ish();
	/* A session other than the one found finished at start (stale) is over. */
	return token && token != sync_stale && sync_page->done == token;
}

/* ---- entry ---------------------------------------------------------------- */

/* ---- phase markers --------------------------------------------------------- */

#define BENCH_STR_(x) #x
#define BENCH_STR(x)  BENCH_STR_(x)

void bench_phase(u64 id)
{
	u64 now = timer_now_ns();
	/* set after the call, which may clobber them */
	register u64 x0 __asm__("x0") = id;
	register u64 x1 __asm__("x1") = now;

	__asm__ volatile("hint #" BENCH_STR(BENCH_PHASE_HINT) : : "r"(x0), "r"(x1) : "memory");
}

int bench_main(int (*run)(void))
{
	int ret = run();

	bench_sync_finish();
	return ret;
}
