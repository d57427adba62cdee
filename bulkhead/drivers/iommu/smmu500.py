# SPDX-License-Identifier: Apache-2.0
"""Arm CoreLink MMU-500 (SMMUv2 architecture, IHI 0062): hypervisor/drivers/smmu/smmu500.c.

Stream i of a unit gets stream match register ``slot`` i (its rank among
the unit's streams), its VM the context bank ``ctx`` of the VM's rank among
the unit's VMs; the unit's counts are ``nslots`` and ``nctx`` (one more bank
is the blocking context)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bulkhead.drivers.iommu import Declare, Fields, IommuDriver, Stream, ranks

SMRS = 48  # stream match registers of the ZynqMP's SMMU-500 (SMMU_IDR0.NUMSMRG)


@dataclass(frozen=True)
class Smmu500(IommuDriver):
    def unit_fields(self, k: int, streams: Sequence[Stream], declare: Declare) -> Fields:
        return [("nslots", str(len(streams))), ("nctx", str(len({st.vm for st in streams})))]

    def stream_fields(self, streams: Sequence[Stream]) -> list[Fields]:
        ctx = ranks([st.vm for st in streams])
        return [[("slot", str(i)), ("ctx", str(c))] for i, c in enumerate(ctx)]


DRIVER = Smmu500(kind="iommu", name="smmu500", compatible=("smmu-500",), dt_compatible=("arm,mmu-500",),
                 summary="Arm CoreLink MMU-500 (SMMUv2), stage 2", feature="SMMU500", ops="smmu500_ops",
                 window=0x10000, sid_bits=15, max_streams=SMRS)
