# SPDX-License-Identifier: Apache-2.0
"""Run-time recoloring (BH_HC_RECOLOR) under QEMU: color-recolor.yaml.

A manager VM recolors a running bare-metal victim (LLC 0-3 -> 4-7, a
disjoint set; then 4-7 -> 4-5, smaller and overlapping, moved in place
backwards) while a neighbour keeps a heartbeat. guests/recolor checks from
inside: after each recoloring every page of the victim (full walk with
BH_HC_IPA_INFO) has the new colors and its own frame, the 512 KiB pattern
and its checksum hold, and the victim had no heartbeat inside the pause the
hypervisor reported while the neighbour had many (it never paused).
Refused requests (other VMs' colors, bad colors, no such VM, a non-manager
caller, a denser overlapping set that cannot move in place) change nothing:
the victim's colors and every frame stay as they were.

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
    for stage, llc in ((2, "0xf0"), (3, "0x30")):
        assert any(line.startswith(f"recolor: victim: stage {stage}: LLC {llc}, all 1024 pages of it, ")
                   and "0 heartbeats in the pause" in line for line in victim), victim
    for stage, llc in ((1, "0xf"), (4, "0x30")):
        assert (f"recolor: victim: stage {stage}: refused requests changed nothing "
                f"(LLC {llc}, 1024 pages where they were)") in victim, victim

    beats = [STAGE_RE.match(line) for line in res.lines("nb")]
    counted = [(int(m.group(2)), int(m.group(3))) for m in beats if m]
    assert len(counted) == 2, res.lines("nb")
    for n, pause_us in counted:
        assert pause_us > 0 and n > 0, counted  # the neighbour ran throughout

    hyp = res.hyp_lines()
    assert any(re.fullmatch(r"\[bulkhead\] recolor: vm victim: LLC 4-7 \(by mgr\): 1024 of 1024 pages "
                            r"moved in \d+ us", line) for line in hyp), hyp
    assert any(re.fullmatch(r"\[bulkhead\] recolor: vm victim: LLC 4-5 \(by mgr\): \d+ of 1024 pages "
                            r"moved in \d+ us", line) for line in hyp), hyp
    refused = [line.split(": refused (by mgr): ", 1)[1] for line in hyp if ": refused (by mgr): " in line]
    assert refused == [
        "the colors intersect those of vm nb",
        "the colors intersect those of vm mgr",
        "the colors intersect the hypervisor's",
        "colors beyond the platform's",
        "every color: a set must leave some out",
        "the colors intersect those of vm victim",
        "not in place: ipa 40004000 would move down onto a page not yet moved "
        "(the new set is denser; needs spare memory)",
    ], hyp
    assert "recolor: neighbour: own request denied (-4)" in res.lines("nb")
    # self-coloring: checked at boot; the hypervisor image runs on frames of LLC colors 14-15
    assert ("[bulkhead] coloring: hypervisor colors LLC 14-15, bank 0-3: reserved, no VM or shared memory "
            "uses them") in hyp, hyp
    image = [m for line in hyp if (m := re.fullmatch(
        r"\[bulkhead\] coloring: hypervisor image (\d+) pages \(text, data, stacks, per-CPU state\): (\d+) on "
        r"frames of its colors ([0-9a-f]+)-([0-9a-f]+), the EL2 tables' own pages identity", line))]
    assert len(image) == 1, hyp
    pages, moved, first, last = (int(g, 16) if i > 1 else int(g) for i, g in enumerate(image[0].groups()))
    assert pages - moved == 17 and moved > 50, image[0].group(0)  # 17: the EL2 root and pool pages
    assert {first >> 12 & 0xf, last >> 12 & 0xf} <= {14, 15} and last > first, image[0].group(0)


BUSY = b"echo busy-start; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo busy-done $i\n"


def test_recolor_linux_from_console(console_script: Callable[..., str]) -> None:
    """Linux (2 vCPUs, LLC 0-7, 256 MiB) runs a busy loop in its shell; the
    console recolors it to 0-3 (in place, backwards) meanwhile; the loop
    finishes, the shell still answers, and the VM powers off cleanly."""
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    steps = [
        (b"starting a shell", BUSY),
        (b"[linux] busy-start", b"\x14rlinux 0-3\r"),
        (b"recolor: vm linux: LLC 0-3", b""),
        (b"busy-done", b"echo after-recolor $(wc -l < /proc/meminfo) lines; exit\n"),
    ]
    text = console_script("color-recolor-linux.yaml", steps, timeout=400)
    lines = text.splitlines()
    hyp = [line.removeprefix("[bulkhead] ") for line in lines if line.startswith("[bulkhead] ")]
    done = [i for i, h in enumerate(lines)
            if re.fullmatch(r"\[bulkhead\] recolor: vm linux: LLC 0-3 \(by console\): \d+ of 65536 pages moved in \d+ us",
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
