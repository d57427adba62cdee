# SPDX-License-Identifier: Apache-2.0
"""The toolchain side of device QoS (docs/qos.md): the QoS-400 register
arithmetic, the ``qos:`` blocks of passthrough devices and the platform's
``qos_regulators:``, what ``bulkhead check`` prints and rejects, and the DMA
isolation rule."""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.config import qos
from bulkhead.config.model import QosDirectionSpec, QosRegulatorSpec, Range
from bulkhead.layout.load import PLATFORMS_DIR, load_platform, load_system

WriteConfig = Callable[..., str]
ROOT = Path(__file__).resolve().parent.parent
MHZ250 = 250_000_000
FPD_DMA = QosRegulatorSpec("fpd_dma", 0xFD74F100, MHZ250, 256, ("zdma0",), "smc", "qos_regulators[0]")


def error_of(path: str, platforms: Path | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None, **({"platforms_dir": platforms} if platforms else {}))
    return str(info.value)


def warnings_of(path: str) -> list[str]:
    return [str(w) for w in load_system(path, guest_sources=None).warnings]


# --- arithmetic --------------------------------------------------------------------


def test_rate_steps_match_the_published_figures() -> None:
    """mechanisms.md: rates 0x100 ... 0x1 halve each step, about 15.5 ... 0.06
    M transactions/s on the ZCU102 (the 250 MHz count of platforms/zcu102.yaml)."""
    steps = [0x100 >> i for i in range(9)]
    assert steps[-1] == 0x1
    tps = [qos.tps_of(r, MHZ250) for r in steps]
    assert abs(tps[0] - 15.5e6) / 15.5e6 < 0.01
    assert abs(tps[-1] - 0.06e6) / 0.06e6 < 0.02
    assert all(a == 2 * b for a, b in zip(tps, tps[1:], strict=False))


def test_published_settings_encode() -> None:
    """The settings of the published DMA study (0x20, 0x10, 0x8) as register
    values: the 12-bit rate field is ar_r/aw_r [31:20]."""
    assert qos.encode_rate(0x20) == 0x0200_0000
    assert qos.encode_rate(0x10) == 0x0100_0000
    assert qos.encode_rate(0x8) == 0x0080_0000
    assert qos.encode_rate(0xFFF) == 0xFFF0_0000
    assert qos.encode_burst(0xFFFF) == 0xFFFF  # ar_b [15:0]
    assert qos.encode_peak(0x80) == 0x8000_0000  # ar_p [31:24]
    # 0x20 at 250 MHz: 32/4096 of a transaction per cycle = 1 953 125 transactions/s,
    # 500 MB/s of 256-byte transactions
    assert qos.tps_of(0x20, MHZ250) == 1_953_125
    assert qos.mbps_of(0x20, MHZ250, 256) == 500.0
    assert qos.rate_from_mbps(500, MHZ250, 256) == 0x20
    assert qos.rate_from_tps(1_953_125, MHZ250) == 0x20
    assert qos.rate_from_tps(1_953_124, MHZ250) == 0x1F  # never more than asked for


def test_round_trips() -> None:
    for raw in range(1, qos.R_MAX + 1):
        assert qos.decode_rate(qos.encode_rate(raw)) == raw
        assert qos.rate_from_tps(math.ceil(qos.tps_of(raw, MHZ250)), MHZ250) == raw
        assert qos.rate_from_tps(math.ceil(qos.tps_of(raw, 533_333_333)), 533_333_333) == raw
    for peak in range(1, qos.P_MAX + 1):
        assert qos.decode_peak(qos.encode_peak(peak)) == peak
    for mbps in (16, 100, 500, 1000, 4000, 63984):
        raw = qos.rate_from_mbps(mbps, MHZ250, 256)
        assert qos.mbps_of(raw, MHZ250, 256) <= mbps < qos.mbps_of(raw + 1, MHZ250, 256)


