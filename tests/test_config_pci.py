# SPDX-License-Identifier: Apache-2.0
"""The toolchain side of PCIe passthrough (docs/pci.md): VM ``pci:``
entries, the plan (slots chosen so no two VMs share an INTx SPI, BAR
windows), the errors with their positions, what ``check`` shows, the QEMU
devices, the generated device tree and config.c, and the DMA stream table
hook."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.config import dma, pci
from bulkhead.generate import features
from bulkhead.layout.load import load_system

WriteConfig = Callable[..., str]

HEAD = """\
platform: qemu-virt
vms:
  - name: a
    cpus: [0]
    memory: [{ipa: 0x40000000, size: 2M}]
    guest: hello
    pci: PCI_A
  - name: b
    cpus: [1]
    memory: [{ipa: 0x40000000, size: 2M}]
    guest: hello
    pci: PCI_B
"""


def config(write_config: WriteConfig, a: str, b: str = "[]", extra: str = "") -> str:
    return write_config(extra + HEAD.replace("PCI_A", a).replace("PCI_B", b))


def error_of(path: str, platforms_dir: Path | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None, **({"platforms_dir": platforms_dir} if platforms_dir else {}))
    return str(info.value)


def without_its(tmp_path: Path) -> Path:
    """A platforms directory whose qemu-virt has no ITS (no ``gic.its``)."""
    out = tmp_path / "platforms-no-its"
    shutil.copytree(ROOT / "platforms", out)
    text = (out / "qemu-virt.yaml").read_text()
    assert ", its: 0x08080000}" in text
    (out / "qemu-virt.yaml").write_text(text.replace(", its: 0x08080000}", "}"))
    return out


def test_slots_avoid_shared_intx_and_windows_are_disjoint(write_config: WriteConfig) -> None:
    path = config(write_config, "[{qemu: edu}, {qemu: nvme}]", "[{qemu: edu}]")
    s = load_system(path, guest_sources=None)
    plan = pci.plan(s.spec)
    funcs = {(f.vm, f.addr): f for f in plan.functions}
    # a: slots 1 and 2 (SPIs 36, 37); b: the next slot whose SPI a does not use (3: SPI 38)
    assert [(k, f.spi, f.vendor, f.device) for k, f in funcs.items()] == [
        (("a", "00:01.0"), 36, 0x1234, 0x11E8), (("a", "00:02.0"), 37, 0x1B36, 0x0010),
        (("b", "00:03.0"), 38, 0x1234, 0x11E8)]
    assert plan.windows["a"].base == 0x10000000 and plan.windows["b"].base == 0x20000000
    assert plan.windows["a"].size == plan.windows["b"].size == 256 << 20
    vm_a = s.vm("a")
    assert vm_a is not None and set(vm_a.irqs) == {36, 37}
    # the SMMU hook: one stream per function, StreamID = requester ID
    assert [(st.vm, st.sid, st.device, st.on_fault) for st in dma.streams(s.spec) if st.device.startswith(("edu", "nvme"))] \
        == [("a", 0x08, "edu@00:01.0", "abort-device"), ("a", 0x10, "nvme@00:02.0", "abort-device"),
            ("b", 0x18, "edu@00:03.0", "abort-device")]


def test_qemu_devices_on_the_command_line(write_config: WriteConfig) -> None:
    path = config(write_config, '[{qemu: edu}, {qemu: virtio-net-pci, addr: "00:05.0"}]', "[{qemu: nvme}]")
    s = load_system(path, guest_sources=None)
    args = pci.qemu_args(s, "/out")
    assert args[:2] == ["-nic", "none"]
    assert "edu,bus=pcie.0,addr=0x1.0,dma_mask=0xffffffffffffffff" in args
    assert "virtio-net-pci,netdev=bhpci28,disable-legacy=on,iommu_platform=on,bus=pcie.0,addr=0x5.0" in args
    assert "file=/out/nvme-b-0010.img,if=none,format=raw,id=bhpci10" in args
    assert "nvme,drive=bhpci10,serial=bhpci10,bus=pcie.0,addr=0x2.0" in args


@pytest.mark.parametrize("a, b, where, message", [
    ('["00:07.0"]', "[]", "7:11", "unknown PCI function 00:07.0; the bus has: none"),
    ('["abcd:0001"]', "[]", "7:11", "no PCI function abcd:0001"),
    ('["00:00.0"]', "[]", "7:11", "PCI function 00:00.0 is the hypervisor's (platform function 'host-bridge')"),
    ("[{qemu: edu}]", '["1234:11e8"]', "12:11", "PCI function 00:01.0 is already given to VM 'a'"),
    ('[{qemu: edu, addr: "00:01.0"}]', '[{qemu: edu, addr: "00:05.0"}]', "12:11",
     "raises INTx SPI 36, as does 00:01.0 of VM 'a'"),
    ('[{qemu: edu, addr: "00:02.0"}]', '[{qemu: nvme, addr: "00:02.0"}]', "12:30",
     "00:02.0 is already taken by vms[0].pci[0] (edu)"),
    ('[{qemu: edu}, {qemu: edu}]', '["1234:11e8"]', "12:11", "2 functions are 1234:11e8 (00:01.0, 00:02.0)"),
    ('[{qemu: edu, addr: "01:00.0"}]', "[]", "7:29", "a QEMU device goes on the root bus or behind a bridge of "
                                                    "pci_bridges: no bridge leads to bus 01: the root bus is 00, "
                                                    "and no bridge of pci_bridges leads to another bus"),
])
def test_errors_are_located(write_config: WriteConfig, a: str, b: str, where: str, message: str) -> None:
    text = error_of(config(write_config, a, b))
    assert f"c.yaml:{where}:" in text and message in text, text


def test_syntax_errors(write_config: WriteConfig) -> None:
    assert "expected a PCI address \"BB:DD.F\", an ID \"VVVV:DDDD\" or {qemu: MODEL}, got 'edu'" in \
        error_of(config(write_config, "[edu]"))
    assert "expected one of edu, virtio-net-pci, nvme, got 'e1000'" in error_of(config(write_config, "[{qemu: e1000}]"))


def test_without_the_smmu_pci_needs_dma_isolation_none(write_config: WriteConfig) -> None:
    """`dma_isolation: none` leaves the SMMU off: the function is then
    unconfined (a warning, and the VM may not be recolored); the SMMU on,
    neither."""
    on = load_system(config(write_config, "[{qemu: edu}]"), guest_sources=None)
    assert not [w for w in on.warnings if "PCI" in str(w)] and dma.unconfined_vms(on.spec) == []
    off = load_system(config(write_config, "[{qemu: edu}]", extra="dma_isolation: none\n"), guest_sources=None)
    assert any("VM 'a' drives PCI function(s) '00:01.0 edu' without an SMMU" in str(w) for w in off.warnings)
    assert dma.unconfined_vms(off.spec) == ["a"]


def test_check_shows_functions(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = config(write_config, "[{qemu: edu}]", "[{qemu: nvme}]")
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert ("  a: BAR window 0x10000000-0x1fffffff\n    00:01.0  1234:11e8  edu             INTx SPI 36; "
            "MSI/MSI-X to 0x8090040") in out
    assert "    00:02.0  1b36:0010  nvme            INTx SPI 37; MSI/MSI-X to 0x8090040" in out
    assert cli.main(["check", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pci"]["b"] == {"window": {"base": 0x20000000, "size": 0x10000000},
                               "functions": [{"addr": "00:02.0", "vendor": "1b36", "device": "0010",
                                              "qemu": "nvme", "intx_spi": 37, "stream_id": 0x10,
                                              "msi_doorbell": 0x08090040}]}


def test_msi_where_the_platform_has_an_its(write_config: WriteConfig, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    """On a platform with an ITS (gic.its) a function's MSI and MSI-X go to
    its VM's GITS_TRANSLATER (the ITS IPA + 0x10040), unless ``msi: false``;
    on one without, they stay hidden and ``msi: true`` is an error at the
    key."""
    from bulkhead.generate import gen_c
    from bulkhead.layout import placement

    gicv4 = "[{qemu: edu}, {qemu: nvme, msi: false}]"
    path = write_config(HEAD.replace("qemu-virt", "qemu-virt-gicv4").replace("PCI_A", gicv4).replace("PCI_B", "[]"))
    s = load_system(path, guest_sources=None)
    assert [(f.addr, f.doorbell) for f in pci.plan(s.spec).functions] == [("00:01.0", 0x08090040), ("00:02.0", 0)]
    text = gen_c.generate(s, placement.stage(s, tmp_path / "out", ROOT / "tests" / "fixtures" / "guests"), "c.yaml")
    assert ".intx = 36, .msi_doorbell = 0x8090040, .devid = 0x8 }" in text, text
    assert ".intx = 37, .msi_doorbell = 0x0, .devid = 0x10 }" in text, text
    assert cli.main(["check", path]) == 0
    assert "    00:01.0  1234:11e8  edu             INTx SPI 36; MSI/MSI-X to 0x8090040" in capsys.readouterr().out
    # no ITS: hidden by default, refused when asked for
    plain = load_system(config(write_config, "[{qemu: edu}]"), guest_sources=None,
                        platforms_dir=without_its(tmp_path))
    assert [f.doorbell for f in pci.plan(plain.spec).functions] == [0]
    text = error_of(config(write_config, "[{qemu: edu, msi: true}]"), tmp_path / "platforms-no-its")
    assert "c.yaml:7:28: vms[0].pci[0].msi: " in text and ("MSI needs an ITS and platform 'qemu-virt' has none (gic.its): drop "
                                                        "'msi: true' to use INTx") in text, text


LINUX = """\
platform: qemu-virt
vms:
  - name: lx
    type: linux
    cpus: [0]
    memory: [{ipa: 0x40000000, size: 64M}]
    kernel: Image
    pci: PCI
