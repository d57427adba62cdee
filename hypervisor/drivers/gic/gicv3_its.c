/* SPDX-License-Identifier: Apache-2.0 */
/* The physical GICv3 ITS (gicv3_its.h); register layout: IHI 0069. */
#include "drivers/gic/gicv3_its.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/sysregs.h"
#include "drivers/iommu.h" /* IOMMU_DMA_MEM: read by physical address */
#include "lib/log.h"
#include "lib/spinlock.h"
#include "lib/string.h"

#define GITS_CTLR    0x0000
#define GITS_TYPER   0x0008
#define GITS_CBASER  0x0080
#define GITS_CWRITER 0x0088
#define GITS_CREADR  0x0090
#define GITS_BASER   0x0100 /* + 8n, n < 8 */

#define GITS_CTLR_ENABLED   BIT(0)
#define GITS_TYPER_VIRTUAL  BIT(1)
#define GITS_TYPER_PTA      BIT(19)
#define GITS_BASER_VALID    BIT(63)
#define GITS_BASER_TYPE(v)  (((v) >> 56) & 7)
#define GITS_BASER_ESIZE(v) ((((v) >> 48) & 0x1f) + 1)
#define BASER_DEVICES       1
#define BASER_VPES          2
#define BASER_COLLECTIONS   4
/* inner shareable, inner and outer write-back cacheable (read/write allocate) */
#define ITS_MEM_ATTR (7ull << 59 | 1ull << 10)
#define RD_MEM_ATTR  (7ull << 7 | 1ull << 10)

#define GICR_CTLR          0x0000
#define GICR_TYPER         0x0008
#define GICR_PROPBASER     0x0070
#define GICR_PENDBASER     0x0078
#define GICR_CTLR_LPIS     BIT(0)
#define GICR_TYPER_PLPIS   BIT(0)
#define GICR_TYPER_VLPIS   BIT(1)
#define GICR_VPROPBASER    0x20070 /* in the VLPI frame, the third */
#define GICR_VPENDBASER    0x20078
#define GICR_VPEND_VALID   BIT(63)
#define GICR_PENDBASER_PTZ BIT(62)

#define ID_BITS      14u /* LPIs 8192-16383 */
#define NR_LPI_IDS   (1u << ID_BITS)
#define CMD_QUEUE_SZ SZ_4K
#define DEV_TABLE_SZ (16 * SZ_4K)
#define ITT_BYTES    256u /* per device: up to 32 events of up to 8 bytes */
#define MAX_DEVS     64u  /* 8 VMs of 8 functions */
#define WAIT_LOOPS   10000000u

enum {
	CMD_MOVI = 0x01,
	CMD_INT = 0x03,
	CMD_CLEAR = 0x04,
	CMD_SYNC = 0x05,
	CMD_MAPD = 0x08,
	CMD_MAPC = 0x09,
	CMD_MAPTI = 0x0a,
	CMD_INV = 0x0c,
	CMD_INVALL = 0x0d,
	CMD_DISCARD = 0x0f,
	CMD_VMOVI = 0x21,
	CMD_VSYNC = 0x25,
	CMD_VMAPP = 0x29,
	CMD_VMAPTI = 0x2a,
	CMD_VINVALL = 0x2d
};
#define NO_DOORBELL 1023ull

/* the redistributor of each CPU (gicv3.c) */
extern u64 gicv3_rd[ARCH_MAX_CPUS];

static spinlock_t its_lock = SPINLOCK_INIT_RANK(LOCK_RANK_LEAF);
static u64 its_base, its_nlpis;
static u32 its_cwriter;
static u64 its_target[ARCH_MAX_CPUS]; /* MAPC RDbase of each CPU */
static u32 its_ndevs;
static u32 its_devid[MAX_DEVS];

/* the ITS's and the redistributors' memory: identity-mapped, zeroed by its_init */
static u8 its_cmds[CMD_QUEUE_SZ] IOMMU_DMA_MEM __attribute__((aligned(SZ_4K)));
static u8 its_devtab[DEV_TABLE_SZ] IOMMU_DMA_MEM __attribute__((aligned(SZ_4K)));
static u8 its_colltab[SZ_4K] IOMMU_DMA_MEM __attribute__((aligned(SZ_4K)));
static u8 its_itt[MAX_DEVS][ITT_BYTES] IOMMU_DMA_MEM __attribute__((aligned(256)));
/* LPI configuration: one byte per LPI from 8192 on */
static u8 its_prop[NR_LPI_IDS - GIC_LPI_BASE] IOMMU_DMA_MEM __attribute__((aligned(SZ_4K)));
/* pending tables: one bit per INTID, 64 KiB-aligned, one per CPU (the
 * rest of each 64 KiB is unused) */
