# SPDX-License-Identifier: Apache-2.0
"""A shared disk client with ``virtio: blk`` (docs/io.md "VirtIO"): its
region loses its doorbell (the hypervisor's bridge takes it), its device
tree gets a second virtio-mmio node instead of the region, config.c its
block device with its capacity, the build the VIRTIO feature, ``check``
reports it; bad settings are located errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ioconfig import DISK, assert_refused, write

from bulkhead import cli
from bulkhead.generate import features, gen_c, gen_dts
from bulkhead.layout import placement
from bulkhead.layout.load import load_spec, load_system

# test_config_disk's system, its second client a virtio-blk client
BASE = DISK.replace("- {vm: b, size: 2M, weight: 1}", "- {vm: b, size: 2M, weight: 1, virtio: blk}")
assert "virtio: blk" in BASE
ROOT = Path(__file__).resolve().parent.parent
IMAGE = ROOT / "artefacts" / "linux" / "Image"


def test_expansion(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, BASE))
    d0, d1 = spec.shmem
    assert [(m.vm, m.doorbell_irq) for m in d0.maps] == [("iovm", 130), ("a", 121)]
    assert [(m.vm, m.doorbell_irq) for m in d1.maps] == [("iovm", 131), ("b", None)]
    params = {vm.name: dict(vm.params) for vm in spec.vms}
    assert params["b"] == {"virtio_blk_base": "0xb001000", "virtio_blk_irq": "121"}
    assert params["a"]["blk_shm"] == "0"


def test_device_tree_config_c_and_feature(tmp_path: Path) -> None:
    head, vm_b = BASE.split("  - name: b\n")
    vm_b = vm_b.replace("16M", "128M", 1).replace("    guest: ioclient\n", "", 1)  # room for the kernel
    linux = f"{head}  - name: b\n    type: linux\n    kernel: {IMAGE}\n{vm_b}"
    system = load_system(write(tmp_path, linux), guest_sources=None)
    b = system.vm("b")
    assert b is not None
    dts = gen_dts.generate(system, b)
    node = dts[dts.index("virtio_mmio@b001000 {"):]
    node = node[:node.index("};")]
    for prop in ('compatible = "virtio,mmio"', "reg = <0x0 0xb001000 0x0 0x1000>", "interrupts = <0 89 1>",
                 "dma-coherent"):
        assert prop in node, node
    assert "shmem@" not in dts  # the region is the bridge's, not the guest's
    assert features.features(system)["VIRTIO"]


def test_config_c(tmp_path: Path) -> None:
    system = load_system(write(tmp_path, BASE), guest_sources=None)
    bins = tmp_path / "guests"
    bins.mkdir()
    for g in ("iovm", "ioclient"):
        (bins / f"{g}.bin").write_bytes(bytes(64))  # stand-ins: only the tables are read
    c = gen_c.generate(system, placement.stage(system, tmp_path / "out", bins), "vioblk.yaml")
    assert re.search(r"static const struct cfg_virtio vm2_virtio_blk\[\] = \{\n\t\{ \.type = 2, \.ipa = 0xb001000, "
                     r"\.irq = 121, \.shm = 0, \.queue = 8, \.sectors = 4096 \},", c), c
    assert ".virtio_blk = vm2_virtio_blk," in c


BAD = [
    ("virtio: blk", "virtio: net", "disk.clients[1].virtio: unknown virtio device 'net' for a disk client"),
    ("    guest: ioclient\ndisk:", "    guest: ioclient\n    interrupts: direct\ndisk:",
     "disk.clients[1].virtio: VM 'b' has interrupts: direct"),
    ("  mbps: 80\n", "  mbps: 80\n  virtio_ipa: 0x40001000\n", "the virtio-blk transport"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD)
def test_errors_located(capsys: pytest.CaptureFixture[str], tmp_path: Path, old: str, new: str,
                        message: str) -> None:
    assert_refused(capsys, tmp_path, BASE, old, new, message, within=True)


def test_a_non_bare_metal_ring_client_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = DISK.replace("  - name: b\n", f"  - name: b\n    type: linux\n    kernel: {IMAGE}\n").replace(
        "    guest: ioclient\ndisk:", "disk:")
    path = write(tmp_path, text)
    assert cli.main(["check", str(path)]) == 1
    assert "or add 'virtio: blk'" in capsys.readouterr().err


def test_check_reports_the_device(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, BASE)
    assert cli.main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  b: virtio-blk at 0xb001000, SPI 121 (the hypervisor bridges it to the block rings)\n" in out, out
    assert cli.main(["check", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["virtio"] for c in doc["disk"]["clients"]] == [None, "blk"], doc["disk"]
