/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ping/pong page guests/doorbell uses on shared memory with doorbells
 * (docs/ipc.md), shared by the guests that answer it (guests/doorbell's pong,
 * guests/direct's emul mode): one layout, each side writing only its own
 * fields, each field on its own 64-byte line.
 */
#ifndef GUEST_DOORBELL_CHAN_H
#define GUEST_DOORBELL_CHAN_H

#include "arch.h"
#include "hvc.h"
#include "lib.h"
#include "types.h"

#define DOORBELL_PONG_READY 0x504f4e47u /* "PONG": pong_ready once the pong side listens */

struct doorbell_chan {
	volatile u32 pong_ready; /* pong */
	volatile u32 pad0[15];
	volatile u32 ping_val; /* ping */
	volatile u32 pad1[15];
	volatile u32 pong_val; /* pong */
	volatile u32 pad2[15];
	volatile u64 pong_stamp; /* pong: its handler's counter for pong_val - 1 */
};

/* The pong side's answer to ping value `val` seen at counter `stamp`:
 * pong_val = val + 1, then doorbell 0 rung; BH_HC_DOORBELL's result. */
static inline s64 doorbell_chan_pong(struct doorbell_chan *c, u32 val, u64 stamp)
{
	atomic_store64(&c->pong_stamp, stamp);
	atomic_store32(&c->pong_val, val + 1);
	dsb_ish();
	return bh_doorbell(0);
}

#endif
