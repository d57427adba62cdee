/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arm SMMUv3 (IHI 0070): register offsets, field layouts and the pure
 * encoders and decoders of stream table entries, commands and event
 * records (smmuv3_enc.c, host-tested under ASan/UBSan and fuzzed).
 */
#ifndef DRIVERS_SMMU_SMMUV3_HW_H
#define DRIVERS_SMMU_SMMUV3_HW_H

#include "lib/types.h"

/* Page 0 registers */
#define SMMUV3_IDR0            0x00
#define SMMUV3_IDR1            0x04
#define SMMUV3_IDR5            0x14
#define SMMUV3_CR0             0x20
#define SMMUV3_CR0ACK          0x24
#define SMMUV3_CR1             0x28
#define SMMUV3_CR2             0x2c
#define SMMUV3_GBPA            0x44
#define SMMUV3_IRQ_CTRL        0x50
#define SMMUV3_IRQ_CTRLACK     0x54
#define SMMUV3_GERROR          0x60
#define SMMUV3_GERRORN         0x64
#define SMMUV3_GERROR_IRQ_CFG0 0x68 /* 64-bit: MSI address, 0 = wired interrupt */
#define SMMUV3_STRTAB_BASE     0x80 /* 64-bit */
#define SMMUV3_STRTAB_BASE_CFG 0x88
#define SMMUV3_CMDQ_BASE       0x90 /* 64-bit */
#define SMMUV3_CMDQ_PROD       0x98
#define SMMUV3_CMDQ_CONS       0x9c
#define SMMUV3_EVENTQ_BASE     0xa0 /* 64-bit */
#define SMMUV3_EVENTQ_IRQ_CFG0 0xb0 /* 64-bit */
/* Page 1 (base + 64 KiB) */
#define SMMUV3_EVENTQ_PROD 0x100a8
#define SMMUV3_EVENTQ_CONS 0x100ac

#define SMMUV3_IDR0_S2P         (1u << 0)
#define SMMUV3_IDR0_S1P         (1u << 1)
#define SMMUV3_IDR0_TTF(v)      (((v) >> 2) & 3) /* bit 1: AArch64 tables */
#define SMMUV3_IDR0_COHACC      (1u << 4)
#define SMMUV3_IDR0_VMID16      (1u << 18)
#define SMMUV3_IDR0_ST_LEVEL(v) (((v) >> 27) & 3) /* 1: two-level stream tables */
#define SMMUV3_IDR1_SIDSIZE(v)  ((v)&0x3f)
#define SMMUV3_IDR1_EVENTQS(v)  (((v) >> 16) & 0x1f)
#define SMMUV3_IDR1_CMDQS(v)    (((v) >> 21) & 0x1f)
#define SMMUV3_IDR5_OAS(v)      ((v)&7)
#define SMMUV3_IDR5_GRAN4K      (1u << 4)

#define SMMUV3_CR0_SMMUEN   (1u << 0)
#define SMMUV3_CR0_EVENTQEN (1u << 2)
#define SMMUV3_CR0_CMDQEN   (1u << 3)
/* CR1: tables and queues walked write-back cacheable, inner shareable */
#define SMMUV3_CR1_WB_ISH      (1u | 1u << 2 | 3u << 4 | 1u << 6 | 1u << 8 | 3u << 10)
#define SMMUV3_CR2_RECINVSID   (1u << 1) /* record C_BAD_STREAMID */
#define SMMUV3_CR2_PTM         (1u << 2) /* broadcast TLB maintenance is not for the SMMU */
#define SMMUV3_GBPA_ABORT      (1u << 20)
#define SMMUV3_GBPA_UPDATE     (1u << 31)
#define SMMUV3_IRQ_GERROR      (1u << 0)
#define SMMUV3_IRQ_EVENTQ      (1u << 2)
#define SMMUV3_GERROR_CMDQ     (1u << 0)
#define SMMUV3_GERROR_EVTQ_ABT (1u << 2)
#define SMMUV3_Q_RA            BIT(62) /* read/write-allocate hint of queue and table bases */
#define SMMUV3_Q_OVF           (1u << 31)
#define SMMUV3_CONS_ERR(v)     (((v) >> 24) & 0x7f)
#define SMMUV3_STRTAB_FMT_2L   (1u << 16)

/* Stream table entry: 8 doublewords */
#define SMMUV3_STE_DWORDS     8
#define SMMUV3_STE_V          BIT(0)
#define SMMUV3_STE_CFG_ABORT  (0ull << 1)
#define SMMUV3_STE_CFG_S2     (6ull << 1) /* stage 1 bypass, stage 2 translate */
#define SMMUV3_STE_CFG_NESTED (7ull << 1) /* stage 1 and stage 2 translate */

/* Context descriptor: 8 doublewords; stage-1 tables of 512 descriptors */
#define SMMUV3_CD_DWORDS   8
#define SMMUV3_S1_ENTRIES  512
#define SMMUV3_STE_CFG(d0) (((d0) >> 1) & 7)

/* Commands: 2 doublewords */
#define SMMUV3_CMD_CFGI_STE       0x03
#define SMMUV3_CMD_CFGI_ALL       0x04 /* CFGI_STE_RANGE with Range 31 */
#define SMMUV3_CMD_TLBI_S12_VMALL 0x28
#define SMMUV3_CMD_TLBI_NSNH_ALL  0x30
#define SMMUV3_CMD_SYNC           0x46

