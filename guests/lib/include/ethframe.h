/* SPDX-License-Identifier: Apache-2.0 */
/* Ethernet frames for the shared-I/O guests: header layout, MAC addresses. */
#ifndef GUEST_ETHFRAME_H
#define GUEST_ETHFRAME_H

#include "types.h"

#define ETH_ALEN      6
#define ETH_HLEN      14
#define ETH_FRAME_MAX 1514 /* without FCS */

struct eth_hdr {
	u8 dst[ETH_ALEN];
	u8 src[ETH_ALEN];
	u8 type[2]; /* big endian */
} __attribute__((packed));

/* "02:00:00:00:00:0a" -> 6 bytes; false if malformed. */
bool eth_parse_mac(const char *text, u8 mac[ETH_ALEN]);
bool eth_mac_eq(const u8 *a, const u8 *b);
bool eth_is_broadcast(const u8 *mac);

#endif
