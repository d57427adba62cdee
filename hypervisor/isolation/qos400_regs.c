/* SPDX-License-Identifier: Apache-2.0 */
#include "isolation/qos400_regs.h"

#define R_SHIFT 20
#define P_SHIFT 24

/* One direction: (rate reg, burst reg, peak reg) from a packed value. */
static bool qos400_unpack_dir(u64 v, u32 *r, u32 *b, u32 *p)
{
	u32 rate = (u32)(v & QOS400_R_MAX);
	u32 burst = (u32)((v >> 12) & QOS400_B_MAX);
	u32 peak = (u32)((v >> 28) & QOS400_P_MAX);

	if (v == 0) {
		*r = *b = *p = 0;
		return true;
	}
	if ((v >> 36) || !rate || !burst || !peak || (peak < QOS400_P_MAX && (peak << 4) < rate))
		return false;
	*r = rate << R_SHIFT;
	*b = burst;
	*p = peak << P_SHIFT;
	return true;
}

bool qos400_unpack(u64 read, u64 write, struct qos400_regs *out)
{
	struct qos400_regs n;

	if (!qos400_unpack_dir(read, &n.ar_r, &n.ar_b, &n.ar_p) ||
	    !qos400_unpack_dir(write, &n.aw_r, &n.aw_b, &n.aw_p))
		return false;
	n.cntl = (read ? QOS400_EN_AR_RATE : 0) | (write ? QOS400_EN_AW_RATE : 0);
	*out = n;
	return true;
}

static u64 qos400_pack_dir(u32 r, u32 b, u32 p)
{
	return QOS400_PACK((r >> R_SHIFT) & QOS400_R_MAX, b & QOS400_B_MAX,
	                   (p >> P_SHIFT) & QOS400_P_MAX);
}

u64 qos400_pack_read(const struct qos400_regs *r)
{
	return (r->cntl & QOS400_EN_AR_RATE) ? qos400_pack_dir(r->ar_r, r->ar_b, r->ar_p) : 0;
}

u64 qos400_pack_write(const struct qos400_regs *r)
{
	return (r->cntl & QOS400_EN_AW_RATE) ? qos400_pack_dir(r->aw_r, r->aw_b, r->aw_p) : 0;
}
