# SPDX-License-Identifier: Apache-2.0
"""A Linux client of the shared I/O device (docs/io.md): the kernel module
linux/bulkhead_net (built by scripts/setup.sh into the initramfs) binds to
the generated ``bulkhead,io-net`` node and gives Linux an ordinary eth0 over
its ring pair; beside it a bare-metal client and the I/O VM. Linux pings the
outside peer (bulkhead/run/netpeer.py, on loopback through QEMU's dgram
backend) and fetches and sends back a file over TFTP whose checksum is
compared on both sides, sends a burst larger than its tx ring (flow control)
and drops and counts malformed slots the I/O VM writes into its rx ring."""

from __future__ import annotations

import hashlib
import random
import re
import socket
import subprocess
import time
from pathlib import Path

from qconsole import Console, build

from bulkhead.run.netpeer import Peer

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"
PEER_IP, LINUX_IP = "10.0.77.1", "10.0.77.2"
TIMEOUT = 240.0


def _counters(lines: list[str], vm: str) -> dict[str, int]:
    stats: dict[str, int] = {}
    for line in lines:
        if line.startswith(f"[iovm] iovm: client {vm} "):
            stats.update({k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)})
    assert stats, lines
    return stats


def con_match(lines: list[str], pattern: str) -> str:
    """Group 1 of the first line matching ``pattern``."""
    for line in lines:
        m = re.search(pattern, line)
        if m:
            return m[1]
    raise AssertionError(f"no /{pattern}/ in:\n" + "\n".join(lines))


