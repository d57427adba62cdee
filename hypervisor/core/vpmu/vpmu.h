/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/vpmu (docs/ARCHITECTURE.md "Core"): the guest's PMU,
 * emulated on the counters the hypervisor leaves it. Calls: arch,
 * core/config, core/irq, core/vgic, core/vm, drivers, lib.
 */
/*
 * The guest's PMU: the counters the hypervisor does not reserve on the
 * vCPU's CPU (arch/aarch64/pmu.h), emulated behind MDCR_EL2.TPM/TPMCR.
 */
#ifndef CORE_VPMU_H
#define CORE_VPMU_H

#include "lib/types.h"

struct vcpu;

/* Boot CPU: takes the PMU overflow interrupts (platform) for the hypervisor. */
void vpmu_init(void);
/* Every CPU with a vCPU: enables its PMU interrupt there. */
void vpmu_cpu_init(void);
/* This CPU's physical PMU overflow interrupt: the platform's PPI, or the
 * CPU's own SPI (cfg_platform.pmu_spi); 0: none. */
u32 vpmu_hw_irq(void);
/* The hypervisor's own overflow handler (the bandwidth regulator): called
 * first on every PMU interrupt; it looks at its own counters only. */
void vpmu_set_hyp_overflow(void (*fn)(u32 intid));
/* The guest's counters back in their reset state (vCPU boot, VM reset). */
void vpmu_reset(struct vcpu *v);
/* A trapped PMU register access (op0 = 3); false if reg is not a PMU
 * register. Reads of registers the guest does not have give 0, writes to
 * them are ignored. */
bool vpmu_access(struct vcpu *v, u32 op1, u32 crn, u32 crm, u32 op2, bool read, u64 *val);

#endif
