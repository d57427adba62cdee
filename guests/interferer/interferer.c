// SPDX-License-Identifier: Apache-2.0
/*
 * interferer: memory-bandwidth load (the "memory bomb") on every vCPU of the
 * VM. vCPU 0 starts the others (CPU_ON); each vCPU writes (or reads)
 * continuously over its own buffer, one access per 64-byte line, and prints
 * its rate once per second.
 *
 * The per-vCPU buffer is `size` bytes, or sized relative to the last-level
 * cache with `footprint`: fit = LLC / (2 x vCPUs) (the VM's whole working
 * set stays in half the LLC: cache-resident pressure), exceed = 2 x LLC per
 * vCPU (every access misses: DRAM pressure). The LLC size comes from
 * CLIDR/CCSIDR unless `llc_size` is given.
 *
 * Without `sync` the load lasts `seconds`. With `sync` (shared-memory index
 * of the handshake, see lib/include/bench.h) it starts acknowledging once all
 * its vCPUs run and stops when the benchmark says it finished (`seconds`, if
 * given, still bounds it).
 *
 * Params: size (bytes per vCPU, default 4M; reduced to fit in RAM),
 *         footprint (fit|exceed; overrides the default size), llc_size,
 *         mode (write|read, default write), seconds (default 2 without sync,
 *         0 = no limit), cpus (vCPUs taking part, default all; the count when
 *         BH_HC_VM_INFO is unavailable, default 1), sync, delay_ms (wait that
 *         long first, as a VM that boots late would; default 0).
 * Lines: "interferer: starting after <ms> ms" (with delay_ms),
 *        "interferer: <n> vCPUs, <size> KiB per vCPU, <s> s",
 *        "interferer: mode <m>, footprint <f>, llc <k> KiB, sync <on|off>",
 *        "interferer: vcpu <i>: <mb> MB/s" (every second),
 *        "result bench=interferer cpu=<i> mode=<m> size=<bytes> lines=<l>
 *         bytes=<b> ns=<t> mbps=<x.xxx> start_ns=<t0> end_ns=<t1>" per vCPU
 *         (its load, bench_stamp_ns),
 *        "result bench=regulator ..." if the VM is regulated
 *         (bench_report_regulator: whether the regulator ever throttled it),
 *        "interferer: vcpu <i> done (<mb> MB written)" ("read" in read mode),
 *        "interferer: PASS (<n> vCPUs, <s> s)" (timed) or
 *        "interferer: PASS (<n> vCPUs, until done, <ms> ms)" (sync).
 */
#include "bench.h"
#include "memwalk.h"
#include "runtime.h"

/*
 * Lines per chunk between two checks of the stop conditions: small, so that
 * even a vCPU throttled to a trickle notices the end of the benchmark soon.
 */
#define CHUNK_LINES 256u
#define WORDS       MEMWALK_LINE_WORDS

static u32 ncpus;
static u64 buf_size;
static uptr buf_base;
static u64 seconds;
static bool reading;
static bool synced;
static volatile u32 finished;
static volatile u32 started;
static volatile u32 stop_all;
static u64 checksum[RT_MAX_CPUS];