def _if_stats(lines: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """(RX, TX) counters of busybox ``ifconfig eth0`` (the driver's
    ndo_get_stats64, as ``ip -s link`` of iproute2 shows them; busybox's
    ``ip`` has no ``-s``): packets, errors, dropped, overruns, frame/carrier."""
    out: dict[str, dict[str, int]] = {}
    for line in lines:
        m = re.match(r"\[linux\]\s+(RX|TX) packets:(\d+)", line)
        if m:
            out[m[1]] = {k: int(v) for k, v in re.findall(r"(\w+):(\d+)", line)}
    assert set(out) == {"RX", "TX"}, lines
    return out["RX"], out["TX"]


def bring_up(con: Console, ip: str) -> None:
    """Waits for Linux's shell, loads bulkhead_net and brings eth0 up at ``ip``/24."""
    con.wait_for("[linux] bulkhead-linux: starting a shell (exit to power off)", timeout=TIMEOUT)
    con.type(f"insmod /lib/modules/bulkhead_net.ko && busybox ip addr add {ip}/24 dev eth0 && "
             "busybox ip link set eth0 up\r")
    con.wait_for_match(r"\[linux\] .*eth0: I/O VM ready: link up", timeout=60)


def test_linux_client_pings_and_transfers_through_the_io_vm() -> None:
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    blob = random.Random(15).randbytes(48 * 1024 + 100)  # 97 TFTP blocks, the last one short
    md5 = hashlib.md5(blob).hexdigest()
    argv = build("io-linux.yaml")
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
            # a burst larger than the tx ring (8 slots): two 20,000-byte pings
            # leave as 14 IPv4 fragments each, back to back; the driver stops
            # its queue when the ring is full and wakes it as the I/O VM frees
            # slots (the peer counts fragments, it does not reassemble them)
            con.type(f"busybox ping -c 2 -s 20000 -W 2 {PEER_IP}; echo burst done\r")
            con.wait_for("[linux] burst done", timeout=60)
            con.type("busybox ifconfig eth0; cd /sys/class/net/eth0/statistics && "
                     "echo errors $(cat rx_errors rx_frame_errors rx_length_errors); cd /\r")
            con.wait_for_match(r"\[linux\] errors \d+ \d+ \d+", timeout=30)
            con.type("busybox ip link set eth0 down && exit\r")
            status = con.finish(timeout=120)
        finally:
            con.finish()
    lines = con.lines
    assert status == 0, lines
    # the peer received the file intact (TFTP upload) and answered the pings
    assert peer.uploads.get("back") == blob, lines
    assert peer.stats.tftp_reads == 1 and peer.stats.pings >= 3 and peer.stats.arp >= 1, peer.stats
    assert peer.stats.bad_ip == 0, peer.stats
    assert peer.stats.fragments == 2 * 14, peer.stats  # every fragment of the burst, none dropped
    full = con_match(lines, r"eth0: down: tx ring full (\d+) times")
    assert int(full) >= 1, lines  # the burst did fill the ring: the queue was stopped and woken
    # eth0's counters: frames both ways (pings, 97 blocks each way and their
    # acknowledgements); the I/O VM's four malformed slots dropped and counted
    # (bad flag and index: frame errors; lengths 1600 and 5000: length
    # errors), nothing else lost
    assert "[iovm] iovm: wrote 4 malformed slots into linux's rx ring" in lines, lines
    rx, tx = _if_stats(lines)
    assert rx["packets"] >= 3 + 97 + 97 and tx["packets"] >= 3 + 97 + 97 + 28, (rx, tx)
    # frame: all kinds (/proc/net/dev); dropped: the peer's broadcast go frame,
    # an ethertype Linux has no handler for (the kernel's count, not the driver's)
    assert (rx["errors"], rx["frame"], rx["dropped"]) == (4, 4, 1), rx
    assert "[linux] errors 4 2 2" in lines, lines  # rx_errors, rx_frame_errors, rx_length_errors
    assert tx["errors"] == tx["dropped"] == 0, tx
    # the I/O VM served both clients and ended when both were done
    assert "[iovm] iovm: PASS" in lines, lines
    lx = _counters(lines, "linux")
    assert lx["tx"] >= tx["packets"] and lx["malformed"] == lx["runt"] == lx["spoofed"] == lx["rx_drops"] == 0, lx
    assert lx["rx"] >= rx["packets"], lx
    # the bare-metal client beside it kept working while Linux transferred
    # (its frames reached the peer while the TFTP download ran): every reply verified
    assert "[alice] ioclient: go" in lines, lines
    assert "[alice] ioclient: PASS (200 frames sent, 200 replies verified both ways)" in lines, lines
    alice = peer.stats.mac("02:00:00:00:00:0a")
    assert alice.good == 200 and started < alice.first_ns < fetched, (started, alice, fetched)
    assert "[bulkhead] all VMs off: clean=3 stopped=0" in lines, lines
    # the kernel bound the driver to the generated node
    assert any("eth0: bulkhead shared I/O client: mac 02:00:00:00:00:0e, region 0x0000000070000000 "
               "index 0, 8 slots" in line for line in lines), lines


IPERF_IP, SERVER_IP = "10.0.2.15", "10.0.2.2"  # QEMU user-mode network: 10.0.2.2 is the host's loopback


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def iperf_summary(lines: list[str], kind: str) -> dict[str, float]:
    """The receiver's summary of an iperf3 run (-f m): Mbits/s, and for UDP
    the lost and total datagrams."""
    rx = r"\[linux\] \[\s*\d+\]\s+0\.00-\S+\s+sec\s+\S+ \w?Bytes\s+(\S+) Mbits/sec"
    if kind == "udp":
        rx += r"\s+\S+ ms\s+(\d+)/(\d+) \(\S+%\)\s+receiver"
    else:
        rx += r"\s+receiver"
    for line in lines:
        m = re.match(rx, line)
        if m:
            out = {"mbps": float(m[1])}
            if kind == "udp":
                out.update(lost=float(m[2]), total=float(m[3]))
            return out
    raise AssertionError(f"no iperf3 {kind} receiver summary in:\n" + "\n".join(lines[-60:]))


def mallory_tx(lines: list[str]) -> int:
    """mallory's frames forwarded, from the I/O VM's latest stats line."""
    last = [x for x in lines if x.startswith("[iovm] iovm: stats client=mallory ")]
    assert last, lines[-40:]
    return int(re.search(r" tx=(\d+)", last[-1])[1])  # type: ignore[index]


def test_linux_iperf3_and_ping_beside_a_flooder() -> None:
    """A Linux client (bulkhead_net) runs iperf3 over TCP and UDP and ping
    against a server outside QEMU (Debian's iperf3 on the host, listening on
    127.0.0.1 only; QEMU's user-mode network maps 10.0.2.2 to it) through
    the I/O VM while the bare-metal mallory floods the device beside it:
    non-zero bandwidth both ways, every ping answered, UDP losses within the
    flood's share (equal weights: half the device), and the driver's ring
    counters through `ethtool -S` agree with the I/O VM's."""
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    port = free_port()
    server = subprocess.Popen(["iperf3", "-s", "-B", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    con = Console(build("io-linux-iperf.yaml"))
    try:
        bring_up(con, IPERF_IP)
        con.type(f"busybox ping -c 5 -W 5 {SERVER_IP}; echo ping done\r")
        con.wait_for("[linux] ping done", timeout=60)
        flood_before = mallory_tx(con.lines)
        con.type(f"iperf3 -c {SERVER_IP} -p {port} -t 3 -f m; echo tcp done\r")
        con.wait_for("[linux] tcp done", timeout=90)
        con.type(f"iperf3 -c {SERVER_IP} -p {port} -t 3 -u -b 10M -f m; echo udp done\r")
        con.wait_for("[linux] udp done", timeout=90)
        con.type("ethtool -S eth0; echo ethtool done\r")
        con.wait_for("[linux] ethtool done", timeout=30)
        time.sleep(1.5)  # one more stats line of the I/O VM (every second of counter time)
        flood_after = mallory_tx(con.lines)
    finally:  # mallory floods until stopped: QEMU is killed (Console.finish)
        try:
            con.finish(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        assert con.proc.stdin and con.proc.stdout
        con.proc.stdin.close()
        con.reader.join(timeout=10)
        con.proc.stdout.close()
        server.kill()
        server.wait()
    lines = con.lines
    assert "[linux] 5 packets transmitted, 5 packets received, 0% packet loss" in lines, lines[-40:]
    rtt = con_match(lines, r"\[linux\] round-trip min/avg/max = [\d.]+/([\d.]+)/[\d.]+ ms")
    assert float(rtt) > 0
    tcp, udp = iperf_summary(lines, "tcp"), iperf_summary(lines, "udp")
    assert tcp["mbps"] > 0 and udp["mbps"] > 0, (tcp, udp)
    assert udp["total"] > 0 and udp["lost"] <= udp["total"] / 2, udp  # at most the flood's share
    assert flood_after > flood_before, (flood_before, flood_after)  # mallory flooded meanwhile
    eth = {m[1]: int(m[2]) for line in lines if (m := re.match(r"\[linux\]\s+(\w+): (\d+)$", line))}
    assert eth["tx_frames"] > 0 and eth["rx_frames"] > 0, eth
    assert eth["rx_malformed"] == eth["io_malformed"] == eth["io_spoofed"] == eth["io_runt"] == 0, eth
    assert eth["io_tx_frames"] <= eth["tx_frames"] and eth["io_rx_frames"] >= eth["rx_frames"] - 64, eth
