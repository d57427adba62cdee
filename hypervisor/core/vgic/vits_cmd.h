/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtual ITS's command decoder and checker (docs/interrupts.md
 * "Message-signalled interrupts"): one 32-byte command a guest wrote into its
 * command queue, decoded (GICv3 architecture, IHI 0069, "ITS commands"),
 * checked against what the VM owns and applied to the VM's virtual ITS state.
 * Pure decisions, host-tested and fuzzed (tests/host/test_vits_cmd.c,
 * fuzz_vits_cmd.c): every command word comes from the guest.
 *
 * What a VM may name:
 * - device IDs: those of its own PCI functions (cfg: devids), mirrored onto
 *   the physical ITS; any other device ID is a virtual-only device (KVM's
 *   model): MAPD takes one of VITS_MAX_VDEVS slots in the VM's state, and its
 *   commands act on the VM's own virtual LPIs only, never on the physical ITS
 *   (its INT pends the VM's LPI; nothing physical can signal it). When
 *   the slots are all in use, a MAPD of another one is refused;
 * - event IDs: below 2^(MAPD size + 1) and below VITS_MAX_EVENTS (a function:
 *   the physical LPIs fixed for it) or VITS_VDEV_EVENTS (virtual-only: the
 *   VM's whole LPI range);
 * - collections: ICIDs below VITS_MAX_COLLECTIONS, targeting one of its
 *   vCPUs (GITS_TYPER.PTA = 0: the target is a vCPU number);
 * - virtual LPIs: VITS_NR_LPIS from the VM's LPI base (cfg: lpi_base,
 *   VITS_LPI_BASE when 0); a VM with `interrupts: direct` (cfg: phys_lpis) has
 *   the block of physical LPIs reserved for it as its own (its guest
 *   acknowledges the physical INTID), and no virtual-only devices (nothing
 *   but a physical ITS event can make a physical LPI pending);
 * - tables (the ITT of MAPD, the command queue): inside its RAM (cfg's
 *   in_ram).
 * Anything else (a GICv4 command, an unknown one, a device beyond the
 * table...) is refused with its reason and changes nothing: the virtual ITS
 * stalls (GITS_CREADR.Stalled) and mirrors nothing onto the physical ITS. A
 * command on a device, event or collection not mapped (VITS_E_UNMAPPED)
 * changes nothing either but does not stall (vits_err_stalls): the
 * architecture lets an ITS ignore such a command error, as QEMU's and KVM's
 * do, and guests (kvm-unit-tests' its-trigger) rely on it.
 *
 * The physical LPI of (device slot s, event e) is fixed: the VM's first
 * physical LPI + s * VITS_MAX_EVENTS + e (vits_plpi_index); the hypervisor
 * allocates them at boot, a guest never chooses one.
 */
#ifndef CORE_VITS_CMD_H
#define CORE_VITS_CMD_H

#include "lib/types.h"

#define VITS_MAX_DEVS        8u /* PCI functions of one VM (bulkhead MAX_FUNCS_PER_VM) */
#define VITS_EVENT_BITS      5u /* event IDs per device: 2^5 */
#define VITS_MAX_EVENTS      (1u << VITS_EVENT_BITS)
#define VITS_MAX_COLLECTIONS 8u
#define VITS_LPI_BASE        8192u
#define VITS_NR_LPIS         256u /* the VM's virtual LPIs: 8192-8447 */
#define VITS_MAX_VDEVS       4u   /* virtual-only devices of one VM */
#define VITS_VDEV_EVENT_BITS 8u   /* their event IDs: 2^8, as many as the VM's LPIs */
#define VITS_VDEV_EVENTS     (1u << VITS_VDEV_EVENT_BITS)
#define VITS_ITE_SIZE        8u /* GITS_TYPER.ITT_entry_size + 1 the guest sees */
#define VITS_CMD_SIZE        32u
_Static_assert(VITS_VDEV_EVENTS <= VITS_NR_LPIS, "a virtual-only device's events");

/* command numbers (IHI 0069 "ITS command summary") */
enum vits_op {
	VITS_OP_MOVI = 0x01,
	VITS_OP_INT = 0x03,
	VITS_OP_CLEAR = 0x04,
	VITS_OP_SYNC = 0x05,
	VITS_OP_MAPD = 0x08,
	VITS_OP_MAPC = 0x09,
	VITS_OP_MAPTI = 0x0a,
	VITS_OP_MAPI = 0x0b,
	VITS_OP_INV = 0x0c,
	VITS_OP_INVALL = 0x0d,
	VITS_OP_MOVALL = 0x0e,
	VITS_OP_DISCARD = 0x0f,
};

/* why a command is refused (0: applied) */
enum vits_err {
	VITS_OK = 0,
	VITS_E_COMMAND,    /* unknown or GICv4 command */
	VITS_E_DEVICE,     /* a device ID not of this VM's, its virtual-only slots full */
	VITS_E_UNMAPPED,   /* the device, event or collection is not mapped */
	VITS_E_MAPPED,     /* the event is mapped already */
	VITS_E_EVENT,      /* event ID out of range */
	VITS_E_SIZE,       /* MAPD size beyond VITS_EVENT_BITS */
	VITS_E_ADDR,       /* a table outside the VM's RAM */
	VITS_E_COLLECTION, /* ICID out of range */
	VITS_E_TARGET,     /* MAPC/MOVALL/SYNC target not a vCPU of the VM */
	VITS_E_LPI,        /* virtual LPI out of the VM's range */
	VITS_E_NR
};

/* what the physical ITS and the vGIC must do after an applied command */
enum vits_act {
	VITS_ACT_NONE,       /* virtual state only */
	VITS_ACT_MAP,        /* map (slot, event)'s physical LPI to its collection's vCPU */
	VITS_ACT_UNMAP,      /* discard (slot, event)'s physical LPI */
	VITS_ACT_MOVE,       /* move (slot, event)'s physical LPI to its collection's vCPU */
	VITS_ACT_UNMAP_DEV,  /* discard every mapped event of slot (their list: ev_mask) */
	VITS_ACT_INT,        /* pend (slot, event)'s virtual LPI */
	VITS_ACT_CLEAR,      /* clear (slot, event)'s virtual LPI */
	VITS_ACT_INV,        /* re-read the LPI configuration (of vlpi, or all: vlpi 0) */
	VITS_ACT_MOVE_COLL,  /* collection icid now targets vcpu: move its mapped events */
	VITS_ACT_DROP_VLPIS, /* virtual-only: release the virtual LPIs no event maps now */
};

struct vits_ite {
	u16 vlpi; /* 0: not mapped; else VITS_LPI_BASE + n */
	u8 icid;
};

struct vits_dev {
	bool mapped;
	u8 size_bits; /* event ID bits (MAPD size + 1) */
	u64 itt;      /* the guest's ITT address (checked, never used) */
	struct vits_ite ite[VITS_MAX_EVENTS];
};

/* a virtual-only device (its slot is in use while mapped) */
struct vits_vdev {
	bool mapped;
	u8 size_bits;
	u32 devid;
	u64 itt;
	struct vits_ite ite[VITS_VDEV_EVENTS];
};

/* what the VM owns (fixed at boot) */
struct vits_cfg {
	u32 ndevs;
	u32 devids[VITS_MAX_DEVS];
	u32 ncpus; /* the VM's vCPUs: collection targets 0 .. ncpus - 1 */
	/* true when [ipa, ipa + size) is the VM's RAM */
	bool (*in_ram)(const void *ctx, u64 ipa, u64 size);
	const void *ctx;
	u32 lpi_base;   /* its first LPI (VITS_NR_LPIS of them); 0: VITS_LPI_BASE */
	bool phys_lpis; /* its LPIs are physical (`interrupts: direct`): no virtual-only devices */
};

/* the virtual ITS's translation state */
struct vits_state {
	struct vits_dev dev[VITS_MAX_DEVS];
	struct vits_vdev vdev[VITS_MAX_VDEVS];
	u8 coll[VITS_MAX_COLLECTIONS]; /* target vCPU + 1; 0: not mapped */
};

/* one decoded command */
struct vits_cmd {
	u8 op;
	u32 devid;
	u32 event;
	u32 intid; /* MAPTI's LPI (MAPI: the event ID) */
	u32 icid;
	u64 rd; /* MAPC/SYNC/MOVALL target (a vCPU number); MOVALL's second: rd2 */
	u64 rd2;
	u64 itt;
	u32 size; /* MAPD: event ID bits - 1 */
	bool valid;
};

/* the outcome of one command */
struct vits_result {
	enum vits_act act;
	u32 slot; /* the VM's device slot: cfg->devids index, or VITS_MAX_DEVS +
	           * a virtual-only device's index (vits_slot_virtual) */
	u32 event;
	u32 vlpi;
	u32 vcpu;    /* the collection's target vCPU (MAP, MOVE, INT) */
	u32 ev_mask; /* UNMAP_DEV: the events that were mapped */
	u32 icid;    /* MOVE_COLL */
};

/* Decodes the four little-endian doublewords of one command. */
void vits_decode(const u64 dw[4], struct vits_cmd *c);
/* Checks c against cfg and st and, when VITS_OK, applies it to st and says
 * in r what to mirror; otherwise st is unchanged. */
enum vits_err vits_apply(const struct vits_cfg *cfg, struct vits_state *st,
                         const struct vits_cmd *c, struct vits_result *r);
/* A command queue (GITS_CBASER: address, size in bytes) the VM may use:
 * 4 KiB-aligned, in its RAM. */
bool vits_queue_ok(const struct vits_cfg *cfg, u64 addr, u64 size);
/* The device slot of devid, or -1 when the VM does not own it. */
int vits_slot(const struct vits_cfg *cfg, u32 devid);
/* Whether slot is a virtual-only device's (nothing physical behind it). */
static inline bool vits_slot_virtual(u32 slot)
{
	return slot >= VITS_MAX_DEVS;
}
/* Whether a refusal stalls the virtual ITS (all but VITS_E_UNMAPPED). */
bool vits_err_stalls(enum vits_err err);
/* The index of (slot, event)'s physical LPI among the VM's (a function's
 * slot only). */
static inline u32 vits_plpi_index(u32 slot, u32 event)
{
	return slot * VITS_MAX_EVENTS + event;
}
/* The first of the VM's VITS_NR_LPIS LPIs. */
static inline u32 vits_lpi_base(const struct vits_cfg *cfg)
{
	return cfg->lpi_base ? cfg->lpi_base : VITS_LPI_BASE;
}
/* A short name of err, for the log. */
const char *vits_err_name(enum vits_err err);

#endif
