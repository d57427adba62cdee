/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/fdt.h"

#include "lib/string.h"

#define FDT_BEGIN_NODE 1u
#define FDT_END_NODE   2u
#define FDT_PROP       3u
#define FDT_NOP        4u
#define FDT_END        9u

static u32 fdt_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

u32 fdt_total_size(const void *fdt)
{
	const u8 *p = fdt;

	return fdt_be32(p) == FDT_MAGIC ? fdt_be32(p + 4) : 0;
}

/* Is s (at most max bytes) a NUL-terminated string equal to want? */
static bool fdt_streq(const u8 *s, u32 max, const char *want)
{
	u32 i = 0;

	for (; i < max && want[i]; i++)
		if (s[i] != (u8)want[i])
			return false;
	return i < max && s[i] == '\0' && want[i] == '\0';
}

static bool fdt_is_memory_name(const u8 *s, u32 max)
{
	static const char mem[] = "memory";

	for (u32 i = 0; i < sizeof(mem) - 1; i++)
		if (i >= max || s[i] != (u8)mem[i])
			return false;
	return max > 6 && (s[6] == '\0' || s[6] == '@');
}

static u64 fdt_cells(const u8 *p, u32 cells)
{
	return cells == 2 ? (u64)fdt_be32(p) << 32 | fdt_be32(p + 4) : fdt_be32(p);
}

const char fdt_err_too_many[] = "more separate RAM ranges than the table holds";

/*
 * Adds [base, base + size) to out[0..*n), kept sorted, with overlapping and
 * adjacent ranges merged into one (the DT specification bounds neither the
 * ranges of a reg nor the /memory nodes; a table of max distinct ranges
 * does). Ranges of size 0 add nothing.
 */
static const char *fdt_add_range(struct fdt_range *out, u32 max, u32 *n, u64 base, u64 size)
{
	u64 last = base + size - 1, lo, hi;
	u32 i = 0, j;

	if (!size)
		return NULL;
	if (last < base)
		return "a memory range wraps around the address space";
	/* out[0..i) end before base, not touching it (a range's last byte is
	 * base + size - 1: no range wraps) */
	while (i < *n && out[i].base + out[i].size - 1 != ~0ull && out[i].base + out[i].size < base)
		i++;
	/* out[i..j) overlap or touch [base, last] */
	j = i;
	while (j < *n && (last == ~0ull || out[j].base <= last + 1))
		j++;
	if (i == j) {
		if (*n >= max)
			return fdt_err_too_many;
		for (u32 k = *n; k > i; k--)
			out[k] = out[k - 1];
		out[i].base = base;
		out[i].size = size;
		(*n)++;
		return NULL;
	}
	lo = out[i].base < base ? out[i].base : base;
	hi = out[j - 1].base + out[j - 1].size - 1;
	if (hi < last)
		hi = last;
	if (hi - lo == ~0ull)
		return "a memory range wraps around the address space";
	out[i].base = lo;
	out[i].size = hi - lo + 1;
	for (u32 k = j; k < *n; k++)
		out[i + 1 + k - j] = out[k];
	*n -= j - i - 1;
	return NULL;
}

const char *fdt_memory(const void *fdt, u32 len, struct fdt_range *out, u32 max, u32 *n)
{
	const u8 *b = fdt;
	u32 total, off_struct, off_strings, size_strings, size_struct, pos, end;
	u32 depth = 0, acells = 2, scells = 1;
	/* the current top-level node */
	bool is_mem = false, disabled = false;
	const u8 *reg = NULL;
	u32 reg_len = 0;

	*n = 0;
	if (len < 40 || fdt_be32(b) != FDT_MAGIC)
		return "not a flattened device tree (bad magic)";
	total = fdt_be32(b + 4);
	off_struct = fdt_be32(b + 8);
	off_strings = fdt_be32(b + 12);
	size_strings = fdt_be32(b + 32);
	size_struct = fdt_be32(b + 36);
	if (total > len || fdt_be32(b + 20) < 17)
		return "truncated or older than version 17";
	if (off_struct > total || size_struct > total - off_struct || off_strings > total ||
	    size_strings > total - off_strings || (off_struct & 3))
		return "blocks outside the blob";
	pos = off_struct;
	end = off_struct + size_struct;
	for (;;) {
		u32 tok;

		if (end - pos < 4)
			return "structure block ends without FDT_END";
		tok = fdt_be32(b + pos);
		pos += 4;
		if (tok == FDT_END)
			return depth == 0 ? NULL : "unbalanced nodes";
		if (tok == FDT_NOP)
			continue;
		if (tok == FDT_BEGIN_NODE) {
			u32 l = 0;

			while (pos + l < end && b[pos + l])
				l++;
			if (pos + l >= end)
				return "unterminated node name";
			if (depth == 1) {
				is_mem = fdt_is_memory_name(b + pos, l + 1);
				disabled = false;
				reg = NULL;
			}
			depth++;
			pos += ALIGN_UP(l + 1, 4u);
			continue;
		}
		if (tok == FDT_END_NODE) {
			if (depth == 0)
				return "unbalanced nodes";
			depth--;
			if (depth == 1 && is_mem && !disabled && reg) {
				u32 entry = (acells + scells) * 4;

				for (u32 o = 0; o + entry <= reg_len; o += entry) {
					const char *err =
					    fdt_add_range(out, max, n, fdt_cells(reg + o, acells),
					                  fdt_cells(reg + o + acells * 4, scells));

					if (err)
						return err;
				}
			}
			if (depth == 1)
				is_mem = false;
			if (depth == 0 && pos < end && fdt_be32(b + pos) != FDT_END &&
			    fdt_be32(b + pos) != FDT_NOP)
				return "content after the root node";
			continue;
		}
		if (tok == FDT_PROP) {
			u32 plen, nameoff;
			const u8 *val, *name;
			u32 name_max;

			if (end - pos < 8)
				return "truncated property";
			plen = fdt_be32(b + pos);
			nameoff = fdt_be32(b + pos + 4);
			pos += 8;
			if (plen > end - pos || nameoff >= size_strings)
				return "property outside the blob";
			val = b + pos;
			name = b + off_strings + nameoff;
			name_max = size_strings - nameoff;
			pos += ALIGN_UP(plen, 4u);
			if (pos > end)
				return "property outside the blob";
			if (depth == 1 && (fdt_streq(name, name_max, "#address-cells") ||
			                   fdt_streq(name, name_max, "#size-cells"))) {
				u32 v;

				if (plen != 4)
					return "bad #address-cells or #size-cells";
				v = fdt_be32(val);
				if (v != 1 && v != 2)
					return "unsupported #address-cells or #size-cells";
				if (fdt_streq(name, name_max, "#address-cells"))
					acells = v;
				else
					scells = v;
			} else if (depth == 2 && fdt_streq(name, name_max, "reg")) {
				reg = val;
				reg_len = plen;
			} else if (depth == 2 && fdt_streq(name, name_max, "device_type")) {
				if (fdt_streq(val, plen, "memory"))
					is_mem = true;
			} else if (depth == 2 && fdt_streq(name, name_max, "status")) {
				disabled =
				    !fdt_streq(val, plen, "okay") && !fdt_streq(val, plen, "ok");
			}
			continue;
		}
		return "unknown structure token";
	}
}
