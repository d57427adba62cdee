/* SPDX-License-Identifier: Apache-2.0 */
/* A host stand-in for the guests' arch.h (guests/lib/include/arch.h), found
 * first on a host test's include path (tests/test_host_c.py INCLUDES): the
 * system registers, WFI and the interrupt mask become calls into the test,
 * which plays the virtual counter and timer. Only what guest library code
 * built under it uses. */
#ifndef GUEST_ARCH_H
#define GUEST_ARCH_H

#include "types.h"

u64 mock_sysreg_read(const char *reg);
void mock_sysreg_write(const char *reg, u64 val);
void mock_wfi(void);
void mock_irq_unmask(void);
void mock_irq_mask(void);
u64 mock_irq_save(void); /* the mask as it was, then masked */

#define read_sysreg(reg)       mock_sysreg_read(#reg)
#define write_sysreg(val, reg) mock_sysreg_write(#reg, (u64)(val))

static inline void isb(void)
{
}

static inline void wfi(void)
{
	mock_wfi();
}

static inline void cpu_relax(void)
{
}

static inline void irq_local_enable(void)
{
	mock_irq_unmask();
}

static inline void irq_local_disable(void)
{
	mock_irq_mask();
}

static inline u64 irq_local_save(void)
{
	return mock_irq_save();
}

static inline void irq_local_restore(u64 flags)
{
	write_sysreg(flags, daif);
}

#endif
