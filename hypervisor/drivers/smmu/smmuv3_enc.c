/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SMMUv3 STE, command and event formats (IHI 0070, "Stream Table Entry",
 * "Commands", "Event records"). Pure: host-tested (tests/host/test_smmuv3.c)
 * and fuzzed (tests/host/fuzz_smmu_event.c).
 */
#include "drivers/smmu/smmuv3_hw.h"

#define VTCR_T0SZ(v)  ((v)&0x3full)
#define VTCR_SL0(v)   (((v) >> 6) & 3ull)
#define VTCR_IRGN0(v) (((v) >> 8) & 3ull)
#define VTCR_ORGN0(v) (((v) >> 10) & 3ull)
#define VTCR_SH0(v)   (((v) >> 12) & 3ull)
#define VTCR_TG0(v)   (((v) >> 14) & 3ull)
#define VTCR_PS(v)    (((v) >> 16) & 7ull)

/* STE doubleword 1: SHCFG [45:44] = 0b01, incoming shareability */
#define STE1_SHCFG_INCOMING (1ull << 44)
/* STE doubleword 2 (STE bits [191:128]) */
#define STE2_S2VMID(x) ((u64)(x))
#define STE2_S2T0SZ(x) ((x) << 32)
#define STE2_S2SL0(x)  ((x) << 38)
#define STE2_S2IR0(x)  ((x) << 40)
#define STE2_S2OR0(x)  ((x) << 42)
#define STE2_S2SH0(x)  ((x) << 44)
#define STE2_S2TG(x)   ((x) << 46)
#define STE2_S2PS(x)   ((x) << 48)
#define STE2_S2AA64    BIT(51)
#define STE2_S2R       BIT(58)
/* STE doubleword 3: S2TTB [51:4] */
#define STE3_S2TTB_MASK GENMASK(51, 4)

void smmuv3_ste_s2(u64 ste[SMMUV3_STE_DWORDS], u64 root, u64 vtcr, u16 vmid)
{
	for (u32 i = 0; i < SMMUV3_STE_DWORDS; i++)
		ste[i] = 0;
	ste[0] = SMMUV3_STE_V | SMMUV3_STE_CFG_S2;
	ste[1] = STE1_SHCFG_INCOMING;
	ste[2] = STE2_S2VMID(vmid) | STE2_S2T0SZ(VTCR_T0SZ(vtcr)) | STE2_S2SL0(VTCR_SL0(vtcr)) |
	         STE2_S2IR0(VTCR_IRGN0(vtcr)) | STE2_S2OR0(VTCR_ORGN0(vtcr)) |
	         STE2_S2SH0(VTCR_SH0(vtcr)) | STE2_S2TG(VTCR_TG0(vtcr)) | STE2_S2PS(VTCR_PS(vtcr)) |
	         STE2_S2AA64 | STE2_S2R;
	ste[3] = root & STE3_S2TTB_MASK;
}

/* STE doubleword 0: S1ContextPtr [51:6]; doubleword 1: S1CIR [3:2],
 * S1COR [5:4] (0b01: write-back), S1CSH [7:6] (0b11: inner shareable) */
#define STE0_S1CTXPTR_MASK GENMASK(51, 6)
#define STE1_S1_CD_WB_ISH  ((1ull << 2) | (1ull << 4) | (3ull << 6))

void smmuv3_ste_nested(u64 ste[SMMUV3_STE_DWORDS], u64 root, u64 vtcr, u16 vmid, u64 cd_ipa)
{
	smmuv3_ste_s2(ste, root, vtcr, vmid);
	ste[0] = SMMUV3_STE_V | SMMUV3_STE_CFG_NESTED | (cd_ipa & STE0_S1CTXPTR_MASK);
	ste[1] |= STE1_S1_CD_WB_ISH;
}

/* CD doubleword 0 */
#define CD0_T0SZ(x)  ((u64)(x))
#define CD0_IR0_WB   (1ull << 8)
#define CD0_OR0_WB   (1ull << 10)
#define CD0_SH0_ISH  (3ull << 12)
#define CD0_EPD1     BIT(30)
#define CD0_V        BIT(31)
#define CD0_IPS(x)   ((u64)(x) << 32)
#define CD0_AA64     BIT(41)
#define CD0_R        BIT(45)
#define CD0_A        BIT(46)
#define CD1_TTB_MASK GENMASK(51, 4)
#define CD3_MAIR_WB  0xffull /* attribute 0: normal, write-back read/write-allocate */
/* stage-1 level-1 block: AttrIndx [4:2] 0, AP [7:6] 0b01 (read/write), SH
 * [9:8] inner shareable, AF [10] */
#define S1_BLOCK_RW_WB (1ull | (1ull << 6) | (3ull << 8) | BIT(10))

