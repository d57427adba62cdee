# SPDX-License-Identifier: Apache-2.0
"""A stock Linux client of the shared I/O device over VirtIO (docs/io.md
"VirtIO"): Debian's virtio_mmio and virtio_net modules, no Bulkhead code in
the guest, bind to the generated ``virtio,mmio`` node, whose registers the
hypervisor emulates and whose queues it bridges to the client's rings. In
one boot Linux pings the outside peer (bulkhead/run/netpeer.py), fetches a
file over TFTP and sends it back (checksums compared on both sides), sends
a burst larger than its tx ring, and shows the device's interrupt in
/proc/interrupts; the bridge drops and counts the malformed slots the I/O
VM wrote first into Linux's rx ring; a bare-metal ring client beside it
keeps its exchange, during Linux's transfer; the I/O VM's per-client
counters show Linux's frames."""

from __future__ import annotations

import hashlib
import random
import re
import time
from pathlib import Path

from qconsole import Console, build
from test_io_linux import _counters, _if_stats, bring_up

from bulkhead.run.netpeer import Peer

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"
PEER_IP, LINUX_IP = "10.0.77.1", "10.0.77.2"
TIMEOUT = 240.0


def bridge_counters(lines: list[str]) -> dict[str, int]:
    """The hypervisor's counters of Linux's virtio device (at its power-off)."""
    for line in lines:
        if line.startswith("[bulkhead] vm linux: virtio-net notifies="):
            return {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", line)}
    raise AssertionError("no virtio-net counters in:\n" + "\n".join(lines[-40:]))


def test_stock_linux_client_over_virtio() -> None:
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    blob = random.Random(42).randbytes(48 * 1024 + 100)  # 97 TFTP blocks, the last one short
    md5 = hashlib.md5(blob).hexdigest()
    argv = build("io-virtio.yaml")
    with Peer(max_frames=20_000, max_seconds=TIMEOUT, ip=PEER_IP, files={"blob": blob}) as peer:
        argv = [a.replace("user,id=bhio", f"{peer.netdev()},id=bhio") for a in argv]
        con = Console(argv)
        try:
            bring_up(con, LINUX_IP)
            con.type(f"busybox ping -c 3 -W 5 {PEER_IP}\r")
            con.wait_for("[linux] 3 packets transmitted, 3 packets received, 0% packet loss", timeout=60)
            # alice's 200 echo exchanges start now, during Linux's transfer
            con.type(f"busybox tftp -g -r blob -l /tmp/blob {PEER_IP} && busybox md5sum /tmp/blob\r")
            started = time.monotonic_ns()
            peer.go()
            con.wait_for(f"[linux] {md5}  /tmp/blob", timeout=120)
            fetched = time.monotonic_ns()
            con.type(f"busybox tftp -p -l /tmp/blob -r back {PEER_IP} && echo sent back\r")
            con.wait_for("[linux] sent back", timeout=120)
            # two 20,000-byte pings: 14 IPv4 fragments each, back to back, more
            # than the 2-slot tx ring holds (chains wait in the virtqueue)
            con.type(f"busybox ping -c 2 -s 20000 -W 2 {PEER_IP}; echo burst done\r")
            con.wait_for("[linux] burst done", timeout=60)
            con.type("busybox ifconfig eth0; grep virtio /proc/interrupts; echo stats done\r")
            con.wait_for("[linux] stats done", timeout=30)
            con.type("exit\r")
            status = con.finish(timeout=120)
        finally:
            con.finish()
    lines = con.lines
    assert status == 0, lines
    # the stock drivers bound to the generated node: eth0 on virtio0, its interrupt counted
    assert not any("probe of virtio0 failed" in x for x in lines), lines
    irq = [x for x in lines if re.match(r"\[linux\]\s+\d+:.*virtio0", x)]
    assert irq and sum(int(n) for n in re.findall(r"\s(\d+)", irq[0].split(":", 1)[1])[:1]) > 0, irq
    # the peer received the file intact and answered the pings; the burst arrived whole
    assert peer.uploads.get("back") == blob, lines
    assert peer.stats.tftp_reads == 1 and peer.stats.pings >= 3 and peer.stats.arp >= 1, peer.stats
    assert peer.stats.bad_ip == 0 and peer.stats.fragments == 2 * 14, peer.stats
    rx, tx = _if_stats(lines)
    assert rx["packets"] >= 3 + 97 + 97 and tx["packets"] >= 3 + 97 + 97 + 28, (rx, tx)
    assert rx["errors"] == tx["errors"] == tx["dropped"] == 0, (rx, tx)
    # dropped: the peer's broadcast go frame, an ethertype Linux has no handler
    # for (the kernel's count, not the driver's); no malformed slot reached it
    assert rx["dropped"] == 1, rx
    assert any(re.match(r"\[linux\] eth0 .*HWaddr 02:00:00:00:00:0E", x) for x in lines), lines  # its MAC
    # the bridge moved them, never refused anything, and the device never failed
    hv = bridge_counters(lines)
    assert hv["tx"] >= tx["packets"] and hv["rx"] >= rx["packets"], hv
    assert hv["error"] == 0 and hv["refused"] == 0, hv
    assert hv["tx_runt"] == hv["tx_bad"] == hv["rx_short"] == 0, hv  # every checksum completed
    # the I/O VM's four malformed slots in a 2-slot ring: the last two stay (length
    # 5000, an index out of range), dropped and counted, never reaching Linux
    assert "[iovm] iovm: wrote 4 malformed slots into linux's rx ring" in lines, lines
    assert hv["rx_bad"] == 2, hv
    assert hv["tx_full"] >= 1, hv  # the ring was full: chains waited and went on (every fragment arrived)
    # the I/O VM saw Linux's frames as a ring client's, and ended when it was done
    lx = _counters(lines, "linux")
    assert lx["tx"] == hv["tx"] and lx["rx"] >= hv["rx"], (lx, hv)
    assert lx["malformed"] == lx["runt"] == lx["spoofed"] == 0, lx
    assert "[iovm] iovm: PASS" in lines, lines
    # the bare-metal client beside it kept working while Linux transferred
    assert "[alice] ioclient: PASS (200 frames sent, 200 replies verified both ways)" in lines, lines
    alice = peer.stats.mac("02:00:00:00:00:0a")
    assert alice.good == 200 and started < alice.first_ns < fetched, (started, alice, fetched)
    assert "[bulkhead] all VMs off: clean=3 stopped=0" in lines, lines
