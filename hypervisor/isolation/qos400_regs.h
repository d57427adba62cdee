/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CoreLink QoS-400 rate-regulation registers (docs/qos.md): offsets from a
 * regulator's register block, field layouts, and the packing of one
 * direction's settings in the BH_HC_QOS_* hypercalls. Pure arithmetic,
 * host-tested; mirrors bulkhead/qos.py.
 */
#ifndef ISOLATION_QOS400_REGS_H
#define ISOLATION_QOS400_REGS_H

#include "lib/types.h"

#define QOS400_QOS_CNTL 0x0cu
#define QOS400_AW_P     0x18u
#define QOS400_AW_B     0x1cu
#define QOS400_AW_R     0x20u
#define QOS400_AR_P     0x24u
#define QOS400_AR_B     0x28u
#define QOS400_AR_R     0x2cu

#define QOS400_EN_AW_RATE (1u << 0) /* qos_cntl */
#define QOS400_EN_AR_RATE (1u << 1)

#define QOS400_R_MAX 0xfffu  /* ar_r/aw_r [31:20]: 12-bit fraction of a transaction per cycle */
#define QOS400_B_MAX 0xffffu /* ar_b/aw_b [15:0]: transactions */
#define QOS400_P_MAX 0xffu   /* ar_p/aw_p [31:24]: 8-bit fraction per cycle */

/* The values of a regulator's rate registers. */
struct qos400_regs {
	u32 cntl;
	u32 ar_r, ar_b, ar_p;
	u32 aw_r, aw_b, aw_p;
};

/*
 * One direction in a hypercall register: r in bits [11:0], b in [27:12], p
 * in [35:28]; 0 means the direction is not regulated. Valid: r 1-0xfff, b
 * 1-0xffff, p 1-0xff with p/256 >= r/4096 (or p = 0xff, the highest peak),
 * nothing above bit 35.
 */
#define QOS400_PACK(r, b, p) ((u64)(r) | (u64)(b) << 12 | (u64)(p) << 28)

/* Register values from packed read and write settings; false (out
 * untouched) when a field is out of range. */
bool qos400_unpack(u64 read, u64 write, struct qos400_regs *out);
/* The packed read (ar) and write (aw) settings of register values. */
u64 qos400_pack_read(const struct qos400_regs *r);
u64 qos400_pack_write(const struct qos400_regs *r);

#endif
