/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vioclient: a bare-metal VirtIO front end (virtio-net and virtio-blk over
 * virtio-mmio version 2) written against the VIRTIO 1.2 specification only,
 * for any standard device: QEMU's own, or Bulkhead's bridge (docs/io.md).
 * vioclient.c: parameters, device bring-up, interrupts; vionet.c, vioblk.c:
 * the two front ends.
 */
#ifndef VIOCLIENT_H
#define VIOCLIENT_H

#include "runtime.h"
#include "virtio_mmio.h"
#include "virtq.h"

struct vio {
	struct vmmio mmio;
	u32 intid;         /* the transport's interrupt (0: none) */
	bool poll;         /* polled: the interrupt is never enabled */
	u64 features;      /* negotiated */
	volatile u32 irqs; /* interrupts taken */
};

/* Probes the transport at base for device `id`, resets it and negotiates
 * (VERSION_1 required, the rest of `wanted` where offered). NULL on success,
 * else why the device was refused (its Status then has FAILED set). */
const char *vio_open(struct vio *v, uptr base, u32 id, u64 wanted);
/* Sets up queue sel over q's memory (all pointers are addresses the device
 * uses: this guest's IPAs, equal to its VAs). NULL or why not. */
const char *vio_queue(struct vio *v, u32 sel, struct virtq *q, u16 size, void *desc, void *avail,
                      void *used);
/* DRIVER_OK, then the interrupt unless polled. */
void vio_start(struct vio *v);
/* Until cond(arg) or timeout_ns: in WFI if interrupt-driven, busy otherwise. */
bool vio_wait(struct vio *v, bool (*cond)(void *), void *arg, u64 timeout_ns);
bool vio_has(const struct vio *v, u32 bit);

int vionet_run(struct vio *v, uptr base);
int vioblk_run(struct vio *v, uptr base);

#endif
