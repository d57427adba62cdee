/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of the FDT /memory reader (lib/fdt.c) on blobs written by a
 * tiny FDT writer below (layout per the Devicetree Specification, v17). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fdt.h"

#include "check.h"

static unsigned char st[4096], strs[1024], blob[8192];
static unsigned st_len, strs_len;

static void put32(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void tok(unsigned v)
{
	put32(st + st_len, v);
	st_len += 4;
}

static void bytes(const void *p, unsigned n)
{
	memcpy(st + st_len, p, n);
	st_len += n;
	while (st_len & 3)
		st[st_len++] = 0;
}

static void begin(const char *name)
{
	tok(1);
	bytes(name, (unsigned)strlen(name) + 1);
}

static void prop(const char *name, const void *val, unsigned n)
{
	memcpy(strs + strs_len, name, strlen(name) + 1);
	tok(3);
	tok(n);
	tok(strs_len);
	strs_len += (unsigned)strlen(name) + 1;
	bytes(val, n);
}

static void prop_cells(const char *name, const unsigned *cells, unsigned n)
{
	unsigned char v[64];

	for (unsigned i = 0; i < n; i++)
		put32(v + 4 * i, cells[i]);
	prop(name, v, 4 * n);
}

static void end(void)
{
	tok(2);
}

static unsigned finish(void)
{
	unsigned off_struct = 64, off_strings;

	tok(9);
	off_strings = off_struct + st_len;
	memset(blob, 0, sizeof(blob));
	put32(blob, FDT_MAGIC);
	put32(blob + 4, off_strings + strs_len);
	put32(blob + 8, off_struct);
	put32(blob + 12, off_strings);
	put32(blob + 16, 40);
	put32(blob + 20, 17);
	put32(blob + 24, 16);
	put32(blob + 32, strs_len);
	put32(blob + 36, st_len);
	memcpy(blob + off_struct, st, st_len);
	memcpy(blob + off_strings, strs, strs_len);
	return off_strings + strs_len;
}

static void reset(void)
{
	st_len = strs_len = 0;
}

int main(void)
{
	struct fdt_range r[4];
	unsigned n, len;
	static const unsigned two[] = { 2 }, one[] = { 1 };

	/* QEMU virt style: 2/2 cells, one memory@ node, other nodes around */
	reset();
	begin("");
	prop_cells("#address-cells", two, 1);
	prop_cells("#size-cells", two, 1);
	begin("cpus");
	begin("cpu@0");
	prop_cells("reg", (const unsigned[]){ 0, 0x5 }, 2); /* nested reg: ignored */
	end();
	end();
	begin("memory@40000000");
	prop("device_type", "memory", 7);
	prop_cells("reg", (const unsigned[]){ 0, 0x40000000, 0, 0x80000000, 0x8, 0, 0, 0x1000 }, 8);
	end();
	begin("memoryless");
	prop_cells("reg", (const unsigned[]){ 0, 1, 0, 1 }, 4);
	end();
	end();
	len = finish();
	CHECK(fdt_total_size(blob) == len);
	CHECK(fdt_memory(blob, len, r, 4, &n) == NULL);
	CHECK(n == 2);
	CHECK(r[0].base == 0x40000000 && r[0].size == 0x80000000);
	CHECK(r[1].base == 0x800000000ull && r[1].size == 0x1000);
	CHECK(fdt_memory(blob, len, r, 1, &n) == NULL && n == 2); /* counted past max */

	/* 1/1 cells, device_type without the name, a disabled bank */
	reset();
	begin("");
	prop_cells("#address-cells", one, 1);
	prop_cells("#size-cells", one, 1);
	begin("ram");
	prop_cells("reg", (const unsigned[]){ 0x0, 0x8000000 }, 2);
	prop("device_type", "memory", 7);
	end();
	begin("memory@80000000");
	prop("status", "disabled", 9);
	prop_cells("reg", (const unsigned[]){ 0x80000000, 0x1000 }, 2);
	end();
	end();
	len = finish();
	CHECK(fdt_memory(blob, len, r, 4, &n) == NULL);
	CHECK(n == 1 && r[0].base == 0 && r[0].size == 0x8000000);

	/* malformed input never reads out of bounds and is reported */
	CHECK(fdt_memory(blob, len - 1, r, 4, &n) != NULL);
	CHECK(fdt_memory(blob, 20, r, 4, &n) != NULL);
	blob[0] ^= 1;
	CHECK(fdt_memory(blob, len, r, 4, &n) != NULL && n == 0);
	CHECK(fdt_total_size(blob) == 0);
	reset();
	begin("");
	begin("memory");
	end(); /* root never closed */
	len = finish();
	CHECK(fdt_memory(blob, len, r, 4, &n) != NULL);
	for (unsigned cut = 40; cut < len; cut++) { /* header says len: any shorter buffer */
		unsigned char *copy = malloc(cut);

		memcpy(copy, blob, cut);
		CHECK(fdt_memory(copy, cut, r, 4, &n) != NULL);
		free(copy);
	}

	if (failures)
		return 1;
	printf("test_fdt: ok\n");
	return 0;
}
