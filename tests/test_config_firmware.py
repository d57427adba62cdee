# SPDX-License-Identifier: Apache-2.0
"""The platform file's firmware methods (`cpu_enable:`, `power_off:`) and the
QEMU boot of a flat image with a DTB (`qemu.kernel`, `qemu.dtb`), as the
Raspberry Pi 4 uses them (platforms/rpi4b.yaml, docs/boards/rpi4.md)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from test_config_schema import platform_error

from bulkhead.base.errors import RunError
from bulkhead.config.model import FirmwareSpec, MethodSpec
from bulkhead.generate import qemu
from bulkhead.generate.build import hypervisor_make_args, object_dir
from bulkhead.generate.gen_c import generate
from bulkhead.layout.load import PLATFORMS_DIR, load_platform, load_system
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import prepare

ROOT = Path(__file__).resolve().parents[1]
SPIN = "cpu_enable: {method: spin-table, release: [0xd8, 0xe0, 0xe8, 0xf0]}"
PM = "power_off: {method: bcm2835-pm, base: 0xFE100000}"


def test_rpi4_firmware_methods_reach_the_generated_config(tmp_path: Path) -> None:
    fw = load_platform("rpi4b").firmware
    assert fw.cpu_enable == MethodSpec("spin-table", "spintable", (("release", (0xD8, 0xE0, 0xE8, 0xF0)),))
    assert fw.power_off == MethodSpec("bcm2835-pm", "bcm2835", (("base", 0xFE100000),))
    assert load_platform("qemu-virt").firmware == FirmwareSpec(MethodSpec("psci", "psci"), MethodSpec("psci", "psci"))
    config = tmp_path / "c.yaml"
    for platform in ("rpi4b", "qemu-virt"):
        config.write_text(f"platform: {platform}\nvms:\n  - {{name: a, cpus: [0], "
                          "memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}\n")
        (tmp_path / "img.bin").write_bytes(b"\0" * 16)
        system = load_system(config, guest_sources=None)
        c = generate(system, (), "c.yaml")
        lines = [line for line in c.splitlines() if "cpu_enable" in line or "power_off" in line]
        # the drivers' operations tables and data (drivers/cpu_enable/, drivers/power_off/), built alone
        make = [a for a in hypervisor_make_args(system, tmp_path) if a.startswith(("CPU_ENABLE=", "POWER_OFF="))]
        if platform == "rpi4b":
            assert lines == ["static const u64 cpu_enable_release[] = { 0xd8, 0xe0, 0xe8, 0xf0 };",
                             "static const u64 power_off_base = 0xfe100000;",
                             "extern const struct cpu_enable_ops spintable_cpu_enable_ops;",
                             "extern const struct power_off_ops bcm2835_pm_power_off_ops;",
                             "\t.cpu_enable = { .ops = &spintable_cpu_enable_ops, .data = cpu_enable_release },",
                             "\t.power_off = { .ops = &bcm2835_pm_power_off_ops, .data = &power_off_base },"]
            assert make == ["CPU_ENABLE=spintable", "POWER_OFF=bcm2835"]
        else:  # PSCI for both, without data
            assert lines == ["extern const struct cpu_enable_ops psci_cpu_enable_ops;",
                             "extern const struct power_off_ops psci_power_off_ops;",
                             "\t.cpu_enable = { .ops = &psci_cpu_enable_ops },",
                             "\t.power_off = { .ops = &psci_power_off_ops },"]
            assert make == ["CPU_ENABLE=psci", "POWER_OFF=psci"]
    assert object_dir(load_system(config, guest_sources=None)) != object_dir(
        replace(system, platform=replace(system.platform, firmware=load_platform("rpi4b").firmware)))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (SPIN, "cpu_enable: {method: spin-table, release: [0xd8, 0xe0]}",
         "cpu_enable.release: one release address per CPU: 4 expected"),
        (SPIN, "cpu_enable: {method: spin-table, release: [0xd8, 0xe0, 0xe8, 0x3C000000]}",
         "cpu_enable.release[3]: 0x3c000000 is not an 8-byte aligned address in RAM"),
        (SPIN, "cpu_enable: {method: spin-table, release: [0xd8, 0xe0, 0xe8, 0xf4]}",
         "cpu_enable.release[3]: 0xf4 is not an 8-byte aligned address in RAM"),
        (SPIN, "cpu_enable: {method: spin-table}",
         "cpu_enable: 'release' (each CPU's release address) goes with method spin-table, "
         "and only there"),
        (SPIN, "cpu_enable: {method: psci, release: [0xd8, 0xe0, 0xe8, 0xf0]}",
         "cpu_enable: 'release' (each CPU's release address) goes with method spin-table, "
         "and only there"),
        (SPIN, "cpu_enable: {method: mailbox}",
         "cpu_enable.method: expected one of psci, spin-table, got 'mailbox'"),
        (PM, "power_off: {method: gpio}",
         "power_off.method: expected one of psci, bcm2835-pm, got 'gpio'"),
        (PM, "power_off: {method: bcm2835-pm, base: 0xFE100000, release: [0xd8]}",
         "power_off.release: unknown key 'release'; expected one of: method, base"),
        (PM, "power_off: {method: bcm2835-pm, base: 0xFB000000}",
         "power_off.base: 0xfb000000 is outside 'mmio' (the EL2 device window)"),
        (PM, "power_off: {method: bcm2835-pm}",
         "power_off: 'base' (the PM block) goes with method bcm2835-pm, and only there"),
        (PM, "power_off: {method: psci, base: 0xFE100000}",
         "power_off: 'base' (the PM block) goes with method bcm2835-pm, and only there"),
        ("kernel: image,", "kernel: uimage,",
         "qemu.kernel: expected one of elf, image, got 'uimage'"),
    ],
)
def test_firmware_errors(tmp_path: Path, old: str, new: str, expected: str) -> None:
    """Each mistake is reported at the key's line, nothing else is."""
    text = (PLATFORMS_DIR / "rpi4b.yaml").read_text()
    line = text[:text.index(old)].count("\n") + 1
    message = platform_error(tmp_path, old, new, "rpi4b")
    assert re.fullmatch(rf"rpi4b\.yaml:{line}:\d+: (.*)", message, re.DOTALL) is not None, message
    assert message.split(": ", 1)[1] == expected