"""


def test_linux_device_tree_has_the_ecam_host_bridge(write_config: WriteConfig) -> None:
    """A Linux VM's generated DT: a generic ECAM host bridge at the VM's
    ECAM with its bus range, its BAR window as the 32-bit memory range, an
    interrupt-map of its function's INTx only, and probe-only in /chosen."""
    from bulkhead.generate import gen_dts

    s = load_system(write_config(LINUX.replace("PCI", "[{qemu: edu}, {qemu: nvme}]")), guest_sources=None)
    vm = s.vm("lx")
    assert vm is not None
    dts = gen_dts.generate(s, vm)
    assert "linux,pci-probe-only = <1>;" in dts
    assert "pcie@3f000000 {" in dts and 'compatible = "pci-host-ecam-generic";' in dts
    assert "reg = <0x0 0x3f000000 0x0 0x1000000>;" in dts
    assert "bus-range = <0x0 0xf>;" in dts
    assert "ranges = <0x2000000 0x0 0x10000000 0x0 0x10000000 0x0 0x10000000>;" in dts
    assert "interrupt-map-mask = <0xffff00 0x0 0x0 0x7>;" in dts
    assert ("interrupt-map = <0x800 0x0 0x0 0x1 &gic 0x0 0x0 0x0 4 4>, "
            "<0x1000 0x0 0x0 0x1 &gic 0x0 0x0 0x0 5 4>;") in dts


