// SPDX-License-Identifier: Apache-2.0
/* Ethernet helpers (include/ethframe.h). */
#include "ethframe.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool eth_parse_mac(const char *text, u8 mac[ETH_ALEN])
{
	u32 i;

	if (!text)
		return false;
	for (i = 0; i < ETH_ALEN; i++) {
		int hi = hexval(text[3 * i]), lo = hi < 0 ? -1 : hexval(text[3 * i + 1]);
		char sep = lo < 0 ? 'x' : text[3 * i + 2];

		if (lo < 0 || sep != (i + 1 == ETH_ALEN ? '\0' : ':'))
			return false;
		mac[i] = (u8)(hi << 4 | lo);
	}
	return true;
}

bool eth_mac_eq(const u8 *a, const u8 *b)
{
	u32 i;

	for (i = 0; i < ETH_ALEN; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

bool eth_is_broadcast(const u8 *mac)
{
	u32 i;

	for (i = 0; i < ETH_ALEN; i++)
		if (mac[i] != 0xff)
			return false;
	return true;
}
