/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of the FDT /memory reader (lib/fdt.c) on blobs written by a
 * tiny FDT writer below (layout per the Devicetree Specification, v17). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fdt.h"

#include "check.h"

static unsigned char st[16384], strs[8192], blob[32768];
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

/* A root of 2/2 cells with `count` memory@ nodes of one 16 MiB range each,
 * from the highest address down, `step` apart (16 MiB: adjacent). */
static unsigned many_nodes(unsigned count, unsigned long long step)
{
	static const unsigned two[] = { 2 };

	reset();
	begin("");
	prop_cells("#address-cells", two, 1);
	prop_cells("#size-cells", two, 1);
	for (unsigned i = count; i-- > 0;) {
		unsigned long long base = 0x40000000ull + i * step;
		char name[32];

		snprintf(name, sizeof(name), "memory@%llx", base);
		begin(name);
		prop("device_type", "memory", 7);
		prop_cells(
		    "reg",
		    (const unsigned[]){ (unsigned)(base >> 32), (unsigned)base, 0, 0x1000000 }, 4);
		end();
	}
	end();
	return finish();
}

/* Issue #32 item 5: what the DT specification allows (any number of
 * ranges and /memory nodes) is read into a bounded table, sorted, with
 * adjacent and overlapping ranges merged; more separate ranges than the
 * table holds is a clear error. */
static void check_many_ranges(void)
{
	static struct fdt_range t[128];
	unsigned n, len;

	/* 64 adjacent 16 MiB ranges: one GiB of RAM, one range */
	len = many_nodes(64, 0x1000000);
	CHECK(fdt_memory(blob, len, t, 16, &n) == NULL);
	CHECK(n == 1 && t[0].base == 0x40000000 && t[0].size == 64ull << 24);
	/* 64 separate ranges (a hole between each): all of them, sorted */
	len = many_nodes(64, 0x2000000);
	CHECK(fdt_memory(blob, len, t, 128, &n) == NULL && n == 64);
	for (unsigned i = 0; i < 64 && i < n; i++)
		CHECK(t[i].base == 0x40000000ull + i * 0x2000000ull && t[i].size == 0x1000000);
	/* 128 fit a table of 128; 129 do not, and that is an error */
	len = many_nodes(128, 0x2000000);
	CHECK(fdt_memory(blob, len, t, 128, &n) == NULL && n == 128);
	len = many_nodes(129, 0x2000000);
	CHECK(fdt_memory(blob, len, t, 128, &n) == fdt_err_too_many);

	/* overlapping, nested, touching and empty ranges in one reg */
	reset();
	begin("");
	prop_cells("#address-cells", (const unsigned[]){ 1 }, 1);
	prop_cells("#size-cells", (const unsigned[]){ 1 }, 1);
	begin("memory");
	prop_cells("reg",
	           (const unsigned[]){ 0x3000, 0x1000, 0x1000, 0x1000, 0x1800, 0x100, 0x9000, 0,
	                               0x2000, 0x1000, 0x8000, 0x1000, 0x1000, 0x2800 },
	           14);
	end();
	end();
	len = finish();
	CHECK(fdt_memory(blob, len, t, 2, &n) == NULL && n == 2);
	CHECK(t[0].base == 0x1000 && t[0].size == 0x3000); /* 0x1000-0x3fff */
	CHECK(t[1].base == 0x8000 && t[1].size == 0x1000);

	/* 2/2 cells: a range ending at the top of the address space, and one
	 * that wraps */
	reset();
	begin("");
	prop_cells("#address-cells", (const unsigned[]){ 2 }, 1);
	prop_cells("#size-cells", (const unsigned[]){ 2 }, 1);
	begin("memory");
	prop_cells("reg", (const unsigned[]){ 0xffffffff, 0xfffff000, 0, 0x1000, 0, 0, 0, 0x1000 },
	           8);
	end();
	end();
	len = finish();
	CHECK(fdt_memory(blob, len, t, 4, &n) == NULL && n == 2);
	CHECK(t[0].base == 0 && t[1].base == 0xfffffffffffff000ull && t[1].size == 0x1000);
	reset();
	begin("");
	prop_cells("#address-cells", (const unsigned[]){ 2 }, 1);
	prop_cells("#size-cells", (const unsigned[]){ 2 }, 1);
	begin("memory");
	prop_cells("reg", (const unsigned[]){ 0xffffffff, 0xfffff000, 0, 0x2000 }, 4);
	end();
	end();
	len = finish();
	CHECK(fdt_memory(blob, len, t, 4, &n) != NULL);
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
	CHECK(fdt_memory(blob, len, r, 1, &n) == fdt_err_too_many); /* two separate ranges */

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

	check_many_ranges();
	if (failures)
		return 1;
	printf("test_fdt: ok\n");
	return 0;
}
