# SPDX-License-Identifier: Apache-2.0
"""The shared disk (docs/io.md "Shared disk"): a virtio-blk device passed
through to the I/O VM (guests/iovm/blkserve.c), shared by bare-metal clients
speaking the block ring (guests/ioclient mode=blk, blkflood); and the same
polled driver (guests/lib/vblk.c) on QEMU's device without the hypervisor,
the reference. One boot of tests/configs/disk-dos.yaml under -icount serves
every assertion on the shared disk: each honest client writes, reads back
and checks its own region, is refused outside it, and keeps its share of
the requests while a third client floods; the image afterwards holds each
client's pattern in its region and nothing anywhere else."""

from __future__ import annotations

import re
from array import array
from pathlib import Path

import baremetal
import pytest

from bulkhead.config import shared_disk
from bulkhead.layout.load import load_spec
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, run

# one worker runs the module's boot: its tests share one disk image (QEMU locks it)
pytestmark = [pytest.mark.qemu, pytest.mark.xdist_group("disk")]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "configs" / "disk-dos.yaml"
OUT = ROOT / "build" / "qemu-tests" / "disk-dos"
TIMEOUT = 240.0
MASK = (1 << 64) - 1


def fnv1a(name: str) -> int:
    h = 0xCBF29CE484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def pattern(size: int, seed: int) -> bytes:
    """A client's pattern (guests/ioclient/blkclient.c): the u64 at byte o of
    its region is o * K ^ seed."""
    return array("Q", (((o * 0x9E3779B97F4A7C15) & MASK) ^ seed for o in range(0, size, 8))).tobytes()


def values(lines: list[str], prefix: str) -> dict[str, int]:
    """The key=value numbers of the last line starting with ``prefix``."""
    found = [x for x in lines if x.startswith(prefix)]
    assert found, lines
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", found[-1])}


@pytest.fixture(scope="module")
def flood() -> RunResult:
    (OUT / shared_disk.IMAGE).unlink(missing_ok=True)  # a blank disk for this run
    r = run(CONFIG, RunOptions(timeout=TIMEOUT, icount=0, out=OUT))
    assert r.clean, r.reason + "\n" + r.output[-3000:]
    assert "iovm: PASS" in r.lines("iovm")
    return r


@pytest.mark.parametrize("vm", ["alice", "bob"])
def test_clients_keep_to_their_regions(flood: RunResult, vm: str) -> None:
    lines = flood.lines(vm)
    assert "ioclient: PASS (blk: region written, read back, random reads, 3 outside refused)" in lines, lines
    assert f"ioclient: blk: id bulkhead-disk{['alice', 'bob'].index(vm)} sectors 2048 queue 8" in lines
    assert "ioclient: blk: outside the region: read=1 write=1 far=1" in lines  # IOERR each
    seen = values(lines, "ioclient: blk: seen by the I/O VM: ")
    served = values(flood.lines("iovm"), f"iovm: disk client={vm} reqs=")
    # get-id, 64 writes, a flush, 64 sequential and 100 random reads, 3 refused
    assert seen["reqs"] == served["reqs"] == 1 + 64 + 1 + 64 + 100 + 3
    assert (served["refused"], served["errors"], served["malformed"]) == (3, 0, 0)
    assert (served["written_bytes"], served["read_bytes"]) == (256 * 1024, (64 + 100) * 4096)


def test_the_image_holds_each_clients_data_and_nothing_else(flood: RunResult) -> None:
    """What each client wrote is in its own region, the write that
    straddled alice's end reached neither side of it, mallory (reads only)
    and the space between the regions are untouched (the image was blank)."""
    del flood
    image = (OUT / shared_disk.IMAGE).read_bytes()
    mib, written = 1 << 20, 256 * 1024
    assert len(image) == 4 * mib
    assert image[:written] == pattern(written, fnv1a("alice"))
    assert image[2 * mib:2 * mib + written] == pattern(written, fnv1a("bob"))
    blank = bytes(4 * mib)
    assert image[written:2 * mib] == blank[written:2 * mib]  # incl. alice's end and mallory's region
    assert image[2 * mib + written:] == blank[2 * mib + written:]


