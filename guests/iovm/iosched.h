/* SPDX-License-Identifier: Apache-2.0 */
/*
 * iosched: the I/O VM's work-conserving transmit scheduler (docs/io.md),
 * weighted round-robin by frame. Pure logic, no device and no clock of its
 * own: the caller says which clients have something in their rings and what
 * time it is, and gets the client whose slot it serves next (one frame, or
 * one malformed slot: bounded work either way). Host-tested
 * (tests/host/test_iosched.c).
 *
 * Turns go round the clients in order; a client's turn lasts up to `weight`
 * services while it has something pending and its rate cap allows; a client
 * with nothing pending (or held back by its cap) loses the rest of its turn,
 * so an idle client's share goes to the others and the scheduler returns a
 * client whenever any pending client is allowed (work-conserving).
 *
 * A rate cap is a token bucket (GCRA) of depth `weight` frames filling at
 * one frame per cap_ticks: over any interval of t ticks a capped client gets
 * at most weight + t / cap_ticks services, and within its turn it may take
 * up to `weight` frames back to back, so a cap at or above the client's share
 * never cuts its share.
 *
 * Guarantee (the proof sketch is in docs/io.md): with W the sum of the
 * weights and a device (plus the I/O VM) that serves at least C frames/s,
 * a client i that stays backlogged waits at most (W - w_i + 1) / C for its
 * next frame (the frame in service, then at most w_j of every other j) and
 * gets at least w_i of every W frames served: alpha_i = w_i / W * C.
 */
#ifndef IOVM_IOSCHED_H
#define IOVM_IOSCHED_H

#include "types.h"

#define IOSCHED_MAX_CLIENTS 8

struct iosched {
	u32 n;
	u32 cur;    /* whose turn it is */
	u32 credit; /* services left in cur's turn */
	u32 weight[IOSCHED_MAX_CLIENTS];
	u64 cap_ticks[IOSCHED_MAX_CLIENTS]; /* 0: no cap; else ticks per frame of the cap */
	u64 tat[IOSCHED_MAX_CLIENTS];       /* capped: the bucket's theoretical arrival time */
};

/* n clients (1..IOSCHED_MAX_CLIENTS) with weights (0 is taken as 1) and
 * caps in ticks per frame (NULL or 0: uncapped). false for a bad n. */
bool iosched_init(struct iosched *s, u32 n, const u32 *weight, const u64 *cap_ticks);
/* The client to serve at time t among those whose bit is set in pending
 * (bit i: client i has a slot to consume), or -1 if none is allowed. The
 * returned client's service is accounted (turn credit, cap) at once: the
 * caller must consume exactly one slot of it. At most n + 1 steps. */
int iosched_pick(struct iosched *s, u32 pending, u64 t);
/* Ticks until a capped pending client becomes allowed (0 if one is allowed
 * now, ~0 if no pending client is capped): how long an idle loop may wait. */
u64 iosched_next_allowed(const struct iosched *s, u32 pending, u64 t);

#endif