static u8 its_pend[ARCH_MAX_CPUS][SZ_64K] IOMMU_DMA_MEM __attribute__((aligned(SZ_64K)));
#if IS_ENABLED(GICV4)
/* GICv4 (a platform with gic.v4): the vPE table, each CPU's vPE's virtual
 * pending table (as the physical ones), the vLPI configuration tables */
static bool its_v4;
static u8 its_vpetab[SZ_4K] IOMMU_DMA_MEM __attribute__((aligned(SZ_4K)));
static u8 its_vpend[ARCH_MAX_CPUS][SZ_64K] IOMMU_DMA_MEM __attribute__((aligned(SZ_64K)));
static u8 its_vprop[ITS_VLPI_TABLES][NR_LPI_IDS - GIC_LPI_BASE] IOMMU_DMA_MEM
    __attribute__((aligned(SZ_4K)));
#else
static const bool its_v4 = false; /* a GICv4 is used as a GICv3 */
#endif

static inline volatile u64 *its_reg(u64 off)
{
	return (volatile u64 *)(uintptr_t)(its_base + off);
}

static inline volatile u64 *rd_reg(u32 cpu, u64 off)
{
	return (volatile u64 *)(uintptr_t)(gicv3_rd[cpu] + off);
}

/* Sets up GITS_BASER<n> of type with a flat table of size bytes at pa:
 * false when its entries cannot cover need entries. */
static bool its_baser(u32 type, u64 pa, u64 size, u64 need)
{
	for (u32 n = 0; n < 8; n++) {
		u64 v = *its_reg(GITS_BASER + 8 * n);

		if (GITS_BASER_TYPE(v) != type)
			continue;
		if (need * GITS_BASER_ESIZE(v) > size)
			return false;
		*its_reg(GITS_BASER + 8 * n) = GITS_BASER_VALID | ITS_MEM_ATTR |
		                               (v & (0x1full << 48)) | (u64)type << 56 | pa |
		                               (size / SZ_4K - 1);
		return true;
	}
	return type == BASER_COLLECTIONS; /* none: collections in the ITS */
}

static void its_wait(u32 upto)
{
	for (u32 i = 0; i < WAIT_LOOPS; i++)
		if ((u32)*its_reg(GITS_CREADR) == upto)
			return;
	panic("its: command queue stuck at %lx (written up to %x)", *its_reg(GITS_CREADR), upto);
}

/* Writes one command and waits for the ITS to have read it; its_lock held. */
static void its_cmd_locked(u64 d0, u64 d1, u64 d2, u64 d3)
{
	u64 *c = (u64 *)(void *)(its_cmds + its_cwriter);

	c[0] = d0;
	c[1] = d1;
	c[2] = d2;
	c[3] = d3;
	its_cwriter = (its_cwriter + 32) % CMD_QUEUE_SZ;
	dsb(ish);
	*its_reg(GITS_CWRITER) = its_cwriter;
	its_wait(its_cwriter);
}

static void its_cmd(u64 d0, u64 d1, u64 d2, u32 sync_cpu)
{
	spin_lock(&its_lock);
	its_cmd_locked(d0, d1, d2, 0);
	if (sync_cpu < ARCH_MAX_CPUS)
		its_cmd_locked(CMD_SYNC, 0, its_target[sync_cpu] << 16, 0);
	spin_unlock(&its_lock);
}

#if IS_ENABLED(GICV4)
/* GICv4: the boot CPU's redistributor stands for the others (its_cpu_init checks) */
static void its_v4_init(u64 typer)
{
	for (u32 c = 0; c < ARCH_MAX_CPUS; c++)
		memset(its_vpend[c], 0, NR_LPI_IDS / 8);
	memset(its_vpetab, 0, sizeof(its_vpetab));
	memset(its_vprop, 0, sizeof(its_vprop));
	dsb(ish);
	its_v4 = (typer & GITS_TYPER_VIRTUAL) &&
	         (*rd_reg(cpu_index(), GICR_TYPER) & GICR_TYPER_VLPIS) &&
	         its_baser(BASER_VPES, (u64)(uintptr_t)its_vpetab, SZ_4K, ARCH_MAX_CPUS);
}
#else
static void its_v4_init(u64 typer)
{
	(void)typer;
}
#endif

