# SPDX-License-Identifier: Apache-2.0
"""A shared disk that is no use at start (docs/io.md "Shared disk", "A disk
that fails"): tests/configs/iovm-both.yaml booted without its disk (QEMU
given no virtio-blk device behind the disk's virtio-mmio slot, so the I/O
VM's driver finds none). The I/O VM says so and goes on: bob's virtio-blk
requests and mallory's ring requests fail with IOERR, and alice's and eve's
frames through the same I/O VM are served as with the disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_io import platforms_with_cpus
from test_vioblk_bridge import values

from bulkhead.config import shared_disk
from bulkhead.run.backend import RunOptions
from bulkhead.run.netpeer import Peer
from bulkhead.run.runner import run

pytestmark = pytest.mark.qemu

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "configs" / "iovm-both.yaml"
OUT = ROOT / "build" / "qemu-tests" / "disk-failed"


def test_a_disk_missing_at_start_fails_its_requests_not_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared_disk, "qemu_args", lambda system, out: [])  # no disk behind virtio30
    OUT.mkdir(parents=True, exist_ok=True)
    with Peer(max_frames=5000, max_seconds=240) as peer:
        r = run(CONFIG, RunOptions(timeout=240.0, icount=0, out=OUT, netdev=peer.netdev(),
                                   platforms_dir=platforms_with_cpus(5, OUT / "platforms")))
    assert not r.timed_out, r.output[-3000:]
    assert "-device virtio-blk-device" not in " ".join(r.argv)
    iovm = r.lines("iovm")
    failed = [x for x in iovm if x.startswith("iovm: disk (virtio) at 0xa003c00: ")]
    assert failed and failed[0].endswith(": every request fails (IOERR)"), iovm
    assert not any("capacity 4096 sectors" in x for x in iovm), iovm
    assert "iovm: PASS" in iovm, iovm  # it served everyone to the end
    # the network as with the disk (test_iovm_both.py)
    assert "vioclient: PASS (200 frames sent, 200 replies verified both ways)" in r.lines("alice")
    st = peer.stats.mac("02:00:00:00:00:0a")
    assert (st.requests, st.good, st.bad, st.replies) == (200, 200, 0, 200), st
    assert "ioclient: PASS (1500 frames sent, 0 replies verified both ways)" in r.lines("eve")
    assert values(iovm, "iovm: device tx=")["tx"] == 200 + 1500
    # every disk request failed, none reached a device
    bob = r.lines("bob")
    assert any(x.startswith("vioclient: FAIL (blk: ") for x in bob), bob
    for vm in ("bob", "mallory"):
        c = values(iovm, f"iovm: disk client={vm} reqs=")
        assert c["reqs"] > 0 and c["errors"] + c["refused"] == c["reqs"], (vm, c)
        assert c["read_bytes"] == c["written_bytes"] == 0, (vm, c)
    assert values(iovm, "iovm: disk device requests=")["requests"] == 0
