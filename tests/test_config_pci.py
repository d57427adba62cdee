# SPDX-License-Identifier: Apache-2.0
"""The toolchain side of PCIe passthrough (docs/pci.md): VM ``pci:``
entries, the plan (slots chosen so no two VMs share an INTx SPI, BAR
windows), the errors with their positions, what ``check`` shows, the QEMU
devices, the generated device tree and config.c, and the DMA stream table
hook."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.config import dma, pci
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


def error_of(path: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None)
    return str(info.value)


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
    ('[{qemu: edu, addr: "01:00.0"}]', "[]", "7:29", "a QEMU device goes on the root bus 00"),
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
    assert "  a: BAR window 0x10000000-0x1fffffff\n    00:01.0  1234:11e8  edu             INTx SPI 36" in out
    assert "    00:02.0  1b36:0010  nvme            INTx SPI 37" in out
    assert cli.main(["check", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pci"]["b"] == {"window": {"base": 0x20000000, "size": 0x10000000},
                               "functions": [{"addr": "00:02.0", "vendor": "1b36", "device": "0010",
                                              "qemu": "nvme", "intx_spi": 37}]}


def test_linux_device_tree_has_the_ecam_host_bridge(write_config: WriteConfig) -> None:
    """A Linux VM's generated DT: a generic ECAM host bridge at the VM's
    ECAM with its bus range, its BAR window as the 32-bit memory range, an
    interrupt-map of its function's INTx only, and probe-only in /chosen."""
    from bulkhead.generate import gen_dts

    path = write_config("""\
        platform: qemu-virt
        vms:
          - name: lx
            type: linux
            cpus: [0]
            memory: [{ipa: 0x40000000, size: 64M}]
            kernel: Image
            pci: [{qemu: edu}, {qemu: nvme}]
        """)
    s = load_system(path, guest_sources=None)
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
