// SPDX-License-Identifier: Apache-2.0
/*
 * colorwalk: checks page coloring from inside a VM. Asks BH_HC_COLOR_INFO
 * for the VM's colors, then walks every 4 KiB page of its RAM (contiguous
 * IPAs from 0x40000000, BH_HC_VM_INFO's size) through BH_HC_IPA_INFO and
 * checks that the hypervisor's colors of each page match its PA bits and
 * are colors of the VM, that no two pages share a frame, and that IPAs
 * outside RAM are refused.
 *
 * Parameters: frames (0/1, default 0): also print the page frames (PA >> 12,
 * hex) of RAM and of every shared-memory region, as runs "<first>+<count>".
 *
 * Lines (success):
 *   colorwalk: colors LLC 0x<bitmap> bank 0x<bitmap> (LLC bits 0x<mask>, bank bits 0x<mask>)
 *   colorwalk: frames <pfn>+<n> ...            (frames=1; several lines)
 *   colorwalk: shmem <i> frames <pfn>+<n> ...  (frames=1)
 *   colorwalk: seen LLC 0x<bitmap> bank 0x<bitmap>
 *   colorwalk: PASS (<n> pages)
 * On failure: "colorwalk: FAIL (<reason>)".
 */
#include "runtime.h"

#define MAX_PAGES  8192 /* distinctness is checked up to this many pages (32 MiB) */
#define LINE_CHARS 100

static u64 frames[MAX_PAGES];

/* Runs of consecutive frames, printed a line at a time. */
struct run_printer {
	const char *prefix;
	char line[LINE_CHARS + 32];
	u32 len;
	u64 first, count;
};

static void run_flush_line(struct run_printer *rp)
{
	if (rp->len)
		printf("colorwalk: %s%s\n", rp->prefix, rp->line);
	rp->len = 0;
}

static void run_emit(struct run_printer *rp)
{
	if (!rp->count)
		return;
	rp->len += (u32)snprintf(rp->line + rp->len, sizeof(rp->line) - rp->len, " %lx+%lu",
	                         rp->first, rp->count);
	if (rp->len >= LINE_CHARS)
		run_flush_line(rp);
	rp->count = 0;
}

static void run_add(struct run_printer *rp, u64 pfn)
{
	if (rp->count && pfn == rp->first + rp->count) {
		rp->count++;
		return;
	}
	run_emit(rp);
	rp->first = pfn;
	rp->count = 1;
}

static void run_done(struct run_printer *rp)
{
	run_emit(rp);
	run_flush_line(rp);
}

static u64 extract(u64 x, u64 mask)
{
	u64 out = 0;

	for (unsigned k = 0; mask; k++, mask &= mask - 1)
		if (x & mask & -mask)
			out |= BIT(k);
	return out;
}

static int fail(const char *why, u64 a, u64 b)
{
	printf("colorwalk: FAIL (%s: 0x%lx 0x%lx)\n", why, a, b);
	return 1;
}

int main(const char *params)
{
	bool show = param_u64("frames", 0) != 0;
	struct run_printer rp = { .prefix = "frames" };
	struct bh_color_info ci;
	struct bh_vm_info vi;
	u64 npages, seen_llc = 0, seen_bank = 0;
	s64 ret;

	(void)params;
	ret = bh_color_info(&ci);
	if (ret != BH_OK)
		return fail("BH_HC_COLOR_INFO failed", (u64)ret, 0);
	if (bh_vm_info(&vi) != BH_OK)
		return fail("BH_HC_VM_INFO failed", 0, 0);
	printf("colorwalk: colors LLC 0x%lx bank 0x%lx (LLC bits 0x%lx, bank bits 0x%lx)\n",
	       ci.llc_colors, ci.bank_colors, ci.llc_mask, ci.bank_mask);

	npages = vi.ram_bytes / 4096;
	for (u64 i = 0; i < npages; i++) {
		u64 ipa = RT_RAM_BASE + i * 4096;
		struct bh_ipa_info pi;

		ret = bh_ipa_info(ipa, &pi);
		if (ret != BH_OK)
			return fail("BH_HC_IPA_INFO refused a RAM page", ipa, (u64)ret);
		if (pi.pa & 0xfff)
			return fail("PA of a page start is not page aligned", ipa, pi.pa);
		if (pi.llc_color != extract(pi.pa, ci.llc_mask) ||
		    pi.bank_color != extract(pi.pa, ci.bank_mask))
			return fail("reported colors do not match the PA bits", ipa, pi.pa);
		if (pi.llc_color >= 64 || !(ci.llc_colors & BIT(pi.llc_color)))
			return fail("page of an LLC color the VM does not have", pi.pa,
			            pi.llc_color);
		if (pi.bank_color >= 64 || !(ci.bank_colors & BIT(pi.bank_color)))
			return fail("page of a bank color the VM does not have", pi.pa,
			            pi.bank_color);
		seen_llc |= BIT(pi.llc_color);
		seen_bank |= BIT(pi.bank_color);
		if (i < MAX_PAGES)
			frames[i] = pi.pa >> 12;
		if (show)
			run_add(&rp, pi.pa >> 12);
	}
	run_done(&rp);

	if (npages <= MAX_PAGES) {
		sort_u64(frames, npages);
		for (u64 i = 1; i < npages; i++)
			if (frames[i] == frames[i - 1])
				return fail("two pages share a frame", frames[i] << 12, 0);
	}

	/* outside RAM: refused */
	if (bh_ipa_info(RT_RAM_BASE - 4096, &(struct bh_ipa_info){ 0 }) != BH_E_INVALID ||
	    bh_ipa_info(UART_BASE, &(struct bh_ipa_info){ 0 }) != BH_E_INVALID)
		return fail("BH_HC_IPA_INFO accepted an IPA outside RAM", RT_RAM_BASE - 4096,
		            UART_BASE);

	if (show) {
		for (u32 s = 0;; s++) {
			struct bh_shmem_info si;
			char prefix[24];

			if (bh_shmem_info(s, &si) != BH_OK)
				break;
			snprintf(prefix, sizeof(prefix), "shmem %u frames", s);
			rp = (struct run_printer){ .prefix = prefix };
			for (u64 off = 0; off < si.size; off += 4096) {
				struct bh_ipa_info pi;

				if (bh_ipa_info(si.ipa + off, &pi) != BH_OK)
					return fail("BH_HC_IPA_INFO refused shared memory",
					            si.ipa + off, 0);
				run_add(&rp, pi.pa >> 12);
			}
			run_done(&rp);
		}
	}
	printf("colorwalk: seen LLC 0x%lx bank 0x%lx\n", seen_llc, seen_bank);
	printf("colorwalk: PASS (%lu pages)\n", npages);
	return 0;
}
