/* SPDX-License-Identifier: Apache-2.0 */
/* Emulated MMIO devices of a VM, reached through stage-2 data aborts. */
#ifndef CORE_MMIO_H
#define CORE_MMIO_H

#include "lib/features.h"
#include "lib/types.h"

#define MMIO_MAX_REGIONS \
	(6 + IS_ENABLED(ITS) + IS_ENABLED(VIRTIO)) /* a virtual ITS, a virtio transport */

struct vcpu;

struct mmio_access {
	u64 off;  /* offset in the region */
	u32 size; /* bytes: 1, 2, 4 or 8 */
	bool write;
	u64 val; /* written value, or the value read */
};

/* Returns false for an access the device rejects (the guest gets an abort). */
typedef bool (*mmio_fn)(struct vcpu *v, struct mmio_access *a, void *dev);

struct mmio_region {
	u64 base;
	u64 size;
	mmio_fn fn;
	void *dev;
};

struct vm;

void mmio_register(struct vm *vm, u64 base, u64 size, mmio_fn fn, void *dev);
/* Returns the region covering ipa, or NULL. */
const struct mmio_region *mmio_find(struct vm *vm, u64 ipa);

#endif
