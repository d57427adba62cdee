# SPDX-License-Identifier: Apache-2.0
"""Arm SMMUv3 (IHI 0070): hypervisor/drivers/smmu/smmuv3.c.

Each unit gets its command queue (64 commands), event queue and a stream
table sized from its stream IDs (:func:`v3_table`), all in the SMMU's DMA
memory."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bulkhead.drivers.iommu import Declare, Fields, IommuDriver, Stream

# Stream tables up to this many STEs are linear (64 B each: 16 KiB); larger
# ones are two-level with L2 tables of 2^V3_SPLIT STEs.
V3_LINEAR_MAX_LOG2 = 8
V3_SPLIT = 6
# The event queue: 256 records of 32 bytes (one queue's worth is the most an
# interrupt drains). QEMU records a fault per few bytes of a DMA transfer (a
# 4 KiB edu transfer overflowed 1024 entries as well as 256), so a larger
# queue only costs memory: lost events are reported (GERROR).
V3_EVTQ_LOG2 = 8


@dataclass(frozen=True)
class V3Table:
    """How the hypervisor lays out one SMMUv3's stream table."""

    log2size: int  # STRTAB_BASE_CFG.LOG2SIZE: stream IDs 0 .. 2^log2size - 1
    split: int  # 0: linear; else STRTAB_BASE_CFG.SPLIT (two-level)
    l2_spans: tuple[int, ...]  # two-level: the L1 indices that get an L2 table

    @property
    def entries(self) -> int:
        """STEs (linear) or level-1 descriptors (two-level)."""
        return 1 << (self.log2size - self.split) if self.split else 1 << self.log2size


def v3_table(sids: Iterable[int]) -> V3Table:
    """Sized from the largest stream ID: linear while small, two-level above."""
    ids = sorted(set(sids))
    top = ids[-1] if ids else 0
    log2size = max(1, top.bit_length())
    if log2size <= V3_LINEAR_MAX_LOG2:
        return V3Table(log2size, 0, ())
    log2size = max(log2size, V3_SPLIT + 1)
    return V3Table(log2size, V3_SPLIT, tuple(sorted({sid >> V3_SPLIT for sid in ids})))


@dataclass(frozen=True)
class SmmuV3(IommuDriver):
    def unit_fields(self, k: int, streams: Sequence[Stream], declare: Declare) -> Fields:
        declare(f"static u64 iommu{k}_cmdq[128] __attribute__((aligned(1024))) IOMMU_DMA_MEM;")
        declare(f"static u64 iommu{k}_evtq[{4 << V3_EVTQ_LOG2}] "
                f"__attribute__((aligned({32 << V3_EVTQ_LOG2}))) IOMMU_DMA_MEM;")
        fields = [("cmdq", f"iommu{k}_cmdq"), ("evtq", f"iommu{k}_evtq"), ("evtq_log2", str(V3_EVTQ_LOG2))]
        lay = v3_table(st.sid for st in streams)
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


DRIVER = SmmuV3(kind="iommu", name="smmuv3", compatible=("smmuv3",), dt_compatible=("arm,smmu-v3",),
                summary="Arm SMMUv3, stage 2 behind an identity stage 1",
                feature="SMMUV3", ops="smmuv3_ops", window=0x20000, sid_bits=32, pcie=True)