def test_linux_device_tree_has_the_its_and_msi_map(write_config: WriteConfig, tmp_path: Path) -> None:
    """On a platform with an ITS a Linux VM with MSI gets its virtual ITS
    under its GIC and an msi-map over its bus range (DeviceID = requester
    ID); the DT compiles with dtc. Its redistributors are two frames each
    (the GICv4's physical ones are four). Without an ITS or MSI: neither."""
    from bulkhead.generate import gen_dts
    from bulkhead.generate.build import DTC_FLAGS

    cfg = LINUX.replace("qemu-virt", "qemu-virt-gicv4").replace("cpus: [0]", "cpus: [0, 1]")
    s = load_system(write_config(cfg.replace("PCI", "[{qemu: nvme}, {qemu: edu, msi: false}]")), guest_sources=None)
    vm = s.vm("lx")
    assert vm is not None
    dts = gen_dts.generate(s, vm)
    assert "reg = <0x0 0x8000000 0x0 0x10000>, <0x0 0x80a0000 0x0 0x40000>;" in dts, dts
    its = dts[dts.index("its: its@8080000 {"):]
    its = its[:its.index("};")]
    assert 'compatible = "arm,gic-v3-its";' in its and "msi-controller;" in its and "#msi-cells = <1>;" in its
    assert "reg = <0x0 0x8080000 0x0 0x20000>;" in its
    assert dts.index("its: its@8080000") < dts.index("pcie@3f000000")
    assert "msi-map = <0x0 &its 0x0 0x1000>;" in dts
    dtc = shutil.which("dtc")
    if dtc is not None:
        (tmp_path / "vm.dts").write_text(dts)
        built = subprocess.run([dtc, *DTC_FLAGS, "-I", "dts", "-O", "dtb", "-o", str(tmp_path / "vm.dtb"),
                                str(tmp_path / "vm.dts")], capture_output=True, text=True)
        assert built.returncode == 0 and built.stderr == "", built.stderr
    # every function msi: false, or no ITS: no ITS node, no msi-map
    for text, platforms in ((cfg.replace("PCI", "[{qemu: nvme, msi: false}]"), ROOT / "platforms"),
                            (LINUX.replace("PCI", "[{qemu: nvme}]"), without_its(tmp_path))):
        s = load_system(write_config(text), guest_sources=None, platforms_dir=platforms)
        vm = s.vm("lx")
        assert vm is not None
        dts = gen_dts.generate(s, vm)
        assert "its@" not in dts and "msi-map" not in dts and "pcie@3f000000" in dts


