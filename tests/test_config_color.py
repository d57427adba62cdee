# SPDX-License-Identifier: Apache-2.0
"""Page coloring in the toolchain: selections, checks (errors and warnings
with their exact text), placement (interleaving spans, table pools, shared
memory), the report, and the generated C."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.config import coloring
from bulkhead.config.color import PAGE, Colors, extract, format_list, parse_list
from bulkhead.config.model import ColoringSpec, ColorSpec
from bulkhead.generate import features, gen_c
from bulkhead.layout import placement as layout
from bulkhead.layout.load import load_system

WriteConfig = Callable[..., str]
ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "platforms" / "qemu-virt.yaml"
VM = "{{name: {name}, cpus: [{cpu}], memory: [{{ipa: 0x40000000, size: {size}}}], image: img.bin{extra}}}"


def vm(name: str, cpu: int, colors: str = "", size: str = "4M", extra: str = "") -> str:
    return VM.format(name=name, cpu=cpu, size=size, extra=(f", colors: {colors}" if colors else "") + extra)


def config(*vms: str, tail: str = "") -> str:
    return "platform: qemu-virt\nvms:\n" + "".join(f"  - {v}\n" for v in vms) + tail


def error_of(path: str, platforms_dir: Path | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        if platforms_dir is None:
            load_system(path, guest_sources=None)
        else:
            load_system(path, guest_sources=None, platforms_dir=platforms_dir)
    return str(info.value)


def platform_dir(tmp: Path, edit: Callable[[str], str]) -> Path:
    """A copy of platforms/qemu-virt.yaml changed by ``edit``."""
    d = tmp / "platforms"
    d.mkdir(exist_ok=True)
    (d / "qemu-virt.yaml").write_text(edit(PLATFORM.read_text()))
    return d


COLORING_RE = re.compile(r"^coloring:\n(?:  .*\n)+", re.M)


# --- the color list syntax and selections ------------------------------------


def test_lists() -> None:
    assert parse_list("0-3,8") == [0, 1, 2, 3, 8]
    assert parse_list(" 5 , 1-2,2") == [1, 2, 5]
    assert format_list([0, 1, 2, 3, 8]) == "0-3,8"
    assert format_list([]) == "none"
    for bad in ("", "0-", "-1", "3-1", "a", "1,,2", "1-2-3"):
        with pytest.raises(ValueError):
            parse_list(bad)


def test_selections() -> None:
    model = load_system_model()
    sel = coloring.selection
    # LLC colors 0-7 are "bit 15 clear": one pattern
    assert sel(model, ColorSpec((0, 1, 2, 3, 4, 5, 6, 7), None, None, None, "x")) == Colors(0x8000, (0,))
    # LLC x bank product, minimised: 4-5 (bit 12 free) x bank 1 (bit 16 set, 17 clear)
    assert sel(model, ColorSpec((4, 5), (1,), None, None, "x")) == Colors(0x3E000, (0x14000,))
    # a raw pattern is taken as it is
    assert sel(model, ColorSpec(None, None, 0x28000, 0x20000, "x")) == Colors(0x28000, (0x20000,))
    c = sel(model, ColorSpec((0, 1, 2, 3, 8), (2, 3), None, None, "x"))
    assert c is not None and c.colors_over(model.llc_mask) == {0, 1, 2, 3, 8}
    assert c.colors_over(model.bank_mask) == {2, 3}
    assert all(c.match(p) == (extract(p, 0xF000) in {0, 1, 2, 3, 8} and extract(p, 0x30000) >= 2)
               for p in range(0, 1 << 20, PAGE))


def load_system_model() -> ColoringSpec:
    from bulkhead.layout.load import load_platform

    model = load_platform("qemu-virt").coloring
    assert model is not None
    return model


def test_platform_model() -> None:
    model = load_system_model()
    assert model.llc_bits == (12, 13, 14, 15) and model.bank_bits == (16, 17) and model.l1_bits == (12,)
    assert (model.llc_size, model.llc_ways, model.llc_line) == (1 << 20, 16, 64)
    assert (model.n_llc, model.n_bank) == (16, 4)


# --- errors --------------------------------------------------------------------

ERRORS: dict[str, tuple[str, str]] = {
    "colors overlap between VMs": (
        config(vm("a", 0, '{llc: "0-7"}'), vm("b", 1, '{llc: "4-11", bank: 1}')),
        "c.yaml:4:89: vms[1].colors: the colors of VM 'b' overlap those of VM 'a' (vms[0].colors): "
        "LLC colors 4-7, bank color 1 in common; give each VM its own colors (memory they share belongs in 'shmem')",
    ),
    "region override overlaps another VM": (
        config(vm("a", 0, '{llc: "0-7"}'),
               "{name: b, cpus: [1], colors: {llc: \"8-15\"}, image: img.bin, memory: [{ipa: 0x40000000, "
               "size: 4M}, {ipa: 0x40400000, size: 1M, colors: {llc: 3}}]}"),
        "c.yaml:4:139: vms[1].memory[1].colors: the colors of VM 'b' overlap those of VM 'a' (vms[0].colors): "
        "LLC color 3 in common; give each VM its own colors (memory they share belongs in 'shmem')",
    ),
    "not enough memory in the colors": (
        config(vm("a", 0, '{llc: "0-3"}', size="1G")),
        "c.yaml:3:59: vms[0].memory[0].size: not enough free RAM for 1G in LLC colors 0-3: 376.5M of RAM in "
        "these colors is free (colorable RAM: 0x40000000-0x401fffff, 0x42000000-0x9fffffff); 647.5M missing",
    ),
    "bad list syntax": (
        config(vm("a", 0, '{llc: "0-"}')),
        "c.yaml:3:95: vms[0].colors.llc: bad color list '0-': '0-' is not a color N or a range N-M "
        "(use e.g. \"0-3,8\")",
    ),
    "reversed range": (
        config(vm("a", 0, '{llc: "3-1"}')),
        "c.yaml:3:95: vms[0].colors.llc: bad color list '3-1': the range '3-1' ends below its start "
        "(use e.g. \"0-3,8\")",
    ),
    "not a list": (
        config(vm("a", 0, "{llc: {a: 1}}")),
        "c.yaml:3:95: vms[0].colors.llc: expected a color list like \"0-3,8\" (string), an integer or a list "
        "of integers, got a mapping",
    ),
    "colors out of range": (
        config(vm("a", 0, '{llc: "0-16", bank: "4,5"}')),
        "c.yaml:3:95: vms[0].colors.llc: LLC color 16 out of range: platform 'qemu-virt' has 16 LLC colors (0-15)\n"
        "c.yaml:3:109: vms[0].colors.bank: bank colors 4-5 out of range: platform 'qemu-virt' has 4 bank colors "
        "(0-3)",
    ),
    "mask bits below 12, value outside the mask": (
        config(vm("a", 0, "{mask: 0x1f800, value: 0x20000}")),
        "c.yaml:3:96: vms[0].colors.mask: mask 0x1f800 has bits below bit 12 (0x800): colors select whole "
        "4 KiB pages\n"
        "c.yaml:3:112: vms[0].colors.value: value 0x20000 has bits outside the mask 0x1f800 (0x20000)",
    ),
    "mask beyond the PA space": (
        config(vm("a", 0, "{mask: 0x1000000000000, value: 0}")),
        "c.yaml:3:96: vms[0].colors.mask: mask 0x1000000000000 has bits at or above bit 48, beyond the "
        "physical address space",
    ),
    "empty mask": (
        config(vm("a", 0, "{mask: 0, value: 0}")),
        "c.yaml:3:96: vms[0].colors.mask: an empty mask selects every page; omit 'colors' instead",
    ),
    "raw and lists": (
        config(vm("a", 0, "{llc: 1, mask: 0x1000}")),
        "c.yaml:3:104: vms[0].colors.mask: give LLC/bank colors (llc, bank) or a raw pattern (mask, value), "
        "not both",
    ),
    "raw without value": (
        config(vm("a", 0, "{mask: 0x1000}")),
        "c.yaml:3:89: vms[0].colors: missing required key 'value' (a raw pattern needs mask and value)",
    ),
    "empty selection": (
        config(vm("a", 0, "{}")),
        "c.yaml:3:89: vms[0].colors: an empty color selection: give llc and/or bank colors, or mask and value",
    ),
    "unknown key": (
        config(vm("a", 0, "{llc: 1, l2: 3}")),
        "c.yaml:3:98: vms[0].colors.l2: unknown key 'l2'; expected one of: llc, bank, mask, value",
    ),
    "shared memory in another VM's colors": (
        config(vm("a", 0, '{llc: "0-7"}'), vm("b", 1, '{llc: "8-15"}'),
               tail="shmem:\n  - {name: s, size: 4K, colors: {llc: 9}, vms: [{vm: a, ipa: 0x50000000}]}\n"),
        "c.yaml:6:33: shmem[0].colors: the colors of shared memory 's' overlap those of VM 'b', which does not "
        "map it: LLC color 9 in common",
    ),
    "hypervisor colors used by a VM": (
        config(vm("a", 0, '{llc: "0-7"}'), vm("b", 1, '{llc: "8-15"}'), tail='hypervisor_colors: {llc: "14-15"}\n'),
        "c.yaml:4:89: vms[1].colors: the colors of VM 'b' overlap the hypervisor's ('hypervisor_colors'): "
        "LLC colors 14-15 in common",
    ),
    "hypervisor colors beside an uncolored VM": (
        config(vm("a", 0, '{llc: "0-7"}'), vm("b", 1), tail='hypervisor_colors: {llc: "14-15"}\n'),
        "c.yaml:4:5: vms[1]: VM 'b' has no colors: its memory spans every color, the hypervisor's "
        "('hypervisor_colors') too; give it colors",
    ),
    "hypervisor colors in shared memory": (
        config(vm("a", 0, '{llc: "0-5"}'), tail='hypervisor_colors: {llc: "6-7"}\n'
               "shmem:\n  - {name: s, size: 4K, colors: {llc: 7}, vms: [{vm: a, ipa: 0x50000000}]}\n"),
        "c.yaml:6:33: shmem[0].colors: shared memory 's' has colors of the hypervisor's ('hypervisor_colors'): "
        "LLC color 7",
    ),
    "hypervisor colors out of range": (
        config(vm("a", 0, '{llc: "0-7"}'), tail="hypervisor_colors: {llc: 16}\n"),
        "c.yaml:4:26: hypervisor_colors.llc: LLC color 16 out of range: platform 'qemu-virt' has 16 LLC colors "
        "(0-15)",
    ),
    "recolor pool in the hypervisor's colors": (
        config(vm("a", 0, '{llc: "0-7"}'),
               tail='hypervisor_colors: {llc: "14-15"}\nrecolor_pool: {size: 4M, colors: {llc: "8-15"}}\n'),
        "c.yaml:5:34: recolor_pool.colors: the recolor pool's colors overlap the hypervisor's "
        "('hypervisor_colors'): LLC colors 14-15 in common",
    ),
    "recolor pool not in pages": (
        config(vm("a", 0, '{llc: "0-7"}'), tail='recolor_pool: {size: 5000, colors: {llc: "8-15"}}\n'),
        "c.yaml:4:22: recolor_pool.size: the recolor pool's size (5000 bytes) must be a non-zero multiple of 4 KiB",
    ),
    "recolor pool without colors": (
        config(vm("a", 0, '{llc: "0-7"}'), tail="recolor_pool: {size: 4M}\n"),
        "c.yaml:4:15: recolor_pool: missing required key 'colors'",
    ),
    "recolor pool larger than its colors' RAM": (
        config(vm("a", 0, '{llc: "0-7"}'), tail="recolor_pool: {size: 2G, colors: {llc: 9}}\n"),
        "c.yaml:4:22: recolor_pool.size: not enough free RAM for 2G (the recolor pool) in LLC color 9: 94.1M of "
        "RAM in these colors is free (colorable RAM: 0x40000000-0x401fffff, 0x42000000-0x9fffffff); 1.9G missing",
    ),
    "ida on an uncolored VM": (
        config(vm("a", 0, extra=", ida: [start]")),
        "c.yaml:3:86: vms[0].ida: VM 'a': 'ida' needs the VM to be colored (an uncolored VM shares every "
        "cache set)",
    ),
    "ida at period starts without regulation": (
        config(vm("a", 0, "{llc: 1}", extra=", ida: [period]")),
        "c.yaml:3:104: vms[0].ida: VM 'a': 'ida: [period]' needs a 'bandwidth' reservation (its periods)",
    ),
    "ida unknown moment": (
        config(vm("a", 0, "{llc: 1}", extra=", ida: [boot]")),
        "c.yaml:3:105: vms[0].ida[0]: expected one of start, period, call, got 'boot'",
    ),
}


@pytest.mark.parametrize("text, expected", ERRORS.values(), ids=ERRORS.keys())
def test_errors(text: str, expected: str, write_config: WriteConfig) -> None:
    assert error_of(write_config(text)) == expected


def test_explicit_span_start(write_config: WriteConfig) -> None:
    # an explicit pa on a colored region is its span start; a second region of
    # the same colors starting inside that span collides
    ok = config(vm("a", 0, '{llc: "0-7"}', extra=""),
                "{name: b, cpus: [1], colors: {llc: \"8-15\"}, image: img.bin, memory: [{ipa: 0x40000000, "
                "size: 4M, pa: 0x60000000}]}")
    system = load_system(write_config(ok), guest_sources=None)
    b = system.vms[1].memory[0]
    assert b.pa == 0x60008000 and b.colors is not None  # the first page of colors 8-15 from 0x60000000
    bad = ok.replace('colors: {llc: "8-15"}', 'colors: {llc: "0-7"}').replace(
        "- {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 4M}], image: img.bin, colors: {llc: \"0-7\"}}",
        "- {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 4M, pa: 0x60000000}], image: img.bin, "
        "colors: {llc: \"0-7\"}}")
    text = error_of(write_config(bad))
    assert "vms[1].colors: the colors of VM 'b' overlap those of VM 'a'" in text


def test_same_vm_regions_collide(write_config: WriteConfig) -> None:
    text = config("{name: a, cpus: [0], colors: {llc: \"0-7\"}, image: img.bin, memory: ["
                  "{ipa: 0x40000000, size: 4M, pa: 0x60000000}, {ipa: 0x50000000, size: 4M, pa: 0x60100000}]}")
    assert error_of(write_config(text)) == (
        "c.yaml:3:150: vms[0].memory[1].pa: colored region at PA 0x60100000 in LLC colors 0-7: its pages "
        "(span 0x60100000-0x608f7fff) collide with those of vms[0].memory[0] (span 0x60000000-0x607f7fff, "
        "intersecting colors)")


def test_no_coloring_on_platform(write_config: WriteConfig, tmp_path: Path) -> None:
    plain = platform_dir(tmp_path, lambda t: COLORING_RE.sub("", t))
    text = error_of(write_config(config(vm("a", 0, '{llc: "0-7"}'))), plain)
    assert text.startswith("c.yaml:3:89: vms[0].colors: platform 'qemu-virt' declares no page coloring "
                           "(add a 'coloring:' section to ")


@pytest.mark.parametrize("section, expected", [
    ("coloring:\n  llc: {size: 1M, ways: 12, line: 64}\n",
     "coloring.llc.size: an LLC of 1M cannot have 12 ways of 64-byte lines"),
    ("coloring:\n  llc: {size: 3M, ways: 16, line: 64}\n",
     "coloring.llc.size: the LLC size must be a power-of-two number of sets (16 ways of 64-byte lines), got 3M"),
    ("coloring:\n  llc_bits: [12, 13, 12]\n", "coloring.llc_bits[2]: bit 12 is listed twice"),
    ("coloring:\n  bank_bits: [11]\n", "coloring.bank_bits[0]: expected a PA bit number (12-47), got 11"),
    ("coloring:\n  llc_bits: [12, 13, 14, 15, 16, 17, 18]\n",
     "coloring.llc_bits: at most 6 color bits (64 colors), got 7"),
    ("coloring:\n  l1_bits: [12]\n", "coloring: no color bits: give llc (geometry), llc_bits or bank_bits"),
    ("coloring:\n  llc: {size: 16M, ways: 2, line: 64}\n",
     "coloring.llc: this LLC has 2048 page colors; at most 64 are supported (list llc_bits instead)"),
])
def test_platform_errors(section: str, expected: str, write_config: WriteConfig, tmp_path: Path) -> None:
    bad = platform_dir(tmp_path, lambda t: COLORING_RE.sub(section, t))
    text = error_of(write_config(config(vm("a", 0))), bad)
    assert expected in text, text


# --- warnings -------------------------------------------------------------------


def check_cli(capsys: pytest.CaptureFixture[str], path: str, *args: str) -> tuple[int, str, str]:
    code = cli.main(["check", path, *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_warnings(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(config(
        vm("a", 0, '{llc: "0,2,4,6"}'), vm("b", 1, '{llc: "8-15"}'), vm("c", 2),
        tail="shmem:\n  - {name: s, size: 4K, vms: [{vm: a, ipa: 0x50000000}, {vm: b, ipa: 0x50000000}]}\n"))
    code, out, err = check_cli(capsys, path)
    assert code == 0 and "OK" in out
    assert err.splitlines() == [
        "bulkhead: warning: c.yaml:3:89: vms[0].colors: these colors also partition the L1 cache: PA bit 12 "
        "indexes the L1 too, and this selection fixes it; choose colors that come in pairs differing only in "
        "that bit (e.g. 0-7 rather than 0,2,4,6)",
        "bulkhead: warning: c.yaml:5:5: vms[2]: VM 'c' has no colors: its memory spans every cache color, so it "
        "shares the cache with colored VMs a, b",
        "bulkhead: warning: c.yaml:7:5: shmem[0]: shared memory 's' is not colored: its users have no LLC color "
        "in common (give it 'colors:'); it occupies cache sets of every color",
    ]


def test_bank_bits_overlap_llc(write_config: WriteConfig, tmp_path: Path) -> None:
    d = platform_dir(tmp_path, lambda t: t.replace("bank_bits: [16, 17]", "bank_bits: [15, 31]"))
    system = load_system(write_config(config(vm("a", 0, '{llc: "0-7", bank: 2}'))), guest_sources=None,
                         platforms_dir=d)
    assert [w.message for w in system.warnings] == [
        "bank bit 15 is also an LLC color bit: LLC and bank colors are not independent"]
    a = system.vms[0]
    # LLC 0-7: bit 15 clear; bank 2: bit 15 clear, bit 31 set
    assert a.llc_colors == 0xFF and a.bank_colors == 0b100
    region = a.memory[0]
    assert region.colors == Colors((1 << 15) | (1 << 31), (1 << 31,))
    assert region.pa == 0x80000000  # the first free RAM with bit 31 set


def test_bank_and_llc_disagree(write_config: WriteConfig, tmp_path: Path) -> None:
    d = platform_dir(tmp_path, lambda t: t.replace("bank_bits: [16, 17]", "bank_bits: [15]"))
    text = error_of(write_config(config(vm("a", 0, '{llc: "0-7", bank: 1}'))), d)
    assert text == ("c.yaml:3:89: vms[0].colors: selects no page: the LLC and bank colors disagree on the bits "
                    "they share")


# --- placement and report ----------------------------------------------------------


def test_disjoint_colors_interleave(write_config: WriteConfig) -> None:
    system = load_system(write_config(config(
        "{name: a, cpus: [0], colors: {llc: \"0-7\"}, image: img.bin, memory: [{ipa: 0x40000000, size: 16M}, "
        "{ipa: 0x41000000, size: 4M, colors: {llc: \"0-3\", bank: 2}}]}",
        vm("b", 1, '{llc: "8-15"}', size="16M"))), guest_sources=None)
    va, vb = system.vms
    a, a2, b = va.memory[0], va.memory[1], vb.memory[0]
    # a and b have disjoint colors: they share a span, their pages interleave
    assert b.pa == a.pa + 0x8000 and a.end == b.end - 0x8000
    # a's second region intersects its first one's colors: its span starts after it,
    # and the VM's tables come after both, in the VM's colors
    assert a2.pa >= a.end
    assert va.pt_colors == a.colors and va.pt_pa >= a2.end
    pages = {name: set(m.colors.pages(m.pa, m.size // PAGE)) for name, m in (("a", a), ("a2", a2), ("b", b))
             if m.colors is not None}
    assert not pages["a"] & pages["b"] and not pages["a"] & pages["a2"] and not pages["a2"] & pages["b"]
    assert all(a.pa <= p < a.end for p in pages["a"]) and len(pages["a"]) == 4096
    assert va.llc_colors == 0xFF and va.bank_colors == 0xF and vb.llc_colors == 0xFF00
    assert va.pt_colors is not None
    tables = set(va.pt_colors.pages(va.pt_pa, va.pt_pages))
    assert not tables & set().union(*pages.values())


def test_uncolored_layout_unchanged(sandbox: Path, tmp_path: Path, repo_root: Path) -> None:
    """Adding coloring to the platform changes nothing for an uncolored config."""
    (sandbox / "configs").mkdir()
    shutil.copy(repo_root / "configs" / "dual.yaml", sandbox / "configs" / "dual.yaml")
    (sandbox / "artefacts" / "linux").mkdir(parents=True)
    shutil.copy(sandbox / "Image", sandbox / "artefacts" / "linux" / "Image")
    shutil.copy(sandbox / "initrd", sandbox / "artefacts" / "linux" / "initrd.cpio.gz")
    plain = platform_dir(tmp_path, lambda t: COLORING_RE.sub("", t))
    with_colors = load_system(sandbox / "configs" / "dual.yaml", guest_sources=None)
    without = load_system(sandbox / "configs" / "dual.yaml", guest_sources=None, platforms_dir=plain)
    assert [v.memory for v in with_colors.vms] == [v.memory for v in without.vms]
    assert [v.pt_pages for v in with_colors.vms] == [v.pt_pages for v in without.vms]
    assert with_colors.coloring is None and not with_colors.warnings


def test_report(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(config(vm("a", 0, '{llc: "0-3", bank: "0-1"}', size="8M"), vm("b", 1, '{llc: "8-15"}')))
    code, out, err = check_cli(capsys, path)
    assert code == 0 and err == ""
    assert "LLC 0-3 (256K of 1M)" in out and "bank 0-1 (2/4)" in out
    assert "LLC 8-15 (512K of 1M)" in out and "bank all (4/4)" in out
    assert "coloring: LLC color bits 12-15 (16 colors), bank bits 16-17 (4 colors)" in out
    assert re.search(r"^free RAM per LLC color: 0-3: [0-9.]+M, 4-7: [0-9.]+M, 8-15: [0-9.]+M$", out, re.M), out
    code, out, _ = check_cli(capsys, path, "--json")
    doc = json.loads(out)
    a = doc["vms"][0]["colors"]
    assert a["llc"] == [0, 1, 2, 3] and a["bank"] == [0, 1]
    assert a["llc_share_kib"] == 256 and a["llc_share"] == [4, 16] and a["bank_share"] == [2, 4]
    assert sum(a["ram_per_llc_color"].values()) == 8 << 20
    assert set(a["ram_per_llc_color"]) == {"0", "1", "2", "3"}
    assert a["pt"]["pages"] == doc["vms"][0]["pt_pages"]
    b = doc["vms"][1]["colors"]
    assert b["llc_share_kib"] == 512 and b["bank_share"] == [4, 4]
    c = doc["coloring"]
    assert c["llc_bits"] == [12, 13, 14, 15] and c["bank_bits"] == [16, 17] and c["l1_bits"] == [12]
    assert len(c["free_per_llc_color"]) == 16 and len(c["free_per_bank_color"]) == 4
    # what a VM takes is gone from its colors
    free = c["free_per_llc_color"]
    assert free[0] < free[4] and free[8] < free[4]
    mem = doc["vms"][0]["memory"][0]
    assert mem["colors"]["mask"] == 0x2C000 and mem["span_end"] > mem["pa"] + mem["size"]


def test_shmem_colors(write_config: WriteConfig) -> None:
    system = load_system(write_config(config(
        vm("a", 0, '{llc: "0-7", bank: "0-1"}'), vm("b", 1, '{llc: "0-7", bank: "2-3"}'), vm("c", 2, '{llc: "8-15"}'),
        tail="shmem:\n"
             "  - {name: ab, size: 64K, vms: [{vm: a, ipa: 0x50000000}, {vm: b, ipa: 0x50000000}]}\n"
             "  - {name: ac, size: 8K, colors: {llc: 8}, vms: [{vm: a, ipa: 0x51000000}, {vm: c, ipa: 0x51000000}]}\n"
             "  - {name: plain, size: 8K, vms: [{vm: c, ipa: 0x52000000}], pa: 0x90000000, colors: {llc: 9}}\n")),
        guest_sources=None)
    ab, ac, plain = system.shmems
    assert ab.colors == Colors(0x8000, (0,))  # a's and b's common LLC colors 0-7
    assert ac.colors is not None and ac.colors.colors_over(0xF000) == {8}
    assert plain.pa == 0x90009000  # explicit span start, first page of color 9
    owned = {p for v in system.vms for m in v.memory if m.colors
             for p in m.colors.pages(m.pa, m.size // PAGE)}
    for sh in system.shmems:
        assert sh.colors is not None
        assert not owned & set(sh.colors.pages(sh.pa, sh.size // PAGE))


def test_generated_c(write_config: WriteConfig, tmp_path: Path) -> None:
    system = load_system(write_config(config(
        vm("a", 0, '{llc: "0-3,8", bank: 1}'), vm("b", 1, '{llc: "4-7"}'), vm("c", 2),
        tail="shmem:\n  - {name: s, size: 8K, colors: {llc: 9}, vms: [{vm: a, ipa: 0x50000000}]}\n")),
        guest_sources=None)
    staged = layout.stage(system, tmp_path / "out", ROOT / "tests" / "fixtures" / "guests")
    text = gen_c.generate(system, staged, "c.yaml")
    a, b, _ = system.vms
    assert a.memory[0].colors is not None
    values = ", ".join(f"0x{v:x}" for v in a.memory[0].colors.values)
    assert f"static const u64 color0_values[] = {{\n\t{values},\n}};" in text
    assert f"\t{{ .mask = 0x{a.memory[0].colors.mask:x}, .nvalues = {len(a.memory[0].colors.values)}, " \
           f".values = color0_values }},\n" in text
    assert (f"{{ .ipa = 0x40000000, .pa = 0x{a.memory[0].pa:x}, .size = 0x400000, .color = &colors[0], "
            f".span_end = 0x{a.memory[0].end:x} }}") in text
    assert "vm0_pt[" not in text and "vm1_pt[" not in text and "static cfg_pt_page_t vm2_pt[" in text
    assert f"\t\t.pt_color = &colors[0],\n\t\t.pt_pa = 0x{a.pt_pa:x},\n\t\t.llc_colors = 0x10f,\n" \
           "\t\t.bank_colors = 0x2,\n" in text
    assert ".llc_color_mask = 0xf000," in text and ".bank_color_mask = 0x30000," in text
    assert re.search(r"\.size = 0x2000, \.color = &colors\[2\] \}", text), text
    cc = shutil.which("aarch64-linux-gnu-gcc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "config.c"
    src.write_text(text)
    (tmp_path / "features.h").write_text(features.header(system, "c.yaml"))  # what the build includes
    result = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-ffreestanding", "-c", "-o",
                             str(tmp_path / "c.o"), "-I", str(ROOT / "hypervisor"),
                             "-include", str(tmp_path / "features.h"), str(src)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_repo_configs_check(capsys: pytest.CaptureFixture[str]) -> None:
    """The colored configs in the repository are valid and warning-free
    where they should be."""
    for name in ("tests/configs/color-walk.yaml", "tests/configs/color-linux.yaml",
                 "tests/configs/color-dump.yaml", "configs/mixed-criticality.yaml"):
        code, out, err = check_cli(capsys, str(ROOT / name))
        assert code == 0, err
        if "walk" not in name and "dump" not in name:
            assert err == "", err


def test_explicit_span_is_kept_from_contiguous_memory(write_config: WriteConfig) -> None:
    """Contiguous memory allocated later never lands in an explicit colored span."""
    system = load_system(write_config(config(
        "{name: a, cpus: [0], colors: {llc: \"0-7\"}, image: img.bin, memory: [{ipa: 0x40000000, size: 4M, "
        "pa: 0x42000000}]}",
        vm("b", 1, size="4M"))), guest_sources=None)
    a, b = system.vms[0].memory[0], system.vms[1].memory[0]
    assert a.pa == 0x42000000 and a.end == 0x427F8000
    assert b.colors is None and b.pa >= a.end


def test_cli_rejects(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(config(vm("a", 0, '{llc: "0-7"}'), vm("b", 1, '{llc: "7-8"}')))
    code, out, err = check_cli(capsys, path)
    assert code == 1 and out == ""
    assert err == ("bulkhead: error: c.yaml:4:89: vms[1].colors: the colors of VM 'b' overlap those of VM 'a' "
                   "(vms[0].colors): LLC color 7 in common; give each VM its own colors (memory they share "
                   "belongs in 'shmem')\n")


def test_recolor_pool(write_config: WriteConfig, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The pool is placed like a colored region after the VMs (never over the
    pages of a VM whose colors it shares), reported and generated."""
    path = write_config(config(vm("a", 0, '{llc: "0-7"}'), vm("b", 1, '{llc: "8-11"}'),
                               tail='recolor_pool: {size: 8M, colors: {llc: "4-11"}}\n'))
    system = load_system(path, guest_sources=None)
    pool = system.pool
    assert pool is not None and pool.pages == 2048 and pool.colors.colors_over(0xF000) == set(range(4, 12))
    for v in system.vms:
        for m in v.memory:
            assert m.colors is not None and m.end > m.pa
            assert m.end <= pool.start or pool.end <= m.pa  # intersecting colors: spans apart
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert (f"recolor pool: 8M in LLC colors 4-11, span 0x{pool.start:x}-0x{pool.end:x} (spare memory for "
            "recoloring; docs/coloring.md)") in out.splitlines(), out
    assert cli.main(["check", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)["recolor_pool"]
    assert doc == {"size": 8 << 20, "pa": pool.start, "span_end": pool.end, "llc": list(range(4, 12)), "bank": [0, 1, 2, 3],
                   "mask": pool.colors.mask, "values": list(pool.colors.values)}
    text = gen_c.generate(system, layout.stage(system, tmp_path / "out", ROOT / "tests" / "fixtures" / "guests"),
                          "c.yaml")
    assert f".pool_pa = 0x{pool.start:x}," in text and f".pool_span_end = 0x{pool.end:x}," in text, text
    assert ".pool_size = 0x800000," in text and ".pool_color = &colors[" in text, text


def test_hypervisor_colors_reported(write_config: WriteConfig, capsys: pytest.CaptureFixture[str],
                                    tmp_path: Path) -> None:
    path = write_config(config(vm("a", 0, '{llc: "0-7"}'), tail='hypervisor_colors: {llc: "14-15", bank: 1}\n'))
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert ("hypervisor colors: LLC 14-15, bank 1 (reserved: no VM or shared memory may use them; "
            "see docs/coloring.md, Self-coloring)") in out.splitlines(), out
    assert cli.main(["check", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["hypervisor_colors"] == {"llc": [14, 15], "bank": [1], "mask": 0x3e000,
                                        "values": [0x1e000]}
    system = load_system(path, guest_sources=None)
    text = gen_c.generate(system, layout.stage(system, tmp_path / "out", ROOT / "tests" / "fixtures" / "guests"),
                          "c.yaml")
    assert ".hyp_llc_colors = 0xc000," in text and ".hyp_bank_colors = 0x2," in text, text
