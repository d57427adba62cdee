/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Page coloring in the running hypervisor: the page finder the memory code
 * uses for colored regions, the boot-time check of the platform file's
 * color bits against the cache the CPU reports, the BH_HC_COLOR_INFO and
 * BH_HC_IPA_INFO hypercalls, and the Ctrl-T c console dump.
 */
#include "arch/aarch64/cacheinfo.h"
#include "arch/aarch64/pt.h"
#include "core/console/console.h"
#include "core/mem/mem.h"
#include "core/trap/hypercall.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "isolation/color.h"
#include "isolation/color_ida.h"
#include "isolation/color_recolor.h"
#include "isolation/dsu.h"
#include "lib/format.h"
#include "lib/log.h"

#define COLOR_DUMP_SAMPLES  16 /* pages shown per region */
#define COLOR_DUMP_PER_LINE 4

/* Compares the LLC the CPU reports with the platform file's color bits. */
static void color_probe(void)
{
	const struct cfg_platform *p = cfg_system.platform;
	struct cacheinfo ci;
	char cpu_bits[32], cfg_bits[32];
	u64 mask;

	if (!p->llc_color_mask && !p->bank_color_mask)
		return;
	color_format_list(cfg_bits, sizeof(cfg_bits), p->llc_color_mask);
	if (!cacheinfo_llc(&ci)) {
		log_info("warning: coloring: the CPU reports no data cache; "
		         "platform file: LLC color bits %s",
		         cfg_bits);
		return;
	}
	mask = cacheinfo_color_mask(&ci);
	color_format_list(cpu_bits, sizeof(cpu_bits), mask);
	if (mask == p->llc_color_mask)
		log_info("coloring: CPU L%u %lu KiB %u-way %u B lines: LLC color bits %s, "
		         "as in the platform file",
		         ci.level, ci.size >> 10, ci.ways, ci.line, mask ? cpu_bits : "none");
	else
		log_info("warning: coloring: CPU L%u %lu KiB %u-way %u B lines: LLC color bits %s, "
		         "but the platform file says %s",
		         ci.level, ci.size >> 10, ci.ways, ci.line, mask ? cpu_bits : "none",
		         p->llc_color_mask ? cfg_bits : "none");
}

static void color_vm_bitmaps(const struct vm *vm, u64 *llc, u64 *bank)
{
	const struct cfg_platform *p = cfg_system.platform;

	*llc = vm->llc_colors ? vm->llc_colors : color_all(p->llc_color_mask);
	*bank = vm->bank_colors ? vm->bank_colors : color_all(p->bank_color_mask);
}

/*
 * BH_HC_COLOR_INFO: x1 LLC colors, x2 bank colors, x3 LLC bits, x4 bank bits,
 * x5 the DSU L3 partition (scheme ID | way groups << 8; 0: none). Results stay
 * in x0-x5: every call keeps x6 and above (the hypercall ABI).
 */
static void color_hc_info(struct vcpu *v)
{
	const struct cfg_platform *p = cfg_system.platform;
	struct frame *f = v->frame;

	f->x[0] = BH_OK;
	color_vm_bitmaps(v->vm, &f->x[1], &f->x[2]);
	f->x[3] = p->llc_color_mask;
	f->x[4] = p->bank_color_mask;
	f->x[5] =
	    v->vm->cfg->l3_groups ? v->vm->cfg->l3_scheme | (u64)v->vm->cfg->l3_groups << 8 : 0;
}

/* BH_HC_IPA_INFO: x1 IPA -> x1 PA, x2 its LLC color, x3 its bank color. */
/* Answers with a page's PA and colors (found) or BH_E_INVALID. */
static void color_hc_page(struct frame *f, bool found, u64 pa)
{
	const struct cfg_platform *p = cfg_system.platform;

	if (!found) {
		f->x[0] = (u64)(s64)BH_E_INVALID;
		return;
	}
	f->x[0] = BH_OK;
	f->x[1] = pa;
	f->x[2] = color_extract(pa, p->llc_color_mask);
	f->x[3] = color_extract(pa, p->bank_color_mask);
}

/* Host physical addresses help Rowhammer and cache side-channel attacks:
 * only a VM whose config grants `introspection: true` learns them. */
static bool color_hc_introspects(struct vcpu *v)
{
	if (v->vm->cfg->flags & CFG_VM_INTROSPECTION)
		return true;
	v->frame->x[0] = (u64)(s64)BH_E_DENIED;
	return false;
}

static void color_hc_ipa_info(struct vcpu *v)
{
	u64 pa = 0;

	if (color_hc_introspects(v))
		color_hc_page(v->frame, mem_ipa_to_pa(v->vm, v->frame->x[1], &pa), pa);
}