/* Event records: 4 doublewords */
#define SMMUV3_EVT_DWORDS             4
#define SMMUV3_EVT_F_UUT              0x01
#define SMMUV3_EVT_C_BAD_STREAMID     0x02
#define SMMUV3_EVT_F_STE_FETCH        0x03
#define SMMUV3_EVT_C_BAD_STE          0x04
#define SMMUV3_EVT_F_STREAM_DISABLED  0x06
#define SMMUV3_EVT_F_TRANSL_FORBIDDEN 0x07
#define SMMUV3_EVT_F_WALK_EABT        0x0b
#define SMMUV3_EVT_F_TRANSLATION      0x10
#define SMMUV3_EVT_F_ADDR_SIZE        0x11
#define SMMUV3_EVT_F_ACCESS           0x12
#define SMMUV3_EVT_F_PERMISSION       0x13

/* The stage-2 STE of a VM: stage-2 translation through the tables at root
 * with the VMID and the VTCR_EL2 fields (T0SZ, SL0, IRGN0, ORGN0, SH0, TG0,
 * PS), AArch64 tables, faults recorded (S2R), incoming shareability. */
void smmuv3_ste_s2(u64 ste[SMMUV3_STE_DWORDS], u64 root, u64 vtcr, u16 vmid);
/* The same with stage 1 in front (Config 0b111): the single context
 * descriptor at IPA cd_ipa (S1Fmt linear, S1CDMax 0; it and its tables are
 * fetched through stage 2), fetched write-back, inner shareable. */
void smmuv3_ste_nested(u64 ste[SMMUV3_STE_DWORDS], u64 root, u64 vtcr, u16 vmid, u64 cd_ipa);
/* The identity stage 1 (docs/dma.md, "Addresses beyond the IPA space"):
 * a context descriptor whose TTB0 (IPA tt_ipa) covers the 39-bit input
 * range (T0SZ 25, 4 KiB granule, walks write-back inner shareable, TTB1
 * disabled, 40-bit IPS, ASID 0, MAIR attribute 0 normal write-back), with
 * faults recorded (R) and terminated (A); and its level-1 table: 512 1 GiB
 * blocks, each mapping its input addresses to the same IPAs, read/write,
 * normal write-back, inner shareable, accessed. An input address beyond
 * 39 bits is then a stage-1 translation fault, which the SMMU records. */
void smmuv3_cd_identity(u64 cd[SMMUV3_CD_DWORDS], u64 tt_ipa);
void smmuv3_s1_identity(u64 table[SMMUV3_S1_ENTRIES]);
/* A valid STE that aborts every transaction (records nothing). */
void smmuv3_ste_abort(u64 ste[SMMUV3_STE_DWORDS]);
/* Level-1 descriptor of a two-level stream table: 2^split STEs at l2. */
u64 smmuv3_l1_desc(u64 l2, u32 split);

/* Command encoders. */
void smmuv3_cmd_cfgi_ste(u64 cmd[2], u32 sid);
void smmuv3_cmd_cfgi_all(u64 cmd[2]);
void smmuv3_cmd_tlbi_s12_vmall(u64 cmd[2], u16 vmid);
void smmuv3_cmd_tlbi_nsnh_all(u64 cmd[2]);
void smmuv3_cmd_sync(u64 cmd[2]); /* completion signalled by CMDQ_CONS only */

/* Queue pointers: log2 bits of index, then the wrap bit. */
static inline u32 smmuv3_q_idx(u32 p, u32 log2)
{
	return p & ((1u << log2) - 1);
}
static inline u32 smmuv3_q_wrap(u32 p, u32 log2)
{
	return (p >> log2) & 1;
}
static inline u32 smmuv3_q_inc(u32 p, u32 log2)
{
	return (p + 1) & ((2u << log2) - 1);
}
static inline bool smmuv3_q_empty(u32 prod, u32 cons, u32 log2)
{
	return (prod & ((2u << log2) - 1)) == (cons & ((2u << log2) - 1));
}
static inline bool smmuv3_q_full(u32 prod, u32 cons, u32 log2)
{
	return smmuv3_q_idx(prod, log2) == smmuv3_q_idx(cons, log2) &&
	       smmuv3_q_wrap(prod, log2) != smmuv3_q_wrap(cons, log2);
}

/* Event queue overflow (IHI 0070, "Queue overflow"): when a record is
 * discarded because the queue is full and no overflow is outstanding
 * (EVENTQ_PROD.OVFLG == EVENTQ_CONS.OVACKFLG), the SMMU toggles OVFLG;
 * software acknowledges by writing OVACKFLG equal to OVFLG. Until then
 * further discards do not toggle it again: one overflow is one episode. */
static inline bool smmuv3_evtq_overflowed(u32 prod, u32 cons)
{
	return ((prod ^ cons) & SMMUV3_Q_OVF) != 0;
}
/* cons with its OVACKFLG made equal to prod's OVFLG (the acknowledgement). */
static inline u32 smmuv3_evtq_ack(u32 prod, u32 cons)
{
	return (cons & ~SMMUV3_Q_OVF) | (prod & SMMUV3_Q_OVF);
}

/* A decoded event record. */
struct smmuv3_event {
	u32 type;
	u32 sid;
	u64 addr;        /* input address */
	bool write;      /* RnW = 0 */
	bool addr_valid; /* a translation fault: addr and write are meaningful */
	bool stage2;     /* the fault came from stage 2 */
};
void smmuv3_event_decode(const u64 evt[SMMUV3_EVT_DWORDS], struct smmuv3_event *e);
/* The event's architectural name ("F_TRANSLATION", ...; "UNKNOWN" else). */
const char *smmuv3_event_name(u32 type);
/* The output address size of an IDR5.OAS value, in bits (0: reserved). */
u32 smmuv3_oas_bits(u32 oas);

#endif
