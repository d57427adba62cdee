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

#endif
