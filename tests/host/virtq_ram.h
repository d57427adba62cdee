/* SPDX-License-Identifier: Apache-2.0 */
/* A client's RAM for the virtqueue tests (test_virtq.c, fuzz_virtq.c):
 * RAM_SIZE bytes at RAM_BASE (the includer defines both), reached only
 * through `mem`, whose accessors refuse anything outside it. */
#ifndef TESTS_HOST_VIRTQ_RAM_H
#define TESTS_HOST_VIRTQ_RAM_H

#include <string.h>

#include "core/virtio/virtq.h"

static u8 ram[RAM_SIZE];
/* Called after each write through `mem` (a test's driver acting at that
 * moment, as another of the client's CPUs could); NULL: none. */
static void (*after_write)(u64 ipa, u64 len);

static bool valid(void *ctx, u64 ipa, u64 len)
{
	(void)ctx;
	return ipa >= RAM_BASE && len <= RAM_SIZE && ipa - RAM_BASE <= RAM_SIZE - len;
}

static bool rd(void *ctx, u64 ipa, void *dst, u64 len)
{
	if (!valid(ctx, ipa, len))
		return false;
	memcpy(dst, ram + (ipa - RAM_BASE), len);
	return true;
}

static bool wr(void *ctx, u64 ipa, const void *src, u64 len)
{
	if (!valid(ctx, ipa, len))
		return false;
	memcpy(ram + (ipa - RAM_BASE), src, len);
	if (after_write)
		after_write(ipa, len);
	return true;
}

static const struct virtq_mem mem = { .read = rd, .write = wr, .valid = valid };

#endif
