# SPDX-License-Identifier: Apache-2.0
"""Shared-I/O benchmark (docs/io.md): the work-conserving I/O VM against the
virtio-net device passed straight through, from one run.

Bare-metal rows, under ``-icount shift=0,align=off,sleep=off`` (virtual
time: 1 ns per instruction, one instruction counter for all vCPUs, which
QEMU runs round-robin): the echo workload (``--frames`` requests of 200
bytes, 16 outstanding) of the I/O VM in ``mode=direct`` (the NIC passed
through, no rings), then one to four echo clients through the I/O VM, then
two to four clients of which the last floods (8 x ``--frames`` frames of
1000 bytes); frames go to a peer thread on loopback
(bulkhead/run/netpeer.py) over QEMU's ``-netdev dgram``. Every VM
busy-waits (``poll: 1``) so that no vCPU sleeps while the peer answers
(with every vCPU in WFI, sleep=off would warp virtual time). Columns:
frames/s and mean round trip per client and as a ratio to passthrough; the
alpha measured and guaranteed (``--capacity``, equal weights); the share of
the frames served while the client was backlogged; delta measured, as the
bounded-delay fit, and the bound; the I/O VM's overruns and the time the
device's queue stayed full (QEMU's backend not draining it). The four-client
rows run on a copy of platforms/qemu-virt.yaml with a fifth CPU
(build/bench/io/platforms/).

virtio-blk rows (issue #42 item 4; bench/vioblk_bridge.py, virtual time
under ``-icount 0``): 4 KiB random read IOPS and sequential read KiB/s of
the disk passed straight through to one VM, and through the hypervisor's
virtio-blk bridge (``virtio: blk``) with 1 and 4 requests in flight, each
with its ratio to passthrough (``--blk-reads``, ``--no-blk``).

Linux rows (host time: Linux under -icount is too slow for iperf3): Linux's
virtio-mmio and virtio-net modules run iperf3 over TCP and UDP and ping
against Debian's iperf3 on the host (127.0.0.1; QEMU's user-mode network
maps 10.0.2.2 to it) with the NIC passed straight through to Linux (Linux's
RAM identity-mapped, IPA = PA, since the device does DMA with physical
addresses and there is no SMMU), and through the I/O VM on the
hypervisor's virtio bridge (``virtio: net``, docs/io.md "VirtIO"): with
the I/O VM polling (``io.poll``, the line-rate configuration), the same
sleeping in WFI when idle (QEMU wakes a halted vCPU's host thread for each
doorbell and received frame), and polling beside a flooding client. The
polling I/O VM's vCPU thread (QEMU's "CPU 0/TCG") runs at nice 19 on the
host (``--no-nice``: at 0), so that its busy-wait takes no host time from
Linux's vCPU and QEMU's device model, as on hardware, where it has a core of
its own; it still runs whenever a host core is free. These rows are timed
by the host, which other work shares (the passthrough row alone moved from
98 to 201 Mbit/s between runs), so
one run interleaves them: each mode's QEMU boots once, brings its network
up and is stopped (QMP ``stop``: no host time, its virtual clock stands);
then ``--trials`` rounds (default 5) each resume every mode in turn for
one trial (ping -c 20 -i 0.5, iperf3 TCP, then UDP, ``--seconds`` each) and stop
it again, the order reversed every other round, so that a change of the
host's load hits every mode within a round. Each trial's row gives its
ratio to the same round's passthrough trial; the median rows give each
figure's median and, in brackets, the median of the rounds' ratios (the
run's figure). --linux-only direct,virtio,sleep runs just those modes and
writes each VirtIO run's counters over all its trials (the bridge's, the I/O
VM's, the client's interrupts; Linux is powered off for them) to
build/bench/io/linux-<mode>.profile, and prints them per frame (the I/O
VM's exits and sleeps, the client's notifications, interrupts and receive
SGIs: counts, which move far less with the host's load than the times).

QEMU models no caches, no DRAM and no line rate; the peer and QEMU's device
model run in host time. The figures compare the paths on this QEMU; they are
not network performance.

The CLARE study's traffic conditions C1-C5 and its regulation sweep run on
the same machinery (the I/O VM, guests/ioclient, the frame peer) as an
experiment spec: bench/experiments/clare.yaml (docs/experiments.md).

    .venv/bin/python bench/shared_io.py [--frames N] [--capacity C] [--seconds S] [--trials T]
                                        [--no-linux | --linux-only MODES] [--no-nice] [--quick]
    .venv/bin/python bench/shared_io.py --calibrate

``--calibrate`` measures the device's capacity for ``io.capacity``: one
client floods alone and the I/O VM reports the frames/s it served while
busy (capacity_fps). (Not ``bench/io.py``: a script's directory comes first
on ``sys.path``, and a file named ``io.py`` there would shadow the standard
library's ``io``.)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import vioblk_bridge  # noqa: E402  (bench/vioblk_bridge.py: the virtio-blk rows)

from bulkhead.config import shared_io  # noqa: E402
from bulkhead.layout.load import load_spec  # noqa: E402
from bulkhead.run import runner  # noqa: E402
from bulkhead.run.backend import RunOptions  # noqa: E402
from bulkhead.run.netpeer import Peer  # noqa: E402

OUT = ROOT / "build" / "bench" / "io"
KV = re.compile(r"(\w+)=(\d+)")
DEVICE = re.compile(r"iovm: device \w+=")
DEVICE_KEYS = ("tx", "rx", "rx_unknown", "rx_bad", "tx_full", "overruns", "slot_ns", "capacity_fps", "notify_skipped",
               "rx_notify_skipped", "stall_us", "stall_max_us")
MACS = ["02:00:00:00:00:0a", "02:00:00:00:00:0b", "02:00:00:00:00:0c", "02:00:00:00:00:0d"]
NAMES = ["alice", "bob", "carol", "dave"]
PLATFORM = ROOT / "platforms" / "qemu-virt.yaml"
PLATFORM_CPUS = "cpus: [0x0, 0x1, 0x2, 0x3]"
NIC = ["-global", "virtio-mmio.force-legacy=false"]
LINUX = ROOT / "artefacts" / "linux"


def platforms_for(ncpus: int) -> Path:
    """The platforms directory for a run on ``ncpus`` CPUs: the repository's
    while qemu-virt has enough, else a copy of qemu-virt with more CPUs."""
    if ncpus <= 4:
        return ROOT / "platforms"
    text = PLATFORM.read_text()
    assert PLATFORM_CPUS in text, f"{PLATFORM}: no '{PLATFORM_CPUS}' line to extend"
    cpus = ", ".join(f"0x{i:x}" for i in range(ncpus))
    out = OUT / "platforms"
    out.mkdir(parents=True, exist_ok=True)
    (out / PLATFORM.name).write_text(text.replace(PLATFORM_CPUS, f"cpus: [{cpus}]"))
    return out


def vm_yaml(name: str, cpu: int, guest: str, params: str, devices: str = "") -> str:
    return (f"  - name: {name}\n    cpus: [{cpu}]\n    memory:\n      - {{ipa: 0x40000000, size: 16M}}\n"
            f"    guest: {guest}\n    params: {{{params}}}\n{devices}")


def iovm_yaml(params: str) -> str:
    """The I/O VM (or, mode=direct, the NIC's own driver): it gives the
    device its buffers' physical addresses (BH_HC_IPA_INFO), which needs
    introspection (docs/config.md)."""
    return vm_yaml("iovm", 0, "iovm", params, "    devices: [virtio31]\n    introspection: true\n")


def shared_config(n: int, flood: bool, frames: int, capacity: int, calibrate: bool = False) -> str:
    vms = [iovm_yaml("max_ms: 120000, poll: 1")]
    clients = []
    for i in range(n):
        if (flood and i == n - 1) or calibrate:
            params = f"mode: flood, frames: {frames * 8}, size: 1000, poll: 1"
        else:
            params = f"frames: {frames}, window: 16, timeout_ms: 120000, poll: 1"
        vms.append(vm_yaml(NAMES[i], i + 1, "ioclient", params))
        clients.append(f'    - {{vm: {NAMES[i]}, mac: "{MACS[i]}", queue: {64 if flood and i == n - 1 else 16}}}\n')
    return ("platform: qemu-virt\ndma_isolation: none\nvms:\n" + "".join(vms) + "io:\n  device: virtio31\n  vm: iovm\n"
            f"  capacity: {capacity}\n  clients:\n" + "".join(clients))


def direct_config(frames: int) -> str:
    return ("platform: qemu-virt\ndma_isolation: none\nvms:\n"
            + iovm_yaml(f"mode: direct, io_base: 0x0a003e00, frames: {frames}, window: 16"))


def kv(line: str) -> dict[str, int]:
    return {k: int(v) for k, v in KV.findall(line)}


def device(res: runner.RunResult) -> dict[str, int]:
    """The I/O VM's device counters (its two ``iovm: device <key>=`` lines)."""
    stats: dict[str, int] = {}
    for line in res.lines("iovm"):
        if DEVICE.match(line):
            stats.update(kv(line))
    missing = [k for k in DEVICE_KEYS if k not in stats]
    if missing:  # e.g. a line cut at the hypervisor console's 160 characters
        raise SystemExit(f"bench/shared_io.py: the I/O VM reported no {', '.join(missing)}:\n{res.output[-2000:]}")
    return stats


def run(name: str, text: str, direct: bool = False, ncpus: int = 4) -> tuple[runner.RunResult, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    cfg = OUT / f"{name}.yaml"
    cfg.write_text(text)
    with Peer(max_frames=200_000, max_seconds=1800) as peer, open(OUT / f"{name}.build.log", "w") as log:
        netdev = peer.netdev()
        extra: list[str] = []
        if direct:  # no io: section: attach the NIC by hand
            extra = [*NIC, "-netdev", f"{netdev},id=bhio", "-device",
                     "virtio-net-device,netdev=bhio,bus=virtio-mmio-bus.31"]
        res = runner.run(cfg, RunOptions(timeout=1800, icount=0, out=OUT / name, netdev=netdev,
                         extra_qemu_args=tuple(extra), build_log=log, platforms_dir=platforms_for(ncpus)))
    if not res.clean:
        raise SystemExit(f"bench/shared_io.py: {name}: {res.reason}\n{res.output[-2000:]}")
    return res, cfg


SCENARIOS = ((1, False), (2, False), (3, False), (4, False), (2, True), (3, True), (4, True))
QUICK = ((2, False), (2, True))  # --quick: one row of each kind


def bare_metal_rows(frames: int, capacity: int, scenarios: tuple[tuple[int, bool], ...] = SCENARIOS) -> None:
    print("| scenario | VM | frames/s (ratio) | RTT mean / max (us) (ratio) | alpha meas. / guaranteed (f/s) | "
          "share served | delta meas. / supply / bound (us) | overruns | device stall (us) |")
    print("|---|---|---|---|---|---|---|---|---|")
    res, _ = run("direct", direct_config(frames), direct=True)
    base = next(kv(x) for x in res.lines("iovm") if x.startswith("iovm: result "))
    print(f"| direct passthrough | iovm | {base['fps']} | {base['rtt_mean_us']} / {base['rtt_max_us']} | "
          "- | - | - | - | - |")
    for n, flood in scenarios:
        name = f"shared{n}{'-flood' if flood else ''}"
        res, cfg = run(name, shared_config(n, flood, frames, capacity), ncpus=n + 1)
        spec = load_spec(cfg, platforms_dir=platforms_for(n + 1))
        assert spec.io is not None
        g = {x.vm: x for x in shared_io.guarantees(spec.io)}
        dev = device(res)
        for i in range(n):
            vm = NAMES[i]
            stats: dict[str, int] = {}
            for line in res.lines("iovm"):
                if line.startswith(f"iovm: client {vm} "):
                    stats.update(kv(line))
            echo = next((kv(x) for x in res.lines(vm) if x.startswith("ioclient: result ")), None)
            what = "flood" if echo is None else f"{echo['fps']} ({echo['fps'] / base['fps']:.2f})"
            rtt = "-" if echo is None else (f"{echo['rtt_mean_us']} / {echo['rtt_max_us']} "
                                            f"({echo['rtt_mean_us'] / base['rtt_mean_us']:.2f})")
            label = f"{n} client{'s' if n > 1 else ''}" + (", last floods" if flood else "")
            print(f"| {label} | {vm} | {what} | {rtt} | {stats['alpha_fps']} / {float(g[vm].alpha):.0f} | "
                  f"{stats['share_permille'] / 10:.1f}% | {stats['delta_us']} / {stats['supply_delta_us']} / "
                  f"{float(g[vm].delta) * 1e6:.0f} | {stats['overruns']} | {dev['stall_us']} |")


def calibrate(frames: int) -> int:
    res, _ = run("calibrate", shared_config(1, False, frames, 1000, calibrate=True), ncpus=2)
    dev = device(res)
    print(f"capacity_fps={dev['capacity_fps']} (one client flooding {frames * 8} frames of 1000 bytes; "
          f"device stall {dev['stall_us']} us); io.capacity at or below it")
    return 0


# --- Linux clients (host time) --------------------------------------------------------


class Console:
    """QEMU with its serial console on pipes (as tests/qemu/qconsole.py)."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout
        pending = b""
        while data := os.read(self.proc.stdout.fileno(), 65536):
            *done, pending = (pending + data).split(b"\n")
            with self.cond:
                self.lines.extend(x.decode(errors="replace").rstrip("\r") for x in done)
                self.cond.notify_all()

    def wait_for(self, line: str, timeout: float, part: bool = False) -> None:
        """Until ``line`` was printed (``part``: a line containing it)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not (any(line in x for x in self.lines) if part else line in self.lines):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {line!r}:\n" + "\n".join(self.lines[-30:]))
                self.cond.wait(left)

    def type(self, text: str) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.close()
        self.reader.join(timeout=10)
        self.proc.stdout.close()


LINUX_VM = """  - name: linux
    type: linux
    cpus: [{cpu}]
    memory:
      - {{ipa: {ipa}, size: 128M{pa}}}
    kernel: {linux}/Image
    initrd: {linux}/initrd.cpio.gz
    bootargs: "console=ttyAMA0 rdinit=/init bulkhead.shell=1"
{devices}"""


def linux_config(mode: str) -> str:
    head = "platform: qemu-virt\ndma_isolation: none\nconsole_input: linux\nvms:\n"
    if mode == "direct":
        # the device does DMA with physical addresses and there is no SMMU:
        # Linux's RAM must be identity-mapped (IPA = PA) for its virtio-net
        return head + LINUX_VM.format(cpu=0, linux=LINUX, ipa="0x60000000", pa=", pa: 0x60000000",
                                      devices="    devices: [virtio31]\n")
    vms = [iovm_yaml("max_ms: 600000"),
           LINUX_VM.format(cpu=1, linux=LINUX, ipa="0x40000000", pa="", devices="")]
    # the line-rate configuration busy-waits on the I/O VM's own CPU (io.poll);
    # "sleep" is the same I/O VM sleeping in WFI when idle
    poll = "" if mode == "sleep" else "  poll: true\n"
    virtio = ", virtio: net"
    clients = [f'    - {{vm: linux, mac: "02:00:00:00:00:0e", queue: 64{virtio}}}\n']
    if mode == "flood":
        vms.append(vm_yaml("mallory", 2, "ioclient", "mode: flood, frames: 0, size: 1000"))
        clients.append('    - {vm: mallory, mac: "02:00:00:00:00:0c", queue: 64}\n')
    return (head + "".join(vms) + f"io:\n  device: virtio31\n  vm: iovm\n  capacity: 20000\n{poll}  clients:\n"
            + "".join(clients))


SETUP = {
    "direct": "for m in failover net_failover virtio_net virtio_mmio; do insmod /lib/modules/$m.ko; done",
}
# the same stock modules, on the hypervisor's virtio bridge
SETUP["virtio"] = SETUP["sleep"] = SETUP["flood"] = SETUP["direct"]
# the counters of a VirtIO run (written to build/bench/io/linux-<mode>.profile)
PROFILE = re.compile(r"virtio-net notifies=|iovm: (client linux|device|cpu) |virtio0")
PING_MEAN = re.compile(r"round-trip min/avg/max = [\d.]+/([\d.]+)/")
PING_RTT = re.compile(r"^\[linux\] \d+ bytes from .*: seq=\d+ .*time=([\d.]+) ms")
RECEIVER = re.compile(r"\[linux\] \[\s*\d+\]\s+0\.00-\S+\s+sec\s+\S+ \w?Bytes\s+(\S+) Mbits/sec(.*)receiver")


def ping_mean(lines: list[str]) -> float:
    """busybox ping's mean round trip (ms) in these console lines
    (StopIteration: none)."""
    return next(float(m[1]) for x in lines if (m := PING_MEAN.search(x)))


class Qmp:
    """QEMU's QMP on a Unix socket: stop and cont (one command at a time)."""

    def __init__(self, path: Path, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.sock.connect(str(path))
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no QMP socket at {path}") from None
                time.sleep(0.1)
        self.sock.settimeout(timeout)
        self.buf = b""
        self._read()  # the greeting
        self.execute("qmp_capabilities")

    def _read(self) -> dict[str, object]:
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise TimeoutError("QMP connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        msg: dict[str, object] = json.loads(line)
        return msg

    def execute(self, cmd: str, arguments: dict[str, object] | None = None) -> object:
        """The command's return value."""
        req: dict[str, object] = {"execute": cmd, **({"arguments": arguments} if arguments else {})}
        self.sock.sendall(json.dumps(req).encode() + b"\n")
        while "return" not in (msg := self._read()):  # events come first
            if "error" in msg:
                raise TimeoutError(f"QMP {cmd}: {msg}")
        return msg["return"]

    def hmp(self, line: str) -> None:
        """A human monitor command (``log``, ``one-insn-per-tb``)."""
        self.execute("human-monitor-command", {"command-line": line})

    def close(self) -> None:
        self.sock.close()


class LinuxVM:
    """One Linux run of a mode: booted once, its network up, then stopped
    (QMP ``stop``: no host time, its virtual clock stands) between trials,
    so that the modes' trials can interleave in one run."""

    def __init__(self, mode: str, nice: bool = True,
                 extra: Callable[[Path], Sequence[str]] | None = None) -> None:
        """``extra``: more QEMU arguments, from the build's directory."""
        self.mode = mode
        OUT.mkdir(parents=True, exist_ok=True)
        cfg = OUT / f"linux-{mode}.yaml"
        cfg.write_text(linux_config(mode))
        out = OUT / f"linux-{mode}"
        subprocess.run([str(ROOT / ".venv" / "bin" / "bulkhead"), "build", str(cfg), "--out", str(out)],
                       check=True, capture_output=True, text=True)
        argv = list(json.loads((out / "manifest.json").read_text())["qemu"])
        if mode == "direct":
            argv += [*NIC, "-netdev", "user,id=bhio", "-device",
                     "virtio-net-device,netdev=bhio,bus=virtio-mmio-bus.31"]
        qmp = out / "qmp.sock"
        qmp.unlink(missing_ok=True)
        argv += ["-qmp", f"unix:{qmp},server=on,wait=off", "-name", "bench,debug-threads=on",
                 *(extra(out) if extra else ())]
        # one iperf3 server per protocol: a server closes its listening socket
        # after each test and opens it again, so a UDP test straight after a
        # TCP one on the same port can be refused on a loaded host
        with socket.socket() as tcp, socket.socket() as udp:  # both bound at once: two ports
            for s in (tcp, udp):
                s.bind(("127.0.0.1", 0))
            self.ports = {"tcp": tcp.getsockname()[1], "udp": udp.getsockname()[1]}
        self.servers = [subprocess.Popen(["iperf3", "-s", "-B", "127.0.0.1", "-p", str(port)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        for port in self.ports.values()]
        self.con = Console(argv)
        self.qmp: Qmp | None = None
        self.trials = 0
        try:
            self.qmp = Qmp(qmp)
            self.con.wait_for("[linux] bulkhead-linux: starting a shell (exit to power off)", timeout=300)
            if nice and mode in POLLED:
                self._nice_iovm()  # its threads exist by now
            self.con.type(f"{SETUP[mode]}; busybox ip addr add 10.0.2.15/24 dev eth0; busybox ip link set eth0 up; "
                          "sleep 2; echo up done\r")
            self.con.wait_for("[linux] up done", timeout=120)
            self.qmp.execute("stop")
        except BaseException:
            self.close()
            raise

    def _nice_iovm(self) -> None:
        """The polling I/O VM's vCPU thread (its CPU 0: "CPU 0/TCG") at nice
        19: its busy-wait takes no host time that Linux's vCPU or QEMU's
        device model could use, as on hardware, where it has its own core."""
        tasks = Path(f"/proc/{self.con.proc.pid}/task")
        for tid in tasks.iterdir():
            with contextlib.suppress(OSError):
                if (tid / "comm").read_text().strip() == "CPU 0/TCG":
                    os.setpriority(os.PRIO_PROCESS, int(tid.name), 19)
                    return
        raise RuntimeError(f"no thread 'CPU 0/TCG' in QEMU {self.con.proc.pid}")

    def trial(self, seconds: int) -> dict[str, float]:
        """One trial: ping avg (ms), iperf3 TCP and UDP Mbit/s, UDP loss %."""
        assert self.qmp
        self.trials += 1
        k, first = self.trials, len(self.con.lines)
        self.qmp.execute("cont")
        try:
            self.con.type(f"busybox ping -c 20 -i 0.5 -W 5 10.0.2.2; echo ping done {k}\r")
            self.con.wait_for(f"[linux] ping done {k}", timeout=120)
            self.con.type(f"iperf3 -c 10.0.2.2 -p {self.ports['tcp']} -t {seconds} -f m; echo tcp done {k}\r")
            self.con.wait_for(f"[linux] tcp done {k}", timeout=60 + 4 * seconds)
            self.con.type(f"iperf3 -c 10.0.2.2 -p {self.ports['udp']} -t {seconds} -u -b 20M -f m; echo udp done {k}\r")
            self.con.wait_for(f"[linux] udp done {k}", timeout=60 + 4 * seconds)
        finally:
            self.qmp.execute("stop")
        lines = self.con.lines[first:]
        ping = ping_mean(lines)
        rtts = [float(m[1]) for x in lines if (m := PING_RTT.search(x))]
        summaries = [m for x in lines if (m := RECEIVER.match(x))]
        if len(summaries) != 2:
            errors = [x for x in lines if "iperf3: error" in x]
            raise ValueError(f"{len(summaries)} iperf3 receiver lines of 2: {errors[0] if errors else 'no error line'}")
        tcp, udp = summaries
        loss = re.search(r"\((\S+)%\)", udp[2])
        assert loss
        return {"ping_ms": ping, "ping_steady": statistics.median(rtts[2:] or rtts),
                "tcp": float(tcp[1]), "udp": float(udp[1]), "udp_loss": float(loss[1])}

    def finish(self) -> None:
        """Powers a VirtIO run's Linux off and writes the counters of all its
        trials (the bridge's, the I/O VM's, the client's interrupts) to
        build/bench/io/linux-<mode>.profile; then stops QEMU."""
        try:
            if self.mode in PROFILED and self.qmp:
                self.qmp.execute("cont")
                self.con.type("cat /proc/interrupts; exit\r")
                with contextlib.suppress(TimeoutError):
                    self.con.wait_for("[iovm] iovm: PASS", timeout=60)
                # the bridge's counters, at Linux's power-off (a polling I/O VM
                # may pass before the hypervisor prints them)
                with contextlib.suppress(TimeoutError):
                    self.con.wait_for("virtio-net notifies=", timeout=60, part=True)
                profile = [x for x in self.con.lines if PROFILE.search(x)]
                if profile:
                    (OUT / f"linux-{self.mode}.profile").write_text("\n".join(profile) + "\n")
        finally:
            self.close()

    def close(self) -> None:
        if self.qmp:
            self.qmp.close()
        self.con.kill()
        for server in self.servers:
            server.kill()
            server.wait()


LINUX_MODES = ("direct", "virtio", "sleep", "flood")
LABELS = {"direct": "NIC passed through", "virtio": "through the I/O VM (io.poll)",
          "sleep": "through the I/O VM sleeping when idle",
          "flood": "through the I/O VM (io.poll), beside a flooder"}
POLLED = ("virtio", "flood")  # modes whose I/O VM busy-waits (io.poll)
PROFILED = ("virtio", "sleep")  # modes whose counters go to build/bench/io/linux-<mode>.profile
KEYS = ("ping_ms", "tcp", "udp")


def linux_trials(seconds: int, modes: tuple[str, ...], trials: int, nice: bool = True
                 ) -> dict[str, list[dict[str, float] | str]]:
    """Each mode booted once, then ``trials`` rounds of one trial of every
    mode in turn (the order reversed every other round, so that neither
    path always runs first): a change of the host's load hits every mode
    within a round. A mode that fails to boot or in a trial records why."""
    vms: dict[str, LinuxVM | str] = {}
    rows: dict[str, list[dict[str, float] | str]] = {m: [] for m in modes}
    for mode in PROFILED:
        (OUT / f"linux-{mode}.profile").unlink(missing_ok=True)  # only this run's
    try:
        for mode in modes:
            try:
                vms[mode] = LinuxVM(mode, nice)
            except (TimeoutError, subprocess.CalledProcessError) as e:
                vms[mode] = str(e).splitlines()[0][:80]
        for k in range(trials):
            for mode in modes if k % 2 == 0 else modes[::-1]:
                vm = vms[mode]
                if isinstance(vm, str):
                    rows[mode].append(vm)
                    continue
                try:
                    rows[mode].append(vm.trial(seconds))
                except (TimeoutError, StopIteration, ValueError, AssertionError) as e:
                    rows[mode].append(str(e).splitlines()[0][:80])
    finally:
        for vm in vms.values():
            if isinstance(vm, LinuxVM):
                vm.finish()
    return rows


def profile_summary(mode: str) -> str | None:
    """Per frame of a VirtIO run (build/bench/io/linux-<mode>.profile): the
    I/O VM's exits and sleeps, the client's notifications and interrupts."""
    path = OUT / f"linux-{mode}.profile"
    if not path.exists():
        return None
    text = path.read_text()
    dev = {k: int(v) for line in text.splitlines() if "iovm: device tx=" in line for k, v in KV.findall(line)}
    cpu = {k: int(v) for line in text.splitlines() if "iovm: cpu " in line for k, v in KV.findall(line)}
    net = {k: int(v) for line in text.splitlines() if "virtio-net notifies=" in line for k, v in KV.findall(line)}
    frames = dev.get("tx", 0) + dev.get("rx", 0)
    if not frames or "exits" not in cpu or "notifies" not in net:
        return None
    return (f"{LABELS[mode]}, per frame ({frames} frames out and in, all trials): the I/O VM's exits "
            f"{cpu['exits'] / frames:.2f} (interrupts {cpu['irq_exits'] / frames:.2f}, sleeps "
            f"{cpu.get('sleeps', 0) / frames:.2f}), the client's notifications {net['notifies'] / frames:.2f}, "
            f"its interrupts {net['irqs'] / frames:.2f}, receive SGIs {net['kicks'] / frames:.2f}")


def cell(r: dict[str, float], q: dict[str, float], key: str) -> str:
    """A figure and, if known, its ratio in brackets."""
    return f"{r[key]:.2f}" + (f" ({q[key]:.2f})" if key in q else "")


def steady_pings(rows: dict[str, list[dict[str, float] | str]], modes: tuple[str, ...], trials: int) -> None:
    """The ping without its first two (a trial's first pays for the path's
    cold start, up to 30 ms, which moves a 20-ping mean more than anything
    else): per mode the median over trials of each trial's median from the
    third ping on, and the median of the rounds' ratios."""
    print()
    for mode in modes:
        pairs = [(r["ping_steady"], b["ping_steady"]) for r, b in zip(rows[mode], rows["direct"], strict=True)
                 if isinstance(r, dict) and isinstance(b, dict)]
        if pairs:
            print(f"Steady ping, {LABELS[mode]}: {statistics.median(p for p, _ in pairs):.2f} ms "
                  f"({statistics.median(p / b for p, b in pairs):.2f}x), {trials} trial(s)")


def linux_rows(seconds: int, modes: tuple[str, ...] = LINUX_MODES, trials: int = 1, nice: bool = True) -> None:
    """The trials' rows (ratios to the same round's passthrough trial), then
    with more than one trial a median row per mode: each figure's median
    and, in brackets, the median of the rounds' ratios."""
    rows = linux_trials(seconds, modes, trials, nice)
    if any(m in POLLED for m in modes):
        print()
        print("The polling I/O VM's vCPU thread runs at nice " + ("19 on the host: its busy-wait takes no host "
              "time from Linux's vCPU and QEMU's device model (on hardware it has a core of its own)"
              if nice else "0 (--no-nice): its busy-wait competes with Linux's vCPU for the host's cores"))
    print()
    print("| Linux client | trial | ping avg (ms) (ratio) | iperf3 TCP Mbit/s (ratio) | "
          "iperf3 UDP Mbit/s (ratio), loss |")
    print("|---|---|---|---|---|")
    ratios: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    for k in range(trials):
        base = rows["direct"][k]
        for mode in modes:
            r = rows[mode][k]
            if isinstance(r, str):
                print(f"| {LABELS[mode]} | {k + 1} | failed: {r} | - | - |")
                continue
            q = {key: r[key] / base[key] for key in KEYS if isinstance(base, dict) and base[key]}
            if len(q) == len(KEYS):
                ratios[mode].append(q)
            print(f"| {LABELS[mode]} | {k + 1} | {cell(r, q, 'ping_ms')} | {cell(r, q, 'tcp')} | "
                  f"{cell(r, q, 'udp')}, {r['udp_loss']:.1f}% |")
    if trials > 1:
        for mode in modes:
            ok = [r for r in rows[mode] if isinstance(r, dict)]
            if not ok or not ratios[mode]:
                print(f"| {LABELS[mode]} | median | - | - | - |")
                continue
            med = {key: statistics.median(r[key] for r in ok) for key in (*KEYS, "udp_loss")}
            mq = {key: statistics.median(q[key] for q in ratios[mode]) for key in KEYS}
            print(f"| {LABELS[mode]} | median | {cell(med, mq, 'ping_ms')} | {cell(med, mq, 'tcp')} | "
                  f"{cell(med, mq, 'udp')}, {med['udp_loss']:.1f}% |")
    steady_pings(rows, modes, trials)
    for mode in (m for m in PROFILED if m in modes):
        if summary := profile_summary(mode):
            print()
            print(summary)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--frames", type=int, default=1000, help="echo requests per client (default 1000)")
    ap.add_argument("--capacity", type=int, default=5000, help="io.capacity of the shared rows (default 5000)")
    ap.add_argument("--seconds", type=int, default=5, help="iperf3 run length (default 5)")
    ap.add_argument("--trials", type=int, help="rounds of Linux trials, every mode in each (default 5; --quick 1)")
    ap.add_argument("--no-linux", action="store_true", help="the bare-metal rows only")
    ap.add_argument("--no-nice", action="store_true",
                    help="leave the polling I/O VM's vCPU thread at the host's normal priority (default: nice 19)")
    ap.add_argument("--linux-only", metavar="MODES", help="only these Linux rows, comma-separated "
                    f"(of {','.join(LINUX_MODES)}; direct first: the ratios' base), no bare-metal rows")
    ap.add_argument("--blk-reads", type=int, default=1000,
                    help="random 4 KiB reads of each virtio-blk row (default 1000)")
    ap.add_argument("--no-blk", action="store_true", help="without the virtio-blk rows")
    ap.add_argument("--calibrate", action="store_true", help="measure the device's capacity and stop")
    ap.add_argument("--quick", action="store_true",
                    help="smallest run (the smoke test's): passthrough, 2 clients, 2 clients of which one floods; "
                         "Linux with the NIC passed through and through the I/O VM (no flooder); "
                         "virtio-blk passed through and through the bridge with one request in flight")
    args = ap.parse_args(argv)
    trials = args.trials or (1 if args.quick else 5)
    if trials < 1:
        ap.error("--trials: at least 1")
    if args.calibrate:
        return calibrate(args.frames)
    if args.linux_only:
        modes = tuple(args.linux_only.split(","))
        if modes[0] != "direct" or not set(modes) <= set(LINUX_MODES):
            ap.error(f"--linux-only: direct first, then any of {', '.join(LINUX_MODES[1:])}")
        linux_rows(args.seconds, modes, trials, not args.no_nice)
        return 0
    bare_metal_rows(args.frames, args.capacity, QUICK if args.quick else SCENARIOS)
    if not args.no_linux:
        linux_rows(args.seconds, LINUX_MODES[:2] if args.quick else LINUX_MODES, trials, not args.no_nice)
    if not args.no_blk:
        print()
        vioblk_bridge.rows(args.blk_reads, (1,) if args.quick else (1, 4))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
