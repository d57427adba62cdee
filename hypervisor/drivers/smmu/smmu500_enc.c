/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SMMUv2 (MMU-500) register values: stream match, stage-2 context banks,
 * fault syndromes (IHI 0062, "Stream mapping", "Translation context bank
 * registers", "Fault Status"). Pure: host-tested (tests/host/test_smmu500.c).
 */
#include "drivers/smmu/smmu500_hw.h"

u32 smmu500_smr(u32 sid)
{
	return SMMU500_SMR_VALID | (sid & 0x7fff); /* ID [14:0], MASK [30:16] = 0 */
}

u32 smmu500_s2cr(u32 cb)
{
	return cb == ~0u ? SMMU500_S2CR_FAULT : SMMU500_S2CR_TRANS | (cb & 0xff);
}

u32 smmu500_cbar_s2(u16 vmid, u32 irpt)
{
	/* VMID [7:0], TYPE [17:16] = 0 (stage 2 context), IRPTNDX [31:24] */
	return (u32)(vmid & 0xff) | ((irpt & 0xff) << 24);
}

u32 smmu500_cb_tcr(u64 vtcr)
{
	/* the VTCR_EL2 layout: T0SZ, SL0, IRGN0, ORGN0, SH0, TG0, PS [18:0] */
	return (u32)(vtcr & 0x7ffff) | (1u << 31);
}

u32 smmu500_cb_sctlr(void)
{
	return SMMU500_SCTLR_M | SMMU500_SCTLR_CFRE | SMMU500_SCTLR_CFIE;
}

static const char *smmu500_fsr_name(u32 fsr)
{
	static const char *const names[] = { "TF",     "AFF",    "PF",  "EF",
		                             "TLBMCF", "TLBLKF", "ASF", "UUT" };

	for (u32 b = 1; b <= 8; b++)
		if (fsr & (1u << b))
			return names[b - 1];
	return "FAULT";
}

bool smmu500_cb_fault_decode(u32 fsr, u32 fsynr0, u64 far, u32 cbfrsynra, struct smmu500_fault *f)
{
	if (!(fsr & (SMMU500_FSR_FAULTS | SMMU500_FSR_MULTI)))
		return false;
	f->sid = cbfrsynra & 0xffff;
	f->addr = far;
	f->write = (fsynr0 & BIT(4)) != 0; /* WNR */
	f->addr_valid = true;
	f->what = smmu500_fsr_name(fsr);
	return true;
}

bool smmu500_global_fault_decode(u32 sgfsr, u32 sgfsynr1, u64 sgfar, struct smmu500_fault *f)
{
	if (!(sgfsr & 0x1feu))
		return false;
	f->sid = sgfsynr1 & 0xffff;
	f->addr = sgfar;
	f->write = false;
	f->addr_valid = false;
	f->what = sgfsr & SMMU500_SGFSR_USF ? "USF" : "GLOBAL";
	return true;
}

u64 smmu500_cb_base(u64 base, u32 sidr1, u32 cb)
{
	u64 page = sidr1 & SMMU500_SIDR1_PAGESIZE ? 0x10000 : 0x1000;
	u64 global_pages = 2ull << SMMU500_SIDR1_NUMPAGENDXB(sidr1);

	return base + (global_pages + cb) * page;
}

u32 smmu500_oas_bits(u32 oas)
{
	static const u8 bits[16] = { 32, 36, 40, 42, 44, 48 };

	return bits[oas & 0xf];
}
