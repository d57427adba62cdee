/* SPDX-License-Identifier: Apache-2.0 */
/* The SMMUv3 driver behind drivers/iommu.h (docs/dma.md): smmuv3_ops, which
 * the generated config names (bulkhead/drivers/iommu/smmuv3.py). */
#ifndef DRIVERS_SMMU_SMMUV3_H
#define DRIVERS_SMMU_SMMUV3_H

#include "drivers/iommu.h"
#include "drivers/smmu/smmuv3_hw.h"

extern const struct iommu_ops smmuv3_ops;

/* Probes unit idx and brings it up with every stream aborting; the stream
 * table is the toolchain's (u->strtab, sized for max_sid). Stops the boot
 * when it cannot confine those streams. */
void smmuv3_init(u32 idx, const struct iommu_unit *u, u32 max_sid);
/* Writes the STE of sid (ste NULL: abort) and makes the SMMU use it:
 * CFGI_STE + CMD_SYNC. A valid STE is changed through an abort STE, so the
 * SMMU never reads a torn one. Returns false (reported) when the commands
 * did not complete. */
bool smmuv3_ste_set(u32 idx, u32 sid, const u64 *ste);
/* Whether unit idx puts the identity stage 1 in front of stage 2 (it has
 * stage 1); pa: the physical pages of its context descriptor and table. */
bool smmuv3_s1(u32 idx, u64 pa[2]);
/* TLBI_S12_VMALL of vmid + CMD_SYNC. */
bool smmuv3_tlbi_vmid(u32 idx, u16 vmid);
/* Event queue interrupt: decodes at most a queue's worth of records, calls
 * up for each, then consumes them; an overflow (EVENTQ_PROD.OVFLG
 * toggled: records were discarded) is acknowledged (EVENTQ_CONS.OVACKFLG)
 * and passed up as lost, once per overflow. */
void smmuv3_drain_events(u32 idx, iommu_event_fn up);
/* GERROR interrupt: acknowledges every active global error and reports it;
 * EVENTQ_ABT_ERR (a record could not be written: QEMU raises it when the
 * queue is full) goes up as lost instead of to the console. */
void smmuv3_gerror(u32 idx, iommu_event_fn up);

#endif
