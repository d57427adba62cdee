/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Invalidation-driven allocation (see color_ida.h): BH_HC_IDA_PREPARE, and
 * the same at VM start (CFG_VM_IDA_START) and at each regulation period
 * start (CFG_VM_IDA_PERIOD, called by isolation/bw.c).
 *
 * Only the last level is prepared (the shared cache the colors partition;
 * L1 is private to the CPU and the VM). Each operation is a clean and
 * invalidate: a dirty line is written back, never dropped, and the sets
 * are those of the VM's colors only (core/mem/cachesets.h, shared with the
 * set/way emulation), so no other VM's lines are touched. The cache
 * geometry is the CPU's own (core/mem/setway.c reads it once per CPU).
 */
#include "isolation/color_ida.h"

#include "arch/aarch64/cacheinfo.h"
#include "arch/aarch64/sysregs.h"
#include "arch/aarch64/timer.h"
#include "core/mem/cachesets.h"
#include "core/mem/setway.h"
#include "core/trap/hypercall.h"
#include "core/vcpu/vcpu.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "lib/log.h"

/* Preparations done per VM (start, periods, calls): BH_HC_IDA_PREPARE's x4. */
static u64 color_ida_count[CFG_MAX_CPUS];

s64 color_ida_prepare(struct vm *vm, u64 lines, struct color_ida_result *res)
{
	const struct cacheinfo *ci = setway_llc(cpu_index());
	u64 mask = cfg_system.platform->llc_color_mask;
	u64 colors = vm->llc_colors;
	u32 line_shift, way_shift;

	*res = (struct color_ida_result){ 0 };
	if (!mask || !colors)
		return BH_E_INVALID;
	if (!ci)
		return BH_OK; /* no cache: nothing to prepare */
	line_shift = (u32)__builtin_ctz(ci->line);
	/* DC CISW operand: way in the top bits (32 - log2 ways), set at log2 line */
	way_shift = ci->ways > 1 ? 32u - (u32)(32 - __builtin_clz(ci->ways - 1)) : 0;
	for (u64 set = 0; set < ci->sets && (!lines || res->lines < lines); set++) {
		if (!cachesets_colored(set, line_shift, mask, colors))
			continue;
		res->sets++;
		res->colors |= BIT(bits_extract(set << line_shift, mask) & 63);
		for (u64 way = 0; way < ci->ways && (!lines || res->lines < lines); way++) {
			u64 op = ((u64)(ci->level - 1) << 1) | (set << line_shift) |
			         (way_shift ? way << way_shift : 0);

			__asm__ volatile("dc cisw, %0" ::"r"(op) : "memory");
			res->lines++;
		}
	}
	dsb(sy);
	__atomic_fetch_add(&color_ida_count[vm->id], 1, __ATOMIC_RELAXED);
	return BH_OK;
}

/* BH_HC_IDA_PREPARE: x1 lines (0: every line of the VM's sets) -> x1 lines
 * done, x2 sets, x3 colors of the sets, x4 preparations of the VM so far
 * (this one, those at start and period starts included). */
static void color_ida_hc(struct vcpu *v)
{
	struct frame *f = v->frame;
	struct color_ida_result res;
	s64 ret = color_ida_prepare(v->vm, f->x[1], &res);

	f->x[0] = (u64)ret;
	if (ret == BH_OK) {
		f->x[1] = res.lines;
		f->x[2] = res.sets;
		f->x[3] = res.colors;
		f->x[4] = __atomic_load_n(&color_ida_count[v->vm->id], __ATOMIC_RELAXED);
	}
}

/* vCPU 0 starts (boot or reset), on its CPU. */
static void color_ida_start(struct vcpu *v)
{
	struct color_ida_result res;
	u64 t0;

	if (!(v->vm->cfg->flags & CFG_VM_IDA_START))
		return;
	t0 = arch_counter();
	if (color_ida_prepare(v->vm, 0, &res) == BH_OK)
		log_info("ida: vm %s: %lu lines in %lu sets prepared at start in %lu us",
		         v->vm->cfg->name, res.lines, res.sets,
		         timer_ticks_to_ns(arch_counter() - t0) / 1000);
}

void color_ida_init(void)
{
	hypercall_register(BH_HC_IDA_PREPARE, color_ida_hc);
	vcpu_set_start_hook(color_ida_start);
}
