/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/virtio (docs/ARCHITECTURE.md "Core"): virtio-mmio devices
 * of client VMs, bridged by the hypervisor to their shared I/O rings
 * (docs/io.md "VirtIO"): the transport's register model (virtio_mmio.c),
 * the split virtqueue's device side (virtq.c), the net bridge (vnet.c) and
 * the glue (virtio.c). Calls: arch, core/config, core/irq, core/mem,
 * core/vgic, core/vm, drivers, lib.
 */
/*
 * A client VM with `virtio: net` (its io: client entry) gets a virtio-mmio
 * transport page (cfg_vm.virtio) the hypervisor emulates. A QueueNotify
 * traps on the client's CPU: the transmit queue's chains are copied into
 * its tx ring and the I/O VM's doorbell rung, as BH_HC_DOORBELL would; the
 * receive queue's new buffers take what waits in its rx ring. The I/O VM's
 * doorbell to the client (ipc_doorbell) comes here instead of a virtual
 * interrupt: a physical SGI sends the receive work to the client's CPU,
 * which copies the rx ring into the buffers the client posted and raises
 * the device's interrupt. Every copy of a client's data runs on its own
 * CPU and is bounded by its queue sizes; a client breaking the virtqueue
 * rules stops its device only (DEVICE_NEEDS_RESET).
 */
#ifndef CORE_VIRTIO_H
#define CORE_VIRTIO_H

#include "lib/features.h"
#include "lib/types.h"

struct vm;

#define VIRTIO_SGI 1 /* the physical SGI that sends receive work to a client's CPU */

#if IS_ENABLED(VIRTIO)
/* Boot CPU, after the VMs are built: every VM's device, its transport page
 * registered, the SGI's handler. */
void virtio_init(void);
/* Per CPU: the SGI enabled where a VM with a device runs. */
void virtio_cpu_init(void);
/* The VM is (re)loaded: its device as at power-on (nothing to do before
 * virtio_init). */
void virtio_vm_reset(struct vm *vm);
/* The VM is off or stopped: its device stops, and its region's client
 * state says done (the I/O VM ends when all its clients are); the
 * device's counters are logged. */
void virtio_vm_stop(struct vm *vm);
/* A peer rang the VM's shared region shm (index in its cfg_vm.shmem) that
 * has no doorbell interrupt: true if it is the region of the VM's device
 * (its receive work is sent to its CPU). */
bool virtio_ring(struct vm *vm, u32 shm);
#else
/* Built without virtio (no client has `virtio:`). */
static inline void virtio_init(void)
{
}
static inline void virtio_cpu_init(void)
{
}
static inline void virtio_vm_reset(struct vm *vm)
{
	(void)vm;
}
static inline void virtio_vm_stop(struct vm *vm)
{
	(void)vm;
}
static inline bool virtio_ring(struct vm *vm, u32 shm)
{
	(void)vm;
	(void)shm;
	return false;
}
#endif

#endif
