# SPDX-License-Identifier: Apache-2.0
"""Hypervisor instructions per VirtIO exit of a stock Linux client (issue
#42 item 4: where a VirtIO frame's time goes on the client's CPU).

Boots bench/shared_io.py's `virtio` row (Linux on CPU 1 with virtio_net on
the hypervisor's bridge, the I/O VM polling on CPU 0: `io.poll`), host
timed, with QEMU's execution log restricted to the hypervisor's text
(``-dfilter``). Once Linux's network is up, QMP turns one instruction per
block and the ``exec,nochain`` log on, Linux pings the host ``--pings``
times (0.5 s apart) and the log is turned off. Every EL2 instruction of
CPU 1 in that window is attributed to its function (the ELF's symbols) and
each exit from Linux (a lower-EL vector entry to its ERET, as
bench/hyptrace.py cuts them) to a kind:

- transmit: a transport-register exit that ran the bridge's transmit
  (`vnet_tx`: QueueNotify of the transmit queue, the frame copied into the
  I/O VM's ring);
- receive: the receive SGI (`virtio_sgi`: the I/O VM rang; the frames
  copied into Linux's buffers, its interrupt raised);
- register: any other transport-register exit (InterruptStatus,
  InterruptACK, a receive-queue notification with nothing to move);
- other: everything else on that CPU (timer, console, ...).

With ``--tcp KIB`` (default 256; 0: none), Linux then sends that many
KiB over TCP (``iperf3 -n``, writes of at most 128 KiB, Linux's TSO on the bridge's `HOST_TSO4`:
the bridge cuts each segment into frames, copies and checksums them),
traced into a second log, and the bench prints the bridge's exits in that
window (transmit; receive, the ACKs; register) and their hypervisor
instructions per KiB sent, in all and per full frame (1448 bytes of TCP
payload): the cost a TCP stream puts on the client's CPU.

"walks+copies" is the share of a kind's instructions in the stage-2 walks
and small copies of the bridge (`pt_lookup`, `mem_ipa_to_pa`, `ram_*`,
`vcopy`). Instruction counts, not times: under TCG each costs about the
same host time, so they say which part of the bridge a faster path must
cut; QEMU models no caches.

    python3 bench/virtio_exits.py [--pings N] [--tcp KIB] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import hyptrace  # noqa: E402  (bench/hyptrace.py: symbols, exit segments)
import shared_io  # noqa: E402  (bench/shared_io.py: the Linux VirtIO row)

CPU = 1  # the Linux client's (shared_io.linux_config)
KINDS = ("transmit", "receive", "register", "other")
WALKS = ("pt_lookup", "mem_ipa_to_pa", "ram_read", "ram_write", "ram_valid", "ram_copy", "vcopy")


def kind_of(fns: Counter[str]) -> str:
    if "virtio_sgi" in fns:
        return "receive"
    if "virtio_mmio" in fns:
        return "transmit" if "vnet_tx" in fns else "register"
    return "other"


def by_kind(segs: list[Counter[str]]) -> dict[str, list[Counter[str]]]:
    """The exits grouped by kind, every kind present (in KINDS' order)."""
    by: dict[str, list[Counter[str]]] = {k: [] for k in KINDS}
    for s in segs:
        by[kind_of(s)].append(s)
    return by


MSS = 1448  # TCP payload of a full frame (1500-byte MTU, timestamps on)
SEGMENT = "vnet_gso_next"  # the bridge's cut of one frame from a TSO send (core/virtio/vnet_offload.c)


def call_costs(log: Path, elf: Path, syms: hyptrace.Symbols, fn: str) -> list[int]:
    """The instructions of each call of ``fn`` on CPU 1, with everything it
    calls (from its first instruction to one of its RETs): a fixed piece of
    work, so its median does not move with the TCP run's timing. ``syms``:
    the symbols of ``elf``, whose ``fn`` alone is disassembled here."""
    i = syms.names.index(fn)
    start, end = syms.addrs[i], syms.addrs[i + 1]
    dis = subprocess.run(["aarch64-linux-gnu-objdump", "-d", f"--start-address={start:#x}",
                          f"--stop-address={end:#x}", str(elf)], check=True, capture_output=True, text=True).stdout
    rets = {int(m[1], 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s+d65f03c0\s", dis, re.M)}
    costs: list[int] = []
    n = -1  # not in a call
    for pc in hyptrace.pcs(log, CPU):
        if pc == start and n < 0:
            n = 0
        if n >= 0:
            n += 1
            if pc in rets:
                costs.append(n)
                n = -1
    return costs


def trace(pings: int, log: Path, tcp_kib: int = 0, tcp_log: Path | None = None
          ) -> tuple[list[Counter[str]], float, list[Counter[str]], list[int]]:
    """CPU 1's exits over ``pings`` pings, the pings' mean RTT (ms), and
    (``tcp_kib``) its exits while Linux sends that many KiB over TCP and
    the instructions of each frame the bridge cut from a TSO send."""
    built: list[tuple[Path, hyptrace.Symbols]] = []  # the build's ELF and its symbols, read once
    tcp: list[Counter[str]] = []
    segment: list[int] = []

    def extra(out: Path) -> list[str]:
        elf = out / "hyp" / "bulkhead.elf"
        built.append((elf, syms := hyptrace.Symbols(elf)))
        return ["-dfilter", f"{syms.addrs[0]:#x}..{syms.text_end:#x}", "-D", str(log)]

    log.unlink(missing_ok=True)
    vm = shared_io.LinuxVM("virtio", extra=extra)
    try:
        assert vm.qmp
        first = len(vm.con.lines)
        vm.qmp.execute("cont")
        vm.qmp.hmp("one-insn-per-tb on")
        vm.qmp.hmp("log exec,nochain")
        vm.con.type(f"busybox ping -c {pings} -i 0.5 -W 5 10.0.2.2; echo ping done\r")
        vm.con.wait_for("[linux] ping done", timeout=60 + 10 * pings)
        vm.qmp.hmp("log none")
        rtt = shared_io.ping_mean(vm.con.lines[first:])
        if tcp_kib and tcp_log:
            tcp_log.unlink(missing_ok=True)
            vm.qmp.hmp(f"logfile {tcp_log}")
            vm.qmp.hmp("log exec,nochain")
            # -l: writes of at most 128 KiB, iperf3's default (it sends whole
            # writes, so a smaller -n with the default would send 128 KiB)
            vm.con.type(f"iperf3 -c 10.0.2.2 -p {vm.ports['tcp']} -n {tcp_kib}K -l {min(tcp_kib, 128)}K -f m; "
                        "echo tcp done\r")
            vm.con.wait_for("[linux] tcp done", timeout=120 + tcp_kib)
            vm.qmp.hmp("log none")
            if not any(shared_io.RECEIVER.match(x) for x in vm.con.lines[first:]):
                raise RuntimeError("iperf3 printed no receiver summary")
        vm.qmp.execute("stop")
    finally:
        vm.close()
    elf, syms = built[0]
    if tcp_kib and tcp_log:
        tcp = hyptrace.segments(tcp_log, syms, CPU)
        segment = call_costs(tcp_log, elf, syms, SEGMENT)
    return hyptrace.segments(log, syms, CPU), rtt, tcp, segment


def tcp_row(segs: list[Counter[str]], kib: int, segment: list[int]) -> dict[str, object]:
    """The bridge's exits during a TCP send of ``kib`` KiB (transmit,
    receive: the ACKs, register): their count and instructions per KiB by
    kind, in all and per full frame, and the functions' shares per KiB."""
    by = by_kind(segs)
    total: Counter[str] = Counter()
    exits: dict[str, int] = {}
    per_kib: dict[str, float] = {}
    for kind in KINDS[:3]:
        exits[kind] = len(by[kind])
        per_kib[kind] = sum(sum(s.values()) for s in by[kind]) / kib
        for s in by[kind]:
            total.update(s)
    n = sum(total.values())
    return {"kib": kib, "exits": exits, "per_kib": per_kib, "total_per_kib": n / kib,
            "tso_frames": len(segment), "tso_frame_median": statistics.median(segment) if segment else 0,
            "per_frame": n / kib * MSS / 1024,
            "walks_copies": sum(total[f] for f in WALKS) / n if n else 0.0,
            "functions": {fn: c / kib for fn, c in total.most_common(8)}}


def table(segs: list[Counter[str]]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for kind, ss in by_kind(segs).items():
        if not ss:
            continue
        sizes = sorted(sum(s.values()) for s in ss)
        total: Counter[str] = Counter()
        for s in ss:
            total.update(s)
        n = len(ss)
        out[kind] = {
            "exits": n, "mean": sum(sizes) / n, "median": statistics.median(sizes), "min": sizes[0],
            "max": sizes[-1], "walks_copies": sum(total[f] for f in WALKS) / sum(sizes),
            "functions": {fn: c / n for fn, c in total.most_common(8)},
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--pings", type=int, default=10, help="pings traced (default 10; the log grows ~9 MB each)")
    ap.add_argument("--tcp", type=int, default=256, metavar="KIB",
                    help="KiB Linux then sends over TCP, traced (default 256; 0: none)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.pings < 1:
        ap.error("--pings: at least 1")
    if args.tcp < 0:
        ap.error("--tcp: 0 or more")
    shared_io.OUT.mkdir(parents=True, exist_ok=True)
    segs, rtt, tcp_segs, segment = trace(args.pings, shared_io.OUT / "virtio-exits.log", args.tcp,
                                shared_io.OUT / "virtio-exits-tcp.log")
    rows = table(segs)
    tcp = tcp_row(tcp_segs, args.tcp, segment) if args.tcp else None
    if args.json:
        json.dump({"pings": args.pings, "rtt_ms": rtt, "kinds": rows, "tcp": tcp}, sys.stdout, indent=2)
        print()
        return 0
    print(f"hypervisor instructions per exit on the Linux client's CPU, {args.pings} pings through the I/O VM "
          f"(io.poll; traced, so the pings' mean RTT {rtt:.1f} ms is no line-rate figure); QEMU models no caches")
    print("| exit | count | mean | median | min | max | walks+copies |")
    print("|---|---|---|---|---|---|---|")
    for kind, r in rows.items():
        print(f"| {kind} | {r['exits']} | {r['mean']:.0f} | {r['median']:.0f} | {r['min']} | {r['max']} "
              f"| {r['walks_copies']:.0%} |")
    hyptrace.print_functions(rows, ".0f")
    if tcp:
        exits, per_kib = tcp["exits"], tcp["per_kib"]
        assert isinstance(exits, dict) and isinstance(per_kib, dict)
        print(f"\nTCP, {args.tcp} KiB sent (iperf3 -n): the bridge's exits on the client's CPU, "
              f"{tcp['total_per_kib']:.0f} hypervisor instructions per KiB sent, {tcp['per_frame']:.0f} per full "
              f"frame ({MSS} bytes of payload), {tcp['walks_copies']:.0%} walks and copies")
        print("| exit | count | instructions per KiB |")
        print("|---|---|---|")
        for kind in exits:
            print(f"| {kind} | {exits[kind]} | {per_kib[kind]:.0f} |")
        funcs = tcp["functions"]
        assert isinstance(funcs, dict)
        print("per KiB: " + ", ".join(f"{fn} {c:.0f}" for fn, c in funcs.items()))
        print(f"each frame cut from a TSO send ({SEGMENT}: its copy and checksums), median of "
              f"{tcp['tso_frames']}: {tcp['tso_frame_median']:.0f} instructions (a fixed piece of work: the "
              "counts above move with the run's timing, which sets how many frames go as TSO sends)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
