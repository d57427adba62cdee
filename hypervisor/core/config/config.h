/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/config (docs/ARCHITECTURE.md "Core"): the types of the
 * static configuration that the generated config.c defines. Calls: drivers,
 * lib.
 */
/*
 * The static configuration the hypervisor runs: generated as C by
 * `bulkhead build` (tools: bulkhead/gen_c.py) into <out>/config.c, which
 * defines `cfg_system` and the static pools it points to. Everything the
 * hypervisor allocates is sized here; there is no heap.
 */
#ifndef CORE_CONFIG_H
#define CORE_CONFIG_H

#include "drivers/cpu_enable/cpu_enable.h"
#include "drivers/gic/gic.h"
#include "drivers/iommu.h"
#include "drivers/power_off/power_off.h"
#include "drivers/uart/uart.h"
#include "lib/types.h"

#define CFG_MAX_CPUS   8
#define CFG_MAX_RAM    4 /* DRAM banks (MAX_RAM_BANKS in bulkhead/model.py) */
#define CFG_PT_ENTRIES 512

/* One page of a stage-2 (or EL2) translation table. */
typedef struct {
	u64 e[CFG_PT_ENTRIES];
} __attribute__((aligned(4096))) cfg_pt_page_t;

/*
 * A page-color selection (hypervisor/isolation/color.h): a physical page at
 * address a is compliant when (a & mask) equals one of the values. Colored
 * memory is the first size / 4 KiB compliant pages at or after a span
 * start chosen by the toolchain; VMs with disjoint selections may share a
 * span (their pages interleave).
 */
struct cfg_color {
	u64 mask;
	u32 nvalues;
	const u64 *values;
};

/* A guest-physical RAM region backed by host-physical memory. */
struct cfg_mem {
	u64 ipa;
	u64 pa; /* start of the region, or of its span when colored */
	u64 size;
	const struct cfg_color *color; /* NULL: physically contiguous */
	u64 span_end;                  /* colored: end of the span (last page + 4 KiB) */
};

/* A passthrough MMIO region (mapped as Device-nGnRE at stage 2). */
struct cfg_mmio {
	const char *name;
	u64 ipa;
	u64 pa;
	u64 size;
};

/*
 * A PCI function passed through to a VM (core/pci/pci.c, core/pci/vpci.c): found
 * at bdf by the boot-time enumeration, checked against vendor:device, its
 * BARs assigned inside the VM's window and mapped at IPA = PA; intx is the
 * SPI its pin reaches at the host bridge (also in the VM's irqs), 0: none.
 * msi_doorbell is the IPA of the VM's virtual ITS's GITS_TRANSLATER: its MSI
 * and MSI-X capabilities are shown and an MSI address may be only that (or
 * 0); 0: they are hidden, INTx only (docs/pci.md "MSI and MSI-X").
 */
struct cfg_pci_func {
	const char *name; /* "00:02.0 edu", for messages */
	u32 bdf;          /* bus << 8 | device << 3 | function */
	u16 vendor;
	u16 device;
	u32 intx;
	u64 msi_doorbell;
	u32 devid; /* its ITS DeviceID: the requester ID its MSIs (and DMA) carry, its own bdf or
	            * the alias of the conventional bridge it is behind (docs/pci.md "Bridges") */
};

/* The ECAM host bridge the hypervisor owns (platform file `pci:`). */
struct cfg_pci {
	u64 ecam_base; /* bus 0's configuration space */
	u32 bus_first; /* the bus range enumerated */
	u32 bus_last;
	u64 vm_ecam_ipa; /* where each VM sees its filtered ECAM (buses bus_first..bus_last) */
	u32 intx[4];     /* SPIs of INTA-INTD at the host bridge (swizzled by slot) */
};

/* A file staged by QEMU's loader at src_pa, copied to dst_ipa at VM start. */
struct cfg_image {
	const char *name;
	u64 src_pa;
	u64 dst_ipa;
	u64 size;
	/* In uncolored, contiguous VM memory: the boot ELF's loader puts it at
	 * its final address (payload.h PAYLOAD_PLACED), so the first load skips
	 * it; a reset copies it from src_pa as any other. */
	bool placed;
};

