# SPDX-License-Identifier: Apache-2.0
"""A stock Linux client of the shared disk over VirtIO (docs/io.md
"VirtIO"): Debian's virtio_mmio and virtio_blk modules, no Bulkhead code in
the guest, bind to the generated ``virtio,mmio`` node, whose registers the
hypervisor emulates and whose requests it bridges to the client's block
rings. In one boot (tests/configs/disk-linux-virtio.yaml) Linux sees
/dev/vda of its region's size and its serial (get-id), writes 1 MiB of a pattern at 512 KiB, drops
its caches and reads it back (MD5s compared); bob, a ring client, passes in
his own region; the image afterwards holds Linux's pattern where it wrote
it, bob's in his region, and nothing anywhere else."""

from __future__ import annotations

import gzip
import re
from array import array
from pathlib import Path

import pytest

from bulkhead.config import shared_disk
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, run

# one worker runs the module's boot: its tests share one disk image (QEMU locks it)
pytestmark = [pytest.mark.qemu, pytest.mark.xdist_group("vioblk_linux")]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "configs" / "disk-linux-virtio.yaml"
OUT = ROOT / "build" / "qemu-tests" / "disk-linux-virtio"
INITRD = ROOT / "artefacts" / "linux" / "initrd.cpio.gz"
KIB, MIB = 1 << 10, 1 << 20
MASK = (1 << 64) - 1


def bob_pattern(size: int) -> bytes:
    h = 0xCBF29CE484222325
    for b in b"bob":
        h = ((h ^ b) * 0x100000001B3) & MASK
    return array("Q", (((o * 0x9E3779B97F4A7C15) & MASK) ^ h for o in range(0, size, 8))).tobytes()


@pytest.fixture(scope="module")
def booted() -> RunResult:
    assert INITRD.is_file(), "run scripts/setup.sh first (Linux artefacts)"
    assert b"virtio_blk.ko" in gzip.decompress(INITRD.read_bytes()), \
        "the initramfs has no virtio_blk.ko: rerun scripts/setup.sh linux (ensure_linux_tools)"
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / shared_disk.IMAGE).unlink(missing_ok=True)  # a blank disk
    r = run(CONFIG, RunOptions(timeout=300.0, out=OUT))
    assert r.clean, r.reason + "\n" + r.output[-3000:]
    assert "iovm: PASS" in r.lines("iovm")
    return r


def test_linux_sees_its_region_and_reads_back_what_it_wrote(booted: RunResult) -> None:
    linux = booted.lines("linux")
    assert "vda: sectors 4096 serial bulkhead-disk0" in linux, linux[-30:]  # get-id: the I/O VM's name
    assert "vda: written" in linux, linux[-30:]
    sums = {k: v for k, v in (re.findall(r"^vda: (pattern|readback) ([0-9a-f]{32})", x)[0]
                              for x in linux if re.match(r"^vda: (pattern|readback) ", x))}
    assert len(sums) == 2 and sums["pattern"] == sums["readback"], linux[-30:]
    line = [x for x in booted.output.splitlines() if "vm linux: virtio-blk notifies=" in x]
    hyp = {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", line[-1])}
    assert (hyp["ioerr"], hyp["unsupp"], hyp["rsp_bad"], hyp["error"]) == (0, 0, 0, 0), hyp
    assert hyp["parts"] >= 256 + 256  # 1 MiB written and read back, in 4 KiB parts


def test_the_image_holds_each_clients_data_and_nothing_else(booted: RunResult) -> None:
    assert "ioclient: PASS (blk: region written, read back, random reads, 3 outside refused)" in booted.lines("bob")
    image = (OUT / shared_disk.IMAGE).read_bytes()
    data = (b"bulkhead-viobr\n" * (MIB // 15 + 1))[:MIB]
    assert image[512 * KIB:512 * KIB + MIB] == data
    assert image[:512 * KIB] == bytes(512 * KIB) and image[512 * KIB + MIB:2 * MIB] == bytes(512 * KIB)
    assert image[2 * MIB:3 * MIB] == bob_pattern(MIB)
    assert image[3 * MIB:] == bytes(MIB)
