/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/virtio (docs/ARCHITECTURE.md "Core"): virtio-mmio devices
 * of client VMs, bridged by the hypervisor to the shared I/O rings
 * (docs/io.md "VirtIO"): the transport's register model (virtio_mmio.c),
 * the split virtqueue's device side (virtq.c) and the net bridge (vnet.c).
 * Calls: lib.
 */
#ifndef CORE_VIRTIO_H
#define CORE_VIRTIO_H

#endif
