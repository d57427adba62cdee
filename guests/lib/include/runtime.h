/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bulkhead bare-metal guest runtime: include this one header.
 *
 * Boot: vCPU 0 enters _start (x0 = parameter block IPA or 0); the runtime
 * enables the MMU (identity map: [0, 1 GiB) Device-nGnRE, [1, 4 GiB) Normal
 * WB), zeroes BSS, parses the parameters (x0; with x0 = 0, a block starting
 * with "vm=" at RT_FALLBACK_PARAMS, for booting directly on QEMU), unmasks IRQs and SErrors and
 * calls main(params). When main returns, the VM is powered off: PSCI SYSTEM_OFF for 0, BH_HC_EXIT
 * with the status otherwise (so `bulkhead run` fails). vCPUs started
 * with psci_cpu_on_index() (entry secondary_entry) run secondary_main(cpu, ctx); when it returns,
 * the vCPU calls PSCI CPU_OFF. Up to RT_MAX_CPUS vCPUs, each with a RT_STACK_SIZE stack.
 */
#ifndef GUEST_RUNTIME_H
#define GUEST_RUNTIME_H

#include "arch.h"
#include "exc.h"
#include "gic.h"
#include "hvc.h"
#include "lib.h"
#include "params.h"
#include "psci.h"
#include "timer.h"
#include "types.h"
#include "uart.h"

#define RT_MAX_CPUS         8
#define RT_STACK_SIZE       0x4000
#define RT_RAM_BASE         0x40000000ul
#define RT_DEFAULT_RAM_SIZE MiB(16)
/* Parameter block looked for when x0 = 0 (see runtime.c). */
#define RT_FALLBACK_PARAMS (RT_RAM_BASE + RT_DEFAULT_RAM_SIZE - 4096)

/* Provided by each guest. params: the raw parameter block, or NULL. */
int main(const char *params);
/* Optional (weak default: park in WFI forever). */
void secondary_main(u32 cpu, u64 ctx);

/* CPU_ON entry point (assembly). */
void secondary_entry(void);

/* Boot argument x0 as received by vCPU 0. */
u64 rt_boot_arg(void);
/* Number of vCPUs (BH_HC_VM_INFO, else def). */
u32 rt_ncpus(u32 def);
/* RAM size (BH_HC_VM_INFO, else RT_DEFAULT_RAM_SIZE). */
u64 rt_ram_size(void);
/* First free RAM address after the image, BSS and stacks. */
uptr rt_free_start(void);
/* End of usable RAM: RAM end minus the parameter page. */
uptr rt_free_end(void);

/* Power the VM off (SYSTEM_OFF); never returns. */
__noreturn void rt_halt(void);
/* Prints "<who>: FAIL (<message>)" and returns 1 (a guest's failure exit status). */
__printf(2, 3) int rt_fail(const char *who, const char *fmt, ...);
/* Power the VM off with main()'s status: non-zero = failure (BH_HC_EXIT). */
__noreturn void rt_exit(int status);

#endif