ROOT = Path(__file__).resolve().parent.parent
SWIZZLE_CASES = ROOT / "tests" / "host" / "pci_swizzle.txt"
BRIDGES = """\
pci_bridges:
  - {qemu: pci-bridge, addr: "00:03.0"}
  - {qemu: pcie-pci-bridge, addr: "00:05.0"}
"""


def _swizzle_cases() -> list[tuple[tuple[int, ...], int, int | None]]:
    cases = []
    for line in SWIZZLE_CASES.read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if fields:
            slots, pin, want = fields
            cases.append((tuple(int(x) for x in slots.split("/")), int(pin), None if want == "-" else int(want)))
    return cases


def _py_root_pin(slots: tuple[int, ...], pin: int) -> int | None:
    """The toolchain's swizzle for a function behind bridges at these slots
    (bridge k on bus k leads to bus k + 1)."""
    by_sec = {k + 1: pci.Bridge(k << 8 | slot << 3, "pci-bridge", k + 1, "") for k, slot in enumerate(slots[:-1])}
    return pci.Topology(0, by_sec).root_pin((len(slots) - 1) << 8 | slots[-1] << 3, pin)


def _c_root_pins(tmp_path: Path, queries: list[tuple[tuple[int, ...], int]]) -> list[int | None]:
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc, "a native C compiler is required"
    exe = tmp_path / "swizzle_xcheck"
    hyp = ROOT / "hypervisor"
    build = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{hyp}",
                            str(ROOT / "tests" / "host" / "swizzle_xcheck.c"), str(hyp / "lib" / "pcienum.c"),
                            "-o", str(exe)], capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    text = "".join(f"{len(slots)} {' '.join(map(str, slots))} {pin}\n" for slots, pin in queries)
    run = subprocess.run([str(exe)], input=text, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    return [None if v == "-1" else int(v) for v in run.stdout.split()]


def test_swizzle_c_and_python_agree(tmp_path: Path) -> None:
    """Issue #36 item 7: one swizzle. The hypervisor (lib/pcienum.c) and the
    toolchain give the INTx line of a function behind bridges as the shared
    table of hand-worked cases says, and agree on random chains."""
    cases = _swizzle_cases()
    assert len(cases) >= 10
    rng = random.Random(36)
    extra = [(tuple(rng.randrange(32) for _ in range(rng.randint(1, 6))), rng.randint(0, 4)) for _ in range(500)]
    c = _c_root_pins(tmp_path, [(slots, pin) for slots, pin, _ in cases] + extra)
    assert len(c) == len(cases) + len(extra), c
    for (slots, pin, want), got in zip(cases, c[:len(cases)], strict=True):
        assert got == want, f"C: slots {slots} pin {pin}: {got}, the table says {want}"
        assert _py_root_pin(slots, pin) == want, f"Python: slots {slots} pin {pin}, the table says {want}"
    for (slots, pin), got in zip(extra, c[len(cases):], strict=True):
        assert _py_root_pin(slots, pin) == got, (slots, pin)
        assert got == (None if not pin else (pin - 1 + sum(slots)) % 4), (slots, pin)


def test_functions_behind_bridges(write_config: WriteConfig, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A function behind a bridge: its bus is the one the hypervisor gives
    the bridge (depth first, in scan order), its INTx SPI the swizzle
    through the bridge, its stream the bridge's alias (pci-bridge: its own
    requester ID; pcie-pci-bridge: secondary bus, devfn 0), which is its
    ITS DeviceID too (config.c's devid; `check` says so); two functions
    of one VM behind one bridge are one stream, named after the bridge; the
    bridges go on QEMU's command line before the functions on them."""
    from bulkhead.generate import gen_c
    from bulkhead.layout import placement

    path = config(write_config, '[{qemu: edu, addr: "01:01.0"}, {qemu: edu, addr: "01:02.0"}, '
                                '{qemu: edu, addr: "02:02.0"}]', "[{qemu: nvme}]", extra=BRIDGES)
    s = load_system(path, guest_sources=None)
    plan = pci.plan(s.spec)
    assert [(b.addr, b.qemu, b.sec) for b in plan.bridges] == [("00:03.0", "pci-bridge", 1),
                                                               ("00:05.0", "pcie-pci-bridge", 2)]
    assert [(f.vm, f.addr, f.spi, f.stream_id) for f in plan.functions] == [
        ("a", "01:01.0", 35, 0x18),  # (0 + 1) = 1, (1 + 3) mod 4 = 0
        ("a", "01:02.0", 36, 0x18),
        ("a", "02:02.0", 38, 0x200),  # (0 + 2) = 2, (2 + 5) mod 4 = 3
        ("b", "00:02.0", 37, 0x10)]  # slot 1's SPI 36 is a's; slots 3 and 5 are the bridges'
    assert [(st.vm, st.sid, st.device) for st in dma.streams(s.spec) if st.device[:3] in ("edu", "nvm", "pci")] == [
        ("a", 0x18, "pci-bridge@00:03.0"), ("a", 0x200, "edu@02:02.0"), ("b", 0x10, "nvme@00:02.0")]
    args = pci.qemu_args(s, "/out")
    devices = [args[i + 1] for i, a in enumerate(args) if a == "-device"]
    assert devices[:2] == ["pci-bridge,id=bhbr18,chassis_nr=1,shpc=off,bus=pcie.0,addr=0x3.0",
                           "pcie-pci-bridge,id=bhbr28,bus=pcie.0,addr=0x5.0"]
    assert "edu,bus=bhbr18,addr=0x1.0,dma_mask=0xffffffffffffffff" in devices
    assert "edu,bus=bhbr28,addr=0x2.0,dma_mask=0xffffffffffffffff" in devices
    text = gen_c.generate(s, placement.stage(s, tmp_path / "out", ROOT / "tests" / "fixtures" / "guests"), "c.yaml")
    assert [ln.split(".devid = ")[1] for ln in text.splitlines() if ".devid = " in ln] == [
        "0x18 },", "0x18 },", "0x200 },", "0x10 },"], text
    assert cli.main(["check", path]) == 0
    assert "    01:02.0  1234:11e8  edu             INTx SPI 36; MSI/MSI-X to 0x8090040; DMA and MSI as 0x0018 " \
           "(alias of pci-bridge 00:03.0)" in capsys.readouterr().out


@pytest.mark.parametrize("bridge, addr_a, addr_b, sid", [
    ("pci-bridge", "01:01.0", "01:02.0", 0x18), ("pcie-pci-bridge", "02:01.0", "02:03.0", 0x200)])
def test_two_vms_behind_one_conventional_bridge_are_refused(write_config: WriteConfig, bridge: str, addr_a: str,
                                                            addr_b: str, sid: int) -> None:
    """Issue #36 item 7: behind a conventional bridge every function's DMA
    carries one requester ID, so the SMMU would translate another VM's
    function through the first VM's stage 2: refused, naming both VMs and
    the bridge."""
    at = "00:03.0" if bridge == "pci-bridge" else "00:05.0"
    path = config(write_config, f'[{{qemu: edu, addr: "{addr_a}"}}]', f'[{{qemu: edu, addr: "{addr_b}"}}]',
                  extra=BRIDGES)
    text = error_of(path)
    assert f"c.yaml:15:11: vms[1].pci[0]: PCI function {addr_b} of VM 'b' and {addr_a} of VM 'a' (vms[0].pci[0]) " \
           f"are behind the conventional bridge {bridge} {at} " in text, text
    assert f"one requester ID ({sid:#06x}), so one VM's stage 2 would translate both" in text, text


@pytest.mark.parametrize("a, where, message", [
    ('[{qemu: edu, addr: "03:01.0"}]', "10:29", "no bridge leads to bus 03: the root bus is 00, bridges lead to "
                                                "01 (behind pci-bridge 00:03.0), 02 (behind pcie-pci-bridge 00:05.0)"),
    ('[{qemu: edu, addr: "02:00.0"}]', "10:29", "slot 0 behind the pcie-pci-bridge at 00:05.0 is not usable"),
    ('[{qemu: edu, addr: "00:03.0"}]', "10:29", "00:03.0 is already taken by pci_bridges[0] (pci-bridge)"),
    ('["00:05.0"]', "10:11", "PCI function 00:05.0 is the hypervisor's (pci_bridges[1] (pcie-pci-bridge))"),
])
def test_bridge_errors_are_located(write_config: WriteConfig, a: str, where: str, message: str) -> None:
    text = error_of(config(write_config, a, extra=BRIDGES))
    assert f"c.yaml:{where}:" in text and message in text, text


def test_a_bridge_must_be_reachable(write_config: WriteConfig) -> None:
    text = error_of(config(write_config, "[]", extra='pci_bridges:\n  - {qemu: pci-bridge, addr: "04:00.0"}\n'))
    assert "c.yaml:2:30: pci_bridges[0].addr: no bridge leads to bus 04: the root bus is 00, and no bridge of " \
           "pci_bridges leads to another bus" in text, text


def test_a_linux_vm_cannot_take_a_function_behind_a_bridge(write_config: WriteConfig) -> None:
    """Its ECAM shows its own functions, not the bridge: Linux would never
    scan the bus behind it."""
    path = write_config('pci_bridges: [{qemu: pci-bridge, addr: "00:03.0"}]\n'
                        + LINUX.replace("PCI", '[{qemu: edu, addr: "01:00.0"}]'))
    text = error_of(path)
    assert "c.yaml:9:11: vms[0].pci[0]: PCI function 01:00.0 is behind a bridge, which the ECAM of VM 'lx' " \
           "does not show: Linux would not find it; give a Linux VM functions on the root bus" in text, text


def test_a_pci_vm_on_a_platform_with_an_its_needs_the_its(write_config: WriteConfig, tmp_path: Path) -> None:
    """gic.its (GicSpec.its, emitted into cfg_platform.gic) builds the ITS
    feature exactly where a VM owns a PCI function (docs/interrupts.md)."""
    path = config(write_config, "[{qemu: edu}]")
    s = load_system(path, guest_sources=None)
    assert s.spec.platform.gic.its == 0x08080000
    assert features.features(s)["ITS"] and features.features(s)["PCI"]
    plain = load_system(config(write_config, "[]"), guest_sources=None)
    assert not features.features(plain)["ITS"]
    # the same PCI VM on the platform without its ITS: no ITS built
    platforms = tmp_path / "platforms"
    platforms.mkdir()
    text = (Path(__file__).resolve().parents[1] / "platforms" / "qemu-virt.yaml").read_text()
    assert ", its: 0x08080000}" in text
    (platforms / "qemu-virt.yaml").write_text(text.replace(", its: 0x08080000}", "}"))
    bare = load_system(path, guest_sources=None, platforms_dir=platforms)
    assert bare.spec.platform.gic.its == 0 and not features.features(bare)["ITS"]