def test_a_flooding_client_does_not_take_the_others_share(flood: RunResult) -> None:
    """mallory keeps her whole ring of reads in flight for 400 ms of virtual
    time at the same weight: alice and bob still get at least a third of the
    requests served while they wait (weighted round-robin by request), and
    at least the IOPS `check` guarantees them."""
    spec = load_spec(CONFIG)
    assert spec.disk is not None
    g = {x.vm: x for x in shared_disk.guarantees(spec.disk)}
    iovm = flood.lines("iovm")
    flooded = values(flood.lines("mallory"), "ioclient: blkflood: reqs=")
    assert flooded["errors"] == 0 and flooded["reqs"] > 10 * 233, flooded
    for vm in ("alice", "bob"):
        share = values(iovm, f"iovm: disk client={vm} served_backlogged=")
        # each backlog period may start behind one request of each other client
        assert share["share_permille"] >= 300, share
        assert share["served_backlogged"] * 1_000_000 >= g[vm].iops * share["backlog_us"], (share, g[vm])
    assert values(iovm, "iovm: disk client=mallory served_backlogged=")["share_permille"] > 900


def test_counters_are_printed_while_serving(flood: RunResult) -> None:
    """stats_ms=100: the I/O VM prints every client's counters every 100 ms
    of virtual time even while mallory keeps it busy for 400 ms (what
    `bulkhead run --stats` shows), growing: four lines during the flood and
    the last (printed only when it idled, it printed three)."""
    lines = [x for x in flood.lines("iovm") if x.startswith("iovm: disk client=mallory reqs=")]
    assert len(lines) >= 5, lines
    reqs = [int(re.findall(r"reqs=(\d+)", x)[0]) for x in lines]
    assert reqs == sorted(reqs) and reqs[0] < reqs[-1], reqs


def test_malformed_requests_are_dropped_and_counted(flood: RunResult) -> None:
    """mallory's 30 malformed slots (bad flag, index, op, counts, a wrapping
    sector) are dropped, counted for her alone and never answered; the I/O
    VM goes on serving everyone."""
    assert "ioclient: blkflood: 30 malformed slots dropped" in flood.lines("mallory")
    iovm = flood.lines("iovm")
    mallory = values(iovm, "iovm: disk client=mallory reqs=")
    assert mallory["malformed"] == 30
    assert mallory["reqs"] == values(flood.lines("mallory"), "ioclient: blkflood: reqs=")["reqs"]
    assert all(values(iovm, f"iovm: disk client={vm} reqs=")["malformed"] == 0 for vm in ("alice", "bob"))


@pytest.fixture(scope="module")
def ioclient_elf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return baremetal.make_guest(tmp_path_factory.mktemp("guests"), "ioclient")


def test_the_same_driver_on_the_device_itself(ioclient_elf: Path, tmp_path: Path) -> None:
    """The reference: ioclient mode=blkdev drives QEMU's virtio-blk device
    with lib/vblk.c directly (no hypervisor, no I/O VM): it writes 1 MiB,
    reads it back and reads at random, and the image holds what it wrote."""
    disk = tmp_path / "disk.img"
    disk.write_bytes(bytes(2 << 20))
    lines = baremetal.boot(ioclient_elf, tmp_path, {"mode": "blkdev", "wseed": 0x77, "reads": 200}, smp=1,
                           timeout=120, extra=["-icount", "shift=0", "-global", "virtio-mmio.force-legacy=false",
                                               "-drive", f"if=none,id=d0,file={disk},format=raw",
                                               "-device", "virtio-blk-device,drive=d0,bus=virtio-mmio-bus.0"])
    assert "ioclient: PASS (blkdev)" in lines, lines
    assert "ioclient: blkdev: capacity 4096 sectors" in lines
    assert values(lines, "ioclient: result bench=blk_randread ")["reads"] == 200
    assert values(lines, "ioclient: result bench=blk_seqread ")["kib"] == 1024
    image = disk.read_bytes()
    assert image[:1 << 20] == pattern(1 << 20, 0x77) and image[1 << 20:] == bytes(1 << 20)
