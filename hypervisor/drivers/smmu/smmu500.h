/* SPDX-License-Identifier: Apache-2.0 */
/* The SMMU-500 (SMMUv2) driver behind drivers/iommu.h (docs/dma.md):
 * smmu500_ops, which the generated config names with the stream match
 * registers and context banks the toolchain assigned
 * (bulkhead/drivers/iommu/smmu500.py). */
#ifndef DRIVERS_SMMU_SMMU500_H
#define DRIVERS_SMMU_SMMU500_H

#include "drivers/iommu.h"
#include "drivers/smmu/smmu500_hw.h"

extern const struct iommu_ops smmu500_ops;

/* Probes unit idx and brings it up: every stream match register invalid,
 * an unmatched stream faults (sCR0.USFCFG), no client bypasses
 * (sCR0.CLIENTPD clear). nsmr streams and ncb VMs will use it; one more
 * context bank, on an empty table, is where blocked streams go. Stops the
 * boot when it cannot. */
void smmu500_init(u32 idx, const struct iommu_unit *u, u32 nsmr, u32 ncb);
/* Programs context bank cb as the stage 2 of s2 (CBA2R VA64, CBAR stage-2
 * type with the VMID, TCR from VTCR, TTBR0 = the VM's root, SCTLR with
 * CFIE, CFRE and M). */
bool smmu500_cb_set(u32 idx, u32 cb, const struct iommu_s2 *s2);
/* Stream match register smr matches sid and sends it to context bank cb
 * (IOMMU_NONE: to the blocking context, where everything faults silently). */
bool smmu500_stream_set(u32 idx, u32 smr, u32 sid, u32 cb);
/* TLBIVMID + TLBGSYNC (polled). */
bool smmu500_tlbi_vmid(u32 idx, u16 vmid);
/* The fault interrupt: every context bank in use, then the global fault
 * registers; each fault is reported and cleared (bounded: one record each). */
void smmu500_handle_irq(u32 idx, iommu_event_fn up);

#endif
