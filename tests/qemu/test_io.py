# SPDX-License-Identifier: Apache-2.0
"""Shared I/O (docs/io.md): an I/O VM drives a virtio-net device and serves
bare-metal clients through frame rings; frames really leave QEMU over a
``-netdev dgram`` socket to a peer thread on loopback (bulkhead.netpeer),
which checks and answers them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bulkhead.config import shared_io
from bulkhead.layout.load import load_spec
from bulkhead.run.netpeer import Peer
from bulkhead.run.runner import RunResult, run

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "configs"
TIMEOUT = 240.0


def boot(config: str, peer: Peer, icount: int | None = None) -> RunResult:
    path = CONFIGS / config
    return run(path, timeout=TIMEOUT, icount=icount, out=ROOT / "build" / "qemu-tests" / path.stem,
               netdev=peer.netdev())


def client_stats(r: RunResult, vm: str) -> dict[str, int]:
    """The I/O VM's counters for client ``vm`` (its report lines)."""
    stats: dict[str, int] = {}
    for line in r.lines("iovm"):
        if line.startswith(f"iovm: client {vm} "):
            stats.update({k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)})
    assert stats, f"no counters for {vm} in {r.lines('iovm')}"
    return stats


def device_stats(r: RunResult) -> dict[str, int]:
    for line in r.lines("iovm"):
        if line.startswith("iovm: device tx="):
            return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}
    raise AssertionError(f"no device line in {r.lines('iovm')}")


def test_two_clients_echo_through_outside_peer() -> None:
    assert_pair_echo("io-pair.yaml")


def assert_pair_echo(config: str) -> RunResult:
    """Boots ``config`` (io-pair.yaml or its ZynqMP twin) with a peer: each
    client's 50 frames go out and come back, checked both ways."""
    with Peer(max_frames=1000, max_seconds=TIMEOUT) as peer:
        r = boot(config, peer)
    assert r.clean, r.reason + "\n" + r.output[-3000:]
    assert "iovm: PASS" in r.lines("iovm")
    for vm, mac in (("alice", "02:00:00:00:00:0a"), ("bob", "02:00:00:00:00:0b")):
        # the client checked every reply: its own checksum, the peer's checksum
        # of the request, the transformed data
        assert "ioclient: PASS (50 frames sent, 50 replies verified both ways)" in r.lines(vm)
        # the peer checked every request's checksum
        st = peer.stats.mac(mac)
        assert (st.requests, st.good, st.bad, st.replies) == (50, 50, 0, 50)
        c = client_stats(r, vm)
        assert (c["tx"], c["rx"], c["rx_drops"], c["malformed"]) == (50, 50, 0, 0)
    assert device_stats(r)["tx"] == 100 and device_stats(r)["rx"] == 100
    return r


@pytest.mark.parametrize(("config", "flood", "share_max"), [
    ("io-dos.yaml", 1500, 600),  # equal weights
    ("io-dos-weights.yaml", 600, 900),  # alice weight 3, mallory weight 1 and capped at 400 frames/s
])
def test_flooding_client_cannot_starve_the_other(config: str, flood: int, share_max: int) -> None:
    """mallory floods; alice still gets her weight's share of the service
    slots, at least the alpha `check` promises and a delta within its bound
    (virtual time: -icount)."""
    assert_flood(config, flood, share_max)