void smmuv3_cd_identity(u64 cd[SMMUV3_CD_DWORDS], u64 tt_ipa)
{
	for (u32 i = 0; i < SMMUV3_CD_DWORDS; i++)
		cd[i] = 0;
	/* TG0 0b00: 4 KiB; IPS 0b010: 40 bits (the IPA space is 39) */
	cd[0] = CD0_T0SZ(25) | CD0_IR0_WB | CD0_OR0_WB | CD0_SH0_ISH | CD0_EPD1 | CD0_V |
	        CD0_IPS(2) | CD0_AA64 | CD0_R | CD0_A;
	cd[1] = tt_ipa & CD1_TTB_MASK;
	cd[3] = CD3_MAIR_WB;
}

void smmuv3_s1_identity(u64 table[SMMUV3_S1_ENTRIES])
{
	for (u64 i = 0; i < SMMUV3_S1_ENTRIES; i++)
		table[i] = (i << 30) | S1_BLOCK_RW_WB;
}

void smmuv3_ste_abort(u64 ste[SMMUV3_STE_DWORDS])
{
	for (u32 i = 0; i < SMMUV3_STE_DWORDS; i++)
		ste[i] = 0;
	ste[0] = SMMUV3_STE_V | SMMUV3_STE_CFG_ABORT;
}

u64 smmuv3_l1_desc(u64 l2, u32 split)
{
	/* Span [4:0] = split + 1 (2^(span - 1) STEs), L2Ptr [51:6] */
	return (l2 & GENMASK(51, 6)) | ((u64)(split + 1) & 0x1f);
}

void smmuv3_cmd_cfgi_ste(u64 cmd[2], u32 sid)
{
	cmd[0] = SMMUV3_CMD_CFGI_STE | ((u64)sid << 32);
	cmd[1] = 1; /* Leaf: only the STE, no context descriptors */
}

void smmuv3_cmd_cfgi_all(u64 cmd[2])
{
	cmd[0] = SMMUV3_CMD_CFGI_ALL;
	cmd[1] = 31; /* Range 31: every stream */
}

void smmuv3_cmd_tlbi_s12_vmall(u64 cmd[2], u16 vmid)
{
	cmd[0] = SMMUV3_CMD_TLBI_S12_VMALL | ((u64)vmid << 32);
	cmd[1] = 0;
}

void smmuv3_cmd_tlbi_nsnh_all(u64 cmd[2])
{
	cmd[0] = SMMUV3_CMD_TLBI_NSNH_ALL;
	cmd[1] = 0;
}

void smmuv3_cmd_sync(u64 cmd[2])
{
	cmd[0] = SMMUV3_CMD_SYNC; /* CS = SIG_NONE [13:12] = 0: the consumer index tells */
	cmd[1] = 0;
}

const char *smmuv3_event_name(u32 type)
{
	switch (type) {
	case SMMUV3_EVT_F_UUT:
		return "F_UUT";
	case SMMUV3_EVT_C_BAD_STREAMID:
		return "C_BAD_STREAMID";
	case SMMUV3_EVT_F_STE_FETCH:
		return "F_STE_FETCH";
	case SMMUV3_EVT_C_BAD_STE:
		return "C_BAD_STE";
	case SMMUV3_EVT_F_STREAM_DISABLED:
		return "F_STREAM_DISABLED";
	case SMMUV3_EVT_F_TRANSL_FORBIDDEN:
		return "F_TRANSL_FORBIDDEN";
	case SMMUV3_EVT_F_WALK_EABT:
		return "F_WALK_EABT";
	case SMMUV3_EVT_F_TRANSLATION:
		return "F_TRANSLATION";
	case SMMUV3_EVT_F_ADDR_SIZE:
		return "F_ADDR_SIZE";
	case SMMUV3_EVT_F_ACCESS:
		return "F_ACCESS";
	case SMMUV3_EVT_F_PERMISSION:
		return "F_PERMISSION";
	default:
		return "UNKNOWN";
	}
}

void smmuv3_event_decode(const u64 evt[SMMUV3_EVT_DWORDS], struct smmuv3_event *e)
{
	e->type = (u32)(evt[0] & 0xff);
	e->sid = (u32)(evt[0] >> 32);
	e->addr = 0;
	e->write = false;
	e->addr_valid = false;
	e->stage2 = false;
	switch (e->type) {
	case SMMUV3_EVT_F_TRANSLATION:
	case SMMUV3_EVT_F_ADDR_SIZE:
	case SMMUV3_EVT_F_ACCESS:
	case SMMUV3_EVT_F_PERMISSION:
	case SMMUV3_EVT_F_WALK_EABT:
	case SMMUV3_EVT_F_UUT:
	case SMMUV3_EVT_F_TRANSL_FORBIDDEN:
		/* doubleword 1: RnW [35], S2 [39]; doubleword 2: InputAddr */
		e->write = !(evt[1] & BIT(35));
		e->stage2 = (evt[1] & BIT(39)) != 0;
		e->addr = evt[2];
		e->addr_valid = true;
		break;
	default:
		break;
	}
}

u32 smmuv3_oas_bits(u32 oas)
{
	static const u8 bits[8] = { 32, 36, 40, 42, 44, 48, 52, 0 };

	return bits[oas & 7];
}
