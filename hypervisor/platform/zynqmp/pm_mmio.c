/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ZynqMP firmware's MMIO service (docs/qos.md "Access: secure registers
 * and TF-A"): TF-A's SiP PM calls PM_MMIO_WRITE (API id 19) and PM_MMIO_READ
 * (20), function IDs 0xC2000000 + id (SMC64 fast calls). TF-A forwards them
 * to the PMU firmware, which performs the access only for addresses in its
 * MMIO access table. Arguments are 32-bit words packed two per register:
 * write x1 = address | mask << 32, x2 = value; read x1 = address. The status
 * comes back in x0[31:0] (0 = success), a read's value in x0[63:32].
 */
#include "platform/zynqmp/pm_mmio.h"
#include "arch/aarch64/smccc.h"

#define PM_SIP_SVC    0xc2000000u
#define PM_MMIO_WRITE 19u
#define PM_MMIO_READ  20u

/* The 32-bit status as a signed value (QEMU without TF-A returns -1). */
static s64 pm_status(u64 x0)
{
	return (s64)(s32)(u32)x0;
}

static s64 pm_mmio_write(u64 pa, u32 value)
{
	struct smccc_res r = smccc_smc(PM_SIP_SVC | PM_MMIO_WRITE,
	                               (pa & 0xffffffffu) | 0xffffffffull << 32, value, 0);
	return pm_status(r.x0);
}

static s64 pm_mmio_read(u64 pa, u32 *value)
{
	struct smccc_res r = smccc_smc(PM_SIP_SVC | PM_MMIO_READ, pa & 0xffffffffu, 0, 0);

	*value = (u32)(r.x0 >> 32);
	return pm_status(r.x0);
}

const struct qos400_fw zynqmp_pm_mmio = {
	.name = "TF-A SiP PM_MMIO_WRITE/PM_MMIO_READ",
	.write = pm_mmio_write,
	.read = pm_mmio_read,
};
