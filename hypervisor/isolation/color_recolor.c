/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Recoloring a running VM (BH_HC_RECOLOR, see docs/coloring.md).
 *
 * A manager VM names a target VM and new LLC/bank color bitmaps. Nothing
 * changes until the request has passed every check:
 *  - the target is running and colored (mapped page by page);
 *  - the new set is a valid set of the platform's colors and meets no
 *    other VM's RAM or stage-2 tables, and no shared memory the target
 *    does not map (as `bulkhead check` requires of a config);
 *  - a dry run places every region: page i of a region goes to the i-th
 *    page of the new set at or after the region's first page (and after
 *    the previous region's new pages), in RAM, outside the hypervisor, the
 *    boot images, every other VM's and shared memory's pages and the
 *    target's tables and other regions. The move is done in place,
 *    backwards (last page first), so a new page that is also an old page
 *    of the region must not lie below the old page moved there (it would
 *    still hold a page not yet moved): true whenever the new set is not
 *    denser than the old one around that page; otherwise the request is
 *    refused (it would need spare memory).
 * Then the target's vCPUs are paused at EL2, each page is copied from its
 * old frame to its new one (the new frames found backwards with
 * color_set_prev, the RTAS'19 scheme), its stage-2 entry rewritten, the
 * TLBs of the VM's VMID and the instruction cache invalidated, and the VM
 * resumes. Stage-2 tables and shared memory keep their colors (see
 * docs/coloring.md, "Recoloring").
 */
#include "isolation/color_recolor.h"

#include "arch/aarch64/cache.h"
#include "arch/aarch64/timer.h"
#include "core/console.h"
#include "core/hypercall.h"
#include "core/mem.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "isolation/color.h"
#include "lib/format.h"
#include "lib/log.h"
#include "lib/spinlock.h"
#include "lib/string.h"

#define RECOLOR_MAX_REGIONS   8
#define RECOLOR_MAX_OBSTACLES 96
#define RECOLOR_PAUSE_MS      1000

/* A physical range whose pages (of color set c; NULL: every page) are
 * taken by someone else. */
struct recolor_obstacle {
	u64 lo, hi;
	const struct cfg_color *c;
};

/* A VM's colors and spans once recolored (before: the config's). */
struct recolor_vm {
	bool recolored;
	struct color_rt_set rt;
	u64 lo[RECOLOR_MAX_REGIONS], hi[RECOLOR_MAX_REGIONS];
};

static struct recolor_vm recolor_vms[CFG_MAX_CPUS];
static spinlock_t recolor_lock = SPINLOCK_INIT;

/* The request being served (under recolor_lock). */
static struct {
	struct color_rt_set want;
	struct recolor_obstacle obst[RECOLOR_MAX_OBSTACLES];
	u32 nobst;
	u64 new_lo[RECOLOR_MAX_REGIONS], new_hi[RECOLOR_MAX_REGIONS];
	char why[120];
} rq;

static const struct cfg_color *recolor_region_color(const struct vm *vm, u32 r)
{
	const struct recolor_vm *st = &recolor_vms[vm->id];

	return st->recolored ? &st->rt.set : vm->cfg->mem[r].color;
}

static void recolor_region_span(const struct vm *vm, u32 r, u64 *lo, u64 *hi)
{
	const struct recolor_vm *st = &recolor_vms[vm->id];
	const struct cfg_mem *m = &vm->cfg->mem[r];

	if (st->recolored) {
		*lo = st->lo[r];
		*hi = st->hi[r];
	} else {
		*lo = m->pa;
		*hi = m->color ? m->span_end : m->pa + m->size;
	}
}

static bool recolor_obstacle(u64 lo, u64 hi, const struct cfg_color *c)
{
	if (lo >= hi)
		return true;
	if (rq.nobst == RECOLOR_MAX_OBSTACLES)
		return false;
	rq.obst[rq.nobst++] = (struct recolor_obstacle){ lo, hi, c };
	return true;
}

/* The end of a colored shared-memory region's span (its last page + 4 KiB). */
static u64 recolor_shmem_end(const struct cfg_shmem *s)
{
	u64 pa = s->pa;

	if (!s->color)
		return s->pa + s->size;
	for (u64 off = 0; off < s->size; off += SZ_4K)
		pa = color_set_next(s->color, off ? pa + SZ_4K : pa);
	return pa == COLOR_NONE ? COLOR_NONE : pa + SZ_4K;
}

static bool recolor_maps_shmem(const struct vm *vm, u32 shmem)
{
	for (u32 i = 0; i < vm->cfg->nshmem; i++)
		if (vm->cfg->shmem[i].shmem == shmem)
			return true;
	return false;
}

/* The VM's colored stage-2 table pages as an obstacle. */
static bool recolor_tables(const struct vm *vm)
{
	if (!vm->cfg->pt_color || !vm->s2_next)
		return true; /* uncolored: in the hypervisor's pool */
	return recolor_obstacle(vm->cfg->pt_pa, vm->s2_pt_pa + SZ_4K, vm->cfg->pt_color);
}

/* Colors that another VM, shared memory or the tables use: refused as in a
 * config (names the owner). Collects the physical obstacles as well. */
static s64 recolor_collect(const struct vm *target)
{
	const struct cfg_platform *p = cfg_system.platform;
	const struct cfg_color *want = &rq.want.set;
	bool ok = true;

	rq.nobst = 0;
	if (cfg_system.hyp_color && color_sets_meet(cfg_system.hyp_color, want)) {
		fmt_snprintf(rq.why, sizeof(rq.why), "the colors intersect the hypervisor's");
		return BH_E_CONFLICT;
	}
	ok &= recolor_obstacle(p->hyp_base, p->hyp_base + p->hyp_size, NULL);
	for (u32 i = 0; i < vm_count; i++) {
		const struct vm *vm = &vms[i];

		for (u32 k = 0; k < vm->cfg->nimage; k++)
			ok &= recolor_obstacle(vm->cfg->images[k].src_pa,
			                       vm->cfg->images[k].src_pa + vm->cfg->images[k].size,
			                       NULL);
		for (u32 r = 0; r < vm->cfg->nmem; r++) {
			const struct cfg_color *c = recolor_region_color(vm, r);
			u64 lo, hi;

			if (vm != target && c && color_sets_meet(c, want)) {
				fmt_snprintf(rq.why, sizeof(rq.why),
				             "the colors intersect those of vm %s", vm->cfg->name);
				return BH_E_CONFLICT;
			}
			recolor_region_span(vm, r, &lo, &hi);
			if (vm != target) /* the target's own: checked per region */
				ok &= recolor_obstacle(lo, hi, c);
		}
		if (vm != target && vm->cfg->pt_color && color_sets_meet(vm->cfg->pt_color, want)) {
			fmt_snprintf(rq.why, sizeof(rq.why),
			             "the colors intersect those of vm %s's stage-2 tables",
			             vm->cfg->name);
			return BH_E_CONFLICT;
		}
		ok &= recolor_tables(vm);
	}
	for (u32 i = 0; i < cfg_system.nshmem; i++) {
		const struct cfg_shmem *s = &cfg_system.shmems[i];

		if (s->color && !recolor_maps_shmem(target, i) && color_sets_meet(s->color, want)) {
			fmt_snprintf(rq.why, sizeof(rq.why),
			             "the colors intersect those of shared memory %s, "
			             "which vm %s does not map",
			             s->name, target->cfg->name);
			return BH_E_CONFLICT;
		}
		ok &= recolor_obstacle(s->pa, recolor_shmem_end(s), s->color);
	}
	if (!ok) {
		fmt_snprintf(rq.why, sizeof(rq.why), "more than %u memory areas to avoid",
		             RECOLOR_MAX_OBSTACLES);
		return BH_E_INVALID;
	}
	return BH_OK;
}

static bool recolor_in(u64 pa, u64 lo, u64 hi, const struct cfg_color *c)
{
	return pa >= lo && pa < hi && (!c || color_set_match(c, pa));
}

/* Whether page pa is taken for region r: an obstacle or a page of another
 * region of the target's. *up, *down: where a search may resume above or
 * below it (past a range taken whole). */
static bool recolor_taken(const struct vm *target, u32 r, u64 pa, u64 *up, u64 *down)
{
	*up = pa + SZ_4K;
	*down = pa - 1;
	for (u32 i = 0; i < rq.nobst; i++) {
		const struct recolor_obstacle *o = &rq.obst[i];

		if (recolor_in(pa, o->lo, o->hi, o->c)) {
			if (!o->c) {
				*up = ALIGN_UP(o->hi, SZ_4K);
				*down = o->lo - 1;
			}
			return true;
		}
	}
	for (u32 k = 0; k < target->cfg->nmem; k++) {
		u64 lo, hi;

		if (k == r)
			continue;
		recolor_region_span(target, k, &lo, &hi);
		if (recolor_in(pa, lo, hi, recolor_region_color(target, k)))
			return true;
	}
	return false;
}

static bool recolor_ram(u64 pa)
{
	const struct cfg_platform *p = cfg_system.platform;

	return pa != COLOR_NONE && cfg_in_ram(p, pa, 1);
}

/* The first free page of the new set at or above pa (COLOR_NONE: none in
 * RAM). Pages taken are skipped, the same ones recolor_prev_free skips. */
static u64 recolor_next_free(const struct vm *target, u32 r, u64 pa)
{
	u64 up, down;

	for (;;) {
		pa = color_set_next(&rq.want.set, pa);
		if (!recolor_ram(pa))
			return COLOR_NONE;
		if (!recolor_taken(target, r, pa, &up, &down))
			return pa;
		pa = up;
	}
}

/* The last free page of the new set below pa (page aligned). */
static u64 recolor_prev_free(const struct vm *target, u32 r, u64 pa)
{
	u64 up, down;

	for (pa -= 1;;) {
		/* the largest compliant address below: its page */
		pa = color_set_prev(&rq.want.set, pa);
		if (!recolor_ram(pa))
			return COLOR_NONE;
		pa = ALIGN_DOWN(pa, SZ_4K);
		if (!recolor_taken(target, r, pa, &up, &down))
			return pa;
		pa = down;
	}
}

/* Dry run of region r from *cursor: sets rq.new_lo/hi[r]. */
static s64 recolor_plan_region(struct vm *target, u32 r, u64 *cursor)
{
	const struct cfg_mem *m = &target->cfg->mem[r];
	const struct cfg_color *old_c = recolor_region_color(target, r);
	u64 old_lo, old_hi, first, pa = 0;

	recolor_region_span(target, r, &old_lo, &old_hi);
	if (!mem_ipa_to_pa(target, m->ipa, &first))
		return BH_E_INVALID;
	for (u64 off = 0; off < m->size; off += SZ_4K) {
		u64 old;

		pa = recolor_next_free(target, r, off ? pa + SZ_4K : MAX(first, *cursor));
		if (!mem_ipa_to_pa(target, m->ipa + off, &old))
			return BH_E_INVALID;
		if (pa == COLOR_NONE) {
			fmt_snprintf(rq.why, sizeof(rq.why),
			             "no free page of the new colors in RAM for ipa %lx",
			             m->ipa + off);
			return BH_E_NO_MEMORY;
		}
		if (pa < old && recolor_in(pa, old_lo, old_hi, old_c)) {
			fmt_snprintf(rq.why, sizeof(rq.why),
			             "not in place: ipa %lx would move down onto a page not yet "
			             "moved (the new set is denser; needs spare memory)",
			             m->ipa + off);
			return BH_E_NO_MEMORY;
		}
		if (!off)
			rq.new_lo[r] = pa;
	}
	rq.new_hi[r] = pa + SZ_4K;
	*cursor = rq.new_hi[r];
	return BH_OK;
}

/* Moves region r backwards to its planned pages; returns pages copied. */
static u64 recolor_move_region(struct vm *target, u32 r)
{
	const struct cfg_mem *m = &target->cfg->mem[r];
	u64 pa = rq.new_hi[r], moved = 0;

	for (u64 off = m->size; off;) {
		u64 old;

		off -= SZ_4K;
		pa = recolor_prev_free(target, r, pa);
		if (!mem_ipa_to_pa(target, m->ipa + off, &old))
			panic("recolor: vm %s ipa %lx lost", target->cfg->name, m->ipa + off);
		if (old != pa) {
			/* the guest may have written with its caches off */
			cache_clean_inval_range(old, SZ_4K);
			memcpy((void *)(uintptr_t)pa, (const void *)(uintptr_t)old, SZ_4K);
			cache_clean_range(pa, SZ_4K);
			cache_clean_inval_range(old, SZ_4K); /* leave the old sets */
			moved++;
		}
		if (!mem_remap_page(target, m->ipa + off, pa))
			panic("recolor: vm %s ipa %lx (pa %lx) not remappable to %lx",
			      target->cfg->name, m->ipa + off, old, pa);
	}
	if (pa != rq.new_lo[r])
		panic("recolor: vm %s region %u: backwards walk ended at %lx, not %lx",
		      target->cfg->name, r, pa, rq.new_lo[r]);
	return moved;
}

static s64 recolor_check(struct vm *target, u64 llc, u64 bank)
{
	const struct cfg_platform *p = cfg_system.platform;
	const char *err;
	u64 cursor = 0;
	s64 ret;

	if (target->state != VM_RUNNING) {
		fmt_snprintf(rq.why, sizeof(rq.why), "the VM is not running");
		return BH_E_INVALID;
	}
	err = color_rt_build(&rq.want, llc, bank, p->llc_color_mask, p->bank_color_mask);
	if (err) {
		fmt_snprintf(rq.why, sizeof(rq.why), "%s", err);
		return BH_E_INVALID;
	}
	if (target->cfg->nmem > RECOLOR_MAX_REGIONS) {
		fmt_snprintf(rq.why, sizeof(rq.why), "more than %u memory regions",
		             RECOLOR_MAX_REGIONS);
		return BH_E_INVALID;
	}
	for (u32 r = 0; r < target->cfg->nmem; r++)
		if (!recolor_region_color(target, r)) {
			fmt_snprintf(rq.why, sizeof(rq.why),
			             "memory region %u is uncolored (mapped with blocks)", r);
			return BH_E_INVALID;
		}
	ret = recolor_collect(target);
	for (u32 r = 0; ret == BH_OK && r < target->cfg->nmem; r++)
		ret = recolor_plan_region(target, r, &cursor);
	return ret;
}

static u64 recolor_us(u64 ticks)
{
	return timer_ticks_to_ns(ticks) / 1000;
}

s64 color_recolor(struct vm *target, u64 llc, u64 bank, const char *by,
                  struct color_recolor_result *res)
{
	struct recolor_vm *st = &recolor_vms[target->id];
	char list[64];
	u64 moved = 0, t0, t1;
	s64 ret;

	if (!spin_trylock(&recolor_lock))
		return BH_E_BUSY;
	rq.why[0] = '\0';
	ret = recolor_check(target, llc, bank);
	if (ret == BH_OK && !vcpu_pause_vm(target, RECOLOR_PAUSE_MS * (timer_freq() / 1000))) {
		fmt_snprintf(rq.why, sizeof(rq.why), "its vCPUs did not stop");
		ret = BH_E_BUSY;
	}
	if (ret != BH_OK) {
		log_info("recolor: vm %s: refused (by %s): %s", target->cfg->name, by, rq.why);
		spin_unlock(&recolor_lock);
		return ret;
	}
	t0 = arch_counter();
	for (u32 r = target->cfg->nmem; r--;)
		moved += recolor_move_region(target, r);
	mem_vm_tlb_flush(target);
	icache_invalidate_all();
	st->rt = rq.want;
	st->rt.set.values = st->rt.values;
	for (u32 r = 0; r < target->cfg->nmem; r++) {
		st->lo[r] = rq.new_lo[r];
		st->hi[r] = rq.new_hi[r];
	}
	st->recolored = true;
	target->llc_colors = llc == color_all(cfg_system.platform->llc_color_mask) ? 0 : llc;
	target->bank_colors = bank == color_all(cfg_system.platform->bank_color_mask) ? 0 : bank;
	t1 = arch_counter();
	vcpu_resume_vm(target);
	spin_unlock(&recolor_lock);

	color_format_list(list, sizeof(list),
	                  llc ? llc : color_all(cfg_system.platform->llc_color_mask));
	log_info("recolor: vm %s: LLC %s (by %s): %lu of %lu pages moved in %lu us",
	         target->cfg->name, list, by, moved, target->ram_bytes >> 12, recolor_us(t1 - t0));
	res->moved = moved;
	res->pause_start = t0;
	res->pause_end = t1;
	return BH_OK;
}

/* BH_HC_RECOLOR: x1 target VM id, x2 LLC bitmap, x3 bank bitmap (0: every
 * color) -> x1 pages copied, x2/x3 counter at pause start/end. */
static void recolor_hc(struct vcpu *v)
{
	struct frame *f = v->frame;
	struct color_recolor_result res;
	s64 ret;

	if (!(v->vm->cfg->flags & CFG_VM_MANAGER)) {
		f->x[0] = (u64)(s64)BH_E_DENIED;
		return;
	}
	if (f->x[1] >= vm_count) {
		f->x[0] = (u64)(s64)BH_E_INVALID;
		return;
	}
	ret = color_recolor(&vms[f->x[1]], f->x[2], f->x[3], v->vm->cfg->name, &res);
	f->x[0] = (u64)ret;
	if (ret == BH_OK) {
		f->x[1] = res.moved;
		f->x[2] = res.pause_start;
		f->x[3] = res.pause_end;
	}
}

/* One word of a console line: a color list, or "all" (every color: 0). */
static bool recolor_parse_colors(const char **s, u64 *bitmap)
{
	if (!memcmp(*s, "all", 3) && ((*s)[3] == ' ' || !(*s)[3])) {
		*s += 3;
		*bitmap = 0;
		return true;
	}
	return color_parse_list(s, bitmap);
}

/* Ctrl-T r, then "<vm> <LLC list|all> [<bank list|all>]" and Enter. */
static void recolor_console(const char *line)
{
	const char *s = line;
	struct color_recolor_result res;
	struct vm *target = NULL;
	u64 llc = 0, bank = 0;
	size_t n = 0;

	log_info("recolor: console: '%s'", line);
	while (s[n] && s[n] != ' ')
		n++;
	for (u32 i = 0; i < vm_count; i++)
		if (strlen(vms[i].cfg->name) == n && !memcmp(vms[i].cfg->name, s, n))
			target = &vms[i];
	s += n;
	while (*s == ' ')
		s++;
	if (!target || !recolor_parse_colors(&s, &llc)) {
		log_info("recolor: usage: Ctrl-T r, then <vm> <LLC colors|all> [<bank colors|all>] "
		         "and Enter, e.g. 'linux 0-3'");
		return;
	}
	while (*s == ' ')
		s++;
	if (*s && !recolor_parse_colors(&s, &bank)) {
		log_info("recolor: bad bank colors in '%s'", line);
		return;
	}
	color_recolor(target, llc, bank, "console", &res);
}

void color_recolor_init(void)
{
	hypercall_register(BH_HC_RECOLOR, recolor_hc);
	console_register_line_command('r', recolor_console);
}
