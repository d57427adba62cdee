# SPDX-License-Identifier: Apache-2.0
"""Golden tests of the generated config.c and device trees, a dtc round
trip, and a compile of config.c against hypervisor/core/config/config.h.

``pytest --update-golden`` rewrites tests/golden/ from the current output.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bulkhead.generate import features, gen_c, gen_dts
from bulkhead.layout import placement as layout
from bulkhead.layout.load import load_system

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
DTC = shutil.which("dtc")
DTC_FLAGS = ["-W", "no-unit_address_vs_reg"]


def stage_tree(tmp: Path) -> None:
    """configs/*.yaml next to artefacts/linux/ holding the fixture kernel/initrd."""
    (tmp / "configs").mkdir()
    for cfg in (REPO / "configs").glob("*.yaml"):
        shutil.copy(cfg, tmp / "configs" / cfg.name)
    shutil.copytree(FIXTURES / "linux", tmp / "artefacts" / "linux")


def config_path(name: str, tmp: Path) -> Path:
    if name in ("rich", "zynqmp"):
        return FIXTURES / "configs" / f"{name}.yaml"
    stage_tree(tmp)
    return tmp / "configs" / f"{name}.yaml"


def generate(name: str, tmp: Path) -> dict[str, str]:
    """Golden file name -> generated text; the build's features.h under
    "features.h" (not golden: tests/test_features.py)."""
    system = load_system(config_path(name, tmp), guest_sources=None)
    staged = layout.stage(system, tmp / "out", FIXTURES / "guests")
    files = {f"{name}.config.c": gen_c.generate(system, staged, f"{name}.yaml")}
    for vm in system.vms:
        if vm.linux is not None:
            files[f"{name}.{vm.name}.dts"] = gen_dts.generate(system, vm)
    return files | {"features.h": features.header(system, f"{name}.yaml")}


@pytest.mark.parametrize("name", ["hello", "dual", "rich", "zynqmp"])
def test_golden(name: str, tmp_path: Path, update_golden: bool) -> None:
    files = generate(name, tmp_path)
    del files["features.h"]
    if update_golden:
        for file, text in files.items():
            (GOLDEN / file).write_text(text)
    expected = sorted(p.name for p in GOLDEN.glob(f"{name}.*"))
    assert sorted(files) == expected, "golden files missing: run pytest --update-golden"
    for file, text in files.items():
        assert text == (GOLDEN / file).read_text(), f"{file} differs from tests/golden (--update-golden?)"


def test_generation_is_deterministic(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert generate("dual", tmp_path / "a") == generate("dual", tmp_path / "b")


def dtc(*args: str) -> subprocess.CompletedProcess[str]:
    assert DTC is not None
    return subprocess.run([DTC, *args], capture_output=True, text=True, check=False)


@pytest.mark.skipif(DTC is None, reason="dtc not installed")
@pytest.mark.parametrize("name", ["dual", "rich", "zynqmp"])
def test_dtc_round_trip(name: str, tmp_path: Path) -> None:
    files = generate(name, tmp_path)
    dts = tmp_path / "linux.dts"
    dts.write_text(files[f"{name}.linux.dts"])
    compiled = dtc(*DTC_FLAGS, "-I", "dts", "-O", "dtb", "-o", str(tmp_path / "linux.dtb"), str(dts))
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stderr == "", "dtc warnings"
    back = dtc("-I", "dtb", "-O", "dts", str(tmp_path / "linux.dtb"))
    assert back.returncode == 0, back.stderr
    text = back.stdout
    for needle in [
        'compatible = "bulkhead,vm";',
        "#address-cells = <0x02>;",
        "chosen {",
        "bootargs = ",
        'stdout-path = "/pl011@9000000";',
        "linux,initrd-start = <0x00 0x",
        "linux,initrd-end = <0x00 0x",
        "memory@40000000 {",
        'device_type = "memory";',
        "cpus {",
        "cpu@0 {",
        "cpu@1 {",
        'compatible = "arm,cortex-a53";',
        'enable-method = "psci";',
        'compatible = "arm,psci-1.0\\0arm,psci-0.2";',
        'method = "hvc";',
        "#interrupt-cells = <0x03>;",
        "interrupt-controller;",
        'compatible = "arm,armv8-timer";',
        "interrupts = <0x01 0x0d 0x04 0x01 0x0e 0x04 0x01 0x0b 0x04 0x01 0x0a 0x04>;",
        "apb-pclk {",
        "clock-frequency = <0x16e3600>;",
        "pl011@9000000 {",
        'compatible = "arm,pl011\\0arm,primecell";',
        "interrupts = <0x00 0x01 0x04>;",
        'clock-names = "uartclk\\0apb_pclk";',
        "hypervisor {",
        'compatible = "bulkhead,hypervisor";',
    ]:
        assert needle in text, needle
    if name == "zynqmp":  # GICv2 platform: the VM's distributor and CPU interface
        gic = ["interrupt-controller@8000000 {", 'compatible = "arm,gic-400\\0arm,cortex-a15-gic";',
               "#address-cells = <0x00>;", "reg = <0x00 0x8000000 0x00 0x1000 0x00 0x8010000 0x00 0x2000>;",
               "uart1@ff010000 {", "interrupts = <0x00 0x16 0x04>;", "ttc0@ff110000 {", 'compatible = "cdns,ttc";']
    else:
        gic = ["intc@8000000 {", 'compatible = "arm,gic-v3";',
               "reg = <0x00 0x8000000 0x00 0x10000 0x00 0x80a0000 0x00 0x40000>;"]
    for needle in gic:
        assert needle in text, needle
    assert ("arm,gic-v3" in text) == (name != "zynqmp")
    if name == "rich":
        for needle in [
            "memory@100000000 {",
            "reg = <0x01 0x00 0x00 0x200000>;",
            "rtc@9010000 {",
            'compatible = "arm,pl031\\0arm,primecell";',
            "interrupts = <0x00 0x02 0x04>;",
            'clock-names = "apb_pclk";',
            "virtio0@a000000 {",
            "virtio1@a000200 {",
            'compatible = "virtio,mmio";',
            "reserved-memory {",
            "ranges;",
            "shmem@50000000 {",
            "no-map;",
            "bulkhead-shmem@50000000 {",
            'compatible = "bulkhead,shmem";',
            "interrupts = <0x00 0x30 0x01>;",
            "bulkhead-shmem@60000000 {",
            'bulkhead,name = "bulk";',
        ]:
            assert needle in text, needle


def c_compiler() -> str | None:
    return shutil.which("aarch64-linux-gnu-gcc") or shutil.which("gcc")


@pytest.mark.skipif(c_compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("name", ["hello", "dual", "rich", "zynqmp"])
def test_config_c_compiles(name: str, tmp_path: Path) -> None:
    """config.c compiles warning-free against the hypervisor's config.h."""
    src = tmp_path / "config.c"
    files = generate(name, tmp_path)
    src.write_text(files[f"{name}.config.c"])
    (tmp_path / "features.h").write_text(files["features.h"])
    stub = tmp_path / "stub" / "lib"
    stub.mkdir(parents=True)  # used only when hypervisor/lib/types.h does not exist (yet)
    (stub / "types.h").write_text(
        "#include <stdint.h>\ntypedef uint8_t u8; typedef uint16_t u16; typedef uint32_t u32;\n"
        "typedef uint64_t u64; typedef int32_t s32; typedef int64_t s64;\n"
    )
    result = compile_config_c(src)
    assert result.returncode == 0, result.stderr


def compile_config_c(src: Path) -> subprocess.CompletedProcess[str]:
    cc = c_compiler()
    assert cc is not None
    return subprocess.run(
        [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-ffreestanding", "-c", "-o", str(src.with_suffix(".o")),
         "-I", str(REPO / "hypervisor"), "-I", str(src.parent / "stub"), "-include", str(src.parent / "features.h"),
         str(src)],
        capture_output=True, text=True, check=False,
    )


@pytest.mark.skipif(c_compiler() is None, reason="no C compiler")
def test_shared_constants_are_asserted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """config.c asserts every limit the toolchain shares with the hypervisor
    (gen_c.shared(): the core's and each mechanism's limits): a toolchain
    value that drifts from the C header fails the build of config.c, naming
    both."""
    src = tmp_path / "config.c"
    files = generate("hello", tmp_path)
    src.write_text(files["hello.config.c"])
    (tmp_path / "features.h").write_text(files["features.h"])
    assert compile_config_c(src).returncode == 0
    limits = gen_c.shared()
    names = {macro for macro, _, _, _ in limits}
    assert {"CFG_MAX_CPUS", "CFG_MAX_RAM", "QOS400_MAX", "BW_MAX_BUDGET", "IOMMU_MAX_UNITS"} <= names
    for i, (macro, header, value, where) in enumerate(limits):
        assert f"#define {macro} " in (REPO / "hypervisor" / header).read_text(), (macro, header)
        drifted = list(limits)
        drifted[i] = (macro, header, value + 1, where)
        monkeypatch.setattr(gen_c, "shared", lambda d=tuple(drifted): d)
        (tmp_path / str(i)).mkdir()
        src.write_text(generate("hello", tmp_path / str(i))["hello.config.c"])
        result = compile_config_c(src)
        assert result.returncode != 0 and f"{macro}: {where} is {value + 1}" in result.stderr, result.stderr
