# SPDX-License-Identifier: Apache-2.0
"""The KV260 and Versal platform files (docs/boards/kv260.md, versal.md)
against the device trees they were drafted from: Debian's K26 SOM + KV260
carrier DTB, and the tree QEMU's xlnx-versal-virt builds for itself
(`dumpdtb`, made here: never committed). The cache geometry and the PMU
events are not in a device tree: their sources are cited in the files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bulkhead.base.errors import ConfigError
from bulkhead.config.dtb import DeviceTree
from bulkhead.config.dtimport import import_dtb
from bulkhead.config.model import Platform
from bulkhead.generate import qemu
from bulkhead.layout.load import load_platform

ROOT = Path(__file__).resolve().parent.parent
KV260_DTB = ROOT / "artefacts" / "dtbs" / "xilinx" / "zynqmp-smk-k26-revA-sck-kv-g-revB.dtb"
QEMU = "qemu-system-aarch64"


def _versal_dtb(tmp: Path) -> Path:
    """QEMU's own device tree of xlnx-versal-virt with -m 4G, as dtc
    rewrites it (QEMU's blob carries FDT_NOP tags, which the importer's DT
    reader does not take yet)."""
    if shutil.which(QEMU) is None or shutil.which("dtc") is None:
        pytest.skip(f"needs {QEMU} and dtc")
    raw, clean = tmp / "versal-qemu.dtb", tmp / "versal.dtb"
    subprocess.run([QEMU, "-M", f"xlnx-versal-virt,dumpdtb={raw}", "-smp", "4", "-m", "4G", "-display", "none"],
                   check=True, capture_output=True, timeout=60)
    subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dtb", "-o", str(clean), str(raw)],
                   check=True, capture_output=True, timeout=60)
    return clean


def _same_as_dt(p: Platform, dt: dict[str, Any]) -> None:
    assert list(p.mpidr) == dt["cpus"]
    assert [(r.base, r.size) for r in p.ram_banks] == [(b["base"], b["size"]) for b in dt["ram"]]
    for r in dt.get("reserved", []):  # every no-map region of the DT is kept out of VM memory
        assert any(k.base <= r["base"] and r["base"] + r["size"] <= k.base + k.size for k in p.reserved), r
    for key, value in dt["gic"].items():
        assert getattr(p.gic, key) == value, key
    assert (p.timer.hyp_irq, p.timer.virt_irq, p.timer.phys_irq, p.timer.secure_irq) == (
        dt["timer"]["hyp_irq"], dt["timer"]["virt_irq"], dt["timer"]["phys_irq"], dt["timer"]["secure_irq"])
    assert (p.uart.base, p.uart.irq, p.uart.driver) == (dt["uart"]["base"], dt["uart"]["irq"], dt["uart"]["driver"])
    by_base = {d["base"]: d for d in dt["devices"]}
    for d in p.devices:  # every passthrough device is one of the tree's, with its window and interrupts
        got = by_base.get(d.base)
        assert got is not None, d.name
        assert (d.size, list(d.irqs), list(d.compatible)) == (got["size"], got.get("irqs", []), got["compatible"])


def test_kv260_is_its_device_tree() -> None:
    if not KV260_DTB.is_file():
        pytest.fail(f"{KV260_DTB} is missing: run `bash scripts/setup.sh dtbs`")
    dt = import_dtb(DeviceTree.load(KV260_DTB)).document()
    p = load_platform("kv260")
    _same_as_dt(p, dt)
    assert (p.uart.base, p.uart.irq) == (0xFF010000, 54)  # UART1: the tree's stdout-path serial1
    assert p.qemu is not None and p.qemu.serial == 1  # xlnx-zcu102's second serial port
    assert [(r.base, r.size) for r in p.reserved][-1] == (0x7FF00000, 0x100000)  # the PMU firmware's
    assert p.bandwidth is not None and list(p.bandwidth.pmu_spis) == dt["bandwidth"]["pmu_irq"]
    assert p.coloring is not None and p.coloring.llc_bits == (12, 13, 14, 15)  # 16 colors: 1 MiB 16-way [ug1085]


def test_versal_is_qemus_device_tree(tmp_path: Path) -> None:
    dt = import_dtb(DeviceTree.load(_versal_dtb(tmp_path))).document()
    p = load_platform("versal")
    _same_as_dt(p, dt)
    assert (p.gic.version, p.gic.gicd, p.gic.gicr, p.gic.gicr_stride) == (3, 0xF9000000, 0xF9080000, 0x20000)
    assert (p.uart.base, p.uart.irq, p.uart.driver) == (0xFF000000, 50, "pl011")
    assert p.qemu is not None and p.qemu.kernel == "image" and p.qemu.memory == 4 << 30
    assert p.coloring is not None and p.coloring.llc_bits == (12, 13, 14, 15)  # 16 colors: 1 MiB 16-way [am011]


def test_qemu_kernel_takes_elf_or_image(tmp_path: Path) -> None:
    text = (ROOT / "platforms" / "versal.yaml").read_text()
    assert "kernel: image," in text
    (tmp_path / "versal.yaml").write_text(text.replace("kernel: image,", "kernel: uimage,"))
    with pytest.raises(ConfigError, match=r"qemu\.kernel: expected one of elf, image, got 'uimage'"):
        load_platform("versal", tmp_path)
    (tmp_path / "versal.yaml").write_text(text.replace("kernel: image,", ""))
    q = load_platform("versal", tmp_path).qemu
    assert q is not None and q.kernel == "elf"


def test_versal_boots_the_flat_image_on_four_qemu_cpus() -> None:
    """xlnx-versal-virt enters an ELF at EL3: -kernel gets the flat image
    beside it (QEMU's Linux boot: EL2, DTB in x0, PSCI); the machine needs
    -smp 4 (its two R5Fs), which follows the platform's -smp 2."""
    argv = qemu.command(load_platform("versal"), Path("/o/hyp/bulkhead-placed.elf"), ())
    assert argv[argv.index("-kernel") + 1] == "/o/hyp/bulkhead.bin"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-smp"] == ["2", "4"]
    argv = qemu.command(load_platform("kv260"), Path("/o/hyp/bulkhead-placed.elf"), ())
    assert argv[argv.index("-kernel") + 1] == "/o/hyp/bulkhead-placed.elf"
