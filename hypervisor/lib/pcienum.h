/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PCI enumeration and resource assignment behind an ECAM host bridge: the
 * functions of a bounded bus range (bridges get bus numbers depth-first),
 * their BAR sizes, and BAR and bridge-window addresses for the functions
 * that belong to a VM, each VM's BARs inside its own window. Pure logic
 * over a config-space accessor (core/pci/pci.c gives it the ECAM; the host test
 * a model of one): host-tested (tests/host/test_pcienum.c).
 */
#ifndef LIB_PCIENUM_H
#define LIB_PCIENUM_H

#include "lib/types.h"

#define PCI_BDF(b, d, f) (((u32)(b) << 8) | ((u32)(d) << 3) | (u32)(f))
#define PCI_BDF_BUS(x)   (((x) >> 8) & 0xff)
#define PCI_BDF_DEV(x)   (((x) >> 3) & 0x1f)
#define PCI_BDF_FN(x)    ((x)&7)

/* Type 0/1 header registers (PCI Local Bus 3.0, PCI-to-PCI Bridge 1.2). */
#define PCI_VENDOR_ID     0x00
#define PCI_COMMAND       0x04
#define PCI_STATUS        0x06
#define PCI_CLASS_REV     0x08
#define PCI_HEADER_TYPE   0x0e
#define PCI_BAR0          0x10
#define PCI_PRIMARY_BUS   0x18 /* type 1: primary, secondary, subordinate, latency */
#define PCI_MEM_BASE      0x20 /* type 1: memory base/limit (1 MiB units) */
#define PCI_PREF_BASE     0x24 /* type 1: prefetchable base/limit */
#define PCI_PREF_BASE_UP  0x28
#define PCI_PREF_LIMIT_UP 0x2c
#define PCI_CAP_PTR       0x34
#define PCI_ROM_TYPE0     0x30
#define PCI_INTERRUPT     0x3c /* line, pin */

#define PCI_CMD_IO           BIT(0)
#define PCI_CMD_MEM          BIT(1)
#define PCI_CMD_MASTER       BIT(2)
#define PCI_CMD_INTX_DISABLE BIT(10)
#define PCI_STATUS_CAP_LIST  BIT(4)

#define PCI_BAR_IO       BIT(0)
#define PCI_BAR_MEM64    BIT(1) /* this BAR and the next form one 64-bit BAR */
#define PCI_BAR_PREFETCH BIT(2)
#define PCI_BAR_UPPER    BIT(3) /* the upper half of the BAR before */

/* How a bridge passes on the DMA of the functions below it (the requester
 * ID they reach the root complex with; a conventional PCI bus carries none):
 * each its own (a PCIe secondary bus), the bridge's own ID (a conventional
 * PCI-to-PCI bridge: no PCIe capability), or (secondary bus, devfn 0) (a
 * PCIe-to-PCI bridge, PCIe capability type 7; PCIe-to-PCI/PCI-X Bridge
 * spec 2.3). QEMU gives its SMMU the same (hw/pci/pci.c,
 * pci_device_get_iommu_bus_devfn). */
#define PCIENUM_ALIAS_NONE      0u
#define PCIENUM_ALIAS_BRIDGE    1u
#define PCIENUM_ALIAS_SECONDARY 2u

#define PCI_CAP_ID_EXP          0x10
#define PCI_EXP_TYPE_PCI_BRIDGE 0x7

#define PCIENUM_MAX_FUNCS 32
#define PCIENUM_NO_OWNER  0xffu

struct pcienum_ops {
	/* Aligned 32-bit config access of function bdf at register off. */
	u32 (*read)(void *ctx, u32 bdf, u32 off);
	void (*write)(void *ctx, u32 bdf, u32 off, u32 val);
	void *ctx;
};

struct pcienum_bar {
	u64 addr; /* assigned address (0: unassigned) */
	u64 size; /* 0: not implemented (or the upper half of a 64-bit BAR) */
	u32 flags;
};

struct pcienum_func {
	u32 bdf;
	u16 vendor, device;
	u8 header;  /* header type without the multi-function bit: 0 endpoint, 1 bridge */
	u8 pin;     /* interrupt pin: 0 none, 1-4 INTA-INTD */
	u8 owner;   /* VM index, PCIENUM_NO_OWNER */
	u8 sec_bus; /* bridges: secondary and subordinate bus */
	u8 sub_bus;
	u8 alias; /* bridges: PCIENUM_ALIAS_* */
	struct pcienum_bar bar[6];
	u64 win_base, win_limit; /* bridges: memory window assigned (limit < base: off) */
};

struct pcienum {
	struct pcienum_ops ops;
	u32 bus_first, bus_last; /* the bus range enumerated */
	u32 nfuncs;
	struct pcienum_func funcs[PCIENUM_MAX_FUNCS];
	u32 next_bus;
	bool overflow; /* more functions than PCIENUM_MAX_FUNCS, or buses than the range */
};

/* Scans the bus range (bus_first first, bridges depth-first, each given the
 * next bus number), sizes every BAR and turns off every function's memory,
 * I/O decode and bus mastering. Returns the number of functions found. */
u32 pcienum_scan(struct pcienum *e);

struct pcienum_func *pcienum_find(struct pcienum *e, u32 bdf);

/* The interrupt line a function's pin reaches at the host bridge: the
 * standard swizzle, (pin - 1 + device) % 4 at each bridge up to the root
 * bus; 0-3 for INTA-INTD, or -1 when the function has no pin. */
int pcienum_root_pin(const struct pcienum *e, const struct pcienum_func *f);

/* The requester ID a function's DMA reaches the root complex (and the SMMU)
 * with: its own, or the alias of the last aliasing bridge on the way up
 * (*by = that bridge, NULL for its own). */
u32 pcienum_requester_id(const struct pcienum *e, const struct pcienum_func *f,
                         const struct pcienum_func **by);

/* Whether two functions of different owners reach the root complex with one
 * alias (behind one conventional bridge, *by): then *a and *b are two of
 * them. Functions without an owner do not count. */
bool pcienum_alias_shared(const struct pcienum *e, const struct pcienum_func **a,
                          const struct pcienum_func **b, const struct pcienum_func **by);

/* Assigns the memory BARs of every function with owner vm inside
 * [base, base + size): largest first, naturally aligned, at least 4 KiB
 * each (so no two functions share a stage-2 page); writes them to the
 * functions. I/O BARs stay unassigned. Returns false (having written
 * nothing) when they do not fit. */
bool pcienum_assign(struct pcienum *e, u32 vm, u64 base, u64 size);

/* Gives every bridge a memory window covering the BARs below it (1 MiB
 * granules) and turns on its memory decode and forwarding; a bridge with
 * none gets an empty window. Returns false when a window would also cover a
 * BAR that is not below the bridge (*bad = the bridge). */
bool pcienum_bridge_windows(struct pcienum *e, const struct pcienum_func **bad);

#endif
