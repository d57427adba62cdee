// SPDX-License-Identifier: Apache-2.0
/* Hypercall wrappers. */
#include "hvc.h"

struct bh_ret bh_call(u32 fid, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	register u64 x0 __asm__("x0") = fid;
	register u64 x1 __asm__("x1") = a1;
	register u64 x2 __asm__("x2") = a2;
	register u64 x3 __asm__("x3") = a3;
	register u64 x4 __asm__("x4") = a4;
	register u64 x5 __asm__("x5") = a5;
	struct bh_ret r;

	/* SMCCC 1.1 preserves x4..x17; be conservative like SMCCC 1.0. */
	__asm__ volatile("hvc #0"
	                 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5)
	                 :
	                 : "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16",
	                   "x17", "memory");
	r.x0 = (s64)x0;
	r.x1 = x1;
	r.x2 = x2;
	r.x3 = x3;
	r.x4 = x4;
	r.x5 = x5;
	return r;
}

struct bh_ret bh_call_uid(void)
{
	return bh_call(BH_CALL_UID, 0, 0, 0, 0, 0);
}

struct bh_ret bh_revision(void)
{
	return bh_call(BH_REVISION, 0, 0, 0, 0, 0);
}

struct bh_ret bh_version(void)
{
	return bh_call(BH_HC_VERSION, 0, 0, 0, 0, 0);
}

bool bh_present(void)
{
	struct bh_ret r = bh_version();

	return r.x0 == BH_OK && (u32)r.x1 == BH_MAGIC;
}

s64 bh_vm_info(struct bh_vm_info *info)
{
	struct bh_ret r = bh_call(BH_HC_VM_INFO, 0, 0, 0, 0, 0);

	if (r.x0 == BH_OK) {
		info->vm_id = (u32)r.x1;
		info->ncpus = (u32)r.x2;
		info->ram_bytes = r.x3;
		info->vcpu = (u32)r.x4;
		info->resets = r.x5;
	}
	return r.x0;
}

s64 bh_console_write_ipa(u64 ipa, u64 len)
{
	return bh_call(BH_HC_CONSOLE_WRITE, ipa, len, 0, 0, 0).x0;
}

s64 bh_console_write(const void *buf, u64 len)
{
	/* The guest runs with an identity map: VA == IPA. */
	return bh_console_write_ipa((u64)(uptr)buf, len);
}

s64 bh_shmem_info(u32 index, struct bh_shmem_info *info)
{
	struct bh_ret r = bh_call(BH_HC_SHMEM_INFO, index, 0, 0, 0, 0);

	if (r.x0 == BH_OK) {
		info->ipa = r.x1;
		info->size = r.x2;
		info->doorbell_irq = (u32)r.x3;
		info->npeers = (u32)r.x4;
	}
	return r.x0;
}

s64 bh_doorbell(u32 index)
{
	return bh_call(BH_HC_DOORBELL, index, 0, 0, 0, 0).x0;
}

s64 bh_color_info(struct bh_color_info *info)
{
	struct bh_ret r = bh_call(BH_HC_COLOR_INFO, 0, 0, 0, 0, 0);

	if (r.x0 == BH_OK) {
		info->llc_colors = r.x1;
		info->bank_colors = r.x2;
		info->llc_mask = r.x3;
		info->bank_mask = r.x4;
	}
	return r.x0;
}

/* A page's PA and colors (BH_HC_IPA_INFO, BH_HC_S2_INFO). */
static s64 bh_page_info(u32 fn, u64 arg, struct bh_ipa_info *info)
{
	struct bh_ret r = bh_call(fn, arg, 0, 0, 0, 0);

	if (r.x0 == BH_OK) {
		info->pa = r.x1;
		info->llc_color = r.x2;
		info->bank_color = r.x3;
	}
	return r.x0;
}

s64 bh_ipa_info(u64 ipa, struct bh_ipa_info *info)
{
	return bh_page_info(BH_HC_IPA_INFO, ipa, info);
}

u64 bh_pa_of(const void *p)
{
	struct bh_ipa_info info;
	uptr ipa = (uptr)p;

	if (bh_ipa_info(ipa & ~0xffful, &info) != BH_OK)
		return 0;
	return info.pa | (ipa & 0xfff);
}

s64 bh_s2_info(u32 index, struct bh_ipa_info *info)
{
	return bh_page_info(BH_HC_S2_INFO, index, info);
}

s64 bh_bw_stats(u32 vcpu, struct bh_bw_stats *st)
{
	struct bh_ret r = bh_call(BH_HC_BW_STATS, vcpu, 0, 0, 0, 0);

	if (r.x0 == BH_OK) {
		st->last = r.x1;
		st->max = r.x2;
		st->mean = r.x3;
		st->throttles = r.x4;
		st->stalled_ns = r.x5;
	}
	return r.x0;
}

s64 bh_bw_set(u32 vm_id, u64 budget_events, u64 period_us)
{
	return bh_call(BH_HC_BW_SET, vm_id, budget_events, period_us, 0, 0).x0;
}

s64 bh_cpu_exits(u32 cpu, struct bh_cpu_exits *ex)
{
	struct bh_ret r = bh_call(BH_HC_CPU_EXITS, cpu, 0, 0, 0, 0);

	if (r.x0 == BH_OK) {
		ex->exits = r.x1;
		ex->irq_exits = r.x2;
		ex->reg_exits = r.x3;
	}
	return r.x0;
}

s64 bh_exit(u32 status)
{
	return bh_call(BH_HC_EXIT, status, 0, 0, 0, 0).x0;
}

s64 bh_recolor(u32 vm_id, u64 llc, u64 bank, struct bh_recolor *out)
{
	struct bh_ret r = bh_call(BH_HC_RECOLOR, vm_id, llc, bank, 0, 0);

	if (r.x0 == BH_OK && out) {
		out->moved = r.x1;
		out->pause_start = r.x2;
		out->pause_end = r.x3;
	}
	return r.x0;
}