bool its_init(u64 base, u32 nlpis, u32 max_devid)
{
	u64 typer;

	its_base = base;
	typer = *its_reg(GITS_TYPER);
	if (GIC_LPI_BASE + nlpis > NR_LPI_IDS || (((typer >> 8) & 0x1f) + 1) < ID_BITS) {
		log_info("its: %u LPIs are more than this driver's or the ITS's", nlpis);
		return false;
	}
	*(volatile u32 *)(uintptr_t)(base + GITS_CTLR) = 0; /* a 32-bit register */
	memset(its_cmds, 0, sizeof(its_cmds));
	memset(its_devtab, 0, sizeof(its_devtab));
	memset(its_colltab, 0, sizeof(its_colltab));
	memset(its_itt, 0, sizeof(its_itt));
	memset(its_prop, 0, sizeof(its_prop));
	for (u32 c = 0; c < ARCH_MAX_CPUS; c++)
		memset(its_pend[c], 0, NR_LPI_IDS / 8);
	dsb(ish);
	if (!its_baser(BASER_DEVICES, (u64)(uintptr_t)its_devtab, DEV_TABLE_SZ,
	               (u64)max_devid + 1) ||
	    !its_baser(BASER_COLLECTIONS, (u64)(uintptr_t)its_colltab, SZ_4K, ARCH_MAX_CPUS)) {
		log_info("its: device ID %x is beyond the device table", max_devid);
		return false;
	}
	its_v4_init(typer);
	*its_reg(GITS_CBASER) =
	    BIT(63) | ITS_MEM_ATTR | (u64)(uintptr_t)its_cmds | (CMD_QUEUE_SZ / SZ_4K - 1);
	*its_reg(GITS_CWRITER) = 0;
	its_cwriter = 0;
	its_nlpis = nlpis;
	dsb(ish);
	*(volatile u32 *)(uintptr_t)(base + GITS_CTLR) = GITS_CTLR_ENABLED;
	log_info("its: at %lx, LPIs %u-%u%s", base, GIC_LPI_BASE, GIC_LPI_BASE + nlpis - 1,
	         its_v4 ? ", GICv4 direct vLPI injection"
	         : (typer & GITS_TYPER_VIRTUAL) != 0
	             ? ", a GICv4 used as a GICv3 (built without GICV4)"
	             : "");
	return true;
}

void its_cpu_init(void)
{
	u32 cpu = cpu_index();
	u64 typer = *rd_reg(cpu, GICR_TYPER);

	if (!(typer & GICR_TYPER_PLPIS))
		panic("its: the redistributor of CPU %u takes no LPIs", cpu);
	if (its_v4 && !(typer & GICR_TYPER_VLPIS))
		panic("its: the redistributor of CPU %u takes no vLPIs, CPU 0's does", cpu);
	*rd_reg(cpu, GICR_PROPBASER) = RD_MEM_ATTR | (u64)(uintptr_t)its_prop | (ID_BITS - 1);
	*rd_reg(cpu, GICR_PENDBASER) =
	    RD_MEM_ATTR | GICR_PENDBASER_PTZ | (u64)(uintptr_t)its_pend[cpu];
	dsb(ish);
	*(volatile u32 *)(uintptr_t)(gicv3_rd[cpu] + GICR_CTLR) |= GICR_CTLR_LPIS;
	its_target[cpu] =
	    (*its_reg(GITS_TYPER) & GITS_TYPER_PTA) ? gicv3_rd[cpu] >> 16 : (typer >> 8) & 0xffff;
	its_cmd(CMD_MAPC, 0, BIT(63) | its_target[cpu] << 16 | cpu, cpu);
}

static u32 its_dev_index(u32 devid)
{
	for (u32 i = 0; i < its_ndevs; i++)
		if (its_devid[i] == devid)
			return i;
	if (its_ndevs == MAX_DEVS)
		panic("its: more than %u devices", MAX_DEVS);
	its_devid[its_ndevs] = devid;
	return its_ndevs++;
}

void its_map_device(u32 devid, u32 event_bits)
{
	u32 i = its_dev_index(devid);

	its_cmd(CMD_MAPD | (u64)devid << 32, event_bits - 1, BIT(63) | (u64)(uintptr_t)its_itt[i],
	        0);
}

