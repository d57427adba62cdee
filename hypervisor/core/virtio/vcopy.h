/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtio bridge's copy of frames between a client's buffers and its
 * ring slots (docs/io.md "VirtIO"): whole words also when the two sides
 * sit off the word by different amounts, as a frame after a 12-byte
 * virtio_net_hdr and a slot's 8-byte aligned data do (lib's memcpy copies
 * those byte by byte and stays small for every build's .text budget). Pure.
 */
#ifndef CORE_VCOPY_H
#define CORE_VCOPY_H

#include "lib/types.h"

/* Copies n bytes from src to dst (not overlapping). */
void vcopy(void *dst, const void *src, u64 n);

#endif
