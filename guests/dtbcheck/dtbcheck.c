// SPDX-License-Identifier: Apache-2.0
/*
 * dtbcheck: a guest for `type: image` VMs (arm64 boot protocol): x0 at
 * entry must hold the IPA of a flattened device tree. Checks the FDT magic
 * and header, walks the structure block and requires a top-level /memory@
 * node with a "reg" and a /chosen node, and a /cpus/cpu@ node whose "reg"
 * is the affinity of the MPIDR this CPU reads (as Linux and kvm-unit-tests
 * find their CPU; the physical one in direct interrupt mode). Uses no
 * parameter block.
 *
 * Lines: "dtbcheck: x0 = <ipa>", "dtbcheck: /<node>" for each top-level
 * node, "dtbcheck: mpidr <aff> is /cpus/cpu@<reg>", "dtbcheck: PASS" or
 * "dtbcheck: FAIL (<reason>)".
 */
#include "runtime.h"

#define FDT_MAGIC      0xd00dfeedu
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE   2
#define FDT_PROP       3
#define FDT_NOP        4
#define FDT_END        9

static u32 be32(const void *p)
{
	const u8 *b = p;

	return ((u32)b[0] << 24) | ((u32)b[1] << 16) | ((u32)b[2] << 8) | b[3];
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int fail(const char *why)
{
	printf("dtbcheck: FAIL (%s)\n", why);
	return 1;
}

int main(const char *params)
{
	u64 dtb = rt_boot_arg();
	const u8 *fdt = (const u8 *)dtb;
	u32 total, off_struct, size_struct, off_strings, pos, depth = 0;
	bool memory = false, memory_reg = false, chosen = false, in_memory = false, in_cpus = false;
	bool in_cpu = false, mine = false;
	u64 aff = cpu_mpidr() & 0xff00ffffffull;

	(void)params;
	printf("dtbcheck: x0 = 0x%lx\n", dtb);
	if (!dtb || dtb & 7)
		return fail("x0 is not an 8-byte aligned address");
	if (be32(fdt) != FDT_MAGIC)
		return fail("no FDT magic at x0");
	total = be32(fdt + 4);
	off_struct = be32(fdt + 8);
	off_strings = be32(fdt + 12);
	size_struct = be32(fdt + 36);
	if (total > 0x100000 || off_struct + size_struct > total || off_strings > total)
		return fail("FDT header out of bounds");
	for (pos = off_struct; pos + 4 <= off_struct + size_struct;) {
		u32 token = be32(fdt + pos);
		pos += 4;
		if (token == FDT_BEGIN_NODE) {
			const char *name = (const char *)fdt + pos;
			depth++;
			if (depth == 2) {
				printf("dtbcheck: /%s\n", name);
				in_memory = starts_with(name, "memory@");
				memory |= in_memory;
				chosen |= !strcmp(name, "chosen");
				in_cpus = !strcmp(name, "cpus");
			}
			in_cpu = depth == 3 && in_cpus && starts_with(name, "cpu@");
			pos += (u32)(strlen(name) + 4) & ~3u;
		} else if (token == FDT_END_NODE) {
			if (!depth)
				return fail("unbalanced FDT_END_NODE");
			depth--;
			in_memory = in_memory && depth >= 2;
			in_cpus = in_cpus && depth >= 2;
			in_cpu = false;
		} else if (token == FDT_PROP) {
			u32 len = be32(fdt + pos), nameoff = be32(fdt + pos + 4);
			bool reg = !strcmp((const char *)fdt + off_strings + nameoff, "reg");
			if (depth == 2 && in_memory && reg && len >= 8)
				memory_reg = true;
			if (depth == 3 && in_cpu && reg && len == 4 && be32(fdt + pos + 8) == aff) {
				printf("dtbcheck: mpidr 0x%lx is /cpus/cpu@%x\n", aff,
				       be32(fdt + pos + 8));
				mine = true;
			}
			pos += 8 + ((len + 3) & ~3u);
		} else if (token == FDT_END) {
			break;
		} else if (token != FDT_NOP) {
			return fail("bad token in the structure block");
		}
	}
	if (!memory || !memory_reg)
		return fail("no /memory@ node with a reg property");
	if (!chosen)
		return fail("no /chosen node");
	if (!mine)
		return fail("no /cpus/cpu@ node has this CPU's MPIDR");
	printf("dtbcheck: PASS\n");
	return 0;
}
