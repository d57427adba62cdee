/* SPDX-License-Identifier: Apache-2.0 */
/*
 * blkserve: the I/O VM's shared disk (docs/io.md "Shared disk"): a
 * virtio-blk device (lib/vblk.c) shared among clients, each confined to its
 * own sector range, served from per-client block rings (blkring.h) in
 * work-conserving weighted round-robin by request (iosched.h).
 */
#ifndef IOVM_BLKSERVE_H
#define IOVM_BLKSERVE_H

#include "types.h"

/* The I/O VM's main loop when it serves only the disk (no io: clients):
 * from the disk_* parameters until every client is done; 0 or 1 (failed). */
int blkserve_main(void);

/* The same service as steps of the network's loop (iovm.c), when one I/O
 * VM serves both (docs/io.md "One I/O VM for both"). After gic_init: the
 * disk and its clients from the disk_* parameters; 0 or 1 (failed). */
int blkserve_setup(void);
/* At most one request of the client the disk's own scheduler picks (bounded
 * work), and the counter lines when stats_ms is due at t; true if one was
 * served. */
bool blkserve_step(u64 t);
/* A client has a request the disk could serve now. */
bool blkserve_pending(void);
/* Every client said done and has nothing left in its request ring. */
bool blkserve_done(void);
/* The doorbells on (sleeping) or off (serving), as the network's. */
void blkserve_idle(bool on);
/* The final counter lines (docs/io.md "Shared disk"). */
void blkserve_report(void);

#endif
