/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The I/O VM's network device, one interface over its drivers: virtio-net
 * over virtio-mmio (QEMU virt, virtio_net.c) and the Cadence GEM (Zynq
 * UltraScale+, gem.c). The `io_driver` parameter names the driver (the
 * toolchain derives it from the device's compatible string). Polled; the
 * device interrupt only wakes the I/O VM.
 */
#ifndef IOVM_NETDEV_H
#define IOVM_NETDEV_H

#include "types.h"

struct netdev_stats {
	u64 tx_frames, tx_bytes, tx_full;
	u64 tx_notifies;       /* transmit notifications given to the device */
	u64 tx_notify_skipped; /* notifications the device said it did not need */
	u64 rx_frames, rx_bytes, rx_bad;
	u64 rx_notify_skipped; /* buffers given back without a notification */
};

struct netdev_ops {
	const char *name;
	/* 0 on success; a negative code and a printed reason otherwise. */
	int (*init)(uptr base, u8 mac_out[6]);
	/* Queue one frame: 0, or -1 if no transmit descriptor is free. */
	int (*send)(const void *frame, u32 len);
	/* The buffer of the next free transmit descriptor (the caller writes
	 * at most *cap bytes of a frame there and calls tx_commit), or NULL if
	 * none is free: the I/O VM copies a client's slot straight into it. */
	u8 *(*tx_buf)(u32 *cap);
	/* Queues the frame of len bytes written into tx_buf's buffer. */
	void (*tx_commit)(u32 len);
	/* Tells the device of the frames tx_commit queued since the last flush
	 * (one notification for a batch); NULL: tx_commit already did. */
	void (*tx_flush)(void);
	/* True if send would find a free descriptor (after reclaiming). */
	bool (*can_send)(void);
	/* Next received frame: its length and *frame pointing into the driver's
	 * buffer (valid until rx_done), or 0 if none. */
	u32 (*recv)(const u8 **frame);
	void (*rx_done)(void);
	/* Whether a received frame waits (recv would return one). */
	bool (*rx_ready)(void);
	/* The device's interrupt for received frames on (the next frame
	 * interrupts; the caller then looks with rx_ready once more) or off.
	 * Transmit completions never interrupt: the I/O VM reclaims them. */
	void (*rx_irq)(bool on);
	/* Acknowledge the device's interrupt (from its interrupt handler). */
	void (*irq_ack)(void);
	const struct netdev_stats *(*stats)(void);
};

/* Selects the driver ("virtio" or "gem"; NULL: virtio) and initialises the
 * device at base: 0, or negative (unknown driver, or the driver's failure). */
int netdev_init(const char *driver, uptr base, u8 mac_out[6]);
int netdev_send(const void *frame, u32 len);
u8 *netdev_tx_buf(u32 *cap);
void netdev_tx_commit(u32 len);
void netdev_tx_flush(void);
bool netdev_can_send(void);
u32 netdev_recv(const u8 **frame);
void netdev_rx_done(void);
bool netdev_rx_ready(void);
void netdev_rx_irq(bool on);
void netdev_irq_ack(void);
const struct netdev_stats *netdev_stats(void);
const char *netdev_name(void);
/* For the drivers: the physical address of p in the I/O VM's RAM
 * (BH_HC_IPA_INFO; the devices do DMA with PAs), 0 if it has none. */
u64 netdev_pa_of(const void *p);

#endif