/* A shared-memory region as one VM sees it. */
struct cfg_shmem_map {
	u32 shmem;        /* index into cfg_system.shmems */
	u64 ipa;          /* where this VM sees it */
	u32 doorbell_irq; /* virtual INTID raised in this VM by a peer's ring; 0: none */
};

/* A virtio-mmio device of a client VM, bridged by the hypervisor to its
 * shared I/O region (core/virtio/virtio.c, docs/io.md "VirtIO"). */
struct cfg_virtio {
	u32 type;    /* virtio device ID: 1 network, 2 block */
	u64 ipa;     /* its transport page */
	u32 irq;     /* its SPI */
	u32 shm;     /* the client's region: index into its cfg_vm.shmem */
	u32 queue;   /* slots per ring of the region */
	u8 mac[6];   /* network: its MAC address */
	u64 sectors; /* block: its capacity (its region of the shared disk) */
};

struct cfg_shmem {
	const char *name;
	u64 pa; /* start of the region, or of its span when colored */
	u64 size;
	const struct cfg_color *color; /* NULL: physically contiguous */
};

#define CFG_VM_FAULT_STOP (1u << 0) /* stop the VM on a fault instead of injecting */
#define CFG_VM_MANAGER \
	(1u << 1) /* may change other VMs' budgets and QoS (BH_HC_BW_SET, BH_HC_QOS_SET) */
#define CFG_VM_IDA_START  (1u << 2) /* prepare its LLC sets when vCPU 0 starts (color_ida.c) */
#define CFG_VM_IDA_PERIOD (1u << 3) /* ... and at every regulation period start of each vCPU */
/* drives a DMA-capable device no SMMU confines (dma_isolation: none): not recolorable */
#define CFG_VM_DMA_UNCONFINED (1u << 4)
#define CFG_VM_INTROSPECTION \
	(1u << 5) /* may learn host physical addresses (BH_HC_IPA_INFO, BH_HC_S2_INFO) */
/* interrupts: direct: the guest owns the physical GIC CPU interface
 * (HCR_EL2.IMO/FMO clear), the hypervisor's events come through SDEI
 * (docs/interrupts.md, core/vcpu/irq_direct.c) */
#define CFG_VM_DIRECT (1u << 6)

/*
 * Memory bandwidth reservation of one VM (hypervisor/isolation/bw.c): each
 * vCPU may cause at most vcpu_budget events per period; the EL2 timer marks
 * the periods, a PMU counter reserved for the hypervisor counts the events.
 */
#define CFG_BW_MAX_EVENTS 2
#define CFG_BW_CYCLES     (1u << 0) /* count PMCCNTR_EL0 (cycles), not an event counter */
#define CFG_BW_RECLAIM    (1u << 1) /* vCPUs may use what their siblings leave unused */

struct cfg_bw {
	u32 period_us;
	u64 period_ticks; /* period_us in generic-timer ticks at cfg_bw_system.counter_hz,
	                     rounded down (the hypervisor keeps the fraction) */
	u32 flags;
	u32 nevents;                   /* 1 (read_write, or cycles) or 2 (read, write) */
	u32 event[CFG_BW_MAX_EVENTS];  /* PMU event numbers */
	u64 budget[CFG_BW_MAX_EVENTS]; /* events per period for the whole VM */
	const u32 *vcpu_budget;        /* [e * ncpus + i]: events per period of vCPU i, event e */
	const u32 *vcpu_event; /* [e * ncpus + i]: the event vCPU i counts for channel e (its
	                          core type's); NULL: event[e] on every vCPU */
	const u32 *weights;    /* percent per vCPU (NULL: even split); re-applied by BH_HC_BW_SET */
};

#define CFG_BW_SPARE_SHARING (1u << 0) /* once every regulated vCPU is throttled, all run */

struct cfg_bw_system {
	u32 flags;
	u32 overflow_poll_us; /* event counters: also look every this many us (late overflow
	                         interrupts, QEMU); 0: never */
	/* A CPU that does not implement the VMs' event (PMCEID_EL0: QEMU) counts
	 * fallback_event instead, looking every fallback_poll_us for its
	 * overflow (its interrupt may not be wired); fallback_event 0: none. */
	u32 fallback_event;
	u32 fallback_poll_us;
	u64 counter_hz;       /* generic-timer frequency period_ticks assumes */
	u32 regulator_events; /* the platform's forward-progress floor: the least events per
	                         period a vCPU's share may be (BH_HC_BW_SET, as `check`) */
};

