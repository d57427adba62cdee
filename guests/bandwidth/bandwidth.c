// SPDX-License-Identifier: Apache-2.0
/*
 * bandwidth: sequential memory bandwidth, one access per 64-byte line, on
 * every participating vCPU at once (each over its own buffer).
 *
 * Modes: read (one 8-byte load per line), write (one 8-byte store per line),
 * rmw (load, add, store per line). The buffer is initialised (line i holds
 * i), then `iterations` timed passes run back to back; time is the virtual
 * counter (CNTVCT). Each vCPU then checks its work: the sum of the values it
 * read (read), the value left in every line (write: the last pass's value;
 * rmw: i + iterations) and the number of lines it touched.
 *
 * Params: mode (read|write|rmw, default read), size (bytes per vCPU, default
 *         4M; reduced to fit in RAM), iterations (default 10), cpus (vCPUs
 *         taking part, default all), sync (shared-memory index of the
 *         handshake with interferers, see lib/include/bench.h), sync_timeout_ms
 *         (default 10000).
 * Lines: "bandwidth: <n> vCPUs, mode <m>, <k> KiB per vCPU, <it> iterations",
 *        "bandwidth: sync: <p> of <q> interfering VMs ready" (with sync),
 *        "result bench=bandwidth cpu=<i> mode=<m> size=<bytes> iterations=<it>
 *         lines=<l> bytes=<b> ns=<t> mbps=<x.xxx> ns_per_line=<x.xxx>
 *         start_ns=<t0> end_ns=<t1>" per vCPU (its measured loop, bench_stamp_ns),
 *        "bandwidth: vcpu <i>: <x.xxx> MB/s, <x.xxx> ns per line" per vCPU,
 *        "bandwidth: PASS (<n> vCPUs, <b> bytes counted)" or
 *        "bandwidth: FAIL (<reason>)".
 */
#include "bench.h"
#include "memwalk.h"
#include "runtime.h"

enum mode { MODE_READ, MODE_WRITE, MODE_RMW };
static const char *const mode_names[] = { "read", "write", "rmw" };

static enum mode mode;
static u32 ncpus;
static u64 size;
static u64 iterations;
static uptr base;
static volatile u32 failures;
static u64 bytes_done[RT_MAX_CPUS];

#define WORDS_PER_LINE MEMWALK_LINE_WORDS

static void fail(u32 cpu, const char *what, u64 got, u64 want)
{
	printf("bandwidth: FAIL (vcpu %u: %s: got %lu, expected %lu)\n", cpu, what, got, want);
	atomic_add32(&failures, 1);
}

static void bench(u32 cpu)
{
	volatile u64 *buf = (volatile u64 *)(base + cpu * bench_stride(size));
	u64 lines = size / BENCH_LINE, touched = 0, sum = 0, start, end, ticks, ns, i, it;
	char mbps[BENCH_FIXED_LEN], nspl[BENCH_FIXED_LEN];

	memwalk_write_seq(buf, lines, WORDS_PER_LINE, 0);

	bench_barrier(ncpus);
	bench_phase(BENCH_PHASE_BANDWIDTH);
	start = timer_now();
	for (it = 1; it <= iterations; it++) {
		switch (mode) {
		case MODE_READ:
			sum += memwalk_read(buf, lines, WORDS_PER_LINE);
			break;
		case MODE_WRITE:
			memwalk_write(buf, lines, WORDS_PER_LINE, it << 32 | cpu);
			break;
		case MODE_RMW:
			memwalk_rmw(buf, lines, WORDS_PER_LINE);
			break;
		}
		touched += lines;
	}
	end = timer_now();
	ticks = end - start;
	bench_phase(BENCH_PHASE_END);
	ns = timer_ticks_to_ns(ticks);
	if (!ns)
		ns = 1;

	/* Check the work. */
	if (touched != lines * iterations)
		fail(cpu, "lines touched", touched, lines * iterations);
	if (mode == MODE_READ && sum != iterations * (lines * (lines - 1) / 2))
		fail(cpu, "sum of the values read", sum, iterations * (lines * (lines - 1) / 2));
	for (i = 0; i < lines && mode != MODE_READ; i++) {
		u64 want = mode == MODE_WRITE ? (iterations << 32 | cpu) : i + iterations;

		if (buf[i * WORDS_PER_LINE] != want) {
			fail(cpu, "value left in a line", buf[i * WORDS_PER_LINE], want);
			break;
		}
	}
	bytes_done[cpu] = touched * BENCH_LINE;

	bench_mbps(mbps, touched * BENCH_LINE, ns);
	bench_fixed(nspl, ns, touched);
	printf("result bench=bandwidth cpu=%u mode=%s size=%lu iterations=%lu lines=%lu bytes=%lu "
	       "ns=%lu mbps=%s ns_per_line=%s start_ns=%lu end_ns=%lu\n",
	       cpu, mode_names[mode], size, iterations, touched, touched * BENCH_LINE, ns, mbps,
	       nspl, bench_stamp_ns(start), bench_stamp_ns(end));
	printf("bandwidth: vcpu %u: %s MB/s, %s ns per line\n", cpu, mbps, nspl);
	bench_barrier(ncpus);
}

void secondary_main(u32 cpu, u64 ctx)
{
	(void)ctx;
	bench(cpu);
}

static bool parse_mode(void)
{
	const char *m = param_str_default("mode", "read");
	u32 i;

	for (i = 0; i < ARRAY_SIZE(mode_names); i++) {
		if (!strcmp(m, mode_names[i])) {
			mode = (enum mode)i;
			return true;
		}
	}
	printf("bandwidth: FAIL (unknown mode '%s'; expected read, write or rmw)\n", m);
	return false;
}

static int run(void)
{
	u64 total = 0;
	u32 i;

	if (!parse_mode())
		return 1;
	ncpus = bench_ncpus(1);
	iterations = param_u64("iterations", 10);
	if (!iterations)
		iterations = 1;
	size = param_u64("size", MiB(4));
	base = bench_buffers(ncpus, &size);
	if (!base) {
		printf("bandwidth: FAIL (no memory for buffers)\n");
		return 1;
	}
	printf("bandwidth: %u vCPUs, mode %s, %lu KiB per vCPU, %lu iterations\n", ncpus,
	       mode_names[mode], size >> 10, iterations);

	if (!bench_sync_begin("bandwidth"))
		return 1;

	if (!bench_start_cpus(ncpus, 0)) {
		printf("bandwidth: FAIL (cannot start the vCPUs)\n");
		return 1;
	}
	bench(0);
	/* The second barrier in bench() guarantees every vCPU reported. */
	for (i = 0; i < ncpus; i++)
		total += bytes_done[i];
	if (atomic_load32(&failures)) {
		printf("bandwidth: FAIL (%u errors)\n", atomic_load32(&failures));
		return 1;
	}
	printf("bandwidth: PASS (%u vCPUs, %lu bytes counted)\n", ncpus, total);
	return 0;
}

int main(const char *params)
{
	(void)params;
	return bench_main(run);
}
