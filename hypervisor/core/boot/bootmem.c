/* SPDX-License-Identifier: Apache-2.0 */
#include "core/boot/bootmem.h"

#include "core/config/config.h"
#include "lib/fdt.h"
#include "lib/log.h"

/* separate RAM ranges (adjacent ones merged): far more than a board declares */
#define BOOTMEM_MAX 128

static struct fdt_range bootmem_ram[BOOTMEM_MAX];
static u32 bootmem_n;
static bool bootmem_given;

static bool bootmem_covered(u64 base, u64 size)
{
	u64 at = base, end = base + size;

	while (at < end) {
		bool moved = false;

		for (u32 i = 0; i < bootmem_n; i++) {
			const struct fdt_range *r = &bootmem_ram[i];

			if (r->base <= at && at - r->base < r->size) {
				at = r->base + r->size;
				moved = true;
			}
		}
		if (!moved)
			return false;
	}
	return true;
}

void bootmem_require(const char *what, u64 base, u64 size)
{
	if (!bootmem_given || bootmem_covered(base, size))
		return;
	panic("the boot loader's DTB declares no RAM for %s at %lx-%lx; refusing to boot "
	      "(a smaller board than the platform file, or a wrong DTB)",
	      what, base, base + size - 1);
}

void bootmem_check(u64 dtb)
{
	const struct cfg_platform *p = cfg_system.platform;
	const char *err;
	u32 size;

	if (!dtb)
		return;
	/* Only the platform's RAM is mapped: the DTB must lie in it. */
	if (!cfg_in_ram(p, dtb, 64))
		panic("DTB at %lx (x0 at entry) is outside the platform's RAM", dtb);
	size = fdt_total_size((const void *)(uintptr_t)dtb);
	if (!size || !cfg_in_ram(p, dtb, size))
		panic("x0 at entry (%lx) is not a device tree", dtb);
	err = fdt_memory((const void *)(uintptr_t)dtb, size, bootmem_ram, BOOTMEM_MAX, &bootmem_n);
	if (err == fdt_err_too_many)
		panic("DTB at %lx: %s (%u, after merging adjacent and overlapping ranges)", dtb,
		      err, BOOTMEM_MAX);
	if (err)
		panic("DTB at %lx: %s", dtb, err);
	bootmem_given = true;
	for (u32 i = 0; i < bootmem_n; i++)
		log_info("DTB at %lx: RAM %lx-%lx", dtb, bootmem_ram[i].base,
		         bootmem_ram[i].base + bootmem_ram[i].size - 1);
	bootmem_require("the hypervisor", p->hyp_base, p->hyp_size);
	for (u32 v = 0; v < cfg_system.nvms; v++) {
		const struct cfg_vm *c = &cfg_system.vms[v];

		/* colored regions: their whole span (the pages interleave with
		 * other colors' up to span_end) */
		for (u32 m = 0; m < c->nmem; m++) {
			const struct cfg_mem *r = &c->mem[m];

			bootmem_require(c->name, r->pa, r->color ? r->span_end - r->pa : r->size);
		}
	}
	for (u32 s = 0; s < cfg_system.nshmem; s++)
		bootmem_require(cfg_system.shmems[s].name, cfg_system.shmems[s].pa,
		                cfg_system.shmems[s].size);
}
