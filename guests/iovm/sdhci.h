/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An SD memory card behind an SD host controller (SD Host Controller
 * Simplified Specification v3; the card: SD Physical Layer Simplified
 * Specification): the Zynq UltraScale+ sd0/sd1 (Arasan SDHCI 8.9a). Data by
 * programmed I/O through the buffer data port, no DMA (so the controller's
 * SMMU stream never carries the I/O VM's memory). Polled with bounded
 * waits: a command or transfer that does not complete fails the card.
 */
#ifndef IOVM_SDHCI_H
#define IOVM_SDHCI_H

#include "blkdev.h"

extern const struct blkdev_ops sdhci_ops;

#endif
