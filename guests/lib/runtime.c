// SPDX-License-Identifier: Apache-2.0
/* C side of the boot path. */
#include "runtime.h"

extern char __image_end[];

static u64 boot_arg;

void rt_start(u64 arg);
void rt_secondary_start(u32 cpu, u64 ctx);

__weak void secondary_main(u32 cpu, u64 ctx)
{
	(void)cpu;
	(void)ctx;
	for (;;)
		wfi();
}

static bool looks_like_params(u64 arg)
{
	/* Must lie in the RAM window; a device tree (Linux boot) is not ours. */
	if (arg < RT_RAM_BASE || arg >= RT_RAM_BASE + GiB(3) || (arg & 7))
		return false;
	return *(const volatile u32 *)arg != 0xedfe0dd0u; /* FDT magic, BE */
}

/*
 * Without a boot argument (bare QEMU: x0 = 0), accept a block at the place
 * the toolchain uses for a 16 MiB VM, if it starts like a toolchain block
 * ("vm="). Lets tests boot a guest directly on QEMU with parameters:
 *   -device loader,file=params.txt,addr=0x40fff000
 */
static const char *find_params(u64 arg)
{
	const char *fallback = (const char *)RT_FALLBACK_PARAMS;

	if (arg)
		return looks_like_params(arg) ? (const char *)arg : NULL;
	if (!strncmp(fallback, "vm=", 3))
		return fallback;
	return NULL;
}

void rt_start(u64 arg)
{
	const char *params = find_params(arg);

	boot_arg = arg;
	params_init(params);
	__asm__ volatile("msr daifclr, #6" : : : "memory"); /* SError, IRQ */
	rt_exit(main(params));
}

void rt_secondary_start(u32 cpu, u64 ctx)
{
	__asm__ volatile("msr daifclr, #6" : : : "memory");
	secondary_main(cpu, ctx);
	psci_cpu_off();
	uart_panic_printf("guest: vcpu %u: CPU_OFF failed\n", cpu);
	for (;;)
		wfi();
}

u64 rt_boot_arg(void)
{
	return boot_arg;
}

u32 rt_ncpus(u32 def)
{
	struct bh_vm_info info;

	if (bh_vm_info(&info) == BH_OK && info.ncpus)
		return info.ncpus;
	return def;
}

u64 rt_ram_size(void)
{
	struct bh_vm_info info;

	if (bh_vm_info(&info) == BH_OK && info.ram_bytes)
		return info.ram_bytes;
	return RT_DEFAULT_RAM_SIZE;
}

uptr rt_free_start(void)
{
	return ALIGN_UP((uptr)__image_end, 4096);
}

uptr rt_free_end(void)
{
	return RT_RAM_BASE + rt_ram_size() - 4096;
}

void rt_halt(void)
{
	psci_system_off();
}

void rt_exit(int status)
{
	/* a failure goes to the hypervisor, which makes `bulkhead run` fail;
	 * without one (bare QEMU) it only shows in the console output */
	if (status && bh_present())
		bh_exit((u32)status);
	psci_system_off();
}
