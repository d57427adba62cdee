/* SPDX-License-Identifier: Apache-2.0 */
/* ioclient's block modes (blkclient.c): mode=blk, blkflood, blkdev. */
#ifndef IOCLIENT_BLKCLIENT_H
#define IOCLIENT_BLKCLIENT_H

#include "types.h"

/* Runs block mode `mode`; 0 (PASS) or 1 (FAIL). */
int blkclient_main(const char *mode);

#endif
