# SPDX-License-Identifier: Apache-2.0
"""Run-time recoloring (BH_HC_RECOLOR) under QEMU: color-recolor.yaml.

A manager VM recolors a running bare-metal victim beside a neighbour that
keeps a heartbeat: LLC 0-3 -> 4-7 (a disjoint set, only in the recolor
pool), 4-7 -> 4-5 (smaller, overlapping), 4-5 -> 4-7 (larger and
overlapping: pages move down onto frames of its own), 4-7 -> 0-3 (back onto
the frames it freed, its boot frames); its stage-2 tables follow each time
(every table page, walked with BH_HC_S2_INFO, has the new colors and is no
RAM frame). guests/recolor checks from inside:
after each recoloring every page of the victim (full walk with
BH_HC_IPA_INFO) has the new colors and its own frame, the 512 KiB pattern
and its checksum hold, and the victim had no heartbeat inside the pause the
hypervisor reported while the neighbour had many (it never paused).
Refused requests (other VMs' colors, bad colors, no such VM, a non-manager
caller, a set the spare memory is too small for) change nothing: the
victim's colors and every frame stay as they were.

QEMU has no caches: this checks placement and the pause, not cache effects.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bulkhead.run.runner import RunResult

ARTEFACTS = Path(__file__).resolve().parents[2] / "artefacts" / "linux"

STAGE_RE = re.compile(r"recolor: neighbour: stage (\d): (\d+) heartbeats during the victim's (\d+) us pause$")


def test_recolor_bare_metal(boot: Callable[..., RunResult]) -> None:
    res = boot("color-recolor.yaml", timeout=240)
    assert res.clean, res.reason + "\n" + res.output
    for vm, role in (("mgr", "manager"), ("victim", "victim"), ("nb", "neighbour")):
        assert res.lines(vm)[-1] == f"recolor: {role}: PASS", res.output

    victim = res.lines("victim")
    for stage, llc, home in ((2, "0xf0", 0), (3, "0x30", 0), (4, "0xf0", 0), (5, "0xf", 1024)):
        assert any(line.startswith(f"recolor: victim: stage {stage}: LLC {llc}, all 1024 pages of it, ")
                   and line.endswith(f"0 heartbeats in the pause, {home} on boot frames")
                   for line in victim), victim
    for stage, llc in ((1, "0xf"), (6, "0xf")):
        assert (f"recolor: victim: stage {stage}: refused requests changed nothing "
                f"(LLC {llc}, 1024 pages where they were)") in victim, victim

    beats = [STAGE_RE.match(line) for line in res.lines("nb")]
    counted = [(int(m.group(2)), int(m.group(3))) for m in beats if m]
    assert len(counted) == 4, res.lines("nb")
    for n, pause_us in counted:
        assert pause_us > 0 and n > 0, counted  # the neighbour ran throughout

    hyp = res.hyp_lines()
    assert any(re.fullmatch(r"\[bulkhead\] recolor: spare memory: a pool of 10240 KiB \(pages of its colors from "
                            r"[0-9a-f]+ to [0-9a-f]+\) and the colored regions' spans", line) for line in hyp), hyp
    done = [m.groups() for line in hyp if (m := re.fullmatch(
        r"\[bulkhead\] recolor: vm victim: LLC (\S+) \(by mgr\): (\d+) of 1024 pages moved "
        r"\((\d+) up, (\d+) down\) and (\d+) stage-2 table pages in \d+ us", line))]
    assert [d[0] for d in done] == ["4-7", "4-5", "4-7", "0-3"], hyp
    boot_line = [m for line in victim if (m := re.fullmatch(
        r"recolor: victim: 1024 pages, LLC 0xf, pattern sum 0x[0-9a-f]+, (\d+) stage-2 table pages", line))]
    assert len(boot_line) == 1, victim
    tables = boot_line[0]
    assert int(tables.group(1)) >= 3, victim  # root, level 2, level 3 (+ the shared memory's)
    assert [int(d[4]) for d in done] == [int(tables.group(1))] * 4, hyp  # the tables move with the RAM
    for stage, llc in ((2, "0xf0"), (3, "0x30"), (4, "0xf0"), (5, "0xf")):
        assert (f"recolor: victim: stage {stage}: {tables.group(1)} stage-2 table pages, all of LLC {llc}, "
                "none a RAM frame") in victim, victim
    counts = [(int(n), int(up), int(down)) for _, n, up, down, _ in done]
    assert counts[0] == (1024, 1024, 0), counts  # into the pool, above the victim's span
    assert counts[2][2] > 500 and counts[2][0] == counts[2][1] + counts[2][2], counts  # denser: mostly down
    assert counts[3] == (1024, 0, 1024), counts  # back down to its boot frames
    refused = [line.split(": refused (by mgr): ", 1)[1] for line in hyp if ": refused (by mgr): " in line]
    assert refused == [
        "the colors intersect those of vm nb",
        "the colors intersect those of vm mgr",
        "the colors intersect the hypervisor's",
        "colors beyond the platform's",
        "every color: a set must leave some out",
        "the colors intersect those of vm victim",
        "not enough spare memory in the new colors (recolor pool and free colored spans): "
        "none left for ipa 40280000",  # 2.5 MiB of LLC 7 in the pool
    ], hyp
    assert "recolor: neighbour: own request denied (-4)" in res.lines("nb")
    # self-coloring: checked at boot; the hypervisor image runs on frames of LLC colors 14-15
    assert ("[bulkhead] coloring: hypervisor colors LLC 14-15, bank 0-3: reserved, no VM or shared memory "
            "uses them") in hyp, hyp
    image = [m for line in hyp if (m := re.fullmatch(
        r"\[bulkhead\] coloring: hypervisor image (\d+) pages \(text, data, stacks, per-CPU state\): (\d+) on "
        r"frames of its colors ([0-9a-f]+)-([0-9a-f]+), the EL2 tables' own pages identity, and (\d+) pages "
        r"SMMUs read", line))]
    assert len(image) == 1, hyp
    pages, moved, first, last, smmu = (int(g, 16) if i in (2, 3) else int(g)
                                       for i, g in enumerate(image[0].groups()))
    # 17: the EL2 root and pool pages; the SMMU's stream table and queues (docs/dma.md)
    assert pages - moved == 17 + smmu and moved > 50 and 0 < smmu <= 16, image[0].group(0)
    assert {first >> 12 & 0xf, last >> 12 & 0xf} <= {14, 15} and last > first, image[0].group(0)


def test_recolor_uncolored(boot: Callable[..., RunResult]) -> None:
    """An uncolored victim (contiguous 4 MiB, mapped with 2 MiB blocks) is
    recolored: its stage-2 tables are first copied into pages of the new
    colors with the blocks split into 4 KiB pages, then its pages move into
    the recolor pool; later recolorings work as for a colored VM, and its
    vacated contiguous range is spare memory (the refused request runs out
    after the pool's 640 pages of LLC 7 and the range's 64)."""
    res = boot("color-recolor-uncolored.yaml", timeout=240)
    assert res.clean, res.reason + "\n" + res.output
    for vm, role in (("mgr", "manager"), ("victim", "victim"), ("nb", "neighbour")):
        assert res.lines(vm)[-1] == f"recolor: {role}: PASS", res.output
    victim = res.lines("victim")
    assert any(re.fullmatch(r"recolor: victim: 1024 pages, LLC 0xffff, pattern sum 0x[0-9a-f]+, 3 stage-2 table "
                            r"pages", line) for line in victim), victim  # root, level 2, shmem's level 3
    for stage, llc in ((2, "0xf0"), (3, "0x30"), (4, "0xf0"), (5, "0x70")):
        assert any(line.startswith(f"recolor: victim: stage {stage}: LLC {llc}, all 1024 pages of it, ")
                   and "0 heartbeats in the pause" in line for line in victim), victim
        # the two 2 MiB blocks became two level-3 tables
        assert (f"recolor: victim: stage {stage}: 5 stage-2 table pages, all of LLC {llc}, none a RAM frame"
                in victim), victim
    assert ("recolor: victim: stage 6: refused requests changed nothing (LLC 0x70, 1024 pages where they were)"
            in victim), victim
    hyp = res.hyp_lines()
    done = [m.group(1, 2) for line in hyp if (m := re.fullmatch(
        r"\[bulkhead\] recolor: vm victim: LLC (\S+) \(by mgr\): (\d+) of 1024 pages moved \(\d+ up, \d+ down\) "
        r"and 5 stage-2 table pages in \d+ us", line))]
    assert [d[0] for d in done] == ["4-7", "4-5", "4-7", "4-6"] and done[0][1] == "1024", hyp
    assert ("[bulkhead] recolor: vm victim: refused (by mgr): not enough spare memory in the new colors (recolor "
            "pool and free colored spans): none left for ipa 402c0000") in hyp, hyp
    counted = [m for line in res.lines("nb") if (m := STAGE_RE.match(line))]
    assert len(counted) == 4 and all(int(m.group(2)) > 0 for m in counted), res.lines("nb")


BUSY = b"echo busy-start; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo busy-done $i\n"


def test_recolor_linux_from_console(console_script: Callable[..., str]) -> None:
    """Linux (2 vCPUs, LLC 0-7, 256 MiB) runs a busy loop in its shell; the
    console recolors it to 0-3 meanwhile (half of the frames from its own
    span, half from the recolor pool; its stage-2 tables follow); the loop finishes, the shell still
    answers, and the VM powers off cleanly."""
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    steps = [
        (b"starting a shell", BUSY),
        (b"[linux] busy-start", b"\x14rlinux 0-3\r"),
        (b"recolor: vm linux: LLC 0-3", b""),
        (b"busy-done", b""),
        # at the prompt after it: typed earlier, the echo could join the busy-done line
        (b"/ # ", b"echo after-recolor $(wc -l < /proc/meminfo) lines; exit\n"),
    ]
    text = console_script("color-recolor-linux.yaml", steps, timeout=400)
    lines = text.splitlines()
    hyp = [line.removeprefix("[bulkhead] ") for line in lines if line.startswith("[bulkhead] ")]
    done = [i for i, h in enumerate(lines)
            if re.fullmatch(r"\[bulkhead\] recolor: vm linux: LLC 0-3 \(by console\): \d+ of 65536 pages moved "
                            r"\(\d+ up, \d+ down\) and [1-9]\d+ stage-2 table pages in \d+ us",
                            h)]
    assert done, text
    busy_start = lines.index("[linux] busy-start")
    busy_done = next(i for i, line in enumerate(lines) if line.startswith("[linux] busy-done"))
    assert busy_start < done[0] < busy_done, "the recoloring did not happen during the busy loop\n" + text
    assert lines[busy_done] == "[linux] busy-done 300000", text
    assert any(re.fullmatch(r"\[linux\] after-recolor \d+ lines", line) for line in lines), text
    assert "[linux] bulkhead-linux: powering off" in lines, text
    assert not [h for h in hyp if "fault" in h or "PANIC" in h or "refused" in h], hyp
    assert "all VMs off: clean=2 stopped=0" in hyp, text


def test_recolor_refused_for_unisolated_dma(tmp_path: Path) -> None:
    """Issue #32 item 1 (without an SMMU): the I/O VM drives the virtio-net
    device by DMA under `dma_isolation: none`; moving its pages would leave
    the device writing to the old frames. Once it is ready, Ctrl-T r asks
    three times, while the clients exchange frames with the outside peer,
    to recolor it into the recolor pool: every request is refused with the
    reason, no page moves, and the I/O VM and both clients finish their
    exchange intact."""
    import os
    import selectors
    import signal
    import subprocess
    import time

    from bulkhead.generate import build
    from bulkhead.run.netpeer import Peer

    root = Path(__file__).resolve().parents[2]
    text = (root / "tests" / "configs" / "io-pair.yaml").read_text()
    text = text.replace("dma_isolation: none\n",
                        "dma_isolation: none\nrecolor_pool: {size: 40M, colors: {llc: \"0-3\"}}\n", 1)
    text = text.replace("params: {frames: 50}", "params: {frames: 3000}")  # a few seconds of traffic
    config = tmp_path / "io-recolor.yaml"
    config.write_text(text)
    with open(os.devnull, "w") as log:
        result = build.build(config, root / "build" / "qemu-tests" / "io-recolor", log=log)
    out = b""
    with Peer(max_frames=20000, max_seconds=240) as peer:
        argv = [f"{peer.netdev()},id=bhio" if a.endswith(",id=bhio") else a for a in result.qemu_argv]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        assert proc.stdin is not None and proc.stdout is not None
        asks, next_ask, deadline = 0, None, time.monotonic() + 180
        ended = "deadline"
        try:
            with selectors.DefaultSelector() as sel:
                sel.register(proc.stdout, selectors.EVENT_READ)
                while time.monotonic() < deadline and not re.search(rb"all VMs off:[^\n]*\n", out):
                    if next_ask is not None and asks < 3 and time.monotonic() >= next_ask:
                        try:
                            for byte in b"\x14riovm 0-3\r":  # typed: the UART may drop bursts
                                proc.stdin.write(bytes([byte]))
                                proc.stdin.flush()
                                time.sleep(0.03)
                        except BrokenPipeError:  # QEMU is gone: read what it wrote
                            asks = 3
                            continue
                        asks, next_ask = asks + 1, time.monotonic() + 0.2
                    if not sel.select(0.05):
                        continue
                    data = os.read(proc.stdout.fileno(), 65536)
                    if not data:
                        ended = "end of output"
                        break
                    out += data
                    if next_ask is None and b"[iovm] iovm: ready" in out:
                        next_ask = time.monotonic()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
            proc.stdout.close()
    text_out = out.decode(errors="replace").replace("\r", "") + f"\n(test: {ended}, QEMU exit {proc.returncode})"
    lines = text_out.splitlines()
    refused = [ln for ln in lines if ln.startswith("[bulkhead] recolor: vm iovm: refused (by console): ")]
    assert refused and all(ln.endswith("it drives a DMA-capable device no SMMU confines (dma_isolation: "
                                       "none): the device would keep writing to the old frames") for ln in refused), text_out[-4000:]
    assert not [ln for ln in lines if ln.startswith("[bulkhead] recolor: vm iovm: LLC ")], text_out[-4000:]
    assert "[bulkhead] all VMs off: clean=3 stopped=0" in lines, text_out[-4000:]
    assert "[iovm] iovm: PASS" in lines, text_out[-3000:]
    for vm in ("alice", "bob"):
        assert f"[{vm}] ioclient: PASS (3000 frames sent, 3000 replies verified both ways)" in lines, text_out[-3000:]