/* BH_HC_S2_INFO: x1 = index -> x1 = the PA of the index-th page of the
 * caller's stage-2 tables (depth first from the root), x2/x3 its LLC and
 * bank colors; BH_E_INVALID past the last one. */
static void color_hc_s2_info(struct vcpu *v)
{
	u64 idx = v->frame->x[1], pa = 0;

	if (color_hc_introspects(v))
		color_hc_page(v->frame, !(idx >> 32) && pt_table_page(&v->vm->s2, (u32)idx, &pa),
		              pa);
}

/* Four runs of four consecutive pages, a quarter of the region apart. */
static void color_dump_region(struct vm *vm, u32 r)
{
	const struct cfg_platform *p = cfg_system.platform;
	const struct cfg_mem *m = &vm->cfg->mem[r];
	u64 quarter = ALIGN_DOWN(m->size / COLOR_DUMP_PER_LINE, SZ_4K);
	char line[200];

	log_info("colors: vm %s mem[%u] ipa %lx %lu KiB (ipa>pa Llc/Bbank):", vm->cfg->name, r,
	         m->ipa, m->size >> 10);
	for (u32 k = 0; k < COLOR_DUMP_SAMPLES / COLOR_DUMP_PER_LINE; k++) {
		size_t len = 0;

		for (u32 n = 0; n < COLOR_DUMP_PER_LINE; n++) {
			u64 off = k * quarter + n * SZ_4K, pa;

			if (off >= m->size || !mem_ipa_to_pa(vm, m->ipa + off, &pa))
				break;
			len += fmt_snprintf(line + len, sizeof(line) - len, " %lx>%lx L%lu/B%lu",
			                    m->ipa + off, pa, color_extract(pa, p->llc_color_mask),
			                    color_extract(pa, p->bank_color_mask));
			if (len >= sizeof(line))
				len = sizeof(line) - 1;
		}
		if (len)
			log_info("colors:  %s", line);
	}
}

/* Ctrl-T c: each VM's colors and a sample of its IPA -> PA map. */
static void color_dump(void)
{
	char llc[64], bank[64];

	for (u32 i = 0; i < vm_count; i++) {
		struct vm *vm = &vms[i];
		const struct cfg_vm *c = vm->cfg;
		u64 lb, bb;

		color_vm_bitmaps(vm, &lb, &bb);
		color_format_list(llc, sizeof(llc), lb);
		color_format_list(bank, sizeof(bank), bb);
		log_info("colors: vm %s: %s, LLC %s, bank %s", c->name,
		         vm->llc_colors || vm->bank_colors ? "colored" : "uncolored", llc, bank);
		for (u32 r = 0; r < c->nmem; r++)
			color_dump_region(vm, r);
	}
	dsu_dump(); /* the L3 way partitions, combined with the colors */
}

/* Self-coloring: no VM memory, stage-2 table or shared memory may use the
 * hypervisor's colors (the toolchain checked; a hand-made config.c might
 * not have). */
static void color_check_hyp(void)
{
	const struct cfg_color *hyp = cfg_system.hyp_color;
	char llc[64], bank[64];

	if (!hyp)
		return;
	for (u32 i = 0; i < cfg_system.nvms; i++) {
		const struct cfg_vm *c = &cfg_system.vms[i];

		for (u32 r = 0; r < c->nmem; r++)
			if (!c->mem[r].color || color_sets_meet(c->mem[r].color, hyp))
				panic(
				    "coloring: vm %s memory region %u uses the hypervisor's colors",
				    c->name, r);
		if (c->pt_color && color_sets_meet(c->pt_color, hyp))
			panic("coloring: vm %s's stage-2 tables use the hypervisor's colors",
			      c->name);
	}
	for (u32 i = 0; i < cfg_system.nshmem; i++) {
		const struct cfg_shmem *s = &cfg_system.shmems[i];

		if (!s->color || color_sets_meet(s->color, hyp))
			panic("coloring: shared memory %s uses the hypervisor's colors", s->name);
	}
	color_format_list(llc, sizeof(llc),
	                  cfg_system.hyp_llc_colors
	                      ?: color_all(cfg_system.platform->llc_color_mask));
	color_format_list(bank, sizeof(bank),
	                  cfg_system.hyp_bank_colors
	                      ?: color_all(cfg_system.platform->bank_color_mask));
	log_info("coloring: hypervisor colors LLC %s, bank %s: reserved, no VM or shared memory "
	         "uses them",
	         llc, bank);
}

void color_init(void)
{
	color_probe();
	color_check_hyp();
	mem_set_color_next(color_set_next);
	hypercall_register(BH_HC_COLOR_INFO, color_hc_info);
	hypercall_register(BH_HC_IPA_INFO, color_hc_ipa_info);
	hypercall_register(BH_HC_S2_INFO, color_hc_s2_info);
	console_register_command('c', color_dump);
	color_recolor_init();
	color_ida_init();
}
