// SPDX-License-Identifier: Apache-2.0
/*
 * interferer: memory-bandwidth load on every vCPU of the VM. vCPU 0 starts
 * the others (CPU_ON); each vCPU writes continuously over its own buffer and
 * prints its write rate once per second.
 *
 * Params: size (bytes per vCPU, default 4M; reduced to fit in RAM),
 *         seconds (default 2; 0 = run forever), cpus (vCPU count when
 *         BH_HC_VM_INFO is unavailable, default 1).
 * Lines: "interferer: <n> vCPUs, <size> KiB per vCPU, <s> s",
 *        "interferer: vcpu <i>: <mb> MB/s" (every second),
 *        "interferer: vcpu <i> done (<mb> MB written)",
 *        "interferer: PASS (<n> vCPUs, <s> s)".
 */
#include "runtime.h"

static u32 ncpus;
static u64 buf_size;
static uptr buf_base;
static u64 seconds;
static volatile u32 finished;
static volatile u32 started;

static void fill(volatile u64 *p, u64 words, u64 val)
{
	u64 i;

	for (i = 0; i + 8 <= words; i += 8) {
		p[i] = val;
		p[i + 1] = val;
		p[i + 2] = val;
		p[i + 3] = val;
		p[i + 4] = val;
		p[i + 5] = val;
		p[i + 6] = val;
		p[i + 7] = val;
	}
	for (; i < words; i++)
		p[i] = val;
}

static void interfere(u32 cpu)
{
	volatile u64 *buf = (volatile u64 *)(buf_base + cpu * buf_size);
	u64 words = buf_size / 8, second = timer_ns_to_ticks(NSEC_PER_SEC);
	u64 start = timer_now(), mark = start, now, bytes = 0, total = 0, pass = 0;
	u64 elapsed_s = 0;

	atomic_add32(&started, 1);
	for (;;) {
		fill(buf, words, ++pass);
		bytes += buf_size;
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
	printf("interferer: vcpu %u done (%lu MB written)\n", cpu, total / 1000000);
	atomic_add32(&finished, 1);
}

void secondary_main(u32 cpu, u64 ctx)
{
	(void)ctx;
	interfere(cpu);
}

int main(const char *params)
{
	u64 avail, deadline;
	u32 i, n;
	s64 ret;

	(void)params;
	ncpus = rt_ncpus((u32)param_u64("cpus", 1));
	if (ncpus > RT_MAX_CPUS)
		ncpus = RT_MAX_CPUS;
	seconds = param_u64("seconds", 2);
	buf_size = ALIGN_DOWN(param_u64("size", MiB(4)), 64);
	buf_base = ALIGN_UP(rt_free_start(), 64);
	avail = rt_free_end() - buf_base;
	if (buf_size * ncpus > avail)
		buf_size = ALIGN_DOWN(avail / ncpus, 64);
	if (buf_size < 64) {
		printf("interferer: FAIL (no memory for buffers)\n");
		return 1;
	}
	printf("interferer: %u vCPUs, %lu KiB per vCPU, %lu s\n", ncpus, buf_size >> 10, seconds);

	for (i = 1; i < ncpus; i++) {
		ret = psci_cpu_on_index(i, 0);
		if (ret != PSCI_SUCCESS) {
			printf("interferer: FAIL (CPU_ON vcpu %u: %ld)\n", i, ret);
			return 1;
		}
	}
	interfere(0);

	n = ncpus;
	deadline = timer_now() + timer_ns_to_ticks(10 * NSEC_PER_SEC);
	while (atomic_load32(&finished) < n && timer_now() < deadline)
		timer_delay_us(1000);
	if (atomic_load32(&finished) < n) {
		printf("interferer: FAIL (%u of %u vCPUs finished)\n", atomic_load32(&finished), n);
		return 1;
	}
	printf("interferer: PASS (%u vCPUs, %lu s)\n", n, seconds);
	return 0;
}