@pytest.mark.parametrize("call,message", [
    (lambda: qos.encode_rate(0), "rate 0x0 does not fit the 12-bit rate field (0x1-0xfff)"),
    (lambda: qos.encode_rate(0x1000), "rate 0x1000 does not fit the 12-bit rate field (0x1-0xfff)"),
    (lambda: qos.encode_burst(0), "burst 0 does not fit the 16-bit burstiness field (1-65535 transactions)"),
    (lambda: qos.encode_burst(0x10000), "burst 65536 does not fit the 16-bit burstiness field (1-65535 transactions)"),
    (lambda: qos.encode_peak(0x100), "peak 0x100 does not fit the 8-bit peak-rate field (0x1-0xff)"),
    (lambda: qos.rate_from_tps(61_000, MHZ250),
     "61000 transactions/s is below the lowest rate the regulator can express: 1/4096 transaction per cycle "
     "= 61035 transactions/s at 250 MHz"),
    (lambda: qos.rate_from_tps(250_000_000, MHZ250),
     "250000000 transactions/s is above the highest rate the regulator can express: 4095/4096 transaction "
     "per cycle = 249938965 transactions/s at 250 MHz"),
    (lambda: qos.rate_from_mbps(70_000, MHZ250, 256),
     "70000 MB/s is outside what the regulator can express with 256-byte transactions at 250 MHz: "
     "15.6-63984 MB/s"),
    (lambda: qos.resolve(QosDirectionSpec(0x200, None, None, None, 0x10, "p"), FPD_DMA),
     "peak 0x10 (16/256 per cycle) is below the average rate 0x200 (512/4096 per cycle)"),
])
def test_out_of_range(call: Callable[[], object], message: str) -> None:
    with pytest.raises(qos.QosRangeError) as info:
        call()
    assert str(info.value) == message


def test_programmed_registers() -> None:
    read = qos.resolve(QosDirectionSpec(0x10, None, None, 16, None, "r"), FPD_DMA)
    pr = qos.Programmed(FPD_DMA, read, None, (("zdma0", "a"),), "zdma0")
    assert pr.registers() == {"ar_r": 0x0100_0000, "ar_b": 16, "ar_p": 0xFF00_0000,
                              "aw_r": 0, "aw_b": 0, "aw_p": 0, "qos_cntl": qos.EN_AR_RATE}
    assert qos.REGISTERS["qos_cntl"] == 0x0C and qos.REGISTERS["ar_r"] == 0x2C and qos.REGISTERS["aw_r"] == 0x20


# --- config and check --------------------------------------------------------------

ZCU = """\
platform: zcu102
dma_isolation: none
vms:
  - name: dma
    cpus: [0]
    memory: [{{ipa: 0x40000000, size: 16M}}]
    image: img.bin
    devices:
      - {{name: zdma0, qos: {qos}}}
      - zdma1
  - name: victim
    cpus: [1]
    memory: [{{ipa: 0x40000000, size: 16M}}]
    image: img.bin
    devices: [{victim}]
"""


