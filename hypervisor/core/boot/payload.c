/* SPDX-License-Identifier: Apache-2.0 */
#include "core/boot/payload.h"

#include "lib/crc32.h"
#include "lib/string.h"

static bool payload_name_ok(const char *name)
{
	for (u32 i = 0; i < PAYLOAD_NAME_LEN; i++)
		if (name[i] == '\0')
			return i > 0;
	return false;
}

const char *payload_parse(const void *blob, u64 len)
{
	const struct payload_header *h = blob;
	struct payload_header copy;
	u64 table;
	u32 crc;

	if (len < sizeof(*h))
		return "shorter than its header";
	if (memcmp(h->magic, PAYLOAD_MAGIC, sizeof(h->magic)) != 0)
		return "bad magic";
	if (h->version != PAYLOAD_VERSION)
		return "unsupported version";
	if (h->count > PAYLOAD_MAX_IMAGES)
		return "too many images";
	table = sizeof(*h) + (u64)h->count * sizeof(struct payload_entry);
	if (table > len || h->data_offset < table || !IS_ALIGNED(h->data_offset, SZ_4K))
		return "table does not fit before the data";
	if (h->data_offset > len || h->data_size > len - h->data_offset)
		return "data extends past the payload";
	copy = *h;
	copy.header_crc = 0;
	crc = crc32_update(0, &copy, sizeof(copy));
	crc = crc32_update(crc, h + 1, table - sizeof(*h));
	if (crc != h->header_crc)
		return "table checksum mismatch";
	for (u32 i = 0; i < h->count; i++) {
		const struct payload_entry *e = &payload_entries(h)[i];

		if (!payload_name_ok(e->name))
			return "an image name is empty or not terminated";
		if (!IS_ALIGNED(e->offset, SZ_4K) || e->offset > h->data_size ||
		    e->size > h->data_size - e->offset)
			return "an image lies outside the data";
	}
	return NULL;
}

const struct payload_entry *payload_find(const struct payload_header *h, u32 vm, const char *name)
{
	for (u32 i = 0; i < h->count; i++) {
		const struct payload_entry *e = &payload_entries(h)[i];

		if (e->vm == vm && strcmp(e->name, name) == 0)
			return e;
	}
	return NULL;
}
