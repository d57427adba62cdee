# SPDX-License-Identifier: Apache-2.0
"""A stock Linux client of the shared I/O device (docs/io.md "VirtIO"):
Debian's virtio_mmio and virtio_net bind to the generated ``virtio,mmio``
node of its ``virtio: net`` client entry (no Bulkhead module: the
bulkhead_net module these tests first ran is removed) and give Linux an
ordinary eth0, which the hypervisor bridges to its ring pair. Here Linux
runs iperf3 and ping beside a flooding bare-metal client; the transfers,
bursts and malformed slots are tests/qemu/test_io_virtio.py's. The helpers
read what both files' guests print."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import time
from pathlib import Path

from qconsole import Console, build

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"
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


MODULES = ("failover", "net_failover", "virtio_mmio", "virtio_net")  # in the initramfs, from Debian's kernel


def bring_up(con: Console, ip: str) -> None:
    """Waits for Linux's shell, loads the stock virtio modules and brings
    eth0 up at ``ip``/24, then waits for its carrier (the bridge's
    VIRTIO_NET_S_LINK_UP, once the I/O VM has the rings up)."""
    con.wait_for("[linux] bulkhead-linux: starting a shell (exit to power off)", timeout=TIMEOUT)
    con.type("cd /lib/modules && " + " && ".join(f"insmod {m}.ko" for m in MODULES) + " && cd / && "
             f"busybox ip addr add {ip}/24 dev eth0 && busybox ip link set eth0 up && n=0 && "
             "while [ $(cat /sys/class/net/eth0/operstate) != up ] && [ $n -lt 100 ]; do "
             "busybox usleep 100000; n=$((n + 1)); done; echo eth0 $(cat /sys/class/net/eth0/operstate)\r")
    con.wait_for("[linux] eth0 up", timeout=60)


IPERF_IP, SERVER_IP = "10.0.2.15", "10.0.2.2"  # QEMU user-mode network: 10.0.2.2 is the host's loopback


def free_ports(n: int) -> list[int]:
    """``n`` distinct TCP ports nobody listens on now (all bound at once)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]


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


def iovm_stats(lines: list[str], vm: str) -> dict[str, int]:
    """Client ``vm``'s counters in the I/O VM's latest stats line."""
    last = [x for x in lines if x.startswith(f"[iovm] iovm: stats client={vm} ")]
    assert last, lines[-40:]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", last[-1])}


def test_linux_iperf3_and_ping_beside_a_flooder() -> None:
    """A stock Linux client (virtio_net) runs iperf3 over TCP and UDP and ping
    against a server outside QEMU (Debian's iperf3 on the host, listening on
    127.0.0.1 only; QEMU's user-mode network maps 10.0.2.2 to it) through
    the I/O VM while the bare-metal mallory floods the device beside it:
    non-zero bandwidth both ways, every ping answered, UDP losses within the
    flood's share (equal weights: half the device), and the stock driver's
    counters through `ethtool -S` agree with the I/O VM's."""
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    # a server per protocol: an iperf3 server reopens its listening socket
    # after each test, so a UDP test straight after a TCP one on the same
    # port can be refused on a loaded host
    ports = dict(zip(("tcp", "udp"), free_ports(2), strict=True))
    servers = [subprocess.Popen(["iperf3", "-s", "-B", "127.0.0.1", "-p", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for port in ports.values()]
    con = Console(build("io-linux-iperf.yaml"))
    try:
        bring_up(con, IPERF_IP)
        con.type(f"busybox ping -c 5 -W 5 {SERVER_IP}; echo ping done\r")
        con.wait_for("[linux] ping done", timeout=60)
        flood_before = iovm_stats(con.lines, "mallory")["tx"]
        con.type(f"iperf3 -c {SERVER_IP} -p {ports['tcp']} -t 3 -f m; echo tcp done\r")
        con.wait_for("[linux] tcp done", timeout=90)
        con.type(f"iperf3 -c {SERVER_IP} -p {ports['udp']} -t 3 -u -b 10M -f m; echo udp done\r")
        con.wait_for("[linux] udp done", timeout=90)
        con.type("ethtool -S eth0; echo ethtool done\r")
        con.wait_for("[linux] ethtool done", timeout=30)
        time.sleep(1.5)  # one more stats line of the I/O VM (every second of counter time)
        flood_after = iovm_stats(con.lines, "mallory")["tx"]
    finally:  # mallory floods until stopped: QEMU is killed (Console.finish)
        try:
            con.finish(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        assert con.proc.stdin and con.proc.stdout
        con.proc.stdin.close()
        con.reader.join(timeout=10)
        con.proc.stdout.close()
        for server in servers:
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
    # virtio_net's own counters (a TSO packet counts once: the bridge cuts
    # it into frames) against the I/O VM's for linux, printed after them
    eth = {m[1]: int(m[2]) for line in lines if (m := re.match(r"\[linux\]\s+(\w+): (\d+)$", line))}
    assert eth["tx_queue_0_packets"] > 0 and eth["rx_queue_0_packets"] > 0, eth
    assert eth["rx_queue_0_drops"] == 0, eth
    io = iovm_stats(lines, "linux")
    assert io["malformed"] == io["spoofed"] == io["runt"] == 0, io
    assert io["tx"] >= eth["tx_queue_0_packets"] and io["rx"] >= eth["rx_queue_0_packets"], (io, eth)