def test_check_prints_registers_and_bandwidth(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(ZCU.format(qos="{read: {raw: 0x20, burst: 8}, write: {mbps: 250, peak: 0x80}}",
                                   victim="uart1"))
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert "QoS-400 regulation (fpd_dma: 250 MHz x 256 B; rate = RATE/4096 transactions per cycle):" in out
    rows = [line.split() for line in out.splitlines()]
    assert ["fpd_dma", "zdma0@dma,zdma1@dma", "read", "0x020", "1.953", "M", "500", "8", "0xff",
            "ar_r=0x02000000", "ar_b=0x00000008", "ar_p=0xff000000"] in rows
    assert ["write", "0x010", "976.6", "k", "250", "1", "0x80",
            "aw_r=0x01000000", "aw_b=0x00000001", "aw_p=0x80000000"] in rows
    assert ["qos_cntl=0x00000003", "@0xfd74f10c", "(smc)"] in rows
    assert "note: QEMU models neither QoS-400 nor bus contention" in out
    assert cli.main(["check", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    (reg,) = doc["qos"]
    assert reg["name"] == "fpd_dma" and reg["base"] == 0xFD74F100 and reg["access"] == "smc"
    assert reg["registers"] == {"ar_r": 0x02000000, "ar_b": 8, "ar_p": 0xFF000000, "aw_r": 0x01000000,
                                "aw_b": 1, "aw_p": 0x80000000, "qos_cntl": 3}
    assert reg["read"]["mbps"] == 500.0 and reg["write"]["tps"] == 976_562.5
    assert reg["devices"] == [{"device": "zdma0", "vm": "dma"}, {"device": "zdma1", "vm": "dma"}]


def test_one_regulator_two_vms_warns(write_config: WriteConfig) -> None:
    path = write_config(ZCU.format(qos="{read: {raw: 0x10}}", victim="zdma2"))
    assert (
        "c.yaml:9:28: vms[0].devices[0].qos: regulator 'fpd_dma' serves devices of 2 VMs: 'dma' (zdma0, zdma1), "
        "'victim' (zdma2); QoS-400 regulates the whole master, so these settings slow every one of them"
    ) in warnings_of(path)


@pytest.mark.parametrize("qos_text,victim,expected", [
    ("{read: {raw: 0x1000}}", "uart1",
     "c.yaml:9:35: vms[0].devices[0].qos.read: rate 0x1000 does not fit the 12-bit rate field (0x1-0xfff)"),
    ("{write: {mbps: 10}}", "uart1",
     "c.yaml:9:36: vms[0].devices[0].qos.write: 10 MB/s is outside what the regulator can express with "
     "256-byte transactions at 250 MHz: 15.6-63984 MB/s"),
    ("{read: {raw: 0x10, burst: 70000}}", "uart1",
     "c.yaml:9:35: vms[0].devices[0].qos.read: burst 70000 does not fit the 16-bit burstiness field "
     "(1-65535 transactions)"),
    ("{read: {raw: 0x10, tps: 100}}", "uart1",
     "c.yaml:9:35: vms[0].devices[0].qos.read: give the average rate in exactly one of raw, tps, mbps "
     "(got raw, tps)"),
    ("{}", "uart1", "c.yaml:9:28: vms[0].devices[0].qos: an empty qos block: give read and/or write"),
])
def test_check_rejects(write_config: WriteConfig, qos_text: str, victim: str, expected: str) -> None:
    path = write_config(ZCU.format(qos=qos_text, victim=victim))
    assert error_of(path) == expected


def test_device_without_regulator(write_config: WriteConfig) -> None:
    path = write_config(ZCU.format(qos="{read: {raw: 0x10}}", victim="{name: uart1, qos: {read: {raw: 0x10}}}"))
    assert error_of(path) == ("c.yaml:15:34: vms[1].devices[0].qos: device 'uart1' has no QoS-400 regulator "
                              "on platform 'zcu102'")


def test_conflicting_settings_on_one_regulator(write_config: WriteConfig) -> None:
    path = write_config(ZCU.format(qos="{read: {raw: 0x10}}", victim="{name: zdma2, qos: {read: {raw: 0x20}}}"))
    assert error_of(path) == (
        "c.yaml:15:34: vms[1].devices[0].qos: regulator 'fpd_dma' serves both 'zdma0' (vms[0].devices[0].qos) "
        "and 'zdma2', which ask for different settings; one regulator applies one setting to all its devices")


def test_platform_regulator_errors(tmp_path: Path, write_config: WriteConfig) -> None:
    text = (PLATFORMS_DIR / "zcu102.yaml").read_text()
    d = tmp_path / "platforms"
    d.mkdir()
    (d / "zcu102.yaml").write_text(text.replace("devices: [gem0, gem1", "devices: [zdma0, gem1")
                                   .replace("base: 0xFE14A100", "base: 0xFE14AFF0"))
    path = write_config(ZCU.format(qos="{read: {raw: 0x10}}", victim="uart1"))
    err = error_of(path, d)
    assert "qos_regulators[1].base: the register block at 0xfe14aff0 crosses a 4 KiB page" in err
    assert "qos_regulators[1].devices[0]: device 'zdma0' is already behind regulator 'fpd_dma'" in err
    (d / "zcu102.yaml").write_text(text + "smmu: {base: 0xFD800000}\n")
    assert error_of(path, d).endswith(
        "smmu: SMMUs are listed under 'smmus:' (a list of {name, type, base, size, irqs, sources}; "
        "docs/dma.md)")


# --- DMA isolation -------------------------------------------------------------------


def test_dma_device_needs_dma_isolation_none(write_config: WriteConfig) -> None:
    # behind the ZynqMP's SMMU-500 (stream IDs in the platform file): accepted (tests/test_config_dma.py)
    path = write_config(ZCU.format(qos="{read: {raw: 0x10}}", victim="uart1").replace("dma_isolation: none\n", ""))
    assert load_system(path).warnings == []
    virt = write_config("""\
        platform: qemu-virt
        vms:
          - {name: io, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, devices: [rtc, virtio3]}
        """, "v.yaml")
    assert error_of(virt) == (
        "v.yaml:3:98: vms[0].devices[1]: device 'virtio3' is DMA-capable and no SMMU of platform 'qemu-virt' is "
        "in front of it: VM 'io' could read and write all physical memory through it; state 'dma_isolation: "
        "none' in the config to accept this")


def test_dma_isolation_none_warns(write_config: WriteConfig) -> None:
    path = write_config(ZCU.format(qos="{read: {raw: 0x10}}", victim="uart1"))
    assert warnings_of(path) == [
        "c.yaml:2:16: dma_isolation: 'dma_isolation: none': the SMMU(s) of platform 'zcu102' (smmu) are left off",
        "c.yaml:2:16: dma_isolation: VM 'dma' drives DMA-capable device(s) 'zdma0', 'zdma1' without an SMMU: "
        "it can read and write all physical memory"]
    bad = write_config(ZCU.format(qos="{read: {raw: 0x10}}", victim="uart1").replace("none", "smmu"), "b.yaml")
    assert error_of(bad) == "b.yaml:2:16: dma_isolation: expected one of none, got 'smmu'"


def test_platform_files_mark_dma_devices() -> None:
    zcu = load_platform("zcu102")
    assert {d.name for d in zcu.devices if d.dma} == {
        *(f"gem{i}" for i in range(4)), "sd0", "sd1", *(f"zdma{i}" for i in range(8))}
    virt = load_platform("qemu-virt")
    assert {d.name for d in virt.devices if d.dma} == {f"virtio{i}" for i in range(32)}
    assert [(r.name, r.base, r.access) for r in zcu.qos_regulators] == [
        ("fpd_dma", 0xFD74F100, "smc"), ("lpd_iou", 0xFE14A100, "smc")]
    reg = zcu.regulator_of("zdma5")
    assert reg is not None and reg.name == "fpd_dma"
    assert zcu.regulator_of("uart1") is None and zcu.smmu


def test_python_and_c_agree(tmp_path: Path) -> None:
    """bulkhead/config/qos.py (config values) and hypervisor/isolation/qos400_regs.c
    (the run-time hypercall) accept the same settings and give the same
    register values."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no native C compiler")
    rng = random.Random(14)
    cases = [(rng.choice([0, 1, rng.randint(1, 0xFFF), 0xFFF, 0x1000]), rng.choice([1, rng.randint(0, 0x10000)]),
              rng.choice([0xFF, rng.randint(0, 0xFF), 0x100])) for _ in range(400)]
    driver = tmp_path / "drv.c"
    body = [f"""{{ struct qos400_regs r = {{0}};
        int ok = qos400_unpack(QOS400_PACK({rt}ull, {b}ull, {p}ull) & ((1ull << 36) - 1), 0, &r)
                 && {int(rt <= 0xFFF and b <= 0xFFFF and p <= 0xFF)};
        printf("%d %x %x %x\\n", ok, r.ar_r, r.ar_b, r.ar_p); }}""" for rt, b, p in cases]
    driver.write_text('#include <stdio.h>\n#include "isolation/qos400_regs.h"\nint main(void) {\n'
                      + "\n".join(body) + "\nreturn 0; }\n")
    exe = tmp_path / "drv"
    subprocess.run([cc, "-std=c11", "-O1", f"-I{ROOT / 'hypervisor'}", str(driver),
                    str(ROOT / "hypervisor/isolation/qos400_regs.c"), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    for (rt, b, p), line in zip(cases, out, strict=True):
        ok, r, bb, pp = line.split()
        try:
            d = qos.resolve(QosDirectionSpec(rt, None, None, b, p, "p"), FPD_DMA)
        except qos.QosRangeError:
            assert ok == "0", (rt, b, p, line)
            continue
        assert ok == "1", (rt, b, p, line)
        regs = d.registers("ar")
        assert (int(r, 16), int(bb, 16), int(pp, 16)) == (regs["ar_r"], regs["ar_b"], regs["ar_p"])


def test_qemu_platform_variant_extends_zcu102(tmp_path: Path, write_config: WriteConfig) -> None:
    """platforms/zcu102-qemu-qos.yaml: the ZCU102 with its regulators on scratch
    RAM (access: mmio) for QEMU runs; everything else from zcu102.yaml."""
    zcu, var = load_platform("zcu102"), load_platform("zcu102-qemu-qos")
    assert (var.name, var.board, var.devices, var.gic, var.ram) == ("zcu102-qemu-qos", "zynqmp", zcu.devices,
                                                                  zcu.gic, zcu.ram)
    assert [(r.name, r.base, r.access, r.devices) for r in var.qos_regulators] == [
        ("fpd_dma", 0x7FE00100, "mmio", zcu.qos_regulators[0].devices),
        ("lpd_iou", 0x7FE00200, "mmio", zcu.qos_regulators[1].devices)]
    assert qos.ram_windows(var) == [Range(0x7FE00000, 0x1000)] and qos.ram_windows(zcu) == []
    d = tmp_path / "platforms"
    d.mkdir()
    (d / "a.yaml").write_text("extends: b\nname: a\n")
    (d / "b.yaml").write_text("extends: a\nname: b\n")
    (d / "c.yaml").write_text("extends: nope\nname: c\n")
    for name, message in (("a", "b.yaml:1:10: extends: platform 'a' extends itself"),
                          ("c", "c.yaml:1:10: extends: unknown platform 'nope'; available: a, b, c")):
        path = write_config(f"platform: {name}\nvms: []\n", f"{name}.yaml")
        assert error_of(path, d).endswith(message), error_of(path, d)


def test_vm_memory_stays_out_of_a_scratch_window(write_config: WriteConfig) -> None:
    path = write_config("""\
        platform: zcu102-qemu-qos
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 2M, pa: 0x7FD00000}], image: img.bin}
        """)
    assert error_of(path) == ("c.yaml:3:67: vms[0].memory[0].pa: PA range 0x7fd00000-0x7fefffff overlaps the "
                              "QoS regulator window 0x7fe00000-0x7fe00fff in RAM")
