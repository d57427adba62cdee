/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lock order, in code (docs/ARCHITECTURE.md "Lock order"): every
 * spinlock has one of these ranks, and a CPU takes a lock only while each
 * lock it holds has a lower rank. A build with BULKHEAD_LOCK_CHECK (make
 * DEBUG=1, and the host tests that ask for it) panics on a lock taken out
 * of order, or one with no rank (lib/spinlock.h); a release build keeps
 * the ranks as documentation only.
 */
#ifndef LIB_LOCK_RANK_H
#define LIB_LOCK_RANK_H

enum lock_rank {
	LOCK_RANK_NONE,    /* not given: a checked build panics when it is taken */
	LOCK_RANK_RECOLOR, /* recolor_lock (isolation/color_recolor.c), try-taken */
	LOCK_RANK_IOMMU,   /* iommu_lock (drivers/iommu.c): under recolor_lock */
	LOCK_RANK_SMMU,    /* an SMMU's command lock (drivers/smmu): under iommu_lock */
	LOCK_RANK_VM_CON,  /* vm->con.lock: a VM's console writers and virtual UART */
	LOCK_RANK_VITS,    /* a VM's virtual ITS (core/vgic/vits.c) */
	LOCK_RANK_VGIC, /* vm->vgic.lock: under vm->con.lock (vuart -> vgic_set_level), a vITS's */
	/* leaves, of which a CPU holds one at most: vm->lock, vm_power_lock,
	 * dma_lock, vpci_lock[], the regulator's settings lock, a QoS-400
	 * regulator's lock, its_lock (drivers/gic/gicv3_its.c) */
	LOCK_RANK_LEAF,
	LOCK_RANK_CONSOLE, /* console_lock: only try-taken, under any of the above (logging) */
	LOCK_RANK_COUNT,
};

#endif
