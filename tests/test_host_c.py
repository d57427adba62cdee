# SPDX-License-Identifier: Apache-2.0
"""Host-side unit tests of the hypervisor's pure C logic.

Each tests/host/test_*.c is compiled natively with AddressSanitizer and
UBSan together with the hypervisor sources it tests, then run.
"""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

from bulkhead.base import tree
from bulkhead.config import mechanisms
from bulkhead.generate import features

ROOT = Path(__file__).resolve().parent.parent
HOST = ROOT / "tests" / "host"
HYP = ROOT / "hypervisor"
GUEST_INCLUDE = ROOT / "guests" / "lib" / "include"

# test program -> hypervisor sources it links with
SOURCES: dict[str, list[str]] = {
    "test_pt": ["arch/aarch64/pt.c"],
    "test_format": ["lib/format.c"],
    "test_color": ["isolation/color.c"],
    "test_cachesets": ["core/mem/cachesets.c"],
    "test_bw_budget": ["isolation/bw_budget.c", "lib/div128.c"],
    "test_div128": ["lib/div128.c"],
    "test_qos400": ["isolation/qos400_regs.c"],
    "test_dsu_part": ["isolation/dsu_part.c"],
    "test_dw8250": ["drivers/uart/dw8250.c", "drivers/uart/uart.c"],
    "test_imx_uart": ["drivers/uart/imx.c", "drivers/uart/uart.c"],
    "test_ns16550": ["drivers/uart/ns16550.c", "drivers/uart/uart.c"],
    "test_fdt": ["lib/fdt.c"],
    "test_payload": ["core/boot/payload.c", "lib/crc32.c"],
    "test_string": ["lib/string.c"],
    "test_lockrank": ["lib/spinlock.c"],
    "test_linering": ["lib/linering.c"],
    "test_ioring": ["../guests/lib/ioring.c"],  # the guest runtime's ring library
    "test_guest_string": ["../guests/lib/string.c"],  # the guests' memcpy (the I/O VM's frame copies)
    "test_guest_timer": ["../guests/lib/timer.c"],  # the guests' timed sleeps, over a stand-in arch.h
    "test_blkring": ["../guests/lib/blkring.c"],  # its block request rings
    "test_iosched": ["../guests/iovm/iosched.c"],  # the I/O VM's scheduler
    "test_guest_virtq": ["../guests/lib/virtq.c"],  # the guests' split virtqueues (vioclient, I/O VM)
    "test_vgic": ["core/vgic/vgic.c", "core/vgic/vgic_sgi.c", "core/vgic/vgic_v2.c", "core/vgic/vgic_regs.c"],
    "test_vgic_v3_virq": ["core/vgic/vgic_v3_virq.c"],  # the quirk gic.virq: software
    "test_pcienum": ["lib/pcienum.c"],
    "test_vpci_cfg": ["core/pci/vpci_cfg.c"],
    "test_vits_cmd": ["core/vgic/vits_cmd.c"],  # the virtual ITS's commands (docs/interrupts.md)
    "test_sgi_filter": ["core/vcpu/sgi_filter.c"],
    # the virtio bridge's pure parts: the transport's registers, the virtqueue parser, the net bridge
    "test_virtio_mmio": ["core/virtio/virtio_mmio.c"],
    "test_virtq": ["core/virtio/virtq.c", "core/virtio/vnet.c", "core/virtio/vnet_offload.c",
                   "core/virtio/vcopy.c"],
    "test_vblk": ["core/virtio/virtq.c", "core/virtio/vblk.c"],  # the block bridge
    # the SMMU drivers against register-level models (docs/dma.md)
    "test_smmuv3": ["drivers/iommu.c", "drivers/smmu/smmuv3.c", "drivers/smmu/smmuv3_enc.c",
                    "arch/aarch64/pt.c", "lib/log.c", "lib/format.c"],
    "test_smmu500": ["drivers/iommu.c", "drivers/smmu/smmu500.c", "drivers/smmu/smmu500_enc.c",
                     "arch/aarch64/pt.c", "lib/log.c", "lib/format.c"],
    "test_console": ["core/console/console.c", "lib/linering.c", "lib/format.c"],
    # a DMA fault's policy against a VM reset, in every order, over a stub SMMUv3 driver (its own iommu_ops)
    "test_dma_fault": ["core/dma/dma.c", "drivers/iommu.c", "drivers/smmu/smmuv3_enc.c",
                       "lib/log.c", "lib/format.c"],
}
# the SMMU drivers built in (drivers/iommu.c dispatches to them; lib/features.h)
SMMUS: dict[str, set[str]] = {"test_smmuv3": {"SMMUV3"}, "test_smmu500": {"SMMU500"}, "test_dma_fault": {"SMMUV3"}}
# extra preprocessor definitions
STRING_RENAMES = [f"-D{f}=hyp_{f}" for f in ("memcpy", "memmove", "memset", "memcmp", "strlen", "strnlen",
                                             "strcmp", "strncmp")]
DEFINES: dict[str, list[str]] = {
    # the hypervisor's own string functions, and the guests', renamed beside the host's
    "test_string": STRING_RENAMES,
    "test_guest_string": STRING_RENAMES,
    # the lock-rank check (lib/spinlock.c), compiled out of release builds
    "test_lockrank": ["-DBULKHEAD_LOCK_CHECK"],
}
# extra include directories (the hypervisor's is always there)
INCLUDES: dict[str, list[Path]] = {"test_ioring": [GUEST_INCLUDE], "test_blkring": [GUEST_INCLUDE],
                                   "test_guest_string": [GUEST_INCLUDE],
                                   "test_guest_timer": [HOST / "guest_arch", GUEST_INCLUDE],
                                   "test_guest_virtq": [GUEST_INCLUDE],
                                   "test_iosched": [GUEST_INCLUDE, ROOT / "guests" / "iovm"]}

CFLAGS = [
    "-std=c11", "-g", "-O1", "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
    "-Wall", "-Wextra", "-Werror", "-Wno-format", f"-I{HYP}",
    "-DBULKHEAD_HOST_TEST",  # arch/aarch64/sysregs.h: the test provides host_sysreg_read/write
]


def features_flags(out: Path, smmus: Iterable[str] = ()) -> list[str]:
    """The compiler flags of a host build's features.h, written into ``out``:
    every mechanism but direct mode (its SDEI client is EL2-only) and the ITS
    (its virtual ITS drives the physical one: core/vgic/vits_cmd.c is its
    host-tested part), and the SMMU drivers ``smmus`` (lib/features.h)."""
    on = {**{m: m not in ("DIRECT", "ITS") for m in mechanisms.features()},
          **{d.upper(): d.upper() in set(smmus) for d in tree.smmu_drivers()}}
    header = out / "features.h"
    header.write_text(features.render_header(on, "a host test"))
    return ["-include", str(header)]


def test_every_host_test_is_listed() -> None:
    found = {p.stem for p in HOST.glob("test_*.c")}
    assert found == set(SOURCES)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_host_c(name: str, tmp_path: Path) -> None:
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc, "a native C compiler is required"
    exe = tmp_path / name
    srcs = [str(HOST / f"{name}.c")] + [str(HYP / s) for s in SOURCES[name]]
    incs = [f"-I{d}" for d in INCLUDES.get(name, [])] + DEFINES.get(name, []) + features_flags(tmp_path, SMMUS.get(name, ()))
    build = subprocess.run([cc, *CFLAGS, *incs, *srcs, "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{name}: ok" in run.stdout
