/* SPDX-License-Identifier: Apache-2.0 */
/* PSCI 1.1 client over HVC #0 (64-bit function IDs where they exist). */
#ifndef GUEST_PSCI_H
#define GUEST_PSCI_H

#include "types.h"

#define PSCI_VERSION       0x84000000u
#define PSCI_CPU_OFF       0x84000002u
#define PSCI_CPU_ON        0xC4000003u
#define PSCI_AFFINITY_INFO 0xC4000004u
#define PSCI_SYSTEM_OFF    0x84000008u
#define PSCI_SYSTEM_RESET  0x84000009u
#define PSCI_FEATURES      0x8400000Au

#define PSCI_SUCCESS              0
#define PSCI_E_NOT_SUPPORTED      (-1)
#define PSCI_E_INVALID_PARAMETERS (-2)
#define PSCI_E_DENIED             (-3)
#define PSCI_E_ALREADY_ON         (-4)
#define PSCI_E_ON_PENDING         (-5)
#define PSCI_E_INTERNAL_FAILURE   (-6)
#define PSCI_E_NOT_PRESENT        (-7)
#define PSCI_E_DISABLED           (-8)
#define PSCI_E_INVALID_ADDRESS    (-9)

/* AFFINITY_INFO results. */
#define PSCI_AFF_ON         0
#define PSCI_AFF_OFF        1
#define PSCI_AFF_ON_PENDING 2

/*
 * mpidr arguments may be full MPIDR_EL1 values: they are reduced to the
 * affinity fields (MPIDR_AFF_MASK) as PSCI requires.
 */
s64 psci_version(void); /* (major << 16) | minor */
s64 psci_features(u32 fid);
s64 psci_cpu_on(u64 mpidr, u64 entry, u64 ctx);
s64 psci_cpu_off(void); /* returns only on failure */
s64 psci_affinity_info(u64 mpidr);
__noreturn void psci_system_off(void);
__noreturn void psci_system_reset(void);

/* CPU_ON at the runtime's secondary entry: secondary_main(cpu, ctx) runs. */
s64 psci_cpu_on_index(u32 cpu, u64 ctx);

#endif
