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

"walks+copies" is the share of a kind's instructions in the stage-2 walks
and small copies of the bridge (`pt_lookup`, `mem_ipa_to_pa`, `ram_*`,
`vcopy`). Instruction counts, not times: under TCG each costs about the
same host time, so they say which part of the bridge a faster path must
cut; QEMU models no caches.

    python3 bench/virtio_exits.py [--pings N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
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


def trace(pings: int, log: Path) -> tuple[list[Counter[str]], float]:
    """CPU 1's exits over ``pings`` pings, and the pings' mean RTT (ms)."""
    built: list[hyptrace.Symbols] = []  # the build's, read once

    def extra(out: Path) -> list[str]:
        built.append(syms := hyptrace.Symbols(out / "hyp" / "bulkhead.elf"))
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
        vm.qmp.execute("stop")
        rtt = shared_io.ping_mean(vm.con.lines[first:])
    finally:
        vm.close()
    return hyptrace.segments(log, built[0], CPU), rtt


def table(segs: list[Counter[str]]) -> dict[str, dict[str, object]]:
    by: dict[str, list[Counter[str]]] = {k: [] for k in KINDS}
    for s in segs:
        by[kind_of(s)].append(s)
    out: dict[str, dict[str, object]] = {}
    for kind, ss in by.items():
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
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.pings < 1:
        ap.error("--pings: at least 1")
    shared_io.OUT.mkdir(parents=True, exist_ok=True)
    segs, rtt = trace(args.pings, shared_io.OUT / "virtio-exits.log")
    rows = table(segs)
    if args.json:
        json.dump({"pings": args.pings, "rtt_ms": rtt, "kinds": rows}, sys.stdout, indent=2)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
