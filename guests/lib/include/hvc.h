/* SPDX-License-Identifier: Apache-2.0 */
/* Bulkhead hypercalls (docs/hypercalls.md): SMCCC 1.1 over HVC #0. */
#ifndef GUEST_HVC_H
#define GUEST_HVC_H

#include "types.h"

#define BH_CALL_UID         0x8600FF01u
#define BH_REVISION         0x8600FF03u
#define BH_HC_VERSION       0xC6000000u
#define BH_HC_VM_INFO       0xC6000001u
#define BH_HC_CONSOLE_WRITE 0xC6000002u
#define BH_HC_SHMEM_INFO    0xC6000003u
#define BH_HC_DOORBELL      0xC6000004u
#define BH_HC_BW_STATS      0xC6000007u
#define BH_HC_BW_SET        0xC6000008u
#define BH_HC_CPU_EXITS     0xC6000009u
#define BH_HC_EXIT          0xC600000Au
#define BH_HC_COLOR_INFO    0xC6000005u
#define BH_HC_IPA_INFO      0xC6000006u
#define BH_HC_RECOLOR       0xC6000010u
#define BH_HC_IDA_PREPARE   0xC6000011u
#define BH_HC_S2_INFO       0xC6000012u
#define BH_HC_QOS_SET       0xC6000040u /* docs/qos.md */
#define BH_HC_QOS_GET       0xC6000041u

#define BH_BW_VM_TOTAL 0xFFFFu /* BH_HC_BW_STATS: the whole VM */
#define BH_CPU_SELF    0xFFFFu /* BH_HC_CPU_EXITS: the caller's physical CPU */

#define BH_OK              0
#define BH_E_NOT_SUPPORTED (-1)
#define BH_E_INVALID       (-3)
#define BH_E_DENIED        (-4)
#define BH_E_CONFLICT      (-5)
#define BH_E_NO_MEMORY     (-6)
#define BH_E_BUSY          (-7)
#define BH_E_HARDWARE      (-8)

#define BH_MAGIC       0x424C4B48u /* "BLKH" */
#define BH_CONSOLE_MAX 4096

/* x0..x5 after the call; x0 is the status (signed). */
struct bh_ret {
	s64 x0;
	u64 x1;
	u64 x2;
	u64 x3;
	u64 x4;
	u64 x5;
};

/* Raw call: function ID in x0, arguments in x1..x5. */
struct bh_ret bh_call(u32 fid, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5);

struct bh_ret bh_call_uid(void); /* x0..x3: UUID words */
struct bh_ret bh_revision(void); /* x0 major, x1 minor */
struct bh_ret bh_version(void);  /* x1 magic, x2 (major << 16) | minor */

/* True if BH_HC_VERSION answers with status 0 and the "BLKH" magic. */
bool bh_present(void);
/* Power the VM off reporting status (0: success); returns only without Bulkhead. */
s64 bh_exit(u32 status);

struct bh_vm_info {
	u32 vm_id;
	u32 ncpus;
	u64 ram_bytes;
	u32 vcpu;
	u64 resets; /* how many times the VM was reset (PSCI SYSTEM_RESET) */
};

/* Returns x0 (BH_OK or an error); fills *info on success. */
s64 bh_vm_info(struct bh_vm_info *info);

/* Returns bytes written or BH_E_INVALID. */
s64 bh_console_write(const void *buf, u64 len);
/* Same with a raw IPA (for probing invalid buffers). */
s64 bh_console_write_ipa(u64 ipa, u64 len);

struct bh_shmem_info {
	u64 ipa;
	u64 size;
	u32 doorbell_irq; /* INTID raised here by peers; 0 if none */
	u32 npeers;
};

s64 bh_shmem_info(u32 index, struct bh_shmem_info *info);
/* Returns the number of peers signalled, or BH_E_INVALID. */
s64 bh_doorbell(u32 index);

/* Memory bandwidth regulation telemetry (docs/bandwidth.md). */
struct bh_bw_stats {
	u64 last;       /* events in the last complete period */
	u64 max;        /* most events in one period */
	u64 mean;       /* mean events per period */
	u64 throttles;  /* times the budget ran out */
	u64 stalled_ns; /* time spent throttled */
};

/* vcpu: a vCPU index of the calling VM, or BH_BW_VM_TOTAL. BH_E_INVALID if
 * the VM is not regulated or the index is bad. */
s64 bh_bw_stats(u32 vcpu, struct bh_bw_stats *st);
/* Manager VMs only (BH_E_DENIED otherwise): budget in events per period for
 * the whole VM and period in us (0: unchanged), effective from one period
 * boundary on. */
s64 bh_bw_set(u32 vm_id, u64 budget_events, u64 period_us);

struct bh_cpu_exits {
	u64 exits;     /* exceptions taken from the guest */
	u64 irq_exits; /* physical interrupts handled on that CPU */
	u64 reg_exits; /* exits that served the bandwidth regulator */
};

/* cpu: a physical CPU of the calling VM (any CPU for a manager), or
 * BH_CPU_SELF. */
s64 bh_cpu_exits(u32 cpu, struct bh_cpu_exits *ex);

/* Page coloring (docs/coloring.md). Color c of a kind is bit c of a bitmap;
 * a color number indexes the kind's PA bits in ascending order. */
struct bh_color_info {
	u64 llc_colors;  /* LLC colors of the VM's RAM (all of them when uncolored) */
	u64 bank_colors; /* DRAM bank colors */
	u64 llc_mask;    /* PA bits giving the LLC color */
	u64 bank_mask;   /* PA bits giving the bank color */
};

s64 bh_color_info(struct bh_color_info *info);

struct bh_ipa_info {
	u64 pa;
	u64 llc_color;
	u64 bank_color;
};

/* Where an IPA of the VM's RAM lives; BH_E_INVALID if it is not RAM. */
s64 bh_ipa_info(u64 ipa, struct bh_ipa_info *info);
/* The host physical address of p in the VM's RAM (what a device passed
 * through without an SMMU needs), or 0 if it is not RAM (BH_HC_IPA_INFO). */
u64 bh_pa_of(const void *p);

/* The index-th page of the VM's stage-2 tables (depth first from the root)
 * and its colors; BH_E_INVALID past the last one. */
s64 bh_s2_info(u32 index, struct bh_ipa_info *info);

struct bh_recolor {
	u64 moved;       /* pages copied */
	u64 pause_start; /* counter (CNTVCT) when the target had stopped */
	u64 pause_end;   /* counter just before it resumed */
};

/* Manager VMs: gives VM vm_id the LLC and bank color bitmaps (0: every
 * color of the kind), moving its pages while it is paused. */
s64 bh_recolor(u32 vm_id, u64 llc, u64 bank, struct bh_recolor *out);

#endif
