# SPDX-License-Identifier: Apache-2.0
"""One I/O VM serving ``io:`` and ``disk:`` (docs/io.md "One I/O VM for
both"): both sections expand into the one VM's regions and parameters, and
``check`` states each device's guarantees with the other device's service
time added to each service (the I/O VM's loop alternates one frame and one
request); on two I/O VMs nothing changes."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from ioconfig import BOTH, write

from bulkhead import cli
from bulkhead.config import shared_disk, shared_io
from bulkhead.layout.load import load_spec

US = Fraction(1, 10**6)


def test_one_vm_gets_both_sections(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, BOTH))
    assert [sh.name for sh in spec.shmem] == ["io0", "io1", "disk0", "disk1"]
    assert [m.doorbell_irq for sh in spec.shmem for m in sh.maps if m.vm == "iovm"] == [120, 121, 130, 131]
    iovm = dict(spec.vms[0].params)
    assert (iovm["io_clients"], iovm["io_rate"], iovm["io1_shm"]) == ("2", "10000", "1")
    # the disk's regions come after the network's among the I/O VM's
    assert (iovm["disk_clients"], iovm["disk_iops"], iovm["disk0_shm"], iovm["disk1_shm"]) == ("2", "20000", "2", "3")
    a = dict(spec.vms[1].params)
    assert (a["io_shm"], a["blk_shm"]) == ("0", "1")


def test_each_service_waits_for_one_of_the_other_device(tmp_path: Path) -> None:
    """A frame takes 1/10000 s and a request 1/20000 s: with the loop
    alternating, each service may wait for one of the other's, 150 us."""
    spec = load_spec(write(tmp_path, BOTH))
    assert spec.io is not None and spec.disk is not None
    assert shared_io.cpu_shared(spec.io, spec.disk) == (50 * US, 100 * US)
    a, b = shared_io.guarantees(spec.io, spec.disk)
    assert (a.alpha, a.delta, a.gap_slots) == (Fraction(5000), 300 * US, 1)  # 3/4 of a frame per 150 us
    assert (b.alpha, b.delta) == (Fraction(1000), 600 * US + Fraction(1, 1000))  # its cap 1000 < 1/4 / 150 us
    da, db = shared_disk.guarantees(spec.disk, spec.io)
    assert (da.iops, da.delta) == (Fraction(5000), 300 * US)
    assert (db.iops, db.delta) == (Fraction(5000, 3), 600 * US)
    # a sequential 4 KiB request at 80 MB/s takes 51.2 us, then a frame's 100 us
    assert da.mbps == Fraction(3, 4) * 4096 / (Fraction(4096, 80 * 10**6) + 100 * US) / 10**6
    # without the other section in the same VM, as before
    assert shared_io.guarantees(spec.io)[0].alpha == Fraction(7500)
    assert shared_disk.guarantees(spec.disk)[0].iops == Fraction(15000)


def test_two_io_vms_share_nothing(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, BOTH))
    assert spec.io is not None and spec.disk is not None
    assert shared_io.cpu_shared(spec.io, replace(spec.disk, vm="other")) == (0, 0)


def test_check_states_both(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, BOTH)
    assert cli.main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert ("  the I/O VM serves the disk too: a frame's time 100.0 us + one disk request's 50.0 us "
            "(effective capacity 6666.7 frames/s)") in out, out
    assert "  a: queue 8, weight 3 (75.0%), mac 02:00:00:00:00:0a: alpha >= 5000.0 frames/s, delta <= 300.0 us" in out
    assert ("  the I/O VM serves the network too: a request's time 50.0 us + one frame's 100.0 us "
            "(effective capacity 6666.7 IOPS)") in out, out
    assert "  a: sectors [0, 2048) (1024 KiB), weight 3 (75.0%): >= 5000.0 IOPS, >= 20.32 MB/s, delta <= 300.0 us" in out
    assert cli.main(["check", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["io"]["disk_us_per_frame"] == 50.0 and doc["disk"]["frame_us_per_request"] == 100.0
    assert doc["io"]["clients"][0]["alpha_fps"] == 5000.0 and doc["disk"]["clients"][0]["iops"] == 5000.0


def test_run_stats_shows_both_tables() -> None:
    """`run --stats` on one I/O VM's console: its frame counters and its disk
    counters become two tables; the line that says how many requests it
    served between frames stays console output."""
    import io

    from bulkhead.run import stats

    out, err = io.StringIO(), io.StringIO()
    view = stats.StatsView(out, err, stats.stats_timebase(0))
    between = "[iovm] iovm: both disk_requests_between_frames=200\n"
    view.write("[iovm] iovm: stats client=alice tx=200 tx_bytes=206000 rx=200 rx_bytes=206000 rx_drops=0 "
               "malformed=0 runt=0 spoofed=0 alpha_fps=37343 delta_us=263 overruns=0\n"
               "[iovm] iovm: disk client=bob reqs=289 read_bytes=1163264 written_bytes=16384 refused=0 errors=0 "
               f"malformed=0 iops=15633\n{between}")
    view.flush()
    view.close()
    assert out.getvalue() == between
    text = err.getvalue().splitlines()
    assert text[0] == "shared I/O per client (virtual time, --icount 0), update 1:"
    assert text[2].split() == ["alice", "200", "206000", "200", "206000", "0", "0", "37343", "263"]
    assert text[3] == "shared disk per client (virtual time, --icount 0), update 1:"
    assert text[5].split() == ["bob", "289", "1163264", "16384", "0", "0", "0", "15633"]
