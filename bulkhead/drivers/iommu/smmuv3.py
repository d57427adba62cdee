# SPDX-License-Identifier: Apache-2.0
"""Arm SMMUv3 (IHI 0070): hypervisor/drivers/smmu/smmuv3.c.

Each unit gets its command queue (64 commands), event queue and a stream
table sized from its stream IDs (bulkhead/config/dma.py ``v3_table``),
all in the SMMU's DMA memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bulkhead.config import dma
from bulkhead.drivers.iommu import Declare, Fields, IommuDriver, Stream


@dataclass(frozen=True)
class SmmuV3(IommuDriver):
    def unit_fields(self, k: int, streams: Sequence[Stream], declare: Declare) -> Fields:
        evtq_log2 = dma.V3_EVTQ_LOG2
        declare(f"static u64 iommu{k}_cmdq[128] __attribute__((aligned(1024))) IOMMU_DMA_MEM;")
        declare(f"static u64 iommu{k}_evtq[{4 << evtq_log2}] "
                f"__attribute__((aligned({32 << evtq_log2}))) IOMMU_DMA_MEM;")
        fields = [("cmdq", f"iommu{k}_cmdq"), ("evtq", f"iommu{k}_evtq"), ("evtq_log2", str(evtq_log2))]
        lay = dma.v3_table(st.sid for st in streams)
        if not lay.split:
            size = 64 << lay.log2size
            declare(f"static u64 iommu{k}_strtab[{size // 8}] "
                    f"__attribute__((aligned({max(64, size)}))) IOMMU_DMA_MEM;")
            return fields + [("log2size", str(lay.log2size)), ("strtab", f"iommu{k}_strtab")]
        n = lay.entries
        declare(f"static u64 iommu{k}_strtab[{n}] __attribute__((aligned({max(64, n * 8)}))) IOMMU_DMA_MEM;")
        l2_bytes = 64 << lay.split
        for span in lay.l2_spans:
            declare(f"static u64 iommu{k}_l2_{span}[{l2_bytes // 8}] "
                    f"__attribute__((aligned({l2_bytes}))) IOMMU_DMA_MEM;")
        declare(f"static u64 *const iommu{k}_l2[{n}] = {{ "
                + ", ".join(f"[{span}] = iommu{k}_l2_{span}" for span in lay.l2_spans) + " };")
        return fields + [("log2size", str(lay.log2size)), ("split", str(lay.split)),
                         ("strtab", f"iommu{k}_strtab"), ("l2", f"iommu{k}_l2")]


DRIVER = SmmuV3(kind="iommu", name="smmuv3", compatible=("smmuv3",),
                summary="Arm SMMUv3, stage 2 behind an identity stage 1",
                feature="SMMUV3", ops="smmuv3_ops",
                window=0x20000, sid_bits=32, pcie=True)
