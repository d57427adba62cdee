/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The spin-table CPU enable method (Linux's Documentation/arch/arm64/
 * booting.rst "spin-table"): a CPU the firmware parked waits, with its MMU
 * off, for a non-zero entry address at its release address and then jumps
 * there with x0-x3 = 0 (the Raspberry Pi's armstub, QEMU raspi's loader).
 * Its data (config.c, bulkhead/drivers/cpu_enable/spintable.py): each CPU's
 * release address, a u64 array indexed by CPU index.
 */
#include "arch/aarch64/cache.h"
#include "arch/aarch64/cpu.h"
#include "arch/aarch64/timer.h"
#include "drivers/cpu_enable/cpu_enable.h"
#include "lib/log.h"
#include "lib/spinlock.h"

/* How long a released CPU may take to reach cpu_init (arch/aarch64/cpu.c),
 * in counter time: generous for an emulator on a loaded host. */
#define SPINTABLE_WAIT_NS    2000000000ull
#define SPINTABLE_ENTRY_SIZE 8
#define SPINTABLE_STR(x)     #x
#define SPINTABLE_XSTR(x)    SPINTABLE_STR(x)

/* One entry per CPU index i at spintable_entries + i * SPINTABLE_ENTRY_SIZE:
 * the firmware jumps to a released CPU's entry with x0 = 0, so each sets
 * x0 = i before the common secondary entry (arch/aarch64/boot.S). */
/* clang-format off */
__asm__(".pushsection .text.spintable_entries, \"ax\"\n"
	".balign 4\n"
	"spintable_entries:\n"
	".set spintable_index, 0\n"
	".rept " SPINTABLE_XSTR(ARCH_MAX_CPUS) "\n"
	"mov x0, #spintable_index\n"
	"b secondary_entry\n"
	".set spintable_index, spintable_index + 1\n"
	".endr\n"
	".popsection");
/* clang-format on */
extern char spintable_entries[];

/* Writes CPU `index`'s entry to its release address (identity-mapped RAM),
 * cleans it to the point of coherency and wakes the parked CPUs (SEV). */
static void spintable_release(u64 release, u32 index)
{
	volatile u64 *slot = (volatile u64 *)(uintptr_t)release;

	*slot = (u64)(uintptr_t)spintable_entries + (u64)index * SPINTABLE_ENTRY_SIZE;
	/* the parked CPU reads with its MMU (and so its caches) off */
	cache_clean_inval_range(release, sizeof(u64));
	__asm__ volatile("dsb sy\n\tsev" ::: "memory");
}

/* The spin table gives no answer: wait until the CPU reports in (cpu_init
 * sets its index), so that a wrong release address stops the boot with a
 * message instead of leaving a VM that never starts. */
static void spintable_cpu_on(const struct cpu_enable_dev *d, u32 index, u64 mpidr)
{
	u64 release = ((const u64 *)d->data)[index];
	u64 deadline;

	(void)mpidr;
	spintable_release(release, index);
	deadline = timer_now() + timer_ns_to_ticks(SPINTABLE_WAIT_NS);
	while (READ_ONCE(cpu_data[index].index) != index) {
		if (timer_now() > deadline)
			panic("CPU %u did not leave the spin table (release address %lx) in 2 s",
			      index, release);
		__asm__ volatile("yield");
	}
}

const struct cpu_enable_ops spintable_cpu_enable_ops = { .cpu_on = spintable_cpu_on };
