/* SPDX-License-Identifier: Apache-2.0 */
/* The PSCI interface (DEN 0022): the machine's firmware answers it over SMC
 * (drivers/cpu_enable/psci.c, drivers/power_off/psci.c), the hypervisor
 * answers its VMs (core/trap/vpsci.c). */
#ifndef ARCH_PSCI_FW_H
#define ARCH_PSCI_FW_H

#include "lib/types.h"

#define PSCI_VERSION           0x84000000u
#define PSCI_CPU_SUSPEND_64    0xc4000001u
#define PSCI_CPU_OFF           0x84000002u
#define PSCI_CPU_ON_32         0x84000003u
#define PSCI_CPU_ON_64         0xc4000003u
#define PSCI_AFFINITY_INFO_32  0x84000004u
#define PSCI_AFFINITY_INFO_64  0xc4000004u
#define PSCI_MIGRATE_INFO_TYPE 0x84000006u
#define PSCI_SYSTEM_OFF        0x84000008u
#define PSCI_SYSTEM_RESET      0x84000009u
#define PSCI_FEATURES          0x8400000au

#define PSCI_RET_SUCCESS          0
#define PSCI_RET_NOT_SUPPORTED    (-1)
#define PSCI_RET_INVALID_PARAMS   (-2)
#define PSCI_RET_DENIED           (-3)
#define PSCI_RET_ALREADY_ON       (-4)
#define PSCI_RET_ON_PENDING       (-5)
#define PSCI_RET_INTERNAL_FAILURE (-6)

/* The affinity fields of an MPIDR (CPU_ON's target_cpu) */
#define PSCI_MPIDR_AFF 0xff00ffffffull

/* SYSTEM_OFF over HVC: for an image wrongly entered at EL1, where the
 * firmware's PSCI (if any) is reached through the hypervisor call. */
__noreturn void psci_fw_system_off_hvc(void);

#endif