static void interfere(u32 cpu)
{
	volatile u64 *buf = (volatile u64 *)(buf_base + cpu * bench_stride(buf_size));
	u64 lines = buf_size / BENCH_LINE, second = timer_ns_to_ticks(NSEC_PER_SEC);
	u64 start, mark, now, bytes = 0, total = 0, pass = 0, elapsed_s = 0, done_lines = 0;
	u64 line, n, ns, sum = 0;
	char mbps[BENCH_FIXED_LEN];

	atomic_add32(&started, 1);
	bench_phase(BENCH_PHASE_INTERFERER);
	start = mark = timer_now();
	while (!atomic_load32(&stop_all)) {
		pass++;
		for (line = 0; line < lines; line += n) {
			n = lines - line < CHUNK_LINES ? lines - line : CHUNK_LINES;
			if (reading)
				sum += memwalk_read(buf + line * WORDS, n, WORDS);
			else
				memwalk_write(buf + line * WORDS, n, WORDS, pass);
			bytes += n * BENCH_LINE;
			done_lines += n;
			if (synced) {
				if (cpu == 0 && atomic_load32(&started) == ncpus)
					bench_sync_ack();
				if (bench_sync_stop())
					atomic_store32(&stop_all, 1);
			}
			if (atomic_load32(&stop_all))
				break;
		}
		now = timer_now();
		if (now - mark >= second) {
			printf("interferer: vcpu %u: %lu MB/s\n", cpu,
			       bytes * timer_freq() / (now - mark) / 1000000);
			total += bytes;
			bytes = 0;
			mark = now;
			elapsed_s++;
			if (seconds && elapsed_s >= seconds)
				break;
		}
	}
	now = timer_now();
	bench_phase(BENCH_PHASE_END);
	total += bytes;
	ns = timer_ticks_to_ns(now - start);
	checksum[cpu] = sum;
	printf("result bench=interferer cpu=%u mode=%s size=%lu lines=%lu bytes=%lu ns=%lu "
	       "mbps=%s start_ns=%lu end_ns=%lu\n",
	       cpu, reading ? "read" : "write", buf_size, done_lines, done_lines * BENCH_LINE, ns,
	       bench_mbps(mbps, done_lines * BENCH_LINE, ns ? ns : 1), bench_stamp_ns(start),
	       bench_stamp_ns(now));
	printf("interferer: vcpu %u done (%lu MB %s)\n", cpu, total / 1000000,
	       reading ? "read" : "written");
	atomic_add32(&finished, 1);
}

void secondary_main(u32 cpu, u64 ctx)
{
	(void)ctx;
	interfere(cpu);
}

int main(const char *params)
{
	const char *footprint = param_str_default("footprint", "size");
	const char *mode = param_str_default("mode", "write");
	u64 llc, deadline, begin, wanted, delay = param_u64("delay_ms", 0);
	u32 n;

	(void)params;
	if (delay) {
		timer_delay_ms(delay);
		printf("interferer: starting after %lu ms\n", delay);
	}
	ncpus = bench_ncpus(1);
	synced = bench_sync_open();
	seconds = param_u64("seconds", synced ? 0 : 2);
	if (!strcmp(mode, "read")) {
		reading = true;
	} else if (strcmp(mode, "write")) {
		printf("interferer: FAIL (unknown mode '%s'; expected write or read)\n", mode);
		return 1;
	}
	llc = param_u64("llc_size", bench_llc_size(MiB(1)));
	if (!strcmp(footprint, "fit")) {
		wanted = ALIGN_DOWN(llc / (2 * ncpus), BENCH_LINE);
	} else if (!strcmp(footprint, "exceed")) {
		wanted = 2 * llc;
	} else if (!strcmp(footprint, "size")) {
		wanted = param_u64("size", MiB(4));
	} else {
		printf("interferer: FAIL (unknown footprint '%s'; expected fit or exceed)\n",
		       footprint);
		return 1;
	}
	buf_size = wanted;
	buf_base = bench_buffers(ncpus, &buf_size);
	if (!buf_base) {
		printf("interferer: FAIL (no memory for buffers)\n");
		return 1;
	}
	printf("interferer: %u vCPUs, %lu KiB per vCPU, %lu s\n", ncpus, buf_size >> 10, seconds);
	printf("interferer: mode %s, footprint %s, llc %lu KiB, sync %s\n", mode, footprint,
	       llc >> 10, synced ? "on" : "off");

	begin = timer_now();
	if (!bench_start_cpus(ncpus, 0)) {
		printf("interferer: FAIL (cannot start the vCPUs)\n");
		return 1;
	}
	interfere(0);
	if (synced)
		atomic_store32(&stop_all, 1); /* e.g. `seconds` ran out first on vCPU 0 */

	n = ncpus;
	deadline = timer_now() + timer_ns_to_ticks(10 * NSEC_PER_SEC);
	while (atomic_load32(&finished) < n && timer_now() < deadline)
		timer_delay_us(1000);
	if (atomic_load32(&finished) < n) {
		printf("interferer: FAIL (%u of %u vCPUs finished)\n", atomic_load32(&finished), n);
		return 1;
	}
	bench_report_regulator(n);
	if (synced)
		printf("interferer: PASS (%u vCPUs, until done, %lu ms)\n", n,
		       timer_ticks_to_ns(timer_now() - begin) / NSEC_PER_MSEC);
	else
		printf("interferer: PASS (%u vCPUs, %lu s)\n", n, seconds);
	return 0;
}
