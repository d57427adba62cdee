# SPDX-License-Identifier: Apache-2.0
"""A shared I/O client with ``virtio: net`` (docs/io.md "VirtIO"): its region
loses its doorbell (the hypervisor's bridge takes it), its device tree gets
a virtio-mmio node instead of the region, config.c its device, the build
the VIRTIO feature; bad settings are located errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import ioconfig
import pytest
from ioconfig import assert_refused, write

from bulkhead import cli
from bulkhead.generate import features, gen_dts
from bulkhead.layout.load import load_spec, load_system

ROOT = Path(__file__).resolve().parent.parent
VIRTIO = ROOT / "configs" / "io-virtio.yaml"

# test_config_io's system, its second client with a virtio device
BASE = ioconfig.NET.replace("weight: 1, rate_cap: 1000}", "virtio: net}")
assert "virtio: net" in BASE


def test_expansion(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, BASE))
    io0, io1 = spec.shmem
    assert [(m.vm, m.doorbell_irq) for m in io0.maps] == [("iovm", 120), ("a", 120)]
    # the virtio client's doorbell is the bridge's; the I/O VM keeps its own
    assert [(m.vm, m.doorbell_irq) for m in io1.maps] == [("iovm", 121), ("b", None)]
    params = {vm.name: dict(vm.params) for vm in spec.vms}
    assert params["b"] == {"virtio_base": "0xb000000", "virtio_irq": "120"}
    assert params["a"]["io_shm"] == "0"
    assert (params["iovm"]["io1_vm"], params["iovm"]["io1_shm"]) == ("b", "1")


def test_linux_client_gets_a_virtio_node() -> None:
    system = load_system(VIRTIO)
    linux = system.vm("linux")
    assert linux is not None
    dts = gen_dts.generate(system, linux)
    node = dts[dts.index("virtio_mmio@b000000 {"):]
    node = node[:node.index("};")]
    for prop in ('compatible = "virtio,mmio"', "reg = <0x0 0xb000000 0x0 0x1000>", "interrupts = <0 88 1>",
                 "dma-coherent"):
        assert prop in node, node
    # the region is the bridge's, not the guest's
    assert "reserved-memory" not in dts and "shmem@" not in dts


def test_config_c_and_feature(tmp_path: Path) -> None:
    from bulkhead.generate import gen_c
    from bulkhead.layout import placement

    system = load_system(VIRTIO, guest_sources=None)
    bins = tmp_path / "guests"
    bins.mkdir()
    (bins / "iovm.bin").write_bytes(bytes(64))  # a stand-in: only the tables are read
    c = gen_c.generate(system, placement.stage(system, tmp_path / "out", bins), "io-virtio.yaml")
    assert re.search(r"static const struct cfg_virtio vm1_virtio\[\] = \{\n\t\{ \.type = 1, \.ipa = 0xb000000, "
                     r"\.irq = 120, \.shm = 0, \.queue = 16, \.mac = \{ 0x02, 0x00, 0x00, 0x00, 0x00, 0x0e \} \},", c), c
    assert ".virtio = vm1_virtio," in c
    assert features.features(system)["VIRTIO"]
    # without a virtio client the bridge is not built
    assert not features.features(load_system(ROOT / "tests" / "configs" / "io-pair.yaml"))["VIRTIO"]


BAD = [
    ("virtio: net", "virtio: blk", "io.clients[1].virtio: unknown virtio device 'blk'; the hypervisor bridges: net"),
    ("    guest: ioclient\nio:", "    guest: ioclient\n    interrupts: direct\nio:",
     "io.clients[1].virtio: VM 'b' has interrupts: direct"),
    ("io:\n", "shmem:\n  - {name: s, size: 4K, vms: [{vm: a, ipa: 0x60000000},"
     " {vm: b, ipa: 0x60000000, doorbell_irq: 120}]}\nio:\n",
     "io.clients[1].virtio: the virtio device's SPI 120 (io.client_doorbell_irq) is taken in VM 'b'"),
    ("  capacity: 10000\n", "  capacity: 10000\n  virtio_ipa: 0x40001000\n", "the virtio transport"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD)
def test_errors_located(capsys: pytest.CaptureFixture[str], tmp_path: Path, old: str, new: str,
                        message: str) -> None:
    assert_refused(capsys, tmp_path, BASE, old, new, message, within=True)


def test_check_reports_the_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", str(VIRTIO)]) == 0
    out = capsys.readouterr().out
    assert "  linux: virtio-net at 0xb000000, SPI 120 (the hypervisor bridges it to the rings)\n" in out, out
    assert cli.main(["check", "--json", str(VIRTIO)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["io"]["clients"][0]["virtio"] == "net", doc["io"]