def test_qemu_boots_the_flat_image_with_the_boards_dtb(tmp_path: Path) -> None:
    elf = tmp_path / "hyp" / "bulkhead-placed.elf"
    argv = qemu.command(load_platform("rpi4b"), elf, ())
    assert argv[argv.index("-kernel") + 1] == str(tmp_path / "hyp" / "bulkhead.bin")
    assert argv[argv.index("-dtb") + 1] == str(ROOT / "artefacts" / "dtbs" / "broadcom" / "bcm2711-rpi-4-b.dtb")
    assert argv[argv.index("-M") + 1] == "raspi4b" and argv[argv.index("-m") + 1] == "2048M"
    virt = qemu.command(load_platform("qemu-virt"), elf, ())
    assert virt[virt.index("-kernel") + 1] == str(elf) and "-dtb" not in virt
    text = (PLATFORMS_DIR / "rpi4b.yaml").read_text()
    (tmp_path / "rpi4b.yaml").write_text(text.replace("dtb: artefacts/", "dtb: nowhere/", 1))
    missing = load_platform("rpi4b", tmp_path)
    assert qemu.command(missing, elf, ())[-1] == str(ROOT / "nowhere" / "dtbs" / "broadcom" / "bcm2711-rpi-4-b.dtb")
    # the run refuses it before building anything; a build for the board does not need it
    config = tmp_path / "c.yaml"
    config.write_text("platform: rpi4b\nvms:\n  - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], "
                      "guest: hello}\n")
    with pytest.raises(RunError, match="nowhere/dtbs/broadcom/bcm2711-rpi-4-b.dtb not found"):
        prepare(config, RunOptions(timeout=1, out=tmp_path / "out", platforms_dir=tmp_path))
    assert not (tmp_path / "out").exists()
