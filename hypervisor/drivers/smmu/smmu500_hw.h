/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arm SMMUv2 architecture (IHI 0062) as the CoreLink MMU-500 implements it:
 * register offsets and the pure encoders of stream matching, context bank
 * and fault registers (smmu500_enc.c, host-tested).
 */
#ifndef DRIVERS_SMMU_SMMU500_HW_H
#define DRIVERS_SMMU_SMMU500_HW_H

#include "lib/types.h"

/* Global register space 0 (page 0) */
#define SMMU500_SCR0        0x000
#define SMMU500_SIDR0       0x020
#define SMMU500_SIDR1       0x024
#define SMMU500_SIDR2       0x028
#define SMMU500_SGFAR       0x040 /* 64-bit */
#define SMMU500_SGFSR       0x048
#define SMMU500_SGFSYNR0    0x050
#define SMMU500_SGFSYNR1    0x054
#define SMMU500_TLBIVMID    0x064
#define SMMU500_TLBIALLNSNH 0x068
#define SMMU500_TLBIALLH    0x06c
#define SMMU500_STLBGSYNC   0x070
#define SMMU500_STLBGSTATUS 0x074
#define SMMU500_SMR(n)      (0x800 + 4 * (n))
#define SMMU500_S2CR(n)     (0xc00 + 4 * (n))
/* Global register space 1 (page 1) */
#define SMMU500_CBAR(n)      (0x000 + 4 * (n))
#define SMMU500_CBFRSYNRA(n) (0x400 + 4 * (n))
#define SMMU500_CBA2R(n)     (0x800 + 4 * (n))
/* Translation context bank n (its own page in the upper half) */
#define SMMU500_CB_SCTLR  0x000
#define SMMU500_CB_TTBR0  0x020 /* 64-bit */
#define SMMU500_CB_TCR    0x030
#define SMMU500_CB_FSR    0x058
#define SMMU500_CB_FAR    0x060 /* 64-bit */
#define SMMU500_CB_FSYNR0 0x068

#define SMMU500_SCR0_CLIENTPD (1u << 0)  /* 1: every client bypasses the SMMU */
#define SMMU500_SCR0_GFRE     (1u << 1)  /* global faults abort the transaction */
#define SMMU500_SCR0_GFIE     (1u << 2)  /* global fault interrupt */
#define SMMU500_SCR0_GCFGFRE  (1u << 4)  /* global configuration faults abort */
#define SMMU500_SCR0_GCFGFIE  (1u << 5)  /* ... and interrupt */
#define SMMU500_SCR0_USFCFG   (1u << 10) /* an unmatched stream faults */
#define SMMU500_SCR0_VMIDPNE  (1u << 11)
#define SMMU500_SCR0_PTM      (1u << 12) /* broadcast TLB maintenance is not for the SMMU */
#define SMMU500_SCR0_SMCFCFG  (1u << 21) /* a stream matching two SMRs faults */

#define SMMU500_SIDR0_NUMSMRG(v)     ((v)&0xff)
#define SMMU500_SIDR0_SMS            (1u << 27)
#define SMMU500_SIDR0_S2TS           (1u << 30)
#define SMMU500_SIDR1_NUMCB(v)       ((v)&0xff)
#define SMMU500_SIDR1_NUMPAGENDXB(v) (((v) >> 28) & 7)
#define SMMU500_SIDR1_PAGESIZE       (1u << 31) /* 64 KiB pages */
#define SMMU500_SIDR2_OAS(v)         (((v) >> 4) & 0xf)
#define SMMU500_SIDR2_PTFS_4K        (1u << 12) /* AArch64 4 KiB granule tables */

#define SMMU500_SMR_VALID  (1u << 31)
#define SMMU500_S2CR_TRANS 0u         /* TYPE: translate in context bank CBNDX */
#define SMMU500_S2CR_FAULT (2u << 16) /* TYPE: fault */
#define SMMU500_CBA2R_VA64 (1u << 0)
#define SMMU500_SCTLR_M    (1u << 0)
#define SMMU500_SCTLR_CFRE (1u << 5) /* context fault: abort (report) */
#define SMMU500_SCTLR_CFIE (1u << 6) /* context fault interrupt */
#define SMMU500_FSR_FAULTS 0x1feu    /* TF AFF PF EF TLBMCF TLBLKF ASF UUT */
#define SMMU500_FSR_MULTI  (1u << 31)
#define SMMU500_SGFSR_USF  (1u << 1) /* unidentified stream */

/* Encoders. */
u32 smmu500_smr(u32 sid);                /* match exactly sid (mask 0) */
u32 smmu500_s2cr(u32 cb);                /* translate in context bank cb; ~0u: fault */
u32 smmu500_cbar_s2(u16 vmid, u32 irpt); /* stage-2 context of vmid, interrupt irpt */
u32 smmu500_cb_tcr(u64 vtcr);            /* stage-2 TCR from VTCR_EL2 */
u32 smmu500_cb_sctlr(void);              /* M | CFRE | CFIE */

/* A decoded context-bank fault (FSR, FSYNR0, FAR, CBFRSYNRA). */
struct smmu500_fault {
	u32 sid;
	u64 addr;
	bool write;
	bool addr_valid;
	const char *what;
};
/* Returns false when fsr reports no fault. */
bool smmu500_cb_fault_decode(u32 fsr, u32 fsynr0, u64 far, u32 cbfrsynra, struct smmu500_fault *f);
/* Global fault (sGFSR, sGFSYNR1, sGFAR): false when none. */
bool smmu500_global_fault_decode(u32 sgfsr, u32 sgfsynr1, u64 sgfar, struct smmu500_fault *f);
/* The translation context banks' base: page (2^(NUMPAGENDXB + 1)) after base. */
u64 smmu500_cb_base(u64 base, u32 sidr1, u32 cb);
u32 smmu500_oas_bits(u32 oas);

#endif
