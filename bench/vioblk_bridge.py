# SPDX-License-Identifier: Apache-2.0
"""virtio-blk through the hypervisor's bridge (docs/io.md "VirtIO") against
the device passed through.

Under ``-icount 0`` (virtual time; QEMU's device completes requests in host
time): the passthrough row is bench/shared_disk.py's (guests/ioclient
``mode=blkdev``: the virtio-blk device passed straight through to one VM,
one 4 KiB request at a time); the bridge rows run guests/vioclient
``dev=blk`` on the virtio-mmio device the hypervisor emulates for a client
of the I/O VM's disk (``virtio: blk``), with ``--depth`` 1 and 4 requests in
flight: ``--reads`` random 4 KiB reads and 1 MiB of sequential reads (64 KiB
requests, cut into 4 KiB block ring requests by the bridge), every word
checked against the image's pattern. Columns: random-read IOPS and
sequential read KiB/s, with the ratio to passthrough.

QEMU models no disk latency or bandwidth; the figures compare the paths on
this QEMU, not storage performance.

    .venv/bin/python bench/vioblk_bridge.py [--reads N] [--quick]

bench/shared_io.py prints these rows too (issue #42 item 4: one bench for
the shared devices); its smoke test runs them.
"""

from __future__ import annotations

import argparse
import re
import sys
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import shared_disk  # noqa: E402  (bench/shared_disk.py: the passthrough row)

from bulkhead.run import runner  # noqa: E402
from bulkhead.run.backend import RunOptions  # noqa: E402

OUT = ROOT / "build" / "bench" / "vioblk"
KV = re.compile(r"(\w+)=(\d+)")
MASK = (1 << 64) - 1
REGION = 2 << 20


def bridge_config(reads: int, depth: int) -> str:
    iovm = shared_disk.vm_yaml("iovm", 0, "iovm", "max_ms: 120000", shared_disk.OWNER)
    alice = shared_disk.vm_yaml("alice", 1, "vioclient", f"dev: blk, reads: {reads}, depth: {depth}, "
                                "seq_kib: 1024, write_kib: 0, reset: 0")
    return ("platform: qemu-virt\ndma_isolation: none\nvms:\n" + iovm + alice
            + f"disk:\n  device: {shared_disk.DEVICE}\n  vm: iovm\n  size: 4M\n  iops: 2000\n  mbps: 8\n"
            "  clients:\n    - {vm: alice, size: 2M, weight: 1, queue: 16, virtio: blk}\n")


def bridge(reads: int, depth: int) -> dict[str, dict[str, int]]:
    """vioclient's ``result bench=blk_*`` figures through the bridge."""
    name = f"bridge-d{depth}"
    cfg, out = OUT / f"{name}.yaml", OUT / name
    out.mkdir(parents=True, exist_ok=True)
    cfg.write_text(bridge_config(reads, depth))
    # alice's region holds vioclient's pattern (guests/vioclient/vioblk.c, seed 0x5eed)
    words = array("Q", (((o * 0x9E3779B97F4A7C15) & MASK) ^ 0x5EED for o in range(0, REGION, 8)))
    (out / "disk.img").write_bytes(words.tobytes() + bytes((4 << 20) - REGION))
    with open(OUT / f"{name}.build.log", "w") as log:
        res = runner.run(cfg, RunOptions(timeout=1800, icount=0, out=out, build_log=log))
    found = {m[1]: {k: int(v) for k, v in KV.findall(x)}
             for x in res.lines("alice") if (m := re.match(r"vioclient: result bench=(\w+) ", x))}
    if not res.clean or {"blk_randread", "blk_seqread"} - set(found):
        raise SystemExit(f"bench/vioblk_bridge.py: {name}: {res.reason}\n{res.output[-2000:]}")
    return found


def rows(reads: int, depths: tuple[int, ...]) -> None:
    print("| path | requests in flight | 4 KiB random read IOPS (ratio) | seq. read KiB/s (ratio) |")
    print("|---|---|---|---|")
    old_out = shared_disk.OUT
    shared_disk.OUT = OUT
    try:
        img = OUT / "pass.img"
        OUT.mkdir(parents=True, exist_ok=True)
        with open(img, "wb") as fh:
            fh.truncate(4 << 20)
        extra = ("-global", "virtio-mmio.force-legacy=false", "-drive", f"file={img},if=none,format=raw,id=bhdisk",
                 "-device", f"virtio-blk-device,drive=bhdisk,bus=virtio-mmio-bus.{shared_disk.DEVICE[6:]}")
        base = shared_disk.results(shared_disk.run("pass", shared_disk.passthrough_config(reads), extra), "dev")
    finally:
        shared_disk.OUT = old_out
    iops, kib_s = base["blk_randread"]["iops"], base["blk_seqread"]["kib_s"]
    print(f"| passthrough (ioclient blkdev, 4 KiB requests) | 1 | {iops} | {kib_s} |")
    for depth in depths:
        r = bridge(reads, depth)
        a, b = r["blk_randread"]["iops"], r["blk_seqread"]["kib_s"]
        print(f"| virtio-blk through the bridge (vioclient, 64 KiB sequential requests) | {depth} | "
              f"{a} ({a / iops:.2f}) | {b} ({b / kib_s:.2f}) |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--reads", type=int, default=1000, help="random 4 KiB reads (default 1000)")
    ap.add_argument("--quick", action="store_true", help="the smoke test's run: one bridge row (depth 1)")
    args = ap.parse_args(argv)
    rows(args.reads, (1,) if args.quick else (1, 4))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
