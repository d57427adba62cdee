// SPDX-License-Identifier: Apache-2.0
/*
 * attack: a hostile VM for the attack suite (tests/qemu/test_attack.py).
 * Every vCPU attacks for `ms` (200) milliseconds of virtual time in the
 * way `mode` selects, then vCPU 0 reports and powers the VM off:
 *
 *   quiet      spins (the busy but silent baseline neighbour)
 *   flood      console flood: vCPU 0 writes 150-character lines to its
 *              virtual PL011 as fast as it can, the other vCPUs
 *              BH_HC_CONSOLE_WRITE 4 KiB buffers of one-character (odd
 *              vCPUs) or 100-character lines (even vCPUs)
 *
 * Params: mode, ms.
 * Lines: "attack: <mode> on <n> vCPUs for <ms> ms",
 *        "attack: <mode> done ops=<n> [<mode-specific counts>]",
 *        then "attack: PASS (<mode>)" or "attack: FAIL <why>".
 */
#include "runtime.h"

#define UART_DR 0x00

struct mode {
	const char *name;
	/* one vCPU's attack until the counter reaches end; returns operations */
	u64 (*run)(u32 cpu, u64 end);
};

static volatile u64 ops_total;
static volatile u32 cpus_done;
static const struct mode *mode;
static u64 end_ticks;

static u64 run_quiet(u32 cpu, u64 end)
{
	u64 n = 0;

	(void)cpu;
	while (timer_now() < end)
		n++;
	return n;
}

static char flood_short[4096], flood_long[4096];

static u64 run_flood(u32 cpu, u64 end)
{
	u64 n = 0;

	if (cpu == 0) {
		while (timer_now() < end) {
			for (u32 i = 0; i < 150; i++)
				mmio_write32(UART_BASE + UART_DR, (u32)('A' + (n + i) % 26));
			mmio_write32(UART_BASE + UART_DR, '\n');
			n++;
		}
		return n;
	}
	/* odd vCPUs: one-character lines (the most line ends per byte), even
	 * ones: 100-character lines */
	char *buf = (cpu % 2) ? flood_short : flood_long;

	for (u32 i = 0; i < sizeof(flood_short); i++) {
		flood_short[i] = (i % 2) ? '\n' : (char)('a' + i % 26);
		flood_long[i] = (i % 101 == 100) ? '\n' : (char)('a' + i % 26);
	}
	while (timer_now() < end) {
		if (bh_console_write(buf, sizeof(flood_short)) != (s64)sizeof(flood_short))
			return 0;
		n++;
	}
	return n;
}

static const struct mode modes[] = {
	{ "quiet", run_quiet },
	{ "flood", run_flood },
};

static void attack_cpu(u32 cpu)
{
	u64 n;

	if (cpu)
		gic_cpu_init();
	n = mode->run(cpu, end_ticks);

	atomic_add64(&ops_total, n);
	atomic_add32(&cpus_done, 1);
}

void secondary_main(u32 cpu, u64 ctx)
{
	(void)ctx;
	attack_cpu(cpu);
}

int main(const char *params)
{
	const char *name = param_str_default("mode", "quiet");
	u64 ms = param_u64("ms", 200);
	u32 ncpus = rt_ncpus(1);

	(void)params;
	for (u32 i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(modes[i].name, name) == 0)
			mode = &modes[i];
	if (!mode) {
		printf("attack: FAIL unknown mode %s\n", name);
		return 1;
	}
	printf("attack: %s on %u vCPUs for %lu ms\n", name, ncpus, ms);
	gic_init();
	end_ticks = timer_now() + timer_ns_to_ticks(ms * NSEC_PER_MSEC);
	for (u32 i = 1; i < ncpus; i++) {
		if (psci_cpu_on_index(i, 0) != PSCI_SUCCESS) {
			printf("attack: FAIL CPU_ON %u\n", i);
			return 1;
		}
	}
	attack_cpu(0);
	while (atomic_load32(&cpus_done) < ncpus)
		cpu_relax();
	printf("attack: %s done ops=%lu\n", name, atomic_load64(&ops_total));
	printf("attack: PASS (%s)\n", name);
	return 0;
}
