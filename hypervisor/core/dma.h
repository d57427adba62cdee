/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DMA isolation in the core (docs/dma.md): brings the SMMUs up
 * (drivers/iommu.h) with every VM's streams on its stage 2, takes their
 * interrupts, and reports, counts and acts on DMA faults per the device's
 * policy (on_dma_fault: abort-device, stop-vm).
 */
#ifndef CORE_DMA_H
#define CORE_DMA_H

/* Boot CPU, after the VMs are built and before any runs. */
void dma_init(void);

#endif
