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
/* "vioclient: FAIL (<what>: <why>; device status 0x<s>)": returns 1. */
int vio_fail(const struct vio *v, const char *what, const char *why);

int vionet_run(struct vio *v, uptr base);
/* vionet.c for viohostile.c: (re)sets the device and rings up; the echo
 * exchange (NULL or why it failed); the transmit queue and its buffers. */
const char *vionet_setup(struct vio *v, uptr base);
const char *vionet_echo(u32 frames, u32 size, u32 window);
struct virtq *vionet_txq(void);
/* Waits until the device gave every transmit buffer back: false if not. */
bool vionet_tx_idle(u64 timeout_ns);
void *vionet_txbuf(u32 i);
/* viohostile.c: mode=hostile. */
int vionet_hostile(struct vio *v, uptr base, u32 qsize);
/* Whether the comma-separated list has word. */
bool has_word(const char *list, const char *word);
int vioblk_run(struct vio *v, uptr base);

#endif
