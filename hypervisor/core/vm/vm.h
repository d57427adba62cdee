/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/vm (docs/ARCHITECTURE.md "Core"): the VM and vCPU objects
 * every subsystem above works on (vm.h, vcpu.h), the device state they hold
 * (vgic_state.h, vuart_state.h, console_line.h), the delivery interface
 * (delivery.h) and the MMIO table (mmio.c). Calls: arch, core/config,
 * drivers, lib.
 */
/*
 * A virtual machine: its configuration, stage-2 tables, devices and state.
 *
 * Its locks' ranks (vm->con.lock, vm->vgic.lock, vm->lock) are given by
 * vm_init_all; the order is lib/lock_rank.h.
 */
#ifndef CORE_VM_H
#define CORE_VM_H

#include "arch/aarch64/pt.h"
#include "core/config/config.h"
#include "core/vm/console_line.h"
#include "core/vm/mmio.h"
#include "core/vm/vgic_state.h"
#include "core/vm/vuart_state.h"
#include "lib/spinlock.h"

enum vm_state {
	VM_RUNNING,
	VM_RESETTING, /* SYSTEM_RESET: vCPU 0 reloads the VM once all vCPUs park */
	VM_OFF,       /* SYSTEM_OFF */
	VM_STOPPED,   /* stopped by the hypervisor (fault policy) */
};

struct vm {
	u32 id;
	const struct cfg_vm *cfg;
	volatile u32 state;
	spinlock_t lock; /* vCPU power state (LOCK_RANK_LEAF) */
	u64 vttbr;
	u64 ram_bytes;
	struct pt s2;
	/* the SMMU's view of s2 (core/mem/mem.c): its RAM and shared memory, none
	 * of its device mappings; root NULL until its streams are attached */
	struct pt s2_dma;
	bool s2_dma_s1; /* it maps the identity stage 1 (drivers/iommu.h) */
	u32 s2_next;    /* stage-2 table pages taken from the VM's pool */
	u64 s2_pt_pa;   /* colored pool: the last page taken */
	struct vcpu *vcpus[CFG_MAX_CPUS];
	u32 nvcpus;
	struct vgic_dist vgic;
	struct vuart vuart;
	struct console_line con;
	struct mmio_region mmio[MMIO_MAX_REGIONS];
	u32 nmmio;
	u32 faults;
	u32 resets;
	u64 dma_faults;  /* faults of its DMA streams (core/dma/dma.c) */
	u64 dma_lost;    /* times an SMMU of its streams lost fault records */
	u64 setway_ops;  /* trapped DC ISW/CSW/CISW (core/mem/setway.c) */
	u64 setway_done; /* of which performed (as DC CISW) */
	u64 setway_bad;  /* of which had reserved bits set or a set/way beyond the cache */
	/* LLC and bank colors of its RAM now (0: every color): the config's
	 * until a recoloring (isolation/color_recolor.c) changes them. */
	u64 llc_colors;
	u64 bank_colors;
	volatile bool pause; /* vcpu_pause_vm: its vCPUs wait at EL2 */
	/* its stage 2 revoked by a watcher (core/mem/mem.c mem_vm_revoke,
	 * docs/interrupts.md "Closing the ICC_AP1R0_EL1 hole"): 1 while so,
	 * the vCPUs (BIT(idx)) that must fault before it is restored, and the
	 * root entries it cleared (kept: a bit counts only while its entry is
	 * invalid) */
	u32 revoked;
	u32 revoke_vcpus;
	u32 revokes; /* how many times */
	u64 revoke_mask[8];
};

extern struct vm vms[CFG_MAX_CPUS];
extern u32 vm_count;

/* The vCPU of vm whose MPIDR (as it reads it, vcpu_vmpidr: physical ones
 * in direct mode) equals mpidr in the bits of mask; NULL when none does. */
struct vcpu *vm_vcpu_by_mpidr(const struct vm *vm, u64 mpidr, u64 mask);

#endif
