/* SPDX-License-Identifier: Apache-2.0 */
/* The ZynqMP firmware's MMIO service (TF-A SiP PM_MMIO_WRITE/READ), the
 * path to the secure QoS-400 registers. */
#ifndef PLATFORM_ZYNQMP_PM_MMIO_H
#define PLATFORM_ZYNQMP_PM_MMIO_H

#include "isolation/qos400.h"

extern const struct qos400_fw zynqmp_pm_mmio;

#endif
