# SPDX-License-Identifier: Apache-2.0
"""One I/O VM serving the shared NIC and the shared disk (docs/io.md "One
I/O VM for both"). One boot of tests/configs/iovm-both.yaml under -icount:
alice's virtio-net frames and bob's virtio-blk requests (both through the
hypervisor's bridge, guests/vioclient) flow through the one I/O VM while
mallory, a ring client, floods the disk and eve, another, the NIC; alice
keeps the (alpha, delta) `check` states for her with a disk request added
to each frame's time, bob his share and the IOPS stated with a frame added
to each request's, and the disk image holds bob's data in his region and
nothing in anyone else's."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from test_io import check_guarantee, platforms_with_cpus
from test_vioblk_bridge import MIB, SEED, WSEED, pattern, values  # vioclient's pattern and seeds

from bulkhead.config import shared_disk, shared_io
from bulkhead.layout.load import load_spec
from bulkhead.run.backend import RunOptions
from bulkhead.run.netpeer import Peer
from bulkhead.run.runner import RunResult, run

# one worker runs the module's boot: its tests share one disk image (QEMU locks it)
pytestmark = [pytest.mark.qemu, pytest.mark.xdist_group("iovm_both")]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "configs" / "iovm-both.yaml"
OUT = ROOT / "build" / "qemu-tests" / "iovm-both"
BOB = MIB  # bob's region [0, 1 MiB), mallory's [1, 1.5 MiB) of a 2 MiB disk


PLATFORMS = OUT / "platforms"  # qemu-virt with five CPUs


@pytest.fixture(scope="module")
def both() -> tuple[RunResult, Peer]:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / shared_disk.IMAGE).write_bytes(pattern(0, BOB, SEED) + bytes(MIB))  # bob's reads check the pattern
    with Peer(max_frames=5000, max_seconds=240) as peer:
        r = run(CONFIG, RunOptions(timeout=240.0, icount=0, out=OUT, netdev=peer.netdev(),
                                   platforms_dir=platforms_with_cpus(5, PLATFORMS)))
    assert r.clean, r.reason + "\n" + r.output[-3000:]
    assert "iovm: PASS" in r.lines("iovm"), r.lines("iovm")
    return r, peer


def test_frames_and_blocks_flow_through_one_io_vm(both: tuple[RunResult, Peer]) -> None:
    r, peer = both
    assert "vioclient: PASS (200 frames sent, 200 replies verified both ways)" in r.lines("alice")
    st = peer.stats.mac("02:00:00:00:00:0a")
    assert (st.requests, st.good, st.bad, st.replies) == (200, 200, 0, 200), st
    bob = r.lines("bob")
    assert "vioclient: PASS (blk: 200 random reads, sequential reads, write + read back)" in bob, bob
    assert "vioclient: blk: read past the end: status 1 (IOERR)" in bob
    assert "ioclient: PASS (blkflood)" in r.lines("mallory")
    assert "ioclient: PASS (1500 frames sent, 0 replies verified both ways)" in r.lines("eve")
    assert peer.stats.mac("02:00:00:00:00:0e").sinks == 1500
    iovm = r.lines("iovm")
    assert "iovm: disk 0xa003c00 capacity 4096 sectors, 2 clients, work-conserving" in iovm
    assert values(iovm, "iovm: device tx=")["tx"] == 200 + 1500
    assert values(iovm, "iovm: disk client=bob reqs=")["refused"] == 0  # his read past the end: the bridge's


def test_the_regions_stay_disjoint(both: tuple[RunResult, Peer]) -> None:
    """bob's region holds the pattern and his 16 KiB write 64 KiB before
    its end; mallory only read hers; nothing else changed."""
    del both
    image = (OUT / shared_disk.IMAGE).read_bytes()
    at = BOB - 64 * 1024
    assert image[:at] == pattern(0, at, SEED)
    assert image[at:at + 16384] == pattern(at, 16384, WSEED)
    assert image[at + 16384:BOB] == pattern(at + 16384, BOB - at - 16384, SEED)
    assert image[BOB:] == bytes(MIB)


def test_floods_leave_the_nic_client_its_guarantee(both: tuple[RunResult, Peer]) -> None:
    """mallory keeps 64 reads in flight for 150 ms of virtual time and eve
    floods the NIC at alice's weight: the I/O VM serves a request between
    two of alice's frames, and alice still gets the alpha and delta `check`
    states for half of a frame time of 1/2000 s plus a disk request's
    1/1000 s (333.3 frames/s, 2 frame times: 3 ms)."""
    r, _ = both
    spec = load_spec(CONFIG, platforms_dir=PLATFORMS)
    assert spec.io is not None and spec.disk is not None
    g = shared_io.guarantees(spec.io, spec.disk)[0]
    assert (g.alpha, g.delta) == (Fraction(1000, 3), Fraction(3, 1000))
    a = check_guarantee(r, g, "alice")
    # the flood was on while alice was served: a disk request between her frames
    between = values(r.lines("iovm"), "iovm: both disk_requests_between_frames=")["disk_requests_between_frames"]
    assert between * 2 >= a["served_backlogged"], (between, a)
    assert values(r.lines("iovm"), "iovm: disk client=mallory served_backlogged=")["share_permille"] > 900


def test_floods_leave_the_disk_client_its_guarantee(both: tuple[RunResult, Peer]) -> None:
    """bob and mallory have equal weights and eve floods the NIC: bob gets
    at least about half of the requests served while he waits, and at least
    the IOPS `check` states for a request time of 1/1000 s plus a frame's
    1/2000 s."""
    r, _ = both
    spec = load_spec(CONFIG, platforms_dir=PLATFORMS)
    assert spec.disk is not None
    g = {x.vm: x for x in shared_disk.guarantees(spec.disk, spec.io)}
    assert g["bob"].iops == Fraction(1000, 3)
    bob = values(r.lines("iovm"), "iovm: disk client=bob served_backlogged=")
    assert bob["share_permille"] >= 450, bob  # a backlog period may start behind one of mallory's
    assert bob["served_backlogged"] * 1_000_000 >= g["bob"].iops * bob["backlog_us"], (bob, g["bob"])