struct cfg_vm {
	const char *name;
	u32 ncpus;
	const u32 *cpus; /* vCPU i runs on physical CPU cpus[i] (index into platform cpus) */
	u64 entry;       /* IPA of the first instruction of vCPU 0 */
	u64 boot_arg;    /* x0 for vCPU 0 (DTB or parameter-block IPA, or 0) */
	u32 flags;

	u32 nmem;
	const struct cfg_mem *mem;
	u32 nmmio;
	const struct cfg_mmio *mmio;
	u32 nirq;
	const u32 *irqs; /* passthrough physical INTIDs (same INTID in the VM) */
	u32 nimage;
	const struct cfg_image *images;
	u32 nshmem;
	const struct cfg_shmem_map *shmem;

	u64 console_ipa; /* virtual PL011; 0: none */
	u32 console_irq; /* its virtual INTID (a direct VM: a spare SPI, docs/interrupts.md) */
	u32 pmu_irq;     /* a direct VM: the spare PPI its guest PMU overflow interrupt is; 0:
	                    the platform's PMU PPI (through a list register) */

	u32 pt_pages; /* stage-2 table pool for this VM */
	cfg_pt_page_t *pt_pool;

	/* Colored VMs: the stage-2 tables are the first pt_pages pages of
	 * pt_color at or after pt_pa (pt_pool is then NULL). */
	const struct cfg_color *pt_color;
	u64 pt_pa;
	/* LLC and bank colors of the VM's RAM (BH_HC_COLOR_INFO): bit c set
	 * when RAM of color c is mapped; 0 means every color (uncolored). */
	u64 llc_colors;
	u64 bank_colors;

	const struct cfg_bw *bw; /* memory bandwidth reservation; NULL: unregulated */

	/* DSU L3 way partition (isolation/dsu.c): the scheme ID (1-7) the VM's
	 * CPUs are pinned to and its way groups; l3_groups 0: scheme ID 0, the
	 * groups no VM claims. */
	u32 l3_scheme;
	u32 l3_groups;
	u32 npci; /* PCI functions passed through */
	const struct cfg_pci_func *pci;
	u64 pci_win_base; /* the window of the host bridge's memory space its BARs go to */
	u64 pci_win_size;
	u32 lpi_base;                    /* the first of the physical LPIs its virtual ITS's events
	                                    get (256, the toolchain's block; docs/interrupts.md) */
	const struct cfg_virtio *virtio; /* its virtio-net device; NULL: none */
	const struct cfg_virtio *virtio_blk; /* its virtio-blk device; NULL: none */
};

struct cfg_platform {
	const char *name;
	u32 ncpus;
	u64 mpidr[CFG_MAX_CPUS]; /* physical MPIDR (affinity fields) per CPU index */
	u64 ram_base; /* the first DRAM bank: the hypervisor and the staging area are in it */
	u64 ram_size;
	u32 nram; /* more than one bank: every bank in ram[] (ram[0] the first); 0: just the first
	           */
	struct cfg_ram {
		u64 base;
		u64 size;
	} ram[CFG_MAX_RAM];
	u64 hyp_base; /* where the hypervisor image lives (also in ram) */
	u64 hyp_size;
	struct uart_dev uart; /* the UART owned by the hypervisor: its driver, base, spacing */
	u32 uart_irq;
	struct gic_dev gic; /* the GIC: its driver, its frames (drivers/gic/gic.h) */
	u64 gicv_base;     /* GICv2: virtual CPU interface (its pages gic.gicc_page_stride apart) */
	u64 vgicd_ipa;     /* where VMs see their distributor */
	u64 vgicr_ipa;     /* GICv3: where VMs see their redistributors */
	u64 vgicc_ipa;     /* GICv2: where VMs see their CPU interface (GICV mapped) */
	u32 gic_maint_irq; /* PPI */
	u32 timer_hyp_irq; /* EL2 physical timer PPI */
	u32 timer_virt_irq;
	u32 pmu_irq;               /* PMU overflow PPI (guests' and the regulator's); 0: none. With
	                              pmu_spi[], the PPI the VMs see (the guest platform's) */
	u32 pmu_spi[CFG_MAX_CPUS]; /* the PMU overflow SPI of each CPU (ZynqMP); 0: the PPI */
	u64 mmio_base;             /* the device window mapped at EL2 (device memory) */
	u64 mmio_size;
	struct cpu_enable_dev cpu_enable; /* how the other CPUs start (drivers/cpu_enable/) */
	struct power_off_dev power_off;   /* how the machine powers off (drivers/power_off/) */

