# SPDX-License-Identifier: Apache-2.0
"""Shared-I/O benchmark (docs/io.md): frames/s, round-trip latency and the
measured (alpha, delta) of each client through the I/O VM, against the
virtio-net device passed straight through to one VM, with one to four
clients and with a flooding client (two to four clients, the last one
floods). Frames go to a peer thread on loopback (bulkhead.netpeer) over
QEMU's ``-netdev dgram`` and back. The platform ``qemu-virt`` has four CPUs,
one of which is the I/O VM's: the four-client rows run on a variant with a
fifth CPU (build/bench/io/platforms/qemu-virt.yaml, otherwise the same
file; QEMU's ``virt`` and the hypervisor support up to eight).

Everything runs under ``-icount shift=0,align=off,sleep=off``: times are
virtual (1 ns per instruction, one instruction counter for all vCPUs, which
QEMU runs round-robin); QEMU's NIC model has no line rate and the host-side
peer takes no virtual time while a vCPU runs, so the figures compare the
paths on QEMU, they are not network performance. QEMU models no caches.

    .venv/bin/python bench/shared_io.py [--frames N] [--rate R]

(Not ``bench/io.py``: a script's directory comes first on ``sys.path``, and a
file named ``io.py`` there would shadow the standard library's ``io``.)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.config import shared_io  # noqa: E402
from bulkhead.layout.load import load_spec  # noqa: E402
from bulkhead.run import runner  # noqa: E402
from bulkhead.run.netpeer import Peer  # noqa: E402

OUT = ROOT / "build" / "bench" / "io"
KV = re.compile(r"(\w+)=(\d+)")
MACS = ["02:00:00:00:00:0a", "02:00:00:00:00:0b", "02:00:00:00:00:0c", "02:00:00:00:00:0d"]
NAMES = ["alice", "bob", "carol", "dave"]
PLATFORM = ROOT / "platforms" / "qemu-virt.yaml"
PLATFORM_CPUS = "cpus: [0x0, 0x1, 0x2, 0x3]"


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


def shared_config(n: int, flood: bool, frames: int, rate: int) -> str:
    vms = [vm_yaml("iovm", 0, "iovm", "max_ms: 120000, poll: 1", "    devices: [virtio31]\n")]
    clients = []
    for i in range(n):
        if flood and i == n - 1:
            params = f"mode: flood, frames: {frames * 8}, size: 1000"
        else:
            params = f"frames: {frames}, window: 16, timeout_ms: 120000, poll: 1"
        vms.append(vm_yaml(NAMES[i], i + 1, "ioclient", params))
        clients.append(f'    - {{vm: {NAMES[i]}, mac: "{MACS[i]}", queue: {64 if flood and i == n - 1 else 16}}}\n')
    return ("platform: qemu-virt\ndma_isolation: none\nvms:\n" + "".join(vms) + "io:\n  device: virtio31\n  vm: iovm\n"
            f"  frame_rate: {rate}\n  clients:\n" + "".join(clients))


def direct_config(frames: int) -> str:
    return ("platform: qemu-virt\ndma_isolation: none\nvms:\n"
            + vm_yaml("iovm", 0, "iovm", f"mode: direct, io_base: 0x0a003e00, frames: {frames}, window: 16",
                      "    devices: [virtio31]\n"))


def kv(line: str) -> dict[str, int]:
    return {k: int(v) for k, v in KV.findall(line)}


def run(name: str, text: str, direct: bool = False, ncpus: int = 4) -> tuple[runner.RunResult, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    cfg = OUT / f"{name}.yaml"
    cfg.write_text(text)
    with Peer(max_frames=200_000, max_seconds=1800) as peer, open(OUT / f"{name}.build.log", "w") as log:
        netdev = peer.netdev()
        extra: list[str] = []
        if direct:  # no io: section: attach the NIC by hand
            extra = ["-global", "virtio-mmio.force-legacy=false", "-netdev", f"{netdev},id=bhio",
                     "-device", "virtio-net-device,netdev=bhio,bus=virtio-mmio-bus.31"]
        res = runner.run(cfg, timeout=1800, icount=0, out=OUT / name, netdev=netdev,
                         extra_qemu_args=extra, build_log=log, platforms_dir=platforms_for(ncpus))
    if not res.clean:
        raise SystemExit(f"bench/shared_io.py: {name}: {res.reason}\n{res.output[-2000:]}")
    return res, cfg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=200, help="echo requests per client (default 200)")
    ap.add_argument("--rate", type=int, default=5000, help="the I/O VM's frame_rate (default 5000)")
    args = ap.parse_args()

    print("| scenario | VM | frames/s | RTT mean / max (us) | alpha meas. / guaranteed (f/s) | "
          "share of slots | delta meas. / supply / bound (us) | overruns |")
    print("|---|---|---|---|---|---|---|---|")
    res, _ = run("direct", direct_config(args.frames), direct=True)
    for line in res.lines("iovm"):
        if line.startswith("iovm: result "):
            r = kv(line)
            print(f"| direct passthrough | iovm | {r['fps']} | {r['rtt_mean_us']} / {r['rtt_max_us']} | - | - | - | - |")
    for n, flood in ((1, False), (2, False), (3, False), (4, False), (2, True), (3, True), (4, True)):
        name = f"shared{n}{'-flood' if flood else ''}"
        res, cfg = run(name, shared_config(n, flood, args.frames, args.rate), ncpus=n + 1)
        spec = load_spec(cfg, platforms_dir=platforms_for(n + 1))
        assert spec.io is not None
        g = {x.vm: x for x in shared_io.guarantees(spec.io)}
        dev = next(kv(x) for x in res.lines("iovm") if x.startswith("iovm: device tx="))
        for i in range(n):
            vm = NAMES[i]
            stats: dict[str, int] = {}
            for line in res.lines("iovm"):
                if line.startswith(f"iovm: client {vm} "):
                    stats.update(kv(line))
            echo = next((kv(x) for x in res.lines(vm) if x.startswith("ioclient: result ")), None)
            what = "flood" if echo is None else f"{echo['fps']}"
            rtt = "-" if echo is None else f"{echo['rtt_mean_us']} / {echo['rtt_max_us']}"
            label = f"{n} client{'s' if n > 1 else ''}" + (", last floods" if flood else "")
            print(f"| {label} | {vm} | {what} | {rtt} | {stats['alpha_fps']} / {float(g[vm].alpha):.0f} | "
                  f"{stats['share_permille'] / 10:.1f}% | {stats['delta_us']} / {stats['supply_delta_us']} / "
                  f"{float(g[vm].delta) * 1e6:.0f} | {dev['overruns']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
