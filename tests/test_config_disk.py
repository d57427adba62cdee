# SPDX-License-Identifier: Apache-2.0
"""The ``disk:`` section (docs/io.md "Shared disk"): the regions the
toolchain lays out, the shared memory and parameters it expands into, the
guarantees ``check`` states, located errors for overlapping and oversized
regions."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import ioconfig
import pytest
from ioconfig import assert_refused, write

from bulkhead import cli
from bulkhead.config import shared_disk
from bulkhead.layout.load import load_spec, load_system

BASE = ioconfig.DISK


def test_expansion(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, BASE))
    assert spec.disk is not None
    assert shared_disk.layout(spec.disk) == [(0, 1 << 20), (1 << 20, 2 << 20)]
    d0, d1 = spec.shmem
    assert (d0.name, d0.size) == ("disk0", 0xa000)  # 4096 + 2 * 4 * 4160, in whole pages
    assert (d1.name, d1.size) == ("disk1", 0x12000)
    assert [(m.vm, m.ipa, m.doorbell_irq) for m in d0.maps] == [("iovm", 0x78000000, 130), ("a", 0x78000000, 121)]
    assert [(m.vm, m.ipa, m.doorbell_irq) for m in d1.maps] == [("iovm", 0x78000000 + 0xa000, 131),
                                                                 ("b", 0x78000000, 121)]
    iovm = dict(spec.vms[0].params)
    assert (iovm["disk_clients"], iovm["disk_base"], iovm["disk_sectors"]) == ("2", "0xa003c00", "16384")
    assert (iovm["disk1_vm"], iovm["disk1_shm"], iovm["disk1_weight"]) == ("b", "1", "1")
    assert (iovm["disk1_start"], iovm["disk1_sectors"], iovm["disk1_queue"]) == ("2048", "4096", "8")
    assert dict(spec.vms[1].params) == {"blk_shm": "0", "blk_queue": "4", "blk_sectors": "2048"}


def test_explicit_offset_and_layout_after_it(tmp_path: Path) -> None:
    text = BASE.replace("{vm: a, size: 1M,", "{vm: a, size: 1M, offset: 0x600000,").replace("size: 8M", "size: 9M")
    spec = load_spec(write(tmp_path, text))
    assert spec.disk is not None
    assert shared_disk.layout(spec.disk) == [(0x600000, 1 << 20), (0x700000, 2 << 20)]
    assert dict(spec.vms[0].params)["disk1_start"] == str(0x700000 // 512)


def test_guarantees_reported(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, BASE))
    assert spec.disk is not None
    a, b = shared_disk.guarantees(spec.disk)
    assert (a.share, a.iops, a.mbps, a.delta) == (Fraction(3, 4), Fraction(15000), Fraction(60), Fraction(2, 20000))
    assert (b.iops, b.mbps, b.delta) == (Fraction(5000), Fraction(20), Fraction(4, 20000))
    assert cli.main(["check", str(write(tmp_path, BASE))]) == 0
    out = capsys.readouterr().out
    assert "shared disk: device virtio30 -> I/O VM iovm, 8 MiB, capacity 20000 IOPS (4 KiB) and 80 MB/s" in out
    assert "  a: sectors [0, 2048) (1024 KiB), weight 3 (75.0%): >= 15000.0 IOPS, >= 60.00 MB/s, " \
           "delta <= 100.0 us" in out
    assert "  b: sectors [2048, 6144) (2048 KiB), weight 1 (25.0%): >= 5000.0 IOPS" in out
    assert cli.main(["check", "--json", str(write(tmp_path, BASE))]) == 0
    doc = json.loads(capsys.readouterr().out)["disk"]
    assert [(c["vm"], c["start_sector"], c["sectors"], c["iops"]) for c in doc["clients"]] == [
        ("a", 0, 2048, 15000.0), ("b", 2048, 4096, 5000.0)]


def test_qemu_args() -> None:
    root = Path(__file__).resolve().parent.parent
    system = load_system(root / "tests" / "configs" / "disk-pair.yaml")
    assert shared_disk.qemu_args(system, "/x") == [
        "-global", "virtio-mmio.force-legacy=false", "-drive", "file=/x/disk.img,if=none,format=raw,id=bhdisk",
        "-device", "virtio-blk-device,drive=bhdisk,bus=virtio-mmio-bus.30"]
    assert shared_disk.qemu_args(load_system(root / "tests" / "configs" / "doorbell.yaml"), "x") == []


def test_the_zynqmp_sd_card() -> None:
    """An SD host controller of the platform is a disk device too: the I/O
    VM's driver is named in its parameters (no introspection needed: no
    DMA), the image is the disk's size rounded up to a power of two (QEMU's
    SD card model) and goes on the controller's SD bus."""
    root = Path(__file__).resolve().parent.parent
    system = load_system(root / "tests" / "configs" / "zcu102-disk.yaml")
    iovm = dict(system.spec.vms[0].params)
    assert (iovm["disk_driver"], iovm["disk_base"], iovm["disk_sectors"]) == ("sdhci", "0xff160000", "8192")
    assert shared_disk.qemu_args(system, "/x") == ["-drive", "file=/x/disk.img,if=sd,index=0,format=raw"]
    assert shared_disk.image_size(system) == 4 << 20
    three = replace(system.spec, disk=replace(system.spec.disk, size=3 << 20))
    assert shared_disk.image_size(replace(system, spec=three)) == 4 << 20
    sd1 = replace(system.spec, disk=replace(system.spec.disk, device="sd1"))
    assert shared_disk.qemu_args(replace(system, spec=sd1), "/x")[1].endswith("if=sd,index=1,format=raw")
    assert dict(load_system(root / "tests" / "configs" / "disk-pair.yaml").spec.vms[0].params)["disk_driver"] \
        == "virtio"


