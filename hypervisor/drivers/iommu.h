/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DMA isolation, IOMMU-neutral (docs/dma.md). The platform's SMMUs
 * (drivers/smmu/: SMMUv3, SMMU-500) translate each DMA stream a VM owns
 * through that VM's own stage-2 tables (same VMID, same VTCR), so a device
 * sees the VM's IPAs, its colors and nothing else; every other stream
 * aborts. The toolchain generates the tables below into config.c
 * (bulkhead/config/dma.py, bulkhead/generate/gen_c.py).
 *
 * Layering: a driver. The core and isolation layers call it whenever a
 * VM's stage 2 changes (recoloring, reset) and when a VM stops; faults go up
 * through the handler registered at init (no upward calls).
 *
 * Drivers are registered units: each (drivers/smmu/<driver>.c) exports one
 * struct iommu_ops, and the generated config names it in each unit it
 * drives (bulkhead/drivers/iommu/<driver>.py), so this layer names none.
 */
#ifndef DRIVERS_IOMMU_H
#define DRIVERS_IOMMU_H

#include "lib/types.h"

/* Memory an SMMU reads by physical address (stream tables, queues): in
 * its own section, which keeps VA = PA when the hypervisor colors itself
 * (arch/aarch64/linker.lds.in, mmu.c). Not zeroed at boot: the drivers
 * zero what they use. */
#define IOMMU_DMA_MEM __attribute__((section(".dmamem")))

#define IOMMU_MAX_UNITS   4
#define IOMMU_MAX_STREAMS 64 /* bulkhead/config/dma.py MAX_STREAMS */
#define IOMMU_NONE        (~0u)

struct iommu_ops;

/* One SMMU the hypervisor drives (platform file smmus[]). */
struct iommu_unit {
	const char *name;
	const struct iommu_ops *ops; /* its driver */
	u64 base;
	u64 size;
	u32 event_irq;  /* SMMUv3: event queue; SMMU-500: context faults */
	u32 gerror_irq; /* SMMUv3: GERROR; SMMU-500: global faults (may be event_irq) */
	u64 irq_mpidr;  /* the CPU its interrupts are routed to */
	/* SMMUv3 stream table, sized by the toolchain from the stream IDs:
	 * split 0: linear, strtab holds 2^log2size STEs (8 u64 each);
	 * else two-level: strtab holds 2^(log2size - split) level-1
	 * descriptors and l2[i] the 2^split STEs of span i (NULL: no stream). */
	u32 log2size;
	u32 split;
	u64 *strtab;
	u64 *const *l2;
	/* SMMUv3 queues, also the toolchain's: the command queue (64 commands,
	 * 1 KiB) and the event queue (2^evtq_log2 records of 32 bytes), each
	 * aligned to its size. */
	u64 *cmdq;
	u64 *evtq;
	u32 evtq_log2;
	/* SMMU-500, the toolchain's counts: stream match registers and VM
	 * context banks used (each stream's slot and ctx below) */
	u32 nslots;
	u32 nctx;
	/* a table of the driver's own, if its descriptor emits one */
	const void *data;
};

#define IOMMU_STREAM_STOP_VM (1u << 0) /* on_dma_fault: stop-vm (default abort-device) */
/* the first stream of its VM on its unit: attaching the VM programs the
 * stream's ctx through it (iommu_ops.ctx_set), once per unit */
#define IOMMU_STREAM_CTX_FIRST (1u << 1)

/* One DMA stream: a stream ID of one unit, owned by one VM. */
struct iommu_stream {
	u32 unit; /* index into the units */
	u32 sid;
	u32 vm; /* index of the owning VM */
	const char *device;
	u32 flags;
	/* the driver's slot for the stream and the context of its VM on the
	 * unit, both the toolchain's (SMMU-500: stream match register,
	 * context bank; SMMUv3: unused) */
	u32 slot;
	u32 ctx;
};

struct iommu_config {
	u32 nunits;
	const struct iommu_unit *units;
	u32 nstreams;
	const struct iommu_stream *streams;
};

/* A VM's stage-2 translation, as an SMMU needs it. */
struct iommu_s2 {
	u64 root; /* PA of the first-level table (VTTBR_EL2.BADDR) */
	u64 vtcr; /* the VM's VTCR_EL2 */
	u16 vmid;
	/* the tables map iommu_s1_pages read-only at IOMMU_S1_IPA: an SMMUv3
	 * with stage 1 puts the identity stage 1 in front */
	bool s1;
};

/*
 * The identity stage 1 (SMMUv3 with stage 1; docs/dma.md, "Addresses
 * beyond the IPA space"): with stage 1 bypassed, a DMA input address
 * beyond the SMMU's input size is a stage-1 address size fault that no
 * context descriptor asks to record, so it is blocked unreported (QEMU 10).
 * In front of each VM's stage 2 the SMMU then translates stage 1 through
 * one context descriptor and a table that map every 39-bit address to the
 * same IPA, with faults recorded: any wider address is a recorded
 * translation fault. The SMMU fetches both by IPA: the VM's tables must
 * map the two pages iommu_s1_pages gives, read-only, at IOMMU_S1_IPA (the
 * last 8 KiB of the 39-bit IPA space) and IOMMU_S1_IPA + 4 KiB; false: no
 * unit uses them.
 */
