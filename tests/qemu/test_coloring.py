# SPDX-License-Identifier: Apache-2.0
"""Page coloring under QEMU.

- color-walk.yaml: three colored VMs (two of them sharing LLC colors but not
  banks) and an uncolored one run guests/colorwalk, which checks every page
  of its RAM against BH_HC_COLOR_INFO via BH_HC_IPA_INFO. The colored VMs
  print their page frames: they must be pairwise disjoint, have the VM's
  colors, interleave in one physical span, and be exactly the frames the
  toolchain computed (bulkhead/config/color.py), so Python and the hypervisor agree.
- color-dump.yaml: Ctrl-T c on the console prints each VM's colors and
  sampled IPA -> PA pages; a colored VM survives SYSTEM_RESET.
- color-linux.yaml: Linux on 2 vCPUs in LLC colors 0-7 boots to userspace
  beside a bare-metal VM in colors 8-15.
- the boot-time cache probe warns when the platform file's LLC color bits
  differ from the cache the CPU reports.

QEMU has no caches: these tests check placement, not the isolation effect.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from bulkhead.config.color import PAGE, extract
from bulkhead.generate import build
from bulkhead.layout.load import load_system
from bulkhead.layout.placement import MemRegion, System
from bulkhead.run.runner import RunResult, judge, supervise

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGS = REPO_ROOT / "tests" / "configs"
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"

FRAMES_RE = re.compile(r"colorwalk: (?:shmem (\d+) )?frames((?: [0-9a-f]+\+\d+)+)$")
COLORS_RE = re.compile(r"colorwalk: colors LLC 0x([0-9a-f]+) bank 0x([0-9a-f]+) "
                       r"\(LLC bits 0x([0-9a-f]+), bank bits 0x([0-9a-f]+)\)$")


def frames_of(lines: list[str]) -> tuple[list[int], dict[int, list[int]]]:
    """RAM frames (in IPA order) and shared-memory frames a colorwalk printed."""
    ram: list[int] = []
    shmem: dict[int, list[int]] = {}
    for line in lines:
        m = FRAMES_RE.match(line)
        if not m:
            continue
        out = ram if m.group(1) is None else shmem.setdefault(int(m.group(1)), [])
        for run in m.group(2).split():
            first, count = run.split("+")
            out += range(int(first, 16), int(first, 16) + int(count))
    return ram, shmem


def expected_frames(region: MemRegion) -> list[int]:
    """The frames the toolchain placed a region in (what the hypervisor must map)."""
    if region.colors is None:
        return list(range(region.pa // PAGE, (region.pa + region.size) // PAGE))
    return [pa // PAGE for pa in region.colors.pages(region.pa, region.size // PAGE)]


def test_colorwalk(boot: Callable[..., RunResult]) -> None:
    res = boot("color-walk.yaml", timeout=120)
    assert res.clean, res.reason + "\n" + res.output
    system: System = load_system(CONFIGS / "color-walk.yaml")
    model = system.platform.coloring
    assert model is not None
    ram: dict[str, set[int]] = {}
    for vm in system.vms:
        lines = res.lines(vm.name)
        npages = vm.ram_bytes // PAGE
        assert lines[-1] == f"colorwalk: PASS ({npages} pages)", lines
        m = next(COLORS_RE.match(line) for line in lines if COLORS_RE.match(line))
        assert m is not None
        llc_bitmap, bank_bitmap, llc_mask, bank_mask = (int(g, 16) for g in m.groups())
        assert (llc_mask, bank_mask) == (model.llc_mask, model.bank_mask)
        # COLOR_INFO = the toolchain's bitmaps (uncolored: every color)
        assert llc_bitmap == (vm.llc_colors or (1 << model.n_llc) - 1), vm.name
        assert bank_bitmap == (vm.bank_colors or (1 << model.n_bank) - 1), vm.name
        expected = [f for region in vm.memory for f in expected_frames(region)]
        frames, shmem = frames_of(lines)
        if vm.name == "d":  # uncolored, prints no frames: contiguous per the toolchain
            assert not frames
            ram[vm.name] = set(expected)
            continue
        assert frames == expected, f"VM {vm.name}: hypervisor and toolchain placed pages differently"
        for f in frames:
            pa = f * PAGE
            assert llc_bitmap >> extract(pa, llc_mask) & 1 and bank_bitmap >> extract(pa, bank_mask) & 1
        assert len(set(frames)) == npages
        ram[vm.name] = set(frames)

    names = sorted(ram)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not ram[a] & ram[b], f"VMs {a} and {b} share frames"
    # disjoint colors share one physical span: a's, b's and c's pages interleave
    lo = max(min(ram[n]) for n in "abc")
    hi = min(max(ram[n]) for n in "abc")
    assert lo < hi, "colored VMs do not interleave"

    # shared memory 'ac': same frames in both users, none of any VM's RAM,
    # in a's and c's common LLC colors (0-7)
    _, sh_a = frames_of(res.lines("a"))
    _, sh_c = frames_of(res.lines("c"))
    assert sh_a == sh_c and len(sh_a[0]) == 16
    shared = set(sh_a[0])
    assert not shared & set().union(*ram.values())
    assert all(extract(f * PAGE, model.llc_mask) < 8 for f in shared)
    sh = system.shmems[0]
    assert sh.colors is not None and sh_a[0] == [pa // PAGE for pa in sh.colors.pages(sh.pa, 16)]


def test_console_color_dump(console_script: Callable[..., str]) -> None:
    text = console_script("color-dump.yaml", [(b"[tick] tick 2/30", b"\x14c")], timeout=120)
    lines = [line.removeprefix("[bulkhead] ") for line in text.splitlines() if line.startswith("[bulkhead] ")]
    assert "all VMs off: clean=4 stopped=0" in lines, text
    assert "[again] reset: PASS (image reloaded)" in text.splitlines(), text
    assert "colors: vm tick: colored, LLC 0-3,8, bank 1" in lines, text
    assert "colors: vm raw: colored, LLC 0-7, bank 2-3" in lines, text
    assert "colors: vm plain: uncolored, LLC 0-15, bank 0-3" in lines, text
    assert "colors: vm again: colored, LLC 9-15, bank 0-3" in lines, text
    samples = re.findall(r" ([0-9a-f]+)>([0-9a-f]+) L(\d+)/B(\d+)", "\n".join(lines))
    assert len(samples) == 4 * 16, text
    system = load_system(CONFIGS / "color-dump.yaml")
    model = system.platform.coloring
    assert model is not None
    pages = {vm.name: set(expected_frames(vm.memory[0])) for vm in system.vms}
    for ipa, pa, llc, bank in samples:
        p = int(pa, 16)
        assert (int(llc), int(bank)) == (extract(p, model.llc_mask), extract(p, model.bank_mask))
        owner = [name for name, frames in pages.items() if p // PAGE in frames]
        assert len(owner) == 1, (ipa, pa)
    tick = [s for s in samples if int(s[1], 16) // PAGE in pages["tick"]]
    assert {int(s[2]) for s in tick} <= {0, 1, 2, 3, 8} and {int(s[3]) for s in tick} == {1}


def test_linux_colored(boot: Callable[..., RunResult]) -> None:
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    res = boot("color-linux.yaml", timeout=240)
    assert not res.timed_out, res.output
    linux = res.lines("linux")
    text = "\n".join(linux)
    assert any("smp: Brought up 1 node, 2 CPUs" in line for line in linux), text
    assert "bulkhead-linux: userspace reached" in linux, text
    assert "bulkhead-linux: cpus online 0-1" in linux, text
    assert "bulkhead-linux: powering off" in linux, text
    assert res.lines("walk")[-1] == "colorwalk: PASS (4096 pages)", res.lines("walk")
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert any(re.fullmatch(r"vm linux: memory set up in \d+ us \(65536 pages\): stage 2 \d+ us, images \d+ us", h)
               for h in hyp), hyp
    assert not [line for line in hyp if "fault" in line or "PANIC" in line or "warning" in line], hyp
    assert "all VMs off: clean=2 stopped=0" in hyp, hyp
    assert res.clean and res.returncode == 0


def test_cache_probe_mismatch_warns(tmp_path: Path) -> None:
    """A platform file whose LLC color bits differ from the cache the CPU
    reports gets a warning line at boot (the VMs still run)."""
    platforms = tmp_path / "platforms"
    platforms.mkdir()
    text = (REPO_ROOT / "platforms" / "qemu-virt.yaml").read_text()
    assert "  llc: {size: 1M, ways: 16, line: 64}\n" in text
    (platforms / "qemu-virt.yaml").write_text(
        text.replace("  llc: {size: 1M, ways: 16, line: 64}\n", "  llc: {size: 512K, ways: 16, line: 64}\n"))
    config = tmp_path / "c.yaml"
    config.write_text("platform: qemu-virt\nvms:\n"
                      "  - {name: hello, cpus: [0], memory: [{ipa: 0x40000000, size: 4M}], guest: hello, "
                      "colors: {llc: \"0-3\"}}\n")
    with open(os.devnull, "w") as log:
        result = build.build(config, REPO_ROOT / "build" / "qemu-tests" / "color-probe", log=log,
                             platforms_dir=platforms)
    status, timed_out, output = supervise(result.qemu_argv, timeout=60)
    clean, reason = judge(status, timed_out, output, 1)
    assert clean, reason + "\n" + output
    assert ("[bulkhead] warning: coloring: CPU L2 1024 KiB 16-way 64 B lines: LLC color bits 12-15, "
            "but the platform file says 12-14") in output.splitlines(), output
    assert "[hello] hello: PASS" in output.splitlines()
