# SPDX-License-Identifier: Apache-2.0
"""Shared-disk benchmark (docs/io.md "Shared disk"): clients of the I/O VM's
virtio-blk disk against the same driver with the device passed through.

Under ``-icount 0`` (virtual time: one instruction counter for all vCPUs,
which QEMU runs round-robin; QEMU's device completes requests in host time):
guests/ioclient ``mode=blkdev`` drives the virtio-blk device passed straight
through to its VM with guests/lib/vblk.c (one request at a time, the I/O VM's
own driver); then one and two ``mode=blk`` clients of the I/O VM, and a
client beside one that floods (``mode=blkflood``, same weight). Each client
writes 1 MiB in 4 KiB requests, reads it back sequentially and ``--reads``
random 4 KiB blocks, checking every word. Columns: random-read IOPS,
sequential read and write KiB/s, each with its ratio to passthrough; the
client's share of the requests served while it was backlogged, and the
guarantee ``check`` states (equal weights).

QEMU models no disk latency or bandwidth; the figures compare the paths and
the shares on this QEMU, not storage performance.

    .venv/bin/python bench/shared_disk.py [--reads N] [--quick]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.run import runner  # noqa: E402
from bulkhead.run.backend import RunOptions  # noqa: E402

OUT = ROOT / "build" / "bench" / "disk"
KV = re.compile(r"(\w+)=(\d+)")
DEVICE, BASE = "virtio30", 0x0A003C00
NAMES = ["alice", "bob"]


def vm_yaml(name: str, cpu: int, guest: str, params: str, extra: str = "") -> str:
    return (f"  - name: {name}\n    cpus: [{cpu}]\n    memory:\n      - {{ipa: 0x40000000, size: 16M}}\n"
            f"    guest: {guest}\n    params: {{{params}}}\n{extra}")


OWNER = f"    devices: [{DEVICE}]\n    introspection: true\n"  # host physical addresses for the device


def passthrough_config(reads: int) -> str:
    return ("platform: qemu-virt\ndma_isolation: none\nvms:\n"
            + vm_yaml("dev", 0, "ioclient", f"mode: blkdev, base: {BASE:#x}, reads: {reads}", OWNER))


def shared_config(n: int, flood: bool, reads: int) -> str:
    vms = [vm_yaml("iovm", 0, "iovm", "max_ms: 120000", OWNER)]
    clients = []
    for i in range(n):
        name = "mallory" if flood and i == n - 1 else NAMES[i]
        params = "mode: blkflood, until_ms: 50" if name == "mallory" else f"mode: blk, reads: {reads}"
        vms.append(vm_yaml(name, i + 1, "ioclient", params))
        clients.append(f"    - {{vm: {name}, size: 1M, weight: 1, queue: {64 if name == 'mallory' else 8}}}\n")
    return ("platform: qemu-virt\ndma_isolation: none\nvms:\n" + "".join(vms)
            + f"disk:\n  device: {DEVICE}\n  vm: iovm\n  size: 4M\n  iops: 2000\n  mbps: 8\n  clients:\n"
            + "".join(clients))


def run(name: str, text: str, extra: tuple[str, ...] = ()) -> runner.RunResult:
    OUT.mkdir(parents=True, exist_ok=True)
    cfg = OUT / f"{name}.yaml"
    cfg.write_text(text)
    (OUT / name / "disk.img").unlink(missing_ok=True)  # a blank disk each run
    with open(OUT / f"{name}.build.log", "w") as log:
        res = runner.run(cfg, RunOptions(timeout=1800, icount=0, out=OUT / name, extra_qemu_args=extra,
                                         build_log=log))
    if not res.clean:
        raise SystemExit(f"bench/shared_disk.py: {name}: {res.reason}\n{res.output[-2000:]}")
    return res


def results(res: runner.RunResult, vm: str) -> dict[str, dict[str, int]]:
    """The client's ``result bench=blk_*`` lines, by bench."""
    out = {}
    for line in res.lines(vm):
        if m := re.match(r"ioclient: result bench=(\w+) ", line):
            out[m[1]] = {k: int(v) for k, v in KV.findall(line)}
    if set(out) != {"blk_seqwrite", "blk_seqread", "blk_randread"}:
        raise SystemExit(f"bench/shared_disk.py: {vm} reported {sorted(out)}:\n{res.output[-2000:]}")
    return out


def share(res: runner.RunResult, vm: str) -> int:
    line = next(x for x in res.lines("iovm") if x.startswith(f"iovm: disk client={vm} served_backlogged="))
    return int(KV.findall(line)[-1][1])  # share_permille


def rows(reads: int, scenarios: tuple[tuple[int, bool], ...]) -> None:
    print("| scenario | VM | 4 KiB random read IOPS (ratio) | seq. read KiB/s (ratio) | seq. write KiB/s (ratio) | "
          "share served / guaranteed |")
    print("|---|---|---|---|---|---|")
    img = OUT / "pass.img"
    OUT.mkdir(parents=True, exist_ok=True)
    extra = ("-global", "virtio-mmio.force-legacy=false", "-drive", f"file={img},if=none,format=raw,id=bhdisk",
             "-device", f"virtio-blk-device,drive=bhdisk,bus=virtio-mmio-bus.{DEVICE[6:]}")
    with open(img, "wb") as fh:
        fh.truncate(4 << 20)
    base = results(run("pass", passthrough_config(reads), extra), "dev")
    key = {"blk_randread": "iops", "blk_seqread": "kib_s", "blk_seqwrite": "kib_s"}

    def cells(r: dict[str, dict[str, int]], ratios: bool) -> str:
        return " | ".join(f"{r[b][k]}" + (f" ({r[b][k] / base[b][k]:.2f})" if ratios else "") for b, k in key.items())

    print(f"| passthrough (one VM, no I/O VM) | dev | {cells(base, False)} | - |")
    for n, flood in scenarios:
        res = run(f"shared{n}{'-flood' if flood else ''}", shared_config(n, flood, reads))
        label = f"{n} client{'s' if n > 1 else ''}" + (", last floods" if flood else "")
        for i in range(n - 1 if flood else n):
            vm = NAMES[i]
            print(f"| {label} | {vm} | {cells(results(res, vm), True)} | "
                  f"{share(res, vm) / 10:.1f}% / {100 / n:.1f}% |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--reads", type=int, default=1000, help="random 4 KiB reads per client (default 1000)")
    ap.add_argument("--quick", action="store_true", help="smallest run (the smoke test's): passthrough, "
                                                           "one client, a client beside a flooder")
    args = ap.parse_args(argv)
    rows(args.reads, ((1, False), (2, True)) if args.quick else ((1, False), (2, False), (2, True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