void its_map_event(u32 devid, u32 event, u32 lpi, u32 cpu, u8 prop)
{
	its_lpi_config(lpi, prop);
	its_cmd(CMD_MAPTI | (u64)devid << 32, event | (u64)lpi << 32, cpu, ARCH_MAX_CPUS);
	its_cmd(CMD_INV | (u64)devid << 32, event, 0, cpu);
}

void its_lpi_config(u32 lpi, u8 prop)
{
	/* (with security, DS 0, the GIC reads the priority as a non-secure
	 * one: >> 1 | 0x80, IHI 0069 "LPI Configuration tables") */
	if (lpi >= GIC_LPI_BASE && lpi < GIC_LPI_BASE + its_nlpis)
		its_prop[lpi - GIC_LPI_BASE] = (u8)((prop & 0xfc) | (prop & 1));
	dsb(ish);
}

void its_invall(u32 cpu)
{
	its_cmd(CMD_INVALL, 0, cpu, cpu);
}

void its_unmap_event(u32 devid, u32 event, u32 lpi)
{
	its_prop[lpi - GIC_LPI_BASE] = 0;
	dsb(ish);
	its_cmd(CMD_INV | (u64)devid << 32, event, 0, ARCH_MAX_CPUS);
	its_cmd(CMD_DISCARD | (u64)devid << 32, event, 0, 0);
}

void its_move_event(u32 devid, u32 event, u32 cpu)
{
	its_cmd(CMD_MOVI | (u64)devid << 32, event, cpu, cpu);
}

void its_int(u32 devid, u32 event)
{
	its_cmd(CMD_INT | (u64)devid << 32, event, 0, ARCH_MAX_CPUS);
}

void its_clear(u32 devid, u32 event)
{
	its_cmd(CMD_CLEAR | (u64)devid << 32, event, 0, ARCH_MAX_CPUS);
}

#if IS_ENABLED(GICV4)
/* GICv4.0 direct injection: vPE ID = CPU index */

bool its_virtual(void)
{
	return its_v4;
}

static void its_vsync(u32 cpu)
{
	its_cmd(CMD_VSYNC, (u64)cpu << 32, 0, ARCH_MAX_CPUS);
}

void its_vpe_init(u32 table)
{
	u32 cpu = cpu_index();

	if (!its_v4 || table >= ITS_VLPI_TABLES)
		return;
	spin_lock(&its_lock);
	its_cmd_locked(CMD_VMAPP, (u64)cpu << 32, BIT(63) | its_target[cpu] << 16,
	               (u64)(uintptr_t)its_vpend[cpu] | (ID_BITS - 1));
	spin_unlock(&its_lock);
	its_vsync(cpu);
	*rd_reg(cpu, GICR_VPROPBASER) =
	    RD_MEM_ATTR | (u64)(uintptr_t)its_vprop[table] | (ID_BITS - 1);
	*rd_reg(cpu, GICR_VPENDBASER) =
	    GICR_VPEND_VALID | RD_MEM_ATTR | (u64)(uintptr_t)its_vpend[cpu];
	dsb(ish);
}

void its_vlpi_config(u32 table, u32 vintid, u8 prop)
{
	if (table < ITS_VLPI_TABLES && vintid >= GIC_LPI_BASE && vintid < NR_LPI_IDS)
		its_vprop[table][vintid - GIC_LPI_BASE] = (u8)((prop & 0xfc) | (prop & 1) | 2);
	dsb(ish);
}

void its_vmap_event(u32 devid, u32 event, u32 vintid, u32 cpu)
{
	its_cmd(CMD_VMAPTI | (u64)devid << 32, event | (u64)cpu << 32, vintid | NO_DOORBELL << 32,
	        ARCH_MAX_CPUS);
	its_inv(devid, event);
	its_vsync(cpu);
}

void its_vmove_event(u32 devid, u32 event, u32 cpu)
{
	its_cmd(CMD_VMOVI | (u64)devid << 32, event | (u64)cpu << 32, NO_DOORBELL << 32,
	        ARCH_MAX_CPUS);
	its_vsync(cpu);
}
#endif

void its_inv(u32 devid, u32 event)
{
	its_cmd(CMD_INV | (u64)devid << 32, event, 0, ARCH_MAX_CPUS);
}

#if IS_ENABLED(GICV4)
void its_vinvall(u32 cpu)
{
	its_cmd(CMD_VINVALL, (u64)cpu << 32, 0, ARCH_MAX_CPUS);
	its_vsync(cpu);
}
#endif
