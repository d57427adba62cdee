/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A platform quirk (platform file gic.virq: software, hypervisor/Makefile
 * GIC_VIRQ, IS_ENABLED(SOFT_VIRQ)): the GICv3 virtual CPU interface's IRQ
 * line kept in software, for a machine that does not connect it to the CPUs
 * (QEMU 10.0's imx8mp-evk; docs/boards/imx8mp.md). vgic_v3_virq.c says how.
 * Built only where a platform names it; everywhere else the calls below are
 * compiled out.
 */
#ifndef CORE_VGIC_V3_VIRQ_H
#define CORE_VGIC_V3_VIRQ_H

#include "lib/types.h"

struct vcpu;

/* At every entry to v's guest (vgic_flush): HCR_EL2.VI set exactly when the
 * virtual CPU interface would signal an IRQ. */
void vgic_v3_virq_line(struct vcpu *v);
/* At every exit (vgic_sync): HCR_EL2.VI clear. */
void vgic_v3_virq_exit(void);
/* A Group 1 CPU interface register or ICC_DIR_EL1 the quirk traps
 * (ICH_HCR_EL2.TALL1, TDIR), reg as SYSREG(): emulated on the list registers
 * and ICH_VMCR_EL2 / ICH_AP1Rn_EL2, a read's value in *val. False: not one
 * of them. */
bool vgic_v3_virq_icv(struct vcpu *v, u64 reg, bool read, u64 *val);

#endif
