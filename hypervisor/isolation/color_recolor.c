/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Recoloring a running VM (BH_HC_RECOLOR, see docs/coloring.md).
 *
 * A manager VM names a target VM and new LLC/bank color bitmaps. Nothing
 * changes until the request has passed every check:
 *  - the target drives no DMA-capable device that no SMMU confines;
 *  - the target is running (an uncolored one, mapped with blocks, gets
 *    stage-2 tables with 4 KiB pages in the new colors first);
 *  - the new set is a valid set of the platform's colors and meets no
 *    other VM's RAM or stage-2 tables, and no shared memory the target
 *    does not map (as `bulkhead check` requires of a config);
 *  - a dry run places every page: page i of the VM (regions in order) goes
 *    to the i-th free page of the new set in spare memory (the recolor
 *    pool and every colored region's configured span and colors, less the
 *    pages in use: the hypervisor, the boot images, every other VM's and
 *    shared memory's pages and all stage-2 tables). Too little spare memory
 *    refuses the request.
 * Then the target's vCPUs are paused at EL2 and each page is copied to its
 * new frame and its stage-2 entry rewritten: first the pages that go up,
 * last page first (the new frames found backwards with color_set_prev, the
 * RTAS'19 scheme), then those that go down, first page first; as old and
 * new frames both increase with the page, no copy overwrites a page not yet
 * moved. With an SMMU, the VM's DMA streams abort during the move (their
 * STEs or stream mappings switched, TLBI + SYNC before the first copy) and
 * translate through the new tables after it (drivers/iommu.h). The TLBs of
 * the VM's VMID and the instruction cache are invalidated and the VM resumes. Colored stage-2
 * tables are copied to pages of the new colors (before the move when blocks must become pages,
 * after it otherwise); shared memory keeps its colors (see
 * docs/coloring.md, "Recoloring").
 */
#include "isolation/color_recolor.h"

#include "arch/aarch64/cache.h"
#include "arch/aarch64/timer.h"
#include "core/console/console.h"
#include "core/mem/mem.h"
#include "core/trap/hypercall.h"
#include "core/vcpu/vcpu.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/iommu.h"
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

/* A VM's colors and spans once recolored (before: the config's); its
 * colored stage-2 tables' span once moved (their colors: the VM's). */
struct recolor_vm {
	bool recolored, tables_moved;
	struct color_rt_set rt;
	u64 lo[RECOLOR_MAX_REGIONS], hi[RECOLOR_MAX_REGIONS];
	u64 pt_lo, pt_hi;
};

static struct recolor_vm recolor_vms[CFG_MAX_CPUS];
/* The end of each VM's configured table span (pt_pages pages of pt_color
 * from pt_pa; 0: uncolored tables), spare memory once the tables move. */
static u64 recolor_pt_end[CFG_MAX_CPUS];
static spinlock_t recolor_lock = SPINLOCK_INIT_RANK(LOCK_RANK_RECOLOR);

/* The request being served (under recolor_lock). */
static struct {
	struct color_rt_set want;
	struct recolor_obstacle obst[RECOLOR_MAX_OBSTACLES];
	u32 nobst;
	u64 new_lo[RECOLOR_MAX_REGIONS], new_hi[RECOLOR_MAX_REGIONS];
	u64 pt_lo, pt_hi, pt_next; /* the tables' new pages */
	u32 pt_pages, pt_taken;    /* 0 pages: the tables stay */
	bool split;                /* uncolored memory: its blocks become pages first */
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
	const struct recolor_vm *st = &recolor_vms[vm->id];

	if (st->tables_moved)
		return recolor_obstacle(st->pt_lo, st->pt_hi, &st->rt.set);
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
			if (vm != target) /* the target's own pages are free for it */
				ok &= recolor_obstacle(lo, hi, c);
		}
		if (vm != target && vm->cfg->pt_color && !recolor_vms[vm->id].tables_moved &&
		    color_sets_meet(vm->cfg->pt_color, want)) {
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

/* Whether page pa is in use (an obstacle). *up, *down: where a search may
 * resume above or below it (past a range taken whole). */
static bool recolor_taken(u64 pa, u64 *up, u64 *down)
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
	return false;
}

/* One range of spare memory: its span and colors. */
static bool recolor_spare_range(u64 pa, u64 lo, u64 hi, const struct cfg_color *c, u64 *up,
                                u64 *down)
{
	if (pa >= lo && pa < hi) {
		if (!c || color_set_match(c, pa))
			return true;
		*up = pa + SZ_4K;
		*down = pa - 1;
	} else if (lo > pa) {
		*up = MIN(*up, lo);
	} else if (*down == COLOR_NONE || hi - 1 > *down) {
		*down = hi - 1;
	}
	return false;
}

/* Whether page pa is spare memory, which a recoloring may take unless it is
 * in use: a page of the recolor pool (config `recolor_pool`) or of a colored
 * region's configured span and colors (whoever uses it now: pages a
 * recoloring frees return to the pool this way). *up, *down: the nearest
 * addresses above and below where spare memory may be (COLOR_NONE: none). */
static bool recolor_spare(u64 pa, u64 *up, u64 *down)
{
	*up = COLOR_NONE;
	*down = COLOR_NONE;
	if (cfg_system.pool_color &&
	    recolor_spare_range(pa, cfg_system.pool_pa, cfg_system.pool_span_end,
	                        cfg_system.pool_color, up, down))
		return true;
	for (u32 i = 0; i < vm_count; i++)
		for (u32 r = 0; r < vms[i].cfg->nmem; r++) {
			const struct cfg_mem *m = &vms[i].cfg->mem[r];

			if (recolor_spare_range(pa, m->pa, m->color ? m->span_end : m->pa + m->size,
			                        m->color, up, down))
				return true;
		}
	for (u32 i = 0; i < vm_count; i++)
		if (recolor_pt_end[i] &&
		    recolor_spare_range(pa, vms[i].cfg->pt_pa, recolor_pt_end[i],
		                        vms[i].cfg->pt_color, up, down))
			return true;
	return false;
}

static bool recolor_ram(u64 pa)
{
	const struct cfg_platform *p = cfg_system.platform;

	return pa != COLOR_NONE && cfg_in_ram(p, pa, 1);
}

/* The first free page of the new set at or above pa (COLOR_NONE: none):
 * spare memory not in use. Pages are skipped exactly as recolor_prev_free
 * skips them. */
static u64 recolor_next_free(u64 pa)
{
	u64 up, down;

	for (;;) {
		pa = color_set_next(&rq.want.set, pa);
		if (!recolor_ram(pa))
			return COLOR_NONE;
		if (!recolor_taken(pa, &up, &down) && recolor_spare(pa, &up, &down))
			return pa;
		if (up == COLOR_NONE)
			return COLOR_NONE;
		pa = up;
	}
}

/* The last free page of the new set below pa (page aligned). */
static u64 recolor_prev_free(u64 pa)
{
	u64 up, down;

	for (pa -= 1;;) {
		/* the largest compliant address below: its page */
		pa = color_set_prev(&rq.want.set, pa);
		if (!recolor_ram(pa))
			return COLOR_NONE;
		pa = ALIGN_DOWN(pa, SZ_4K);
		if (!recolor_taken(pa, &up, &down) && recolor_spare(pa, &up, &down))
			return pa;
		if (down == COLOR_NONE)
			return COLOR_NONE;
		pa = down;
	}
}

/* Whether pa is (conservatively) a frame of one of the target's regions. */
static bool recolor_target_frame(const struct vm *target, u64 pa)
{
	for (u32 k = 0; k < target->cfg->nmem; k++) {
		u64 lo, hi;

		recolor_region_span(target, k, &lo, &hi);
		if (recolor_in(pa, lo, hi, recolor_region_color(target, k)))
			return true;
	}
	return false;
}

/* Whether the target's frames increase with (region, page): then any new
 * layout that also increases can be reached by moving the pages that go
 * up last page first, then those that go down first page first, without
 * overwriting a page not yet moved (a page's new frame, if it is the old
 * frame of another page, is that of a later page when it goes up and of an
 * earlier one when it goes down: docs/coloring.md). */
static bool recolor_monotone(struct vm *target)
{
	u64 prev = 0;

	for (u32 r = 0; r < target->cfg->nmem; r++) {
		const struct cfg_mem *m = &target->cfg->mem[r];

		for (u64 off = 0; off < m->size; off += SZ_4K) {
			u64 old;

			if (!mem_ipa_to_pa(target, m->ipa + off, &old) || old <= prev)
				return false;
			prev = old;
		}
	}
	return true;
}

/* The first free page of the new set at or above pa for a table page:
 * before the RAM moves (split), also none of the VM's current frames. */
static u64 recolor_next_table(const struct vm *target, u64 pa)
{
	for (pa = recolor_next_free(pa);
	     rq.split && pa != COLOR_NONE && recolor_target_frame(target, pa);)
		pa = recolor_next_free(pa + SZ_4K);
	return pa;
}

/* The tables' new pages: as many as the copy of the tree takes, the first
 * free ones of the new set above the RAM's new pages. Without split they
 * are taken once the RAM has moved, so old RAM frames may serve; with
 * split (blocks of uncolored memory become pages, which the move needs)
 * they are taken first, so they avoid the current frames. The current
 * table pages are in use: never among them. Tables in the hypervisor's
 * pool stay there unless the VM's memory is uncolored. */
static s64 recolor_plan_tables(struct vm *target, u64 cursor)
{
	bool move = target->cfg->pt_color || recolor_vms[target->id].tables_moved || rq.split;
	u64 pa = cursor - SZ_4K;

	rq.pt_lo = rq.pt_hi = 0;
	rq.pt_pages = move ? mem_s2_move_pages(target, rq.split) : 0;
	for (u32 i = 0; i < rq.pt_pages; i++) {
		pa = recolor_next_table(target, pa + SZ_4K);
		if (pa == COLOR_NONE) {
			fmt_snprintf(rq.why, sizeof(rq.why),
			             "not enough spare memory in the new colors for the %u stage-2 "
			             "table pages",
			             rq.pt_pages);
			return BH_E_NO_MEMORY;
		}
		if (!i)
			rq.pt_lo = pa;
	}
	rq.pt_hi = pa + SZ_4K;
	return BH_OK;
}

/* Dry run: page i of the VM (regions in order) goes to the i-th free page
 * of the new set; sets rq.new_lo/hi. */
static s64 recolor_plan(struct vm *target)
{
	bool monotone = recolor_monotone(target);
	u64 cursor = cfg_system.platform->ram_base;
	const char *why = NULL;

	for (u32 r = 0; r < target->cfg->nmem; r++) {
		const struct cfg_mem *m = &target->cfg->mem[r];
		u64 pa = 0;

		for (u64 off = 0; off < m->size; off += SZ_4K) {
			u64 old;

			pa = recolor_next_free(off ? pa + SZ_4K : cursor);
			if (!mem_ipa_to_pa(target, m->ipa + off, &old))
				return BH_E_INVALID;
			if (pa == COLOR_NONE)
				why = "not enough spare memory in the new colors (recolor pool and "
				      "free colored spans): none left for";
			else if (!monotone && pa != old && recolor_target_frame(target, pa))
				why = "its regions interleave and a page would land on another of "
				      "its frames:";
			if (why) {
				fmt_snprintf(rq.why, sizeof(rq.why), "%s ipa %lx", why,
				             m->ipa + off);
				return BH_E_NO_MEMORY;
			}
			if (!off)
				rq.new_lo[r] = pa;
		}
		rq.new_hi[r] = pa + SZ_4K;
		cursor = rq.new_hi[r];
	}
	return recolor_plan_tables(target, cursor);
}

/* Copies one page to its new frame and points its stage-2 entry there. */
static void recolor_move_page(struct vm *target, u64 ipa, u64 old, u64 pa)
{
	/* the guest may have written with its caches off */
	cache_clean_inval_range(old, SZ_4K);
	memcpy((void *)(uintptr_t)pa, (const void *)(uintptr_t)old, SZ_4K);
	cache_clean_range(pa, SZ_4K);
	cache_clean_inval_range(old, SZ_4K); /* leave the old sets */
	if (!mem_remap_page(target, ipa, pa))
		panic("recolor: vm %s ipa %lx (pa %lx) not remappable to %lx", target->cfg->name,
		      ipa, old, pa);
}

/* The pages whose new frame lies above the old one, last page first (new
 * frames found backwards with color_set_prev, the RTAS'19 scheme). */
static u64 recolor_move_up(struct vm *target)
{
	u64 moved = 0;

	for (u32 r = target->cfg->nmem; r--;) {
		const struct cfg_mem *m = &target->cfg->mem[r];
		u64 pa = rq.new_hi[r];

		for (u64 off = m->size; off;) {
			u64 old;

			off -= SZ_4K;
			pa = recolor_prev_free(pa);
			if (!mem_ipa_to_pa(target, m->ipa + off, &old))
				panic("recolor: vm %s ipa %lx lost", target->cfg->name,
				      m->ipa + off);
			if (pa > old) {
				recolor_move_page(target, m->ipa + off, old, pa);
				moved++;
			}
		}
		if (pa != rq.new_lo[r])
			panic("recolor: vm %s region %u: backwards walk ended at %lx, not %lx",
			      target->cfg->name, r, pa, rq.new_lo[r]);
	}
	return moved;
}

/* The pages whose new frame lies below the old one, first page first. */
static u64 recolor_move_down(struct vm *target)
{
	u64 moved = 0;

	for (u32 r = 0; r < target->cfg->nmem; r++) {
		const struct cfg_mem *m = &target->cfg->mem[r];
		u64 pa = 0;

		for (u64 off = 0; off < m->size; off += SZ_4K) {
			u64 old;

			pa = recolor_next_free(off ? pa + SZ_4K : rq.new_lo[r]);
			if (!mem_ipa_to_pa(target, m->ipa + off, &old))
				panic("recolor: vm %s ipa %lx lost", target->cfg->name,
				      m->ipa + off);
			if (pa < old) {
				recolor_move_page(target, m->ipa + off, old, pa);
				moved++;
			}
		}
		if (pa + SZ_4K != rq.new_hi[r])
			panic("recolor: vm %s region %u: forward walk ended at %lx, not %lx",
			      target->cfg->name, r, (u64)(pa + SZ_4K), rq.new_hi[r]);
	}
	return moved;
}

/* The tables' new pages, in the planned order (mem_s2_move). */
static u64 *recolor_pt_alloc(void *ctx)
{
	u64 pa;

	if (rq.pt_taken == rq.pt_pages)
		return NULL;
	pa = rq.pt_taken++ ? recolor_next_table(ctx, rq.pt_next + SZ_4K) : rq.pt_lo;
	rq.pt_next = pa;
	memset((void *)(uintptr_t)pa, 0, SZ_4K);
	return (u64 *)(uintptr_t)pa;
}

/* Moves the colored stage-2 tables to their planned pages. */
static void recolor_move_tables(struct vm *target)
{
	if (!rq.pt_pages)
		return;
	rq.pt_taken = 0;
	if (!mem_s2_move(target, rq.split, recolor_pt_alloc, target) ||
	    rq.pt_next + SZ_4K != rq.pt_hi)
		panic("recolor: vm %s: stage-2 tables not moved as planned (%u of %u pages)",
		      target->cfg->name, rq.pt_taken, rq.pt_pages);
	vcpu_reload_s2(target);
}

static s64 recolor_check(struct vm *target, u64 llc, u64 bank)
{
	const struct cfg_platform *p = cfg_system.platform;
	const char *err;
	s64 ret;

	if (target->state != VM_RUNNING) {
		fmt_snprintf(rq.why, sizeof(rq.why), "the VM is not running");
		return BH_E_INVALID;
	}
	if (target->cfg->flags & CFG_VM_DMA_UNCONFINED) {
		fmt_snprintf(rq.why, sizeof(rq.why),
		             "it drives a DMA-capable device no SMMU confines (dma_isolation: "
		             "none): the device would keep writing to the old frames");
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
	rq.split = false;
	for (u32 r = 0; r < target->cfg->nmem; r++)
		rq.split |= !recolor_region_color(target, r);
	ret = recolor_collect(target);
	return ret == BH_OK ? recolor_plan(target) : ret;
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
	u64 moved, up, t0, t1;
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
	/* its DMA streams abort until the new tables are in place: when this
	 * returns no transaction translated with the old ones is outstanding,
	 * so no device writes to a frame after it was copied (or freed) */
	iommu_vm_block(target->id);
	if (rq.split)
		recolor_move_tables(target); /* pages first: the move remaps them */
	up = recolor_move_up(target);
	moved = up + recolor_move_down(target);
	if (!rq.split)
		recolor_move_tables(target);
	mem_vm_tlb_flush(target);
	mem_iommu_attach(target); /* the devices translate through the new tables */
	icache_invalidate_all();
	st->rt = rq.want;
	st->rt.set.values = st->rt.values;
	for (u32 r = 0; r < target->cfg->nmem; r++) {
		st->lo[r] = rq.new_lo[r];
		st->hi[r] = rq.new_hi[r];
	}
	st->recolored = true;
	if (rq.pt_pages) {
		st->tables_moved = true;
		st->pt_lo = rq.pt_lo;
		st->pt_hi = rq.pt_hi;
	}
	target->llc_colors = llc == color_all(cfg_system.platform->llc_color_mask) ? 0 : llc;
	target->bank_colors = bank == color_all(cfg_system.platform->bank_color_mask) ? 0 : bank;
	t1 = arch_counter();
	vcpu_resume_vm(target);
	spin_unlock(&recolor_lock);

	color_format_list(list, sizeof(list),
	                  llc ? llc : color_all(cfg_system.platform->llc_color_mask));
	log_info("recolor: vm %s: LLC %s (by %s): %lu of %lu pages moved (%lu up, %lu down) and %u "
	         "stage-2 table pages in %lu us",
	         target->cfg->name, list, by, moved, target->ram_bytes >> 12, up, moved - up,
	         rq.pt_pages, recolor_us(t1 - t0));
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
	const struct cfg_color *pool = cfg_system.pool_color;

	for (u32 i = 0; i < cfg_system.nvms && i < CFG_MAX_CPUS; i++) {
		const struct cfg_vm *c = &cfg_system.vms[i];
		u64 pa = c->pt_pa;

		for (u32 k = 0; c->pt_color && k < c->pt_pages && pa != COLOR_NONE; k++)
			pa = color_set_next(c->pt_color, k ? pa + SZ_4K : pa);
		recolor_pt_end[i] = c->pt_color && pa != COLOR_NONE ? pa + SZ_4K : 0;
	}

	if (pool) {
		if (cfg_system.hyp_color && color_sets_meet(pool, cfg_system.hyp_color))
			panic("coloring: the recolor pool uses the hypervisor's colors");
		log_info("recolor: spare memory: a pool of %lu KiB (pages of its colors from %lx "
		         "to %lx) and the colored regions' spans",
		         cfg_system.pool_size >> 10, cfg_system.pool_pa, cfg_system.pool_span_end);
	}
	hypercall_register(BH_HC_RECOLOR, recolor_hc);
	console_register_line_command('r', recolor_console);
}