	/* Page coloring (platform file `coloring:`); 0 when not declared. */
	u64 llc_color_mask;  /* PA bits selecting the LLC color */
	u64 bank_color_mask; /* PA bits selecting the DRAM bank color */
	u64 llc_size;        /* LLC geometry, to compare with the CPU's */
	u32 llc_ways;
	u32 llc_line;

	const struct cfg_pci *pci; /* the PCIe host bridge; NULL: none */
};

/*
 * A CoreLink QoS-400 regulator the hypervisor programs at boot
 * (isolation/qos400.c, docs/qos.md): the values of its rate-regulation
 * registers, computed by bulkhead/qos.py.
 */
#define CFG_QOS_SMC (1u << 0) /* reached through the firmware (SiP PM_MMIO), not mapped */
struct cfg_qos {
	const char *name;    /* the regulator (platform file qos_regulators) */
	const char *devices; /* the passed-through devices behind it, "dev@vm,...", for messages */
	u64 base;            /* its register block (the read_qos register) */
	u32 flags;
	u32 cntl; /* qos_cntl: en_ar_rate / en_aw_rate */
	u32 ar_r, ar_b, ar_p;
	u32 aw_r, aw_b, aw_p;
};

struct cfg_system {
	const struct cfg_platform *platform;
	u32 nvms;
	const struct cfg_vm *vms;
	u32 nshmem;
	const struct cfg_shmem *shmems;
	s32 console_input_vm;           /* index of the VM receiving console input; -1: none */
	u64 config_hash;                /* low 64 bits of the config's SHA-256, for the banner */
	const struct cfg_bw_system *bw; /* NULL: no VM is regulated */
	/* Self-coloring (config `hypervisor_colors`): colors reserved for the
	 * hypervisor, disjoint from every VM's and shared memory's; NULL: none. */
	const struct cfg_color *hyp_color;
	u64 hyp_llc_colors; /* their bitmaps */
	u64 hyp_bank_colors;
	/* Span start of the frames of those colors the toolchain reserved for
	 * the hypervisor area's pages (hyp_size / 4 KiB of them). */
	u64 hyp_color_pa;
	/* DSU L3 way partitioning: the DSU's way groups and L3 ways; 0 when no
	 * VM asks for L3 ways (the registers are then never touched). */
	u32 dsu_groups;
	u32 dsu_ways;
	u32 nqos; /* QoS-400 regulators to program at boot */
	const struct cfg_qos *qos;
	/* Spare memory for recoloring (config `recolor_pool`): pool_size / 4 KiB
	 * pages of pool_color from pool_pa, all below pool_span_end; NULL: none. */
	const struct cfg_color *pool_color;
	u64 pool_pa;
	u64 pool_size;
	u64 pool_span_end;
	/* DMA isolation (drivers/iommu.h, docs/dma.md): the SMMUs the
	 * hypervisor drives and the DMA streams of each VM; nunits 0: none. */
	struct iommu_config iommu;
};

extern const struct cfg_system cfg_system;

/* The number of DRAM banks and bank i of platform p. */
static inline u32 cfg_ram_banks(const struct cfg_platform *p)
{
	return p->nram ? p->nram : 1;
}

static inline struct cfg_ram cfg_ram_bank(const struct cfg_platform *p, u32 i)
{
	return p->nram ? p->ram[i] : (struct cfg_ram){ p->ram_base, p->ram_size };
}

/* Whether [pa, pa + size) lies inside one DRAM bank. */
static inline bool cfg_in_ram(const struct cfg_platform *p, u64 pa, u64 size)
{
	for (u32 i = 0; i < cfg_ram_banks(p); i++) {
		struct cfg_ram b = cfg_ram_bank(p, i);

		if (pa >= b.base && pa - b.base < b.size && size <= b.base + b.size - pa)
			return true;
	}
	return false;
}

#endif