def test_a_zynqmp_device_that_is_no_disk(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    text = (root / "tests" / "configs" / "zcu102-disk.yaml").read_text()
    assert_refused(capsys, tmp_path, text, "  device: sd0\n", "  device: gem3\n",
                   "disk.device: 'gem3' is not a disk device of 'zcu102' (the I/O VM drives a virtio-blk device on "
                   "a virtio-mmio transport or an SD card on an SD host controller, compatible "
                   "'arasan,sdhci-8.9a'): sd0, sd1")


BAD = [
    ("{vm: b, size: 2M,", "{vm: b, size: 2M, offset: 0x80000,",
     "disk.clients[1].offset: region [0x80000, 0x280000) of 'b' overlaps disk.clients[0]'s [0x0, 0x100000)"),
    ("{vm: b, size: 2M,", "{vm: b, size: 8M,",
     "disk.clients[1].size: region [0x100000, 0x900000) of 'b' ends beyond the disk's 0x800000 bytes"),
    ("{vm: b, size: 2M,", "{vm: b, size: 2M, offset: 0x7ff000,",
     "disk.clients[1].size: region [0x7ff000, 0x9ff000) of 'b' ends beyond"),
    ("{vm: b, size: 2M,", "{vm: b, size: 1000,", "disk.clients[1].size: the region's size is not a multiple of 4096"),
    ("{vm: b, size: 2M,", "{vm: b, size: 2M, offset: 0x100200,",
     "disk.clients[1].offset: the region's offset is not a multiple of 4096"),
    ("{vm: b, size", "{vm: a, size", "disk.clients[1].vm: VM 'a' is a disk client twice"),
    ("{vm: b, size", "{vm: iovm, size", "disk.clients[1].vm: VM 'iovm' is the disk's I/O VM"),
    ("{vm: b, size", "{vm: c, size", "disk.clients[1].vm: unknown VM 'c'"),
    ("  device: virtio30\n", "  device: rtc\n", "disk.device: 'rtc' is not a disk device of 'qemu-virt' (the I/O VM drives a "
     "virtio-blk device on a virtio-mmio transport or an SD card on an SD host controller, compatible "
     "'arasan,sdhci-8.9a'): virtio0, "),
    ("    devices: [virtio30]\n", "", "disk.device: device 'virtio30' must be passed through to the I/O VM"),
    ("  iops: 20000\n", "  iops: 0\n", "disk.iops: expected 4 KiB requests/s (integer 1-10000000), got 0"),
    ("  mbps: 80\n", "", "disk: missing required key 'mbps'"),
    ("queue: 4", "queue: 65", "disk.clients[0].queue: expected a queue size (integer 1-64), got 65"),
    ("weight: 3", "weight: 101", "disk.clients[0].weight: expected a weight (integer 1-100), got 101"),
    ("  vm: iovm\n", "  vm: zz\n", "disk.vm: unknown VM 'zz'"),
    ("    introspection: true  # host physical addresses (BH_HC_IPA_INFO)\n", "",
     "disk.vm: the I/O VM 'iovm' gives the disk the host physical addresses of its buffers (BH_HC_IPA_INFO): "
     "add 'introspection: true' to vms[0]"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD)
def test_errors_located(capsys: pytest.CaptureFixture[str], tmp_path: Path, old: str, new: str,
                        message: str) -> None:
    assert_refused(capsys, tmp_path, BASE, old, new, message)


def test_stats_view_shows_the_disk_counters() -> None:
    """`run --stats`: the I/O VM's `iovm: disk client=` counter lines become a
    per-client table (latest values), not console output; its final
    share lines (other keys) stay console output."""
    import io

    from bulkhead.run import stats

    out, err = io.StringIO(), io.StringIO()
    view = stats.StatsView(out, err, stats.stats_timebase(0))
    line = ("[iovm] iovm: disk client=alice reqs={} read_bytes=4096 written_bytes=8192 refused=3 errors=0 "
            "malformed=1 iops=900\n")
    share = "[iovm] iovm: disk client=alice served_backlogged=9 backlog_us=10 share_permille=500\n"
    view.write(line.format(2))
    view.flush()
    view.write(line.format(9) + share)
    view.flush()
    view.close()
    assert out.getvalue() == share
    text = err.getvalue().splitlines()
    assert text[0] == "shared disk per client (virtual time, --icount 0), update 1:"
    assert text[-1].split() == ["alice", "9", "4096", "8192", "3", "0", "1", "900"]
    assert shared_disk.parse_stats("[iovm] iovm: disk client=a reqs=1") is None