#define IOMMU_S1_IPA ((1ull << 39) - 2 * SZ_4K)
bool iommu_s1_pages(u64 pa[2]);

/* A fault the SMMU recorded, decoded. */
struct iommu_fault {
	u32 unit;
	u32 sid;
	u32 stream; /* index of the stream; IOMMU_NONE: no VM owns the stream ID */
	u64 addr;   /* input address (an IPA of the stream's VM) */
	bool write;
	bool addr_valid;  /* addr and write are meaningful for this kind of fault */
	const char *what; /* e.g. "F_TRANSLATION", "C_BAD_STREAMID" */
	bool blocked;     /* the stream was blocked now (abort-device) */
	/* Not one fault: the unit discarded fault records (event queue
	 * overflow); which streams faulted is unknown (stream IOMMU_NONE,
	 * what says why). Reported once per overflow. */
	bool lost;
};

typedef void (*iommu_fault_fn)(const struct iommu_fault *f);
/* How a driver passes up what its unit recorded: sid, addr, write,
 * addr_valid, what and lost of f (this layer fills in the rest). */
typedef void (*iommu_event_fn)(u32 unit, const struct iommu_fault *f);

/*
 * A driver's operations; unit is the unit's index, for the driver's own
 * per-unit state. Called with iommu_lock held: stream_set (and nothing of
 * this layer's from the driver).
 */
struct iommu_ops {
	const char *name; /* the hardware, for the console: "SMMUv3" */
	/* Boot CPU: probes and enables the unit for the streams of cfg on it;
	 * stops the boot when it cannot confine them. */
	void (*init)(u32 unit, const struct iommu_unit *u, const struct iommu_config *cfg);
	/* Points context ctx (a stream's ctx) at s2, reporting a failure;
	 * NULL: no per-VM contexts. */
	void (*ctx_set)(u32 unit, u32 ctx, const struct iommu_s2 *s2);
	/* Points one stream at s2 (NULL: abort); returns once the unit uses it. */
	bool (*stream_set)(u32 unit, const struct iommu_stream *st, const struct iommu_s2 *s2);
	bool (*tlbi_vmid)(u32 unit, u16 vmid);
	/* The unit's event_irq came: drains what it recorded (bounded)
	 * through up. */
	void (*event)(u32 unit, iommu_event_fn up);
	/* Its gerror_irq came (global errors); NULL: event takes both. */
	void (*gerror)(u32 unit, iommu_event_fn up);
	/* The identity stage-1 pages (iommu_s1_pages); NULL: none. */
	bool (*s1_pages)(u32 unit, u64 pa[2]);
	bool edge; /* its interrupts are pulses (else levels) */
};

/*
 * Boot CPU, before any VM runs: probes every unit, makes unknown streams
 * abort (before and after enabling: no bypass), enables it. A unit that
 * cannot confine the streams it is given (no stage 2, too few stream ID
 * bits, a command that does not complete) stops the boot. fault is called
 * from iommu_handle_irq for every fault recorded.
 */
void iommu_init(const struct iommu_config *cfg, iommu_fault_fn fault);
/* Whether any unit is driven. */
bool iommu_active(void);
/* Whether VM vm owns a stream. */
bool iommu_vm_has_streams(u32 vm);
/* Points every stream of VM vm at s2 (at boot, and after its stage 2
 * changed: recoloring, reset) and invalidates the unit's TLB entries of the
 * VMID; returns once the SMMU uses the new tables. Streams blocked by a
 * fault policy or a stop stay blocked. */
void iommu_vm_attach(u32 vm, const struct iommu_s2 *s2);
/* Every stream of VM vm aborts, and the TLBs of its VMID are invalidated;
 * when it returns, no transaction translated with the old configuration is
 * outstanding (CMD_SYNC / TLBGSYNC). iommu_vm_attach re-enables them. */
void iommu_vm_block(u32 vm);
/* The VM stopped: its streams abort for good. */
void iommu_vm_stop(u32 vm);
/* Blocks one stream for good (fault policy abort-device). */
void iommu_stream_block(u32 stream);
/* An interrupt the hypervisor takes for the units. */
struct iommu_irq {
	u32 intid;
	u64 mpidr; /* the CPU it goes to */
	bool edge; /* iommu_ops.edge */
};
/* The interrupts to route to the hypervisor: fills at most max, returns how
 * many (event and global error interrupts of each unit, each once). */
u32 iommu_irqs(struct iommu_irq *irqs, u32 max);
/* Handles one of those interrupts: drains the event queue or fault
 * registers (bounded: at most a queue's worth of records), reports each
 * fault, re-arms. */
void iommu_handle_irq(u32 intid);
/* Faults recorded for stream i since boot. */
u64 iommu_stream_faults(u32 stream);
/* Whether VM vm owns a stream on unit. */
bool iommu_vm_on_unit(u32 vm, u32 unit);
/* The configuration iommu_init was given (NULL before). */
const struct iommu_config *iommu_config(void);

#endif
