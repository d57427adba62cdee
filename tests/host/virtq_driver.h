/* SPDX-License-Identifier: Apache-2.0 */
/* The driver's side of one split virtqueue for the host tests
 * (test_virtq.c, test_vblk.c): words of the client's RAM, descriptors of
 * the table at DESC and chains offered on the avail ring at AVAIL of NUM
 * entries (the includer defines them, after virtq_ram.h). */
#ifndef TESTS_HOST_VIRTQ_DRIVER_H
#define TESTS_HOST_VIRTQ_DRIVER_H

static u16 get16(u64 ipa)
{
	u16 v;

	memcpy(&v, ram + (ipa - RAM_BASE), 2);
	return v;
}

static u32 get32(u64 ipa)
{
	u32 v;

	memcpy(&v, ram + (ipa - RAM_BASE), 4);
	return v;
}

static void put16(u64 ipa, u16 v)
{
	memcpy(ram + (ipa - RAM_BASE), &v, 2);
}

static void desc(u16 i, u64 addr, u32 len, u16 flags, u16 next)
{
	u8 *d = ram + (DESC - RAM_BASE) + 16u * i;

	memcpy(d, &addr, 8);
	memcpy(d + 8, &len, 4);
	memcpy(d + 12, &flags, 2);
	memcpy(d + 14, &next, 2);
}

/* The driver makes head available. */
static void offer(u16 head)
{
	u16 idx = get16(AVAIL + 2);

	put16(AVAIL + 4 + 2u * (idx % NUM), head);
	put16(AVAIL + 2, (u16)(idx + 1));
}

#endif
