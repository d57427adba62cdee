/* SPDX-License-Identifier: Apache-2.0 */
/* Exceptions taken at EL2 itself: always a hypervisor bug, always a panic. */
#include "arch/aarch64/cpu.h"
#include "lib/log.h"

void trap_el2_fault(struct frame *f, u64 kind);

void trap_el2_fault(struct frame *f, u64 kind)
{
	static const char *const kinds[] = { "EL2t sync",
		                             "EL2t IRQ",
		                             "EL2t FIQ",
		                             "EL2t SError",
		                             "EL2 sync",
		                             "EL2 IRQ",
		                             "EL2 FIQ",
		                             "EL2 SError",
		                             "",
		                             "",
		                             "",
		                             "",
		                             "AArch32 sync",
		                             "AArch32 IRQ",
		                             "AArch32 FIQ",
		                             "AArch32 SError" };

	panic("%s exception in the hypervisor: esr=%lx elr=%lx far=%lx lr=%lx",
	      kind < ARRAY_SIZE(kinds) ? kinds[kind] : "?", sysreg_read(esr_el2), f->elr,
	      sysreg_read(far_el2), f->x[30]);
}