def assert_flood(config: str, flood: int, share_max: int) -> RunResult:
    """The flood test's assertions on ``config``; returns the run."""
    spec = load_spec(CONFIGS / config)
    assert spec.io is not None
    g = {x.vm: x for x in shared_io.guarantees(spec.io)}
    with Peer(max_frames=10_000, max_seconds=TIMEOUT) as peer:
        r = boot(config, peer, icount=0)
    assert r.clean, r.reason + "\n" + r.output[-3000:]
    assert "ioclient: PASS (100 frames sent, 100 replies verified both ways)" in r.lines("alice")
    assert f"ioclient: PASS ({flood} frames sent, 0 replies verified both ways)" in r.lines("mallory")
    a, m = client_stats(r, "alice"), client_stats(r, "mallory")
    assert a["overruns"] == 0, a  # no slot started a whole slot late while alice was backlogged
    # contention really happened (alone, alice would get every slot) ...
    share = int(g["alice"].share * 1000)
    assert share <= a["share_permille"] <= share_max, a
    # ... and alice got at least her share, in slots and in virtual time
    assert a["gap_slots"] <= g["alice"].gap_slots, a
    delta_us = float(g["alice"].delta) * 1e6
    # bounded delay: served(t) >= alpha * (t - delta) at every service while backlogged
    assert a["supply_delta_us"] <= delta_us, (a, g["alice"])
    assert a["delta_us"] <= delta_us, (a, g["alice"])
    # the rate over the backlogged time, less at most one delta per backlog period
    assert a["served_backlogged"] >= float(g["alice"].alpha) * (a["backlog_us"] - a["periods"] * delta_us) / 1e6
    if spec.io.clients[1].rate_cap is not None:  # the cap holds mallory back even when alice is idle
        assert m["alpha_fps"] <= spec.io.clients[1].rate_cap, m
    assert m["tx"] == flood and a["tx"] == 100
    assert peer.stats.mac("02:00:00:00:00:0c").sinks == flood
    assert peer.stats.mac("02:00:00:00:00:0c").good == flood  # checksums checked when the peer stopped
    return r


def test_malformed_slots_are_dropped_and_counted() -> None:
    with Peer(max_frames=1000, max_seconds=TIMEOUT) as peer:
        r = boot("io-bad.yaml", peer)
    assert r.clean, r.reason + "\n" + r.output[-3000:]
    assert "ioclient: wrote 7 malformed slots" in r.lines("mallory")
    m, a = client_stats(r, "mallory"), client_stats(r, "alice")
    assert (m["bad_flag"], m["bad_len"], m["bad_index"], m["malformed"]) == (1, 3, 1, 5), m
    assert (m["runt"], m["spoofed"]) == (1, 1), m
    # the client sees the same counters in its control page
    assert "ioclient: seen by the I/O VM: tx=20 rx=20 rx_drops=0 malformed=5 runt=1 spoofed=1" in r.lines("mallory")
    assert a["malformed"] == a["runt"] == a["spoofed"] == 0
    # both keep working: the misbehaving client's own later frames, and alice
    assert "ioclient: PASS (20 frames sent, 20 replies verified both ways)" in r.lines("mallory")
    assert "ioclient: PASS (40 frames sent, 40 replies verified both ways)" in r.lines("alice")
    assert (m["tx"], a["tx"]) == (20, 40)
    # nothing of the bad slots left the machine, not even the forged frame
    assert set(peer.stats.by_mac) == {"02:00:00:00:00:0a", "02:00:00:00:00:0c"}
    assert peer.stats.mac("02:00:00:00:00:0c").requests == 20


def test_run_stats_shows_the_io_vms_counters(capsys: pytest.CaptureFixture[str]) -> None:
    """`bulkhead run --stats` turns the I/O VM's `iovm: stats` console lines
    into a per-client table on stderr (frames, bytes, drops, malformed, alpha
    and delta measured), in virtual time under --icount."""
    from bulkhead import cli

    with Peer(max_frames=1000, max_seconds=TIMEOUT) as peer:
        rc = cli.main(["run", str(CONFIGS / "io-pair.yaml"), "--stats", "--icount", "0", "--timeout", str(TIMEOUT),
                       "--netdev", peer.netdev(), "--out", str(ROOT / "build" / "qemu-tests" / "io-pair-stats")])
    out, err = capsys.readouterr()
    assert rc == 0, err[-3000:]
    assert "[alice] ioclient: PASS (50 frames sent, 50 replies verified both ways)" in out
    assert "iovm: stats" not in out  # consumed by the table
    last = err[err.rindex("shared I/O per client (virtual time, --icount 0), update "):]
    rows = {r.split()[0]: r.split()[1:] for r in last.splitlines()[2:4]}
    for vm in ("alice", "bob"):
        tx, tx_bytes, rx, rx_bytes, drops, bad, alpha, delta = map(int, rows[vm])
        assert (tx, rx, drops, bad) == (50, 50, 0, 0), rows
        assert tx_bytes == rx_bytes == 50 * 230, rows  # 200 data bytes + 30 of headers per frame
        assert alpha > 0 and delta >= 0, rows
