/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of the boot-image payload checks (core/boot/payload.c) and of
 * CRC-32 (lib/crc32.c) against known values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/boot/payload.h"
#include "lib/crc32.h"

#include "check.h"

#define DATA 0x1000u
static unsigned char blob[DATA + 0x3000] __attribute__((aligned(16)));

static struct payload_header *hdr(void)
{
	return (struct payload_header *)blob;
}

static struct payload_entry *entry(unsigned i)
{
	return (struct payload_entry *)(blob + sizeof(struct payload_header)) + i;
}

static void seal(void)
{
	size_t table = sizeof(struct payload_header) + hdr()->count * sizeof(struct payload_entry);

	hdr()->header_crc = 0;
	hdr()->header_crc = crc32_update(0, blob, table);
}

static void build(void)
{
	memset(blob, 0, sizeof(blob));
	memcpy(hdr()->magic, PAYLOAD_MAGIC, 8);
	hdr()->version = PAYLOAD_VERSION;
	hdr()->count = 2;
	hdr()->data_offset = DATA;
	hdr()->data_size = 0x3000;
	hdr()->load_pa = 0xA0000000;
	strcpy(entry(0)->name, "kernel");
	entry(0)->vm = 0;
	entry(0)->offset = 0;
	entry(0)->size = 0x1800;
	strcpy(entry(1)->name, "dtb");
	entry(1)->vm = 1;
	entry(1)->offset = 0x2000;
	entry(1)->size = 0x1000;
	seal();
}

int main(void)
{
	const char *check = "123456789";
	static unsigned char big[100000];

	CHECK(crc32_update(0, check, 9) == 0xCBF43926u);
	CHECK(crc32_update(0, "", 0) == 0);
	for (u32 b = 0; b < 256; b++) { /* every table entry against bit by bit */
		unsigned char byte = (unsigned char)b;
		u32 c = ~0u ^ b;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
		CHECK(crc32_update(0, &byte, 1) == ~c);
	}
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 31 + 7);
	CHECK(crc32_update(crc32_update(0, big, 12345), big + 12345, sizeof(big) - 12345) ==
	      crc32_update(0, big, sizeof(big)));

	build();
	CHECK(payload_parse(blob, sizeof(blob)) == NULL);
	CHECK(payload_find(hdr(), 1, "dtb") == entry(1));
	CHECK(payload_find(hdr(), 0, "dtb") == NULL);
	CHECK(payload_parse(blob, 40) != NULL);            /* truncated header */
	CHECK(payload_parse(blob, DATA + 0x2fff) != NULL); /* data truncated */

	build();
	blob[0] ^= 1;
	CHECK(payload_parse(blob, sizeof(blob)) != NULL); /* magic */
	build();
	entry(0)->name[0] ^= 1;
	CHECK(strcmp(payload_parse(blob, sizeof(blob)), "table checksum mismatch") == 0);
	build();
	entry(1)->size = 0x1001; /* past data_size */
	seal();
	CHECK(payload_parse(blob, sizeof(blob)) != NULL);
	build();
	entry(1)->offset = 0x1800; /* unaligned */
	seal();
	CHECK(payload_parse(blob, sizeof(blob)) != NULL);
	build();
	memset(entry(0)->name, 'x', PAYLOAD_NAME_LEN); /* unterminated */
	seal();
	CHECK(payload_parse(blob, sizeof(blob)) != NULL);
	build();
	hdr()->count = 100; /* table overruns data_offset */
	seal();
	CHECK(payload_parse(blob, sizeof(blob)) != NULL);
	build();
	hdr()->data_offset = 0x800; /* inside... not page aligned */
	seal();
	CHECK(payload_parse(blob, sizeof(blob)) != NULL);

	if (failures)
		return 1;
	printf("test_payload: ok\n");
	return 0;
}
