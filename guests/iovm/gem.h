/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cadence GEM (Gigabit Ethernet MAC) of the Zynq UltraScale+, polled, behind
 * netdev.h ("gem"): one receive and one transmit ring of GEM_QSIZE 32-bit
 * DMA descriptors on priority queue 0, a 2 KiB buffer each in the I/O VM's
 * RAM (translated IPA -> PA once, BH_HC_IPA_INFO; below 4 GiB), the other
 * priority queue parked on a descriptor the GEM never uses. Promiscuous (the
 * I/O VM forwards frames to several MACs), FCS stripped. The link (PHY,
 * speed, reference clock) is left as the boot loader set it.
 */
#ifndef IOVM_GEM_H
#define IOVM_GEM_H

#include "netdev.h"

#define GEM_QSIZE 16

extern const struct netdev_ops gem_ops;

#endif
