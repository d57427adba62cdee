/* SPDX-License-Identifier: Apache-2.0 */
/*
 * echo: the frame exchange of the shared-I/O tests and benchmark with the
 * outside peer (bulkhead/run/netpeer.py; docs/io.md).
 *
 * Frame: Ethernet header (type 0x88b5), then kind (u8: 1 echo request,
 * 2 echo reply, 3 sink), pad (u8), dlen (u16), seq (u32), csum (u32, FNV-1a
 * of the data), echo_csum (u32: in a reply, the FNV-1a the peer computed over
 * the request's data), data[dlen]; little endian. The peer answers a request
 * with the data reversed and XORed with 0xa5.
 */
#ifndef GUEST_ECHO_H
#define GUEST_ECHO_H

#include "ethframe.h"

#define ECHO_ETHERTYPE 0x88b5
#define ECHO_K_REQ     1
#define ECHO_K_REPLY   2
#define ECHO_K_SINK    3
#define ECHO_K_GO      4 /* peer -> clients (broadcast): start now (ioclient wait_go) */
#define ECHO_HLEN      (ETH_HLEN + 16)
#define ECHO_DATA_MAX  (ETH_FRAME_MAX - ECHO_HLEN)
#define ECHO_WINDOW    256 /* most frames outstanding */

/* How frames leave and arrive (a client's rings, or a device). */
struct echo_port {
	bool (*can_send)(void);
	int (*send)(const void *frame, u32 len); /* 0 on success */
	/* > 0: a frame of that length in buf; 0: none; < 0: a malformed slot */
	int (*recv)(void *buf, u32 cap);
	void (*kick)(void);       /* after frames were sent (a doorbell), or NULL */
	void (*wait)(u64 max_ns); /* until something may have arrived */
};

struct echo_result {
	u32 sent, got;
	u64 elapsed_ns, rtt_min_ns, rtt_mean_ns, rtt_max_ns;
};

u32 echo_fnv(const u8 *p, u32 n);
/* Builds a frame of `kind` with n data bytes for seq (data derived from seed). */
u32 echo_build(u8 *f, const u8 *dst, const u8 *src, u32 kind, u32 seq, u32 n, u32 seed);
/* Sends `frames` requests of `size` bytes to dst, at most `window` outstanding,
 * and checks every reply (its checksum, the peer's checksum of the request,
 * the transformed data). NULL on success, else why it failed (why[] holds it). */
const char *echo_run(const struct echo_port *p, const u8 *dst, const u8 *src, u32 seed, u32 frames,
                     u32 size, u32 window, u64 timeout_ms, struct echo_result *res);
void echo_print_result(const char *who, const struct echo_result *res);

#endif
