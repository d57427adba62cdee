# SPDX-License-Identifier: Apache-2.0
"""DMA isolation in the toolchain (issue #25, docs/dma.md): the platform's
``smmus:`` and devices' ``stream_ids``, the checks, the DMA stream table
(platform devices plus registered stream sources: the PCI hook), ``check``'s
report, and the generated tables in config.c."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.config import dma
from bulkhead.config.model import Range, SystemSpec
from bulkhead.drivers.iommu.smmuv3 import V3Table, v3_table
from bulkhead.generate import gen_c
from bulkhead.layout import placement
from bulkhead.layout.load import PLATFORMS_DIR, load_platform, load_system

WriteConfig = Callable[..., str]

ZCU = """\
platform: zcu102
vms:
  - name: io
    cpus: [0]
    memory: [{ipa: 0x40000000, size: 16M}]
    image: img.bin
    devices: [gem0, {name: zdma0, on_dma_fault: stop-vm}]
  - name: other
    cpus: [1]
    memory: [{ipa: 0x40000000, size: 16M}]
    image: img.bin
    devices: [sd1]
"""

VIRT = """\
platform: qemu-virt
vms:
  - name: a
    cpus: [0]
    memory: [{ipa: 0x40000000, size: 16M}]
    image: img.bin
  - name: b
    cpus: [1]
    memory: [{ipa: 0x40000000, size: 16M}]
    image: img.bin
"""


def error_of(path: str, platforms: Path | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None, **({"platforms_dir": platforms} if platforms else {}))
    return str(info.value)


def platform_copy(tmp_path: Path, name: str, old: str, new: str) -> Path:
    d = tmp_path / "platforms"
    if not d.exists():
        shutil.copytree(PLATFORMS_DIR, d)
    text = (d / f"{name}.yaml").read_text()
    assert old in text
    (d / f"{name}.yaml").write_text(text.replace(old, new, 1))
    return d


@pytest.fixture
def source() -> Iterator[list[dma.DmaStream]]:
    """A registered stream source (the PCI hook) returning what the test puts in."""
    out: list[dma.DmaStream] = []

    def pci(spec: SystemSpec) -> list[dma.DmaStream]:
        return list(out)

    dma.register_stream_source(pci)
    dma.register_stream_source(pci)  # twice: a no-op
    yield out
    dma._SOURCES.remove(pci)


def test_platform_files_name_their_smmus() -> None:
    zcu = load_platform("zcu102")
    (u,) = zcu.smmus
    assert (u.name, u.type, u.base, u.size, u.event_irq, u.gerror_irq, u.enable) == (
        "smmu", "smmu-500", 0xFD800000, 0x20000, 187, 187, "with-streams")
    sids = {d.name: d.stream_ids for d in zcu.devices if d.stream_ids}
    # Debian linux-image-6.1 xilinx/zynqmp-zcu102-rev1.0.dtb, `iommus` cells
    assert sids == {"gem0": (0x874,), "gem1": (0x875,), "gem2": (0x876,), "gem3": (0x877,),
                    "sd0": (0x870,), "sd1": (0x871,), **{f"zdma{i}": (0x14E8 + i,) for i in range(8)}}
    assert [(u.base, u.type) for u in load_platform("zcu104").smmus] == [(0xFD800000, "smmu-500")]
    virt = load_platform("qemu-virt")
    (v,) = virt.smmus
    assert (v.type, v.base, v.event_irq, v.gerror_irq, v.pcie, v.enable) == (
        "smmuv3", 0x09050000, 106, 109, True, "always")
    assert "iommu=smmuv3" in virt.qemu.machine
    assert dma.pcie_smmu(virt) == v and dma.pcie_smmu(zcu) is None
    assert not any(d.stream_ids for d in virt.devices)  # virtio-mmio is not behind it


def test_behind_an_smmu_needs_no_dma_isolation(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(ZCU)
    s = load_system(path, guest_sources=None)
    assert s.warnings == []
    assert [(st.smmu, st.sid, st.vm, st.device, st.on_fault, st.path) for st in dma.streams(s.spec)] == [
        ("smmu", 0x874, "io", "gem0", "abort-device", "vms[0].devices[0]"),
        ("smmu", 0x14E8, "io", "zdma0", "stop-vm", "vms[0].devices[1]"),
        ("smmu", 0x871, "other", "sd1", "abort-device", "vms[1].devices[0]"),
    ]
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert "DMA isolation (smmu: smmu-500 @0xfd800000; unknown streams abort):" in out
    rows = [line.split() for line in out.splitlines()]
    assert ["io", "gem0", "smmu", "0x874", "abort-device"] in rows
    assert ["io", "zdma0", "smmu", "0x14e8", "stop-vm"] in rows
    assert ["other", "sd1", "smmu", "0x871", "abort-device"] in rows
    assert cli.main(["check", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)["dma"]
    assert doc["enabled"] is True
    assert doc["smmus"] == [{"name": "smmu", "type": "smmu-500", "base": 0xFD800000, "size": 0x20000,
                             "event_irq": 187, "gerror_irq": 187, "pcie": False}]
    assert doc["streams"][1] == {"smmu": "smmu", "sid": 0x14E8, "vm": "io", "device": "zdma0",
                                 "on_dma_fault": "stop-vm"}


def test_dma_isolation_none_leaves_the_smmu_off(write_config: WriteConfig,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config("dma_isolation: none\n" + ZCU.replace(", {name: zdma0, on_dma_fault: stop-vm}", ""))
    s = load_system(path, guest_sources=None)
    assert [str(w) for w in s.warnings] == [
        "c.yaml:1:16: dma_isolation: 'dma_isolation: none': the SMMU(s) of platform 'zcu102' (smmu) are left off",
        "c.yaml:1:16: dma_isolation: VM 'io' drives DMA-capable device(s) 'gem0' without an SMMU: it can read "
        "and write all physical memory",
        "c.yaml:1:16: dma_isolation: VM 'other' drives DMA-capable device(s) 'sd1' without an SMMU: it can read "
        "and write all physical memory",
    ]
    assert dma.streams(s.spec) == [] and dma.driven(s.spec) == []
    assert dma.unconfined_vms(s.spec) == ["io", "other"]
    assert cli.main(["check", path]) == 0
    assert "DMA isolation: off ('dma_isolation: none'): SMMU(s) smmu (smmu-500 @0xfd800000) left off" in \
        capsys.readouterr().out


def test_config_errors(write_config: WriteConfig) -> None:
    # on_dma_fault of a device no SMMU is in front of
    virt = write_config(VIRT.replace("image: img.bin\n  - name: b",
                                     "image: img.bin\n    devices: [{name: rtc, on_dma_fault: stop-vm}]\n  - name: b"),
                        "v.yaml")
    assert error_of(virt) == (
        "v.yaml:7:41: vms[0].devices[0].on_dma_fault: device 'rtc': 'on_dma_fault' applies to DMA through an SMMU, "
        "and it is not behind an SMMU of platform 'qemu-virt'")
    # on_dma_fault with the SMMUs off
    off = write_config("dma_isolation: none\n" + ZCU, "o.yaml")
    assert "o.yaml:8:49: vms[0].devices[1].on_dma_fault: device 'zdma0': 'on_dma_fault' applies to DMA through an " \
           "SMMU, and the SMMUs are off ('dma_isolation: none')" in error_of(off)
    # an unknown policy
    bad = write_config(ZCU.replace("on_dma_fault: stop-vm", "on_dma_fault: ignore"), "b.yaml")
    assert error_of(bad) == ("b.yaml:7:49: vms[0].devices[1].on_dma_fault: expected one of abort-device, stop-vm, "
                             "got 'ignore'")


def test_recolor_pool_warns_about_unconfined_dma(write_config: WriteConfig) -> None:
    path = write_config("""\
        platform: qemu-virt
        dma_isolation: none
        recolor_pool: {size: 4M, colors: {llc: "8-15"}}
        vms:
          - name: io
            cpus: [0]
            memory: [{ipa: 0x40000000, size: 16M, colors: {llc: "0-7"}}]
            image: img.bin
            devices: [virtio0]
        """)
    warnings = [str(w) for w in load_system(path, guest_sources=None).warnings]
    assert ("c.yaml:3:15: recolor_pool: VM(s) 'io' drive DMA-capable devices without an SMMU: recoloring them "
            "is refused at run time (the device would keep writing to the old frames)") in warnings


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("name: smmu0, type: smmuv3, base: 0x09050000", "name: smmu0, type: smmuv3, base: 0x09050800",
     "smmus[0].base: base 0x9050800 is not 4 KiB aligned"),
    ("name: smmu0, type: smmuv3, base: 0x09050000", "name: smmu0, type: smmuv3, base: 0x49050000",
     "smmus[0]: SMMU 'smmu0' (0x49050000-0x4906ffff) is not inside the MMIO window (0x0-0x3fffffff)"),
    ("size: 0x20000, irqs: {event: 106", "size: 0x10000, irqs: {event: 106",
     "smmus[0].size: an smmuv3 has at least 0x20000 bytes of registers, got 0x10000"),
    ("base: 0x09050000", "base: 0x09000000", "smmus[0]: SMMU 'smmu0' (0x9000000-0x901ffff) overlaps the UART"),
    ("irqs: {event: 106", "irqs: {event: 1006", "smmus[0].irqs.event: IRQ 1006 is outside the SPI range 32-287"),
    ("irqs: {event: 106", "irqs: {event: 48", "smmus[0].irqs.event: IRQ 48 is also device 'virtio0''s"),
    ("name: smmu0, type: smmuv3", "name: smmu0, type: smmu-500",
     "smmus[0].pcie: type smmu-500 is not modelled with the PCIe root complex behind it (smmuv3 is)"),
    ("name: smmu0, type: smmuv3", "name: smmu0, type: smmu-400",
     "smmus[0].type: expected one of smmu-500, smmuv3, got 'smmu-400'"),
    ('sources: ["QEMU hw/arm/virt.c base_memmap[VIRT_SMMU], a15irqmap[VIRT_SMMU], create_smmu()",\n'
     '               "QEMU hw/arm/smmuv3.c (stage property, GBPA, STE decoding)"]', "sources: []",
     "smmus[0].sources: cite at least one source of these values"),
    ('compatible: ["virtio,mmio"], dma: true}', 'compatible: ["virtio,mmio"], dma: true, stream_ids: [0x8]}',
     "devices[2].stream_ids: device 'virtio0' has stream IDs but the platform has several SMMUs"),
])
def test_platform_errors(tmp_path: Path, write_config: WriteConfig, old: str, new: str, expected: str) -> None:
    d = platform_copy(tmp_path, "qemu-virt", old, new)
    if "several SMMUs" in expected:  # a second SMMU, and a device naming none
        text = (d / "qemu-virt.yaml").read_text()
        (d / "qemu-virt.yaml").write_text(text.replace(
            "smmus:\n", "smmus:\n  - {name: smmu1, type: smmuv3, base: 0x09100000, size: 0x20000, "
                        "irqs: {event: 110}, sources: [test]}\n"))
    err = error_of(write_config(VIRT), d)
    assert expected in err, err


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("dma: true, stream_ids: [0x874]}", "dma: true, stream_ids: [0x874], smmu: smmu7}",
     "devices[5].smmu: unknown SMMU 'smmu7'; the platform has: smmu"),
    ("dma: true, stream_ids: [0x874]}", "dma: true, smmu: smmu}",
     "devices[5].smmu: device 'gem0' names an SMMU but no stream_ids"),
    ('compatible: ["xlnx,zynqmp-uart", "cdns,uart-r1p12"]}', 'compatible: ["xlnx,zynqmp-uart", "cdns,uart-r1p12"], '
     'stream_ids: [0x5]}', "devices[0].stream_ids: device 'uart1' has stream IDs but is not marked 'dma: true'"),
    ("stream_ids: [0x874]}", "stream_ids: [0x8874]}",
     "devices[5].stream_ids[0]: stream ID 0x8874 does not fit the 15-bit stream IDs of smmu-500 'smmu'"),
    ("stream_ids: [0x875]}", "stream_ids: [0x874]}",
     "devices[6].stream_ids[0]: stream ID 0x874 of SMMU 'smmu' is also device 'gem0''s"),
    ("stream_ids: [0x874]}", "stream_ids: [-1]}",
     "devices[5].stream_ids[0]: expected a stream ID (integer 0-0xffffffff), got -1"),
])
def test_platform_stream_id_errors(tmp_path: Path, write_config: WriteConfig, old: str, new: str,
                                   expected: str) -> None:
    d = platform_copy(tmp_path, "zcu102", old, new)
    err = error_of(write_config(ZCU.replace("devices: [gem0, ", "devices: [gem1, ")), d)
    assert expected in err, err


def test_no_smmus_keeps_the_old_rule(tmp_path: Path, write_config: WriteConfig) -> None:
    text = (PLATFORMS_DIR / "zcu102.yaml").read_text()
    start = text.index("smmus:\n")
    end = text.index("\n", text.index("enable: with-streams"))
    end = text.index("\n", text.index("sources:", end)) + 1
    end = text.index("\n", end) + 1
    d = platform_copy(tmp_path, "zcu102", text[start:end], "")
    text2 = (d / "zcu102.yaml").read_text()
    (d / "zcu102.yaml").write_text(re.sub(r", stream_ids: \[0x[0-9a-f]+\]", "", text2))
    err = error_of(write_config(ZCU), d)
    assert ("vms[0].devices[0]: device 'gem0' is DMA-capable and platform 'zcu102' has no SMMU support: VM 'io' "
            "could read and write all physical memory through it; state 'dma_isolation: none' in the config to "
            "accept this") in err, err


def test_stream_source_hook(write_config: WriteConfig, source: list[dma.DmaStream]) -> None:
    path = write_config(VIRT)
    # PCI functions as the PCI code would add them: StreamID = bus << 8 | devfn
    source += [dma.DmaStream("smmu0", 0 << 8 | 2 << 3, "a", "edu@00:02.0", "abort-device", "vms[0]"),
               dma.DmaStream("smmu0", 0 << 8 | 3 << 3, "b", "nvme@00:03.0", "stop-vm", "vms[1]")]
    s = load_system(path, guest_sources=None)
    assert [(st.sid, st.vm) for st in dma.streams(s.spec)] == [(0x10, "a"), (0x18, "b")]
    c = gen_c.generate(s, [], "c.yaml")
    assert "static u64 iommu0_strtab[256] __attribute__((aligned(2048))) IOMMU_DMA_MEM;" in c
    assert ('{ .unit = 0, .sid = 0x10, .vm = 0, .device = "edu@00:02.0", .flags = IOMMU_STREAM_CTX_FIRST }') in c
    assert ('{ .unit = 0, .sid = 0x18, .vm = 1, .device = "nvme@00:03.0", '
            '.flags = IOMMU_STREAM_STOP_VM | IOMMU_STREAM_CTX_FIRST }') in c
    assert "extern const struct iommu_ops smmuv3_ops;" in c and ".ops = &smmuv3_ops" in c
    assert ".iommu = { .nunits = 1, .units = iommu_units, .nstreams = 2, .streams = iommu_streams }," in c
    assert (".irq_mpidr = 0x0, .cmdq = iommu0_cmdq, .evtq = iommu0_evtq, .evtq_log2 = 8, .log2size = 5, "
            ".strtab = iommu0_strtab") in c
    assert "static u64 iommu0_evtq[1024] __attribute__((aligned(8192))) IOMMU_DMA_MEM;" in c
    # errors in what a source gives are located at its path
    source.append(dma.DmaStream("smmu0", 0x10, "b", "e1000e@00:02.0", "abort-device", "vms[1]"))
    source.append(dma.DmaStream("smmu9", 0x20, "b", "x", "abort-device", "vms[1]"))
    source.append(dma.DmaStream("smmu0", 0x28, "zz", "y", "abort-device", "vms[1]"))
    err = error_of(path)
    assert ("c.yaml:7:5: vms[1]: stream ID 0x10 of SMMU 'smmu0' is given to 'e1000e@00:02.0' of VM 'b' and to "
            "'edu@00:02.0' of VM 'a' (vms[0])") in err, err
    assert "vms[1]: stream 0x20 of 'x': unknown SMMU 'smmu9'" in err
    assert "vms[1]: stream 0x28 of 'y': unknown VM 'zz'" in err
    del source[2:]
    source += [dma.DmaStream("smmu0", 0x100 + i, "a", f"f{i}", "abort-device", "vms[0]") for i in range(63)]
    assert "vms: 65 DMA streams: the hypervisor takes at most 64" in error_of(path)


def test_two_level_stream_table(write_config: WriteConfig, source: list[dma.DmaStream]) -> None:
    assert v3_table([]) == V3Table(1, 0, ())
    assert v3_table([0xFF]) == V3Table(8, 0, ())
    assert v3_table([0x100, 0x874, 0x875]) == V3Table(12, 6, (4, 33))
    source.append(dma.DmaStream("smmu0", 0x874, "a", "f", "abort-device", "vms[0]"))
    c = gen_c.generate(load_system(write_config(VIRT), guest_sources=None), [], "c.yaml")
    assert "static u64 iommu0_strtab[64] __attribute__((aligned(512))) IOMMU_DMA_MEM;" in c
    assert "static u64 iommu0_l2_33[512] __attribute__((aligned(4096))) IOMMU_DMA_MEM;" in c
    assert "static u64 *const iommu0_l2[64] = { [33] = iommu0_l2_33 };" in c
    assert ".log2size = 12, .split = 6, .strtab = iommu0_strtab, .l2 = iommu0_l2" in c


def test_generated_tables(write_config: WriteConfig) -> None:
    c = gen_c.generate(load_system(write_config(ZCU), guest_sources=None), [], "c.yaml")
    assert ('{ .name = "smmu", .ops = &smmu500_ops, .base = 0xfd800000, .size = 0x20000, .event_irq = 187, '
            '.gerror_irq = 187, .irq_mpidr = 0x0, .nslots = 3, .nctx = 2 }') in c
    # the SMMU-500's slots are the toolchain's: SMRs in stream order, a
    # context bank per VM (its rank), programmed through its first stream
    assert ('{ .unit = 0, .sid = 0x874, .vm = 0, .device = "gem0", .flags = IOMMU_STREAM_CTX_FIRST, '
            '.slot = 0, .ctx = 0 }') in c
    assert ('{ .unit = 0, .sid = 0x14e8, .vm = 0, .device = "zdma0", .flags = IOMMU_STREAM_STOP_VM, '
            '.slot = 1, .ctx = 0 }') in c
    assert ('{ .unit = 0, .sid = 0x871, .vm = 1, .device = "sd1", .flags = IOMMU_STREAM_CTX_FIRST, '
            '.slot = 2, .ctx = 1 }') in c
    # without streams the ZynqMP's SMMU is not driven (enable: with-streams); QEMU virt's is
    hello = write_config(ZCU.replace("devices: [gem0, {name: zdma0, on_dma_fault: stop-vm}]", "devices: [uart1]")
                         .replace("devices: [sd1]", "devices: []"), "h.yaml")
    assert ".iommu" not in gen_c.generate(load_system(hello, guest_sources=None), [], "h.yaml")
    virt = gen_c.generate(load_system(write_config(VIRT, "v.yaml"), guest_sources=None), [], "v.yaml")
    assert ".iommu = { .nunits = 1, .units = iommu_units, .nstreams = 0, .streams = NULL }," in virt
    # a VM with a DMA device no SMMU confines is marked (recoloring refused)
    off = write_config("dma_isolation: none\n" + ZCU.replace(", {name: zdma0, on_dma_fault: stop-vm}", ""), "o.yaml")
    assert c.count("CFG_VM_DMA_UNCONFINED") == 0
    assert gen_c.generate(load_system(off, guest_sources=None), [], "o.yaml").count(
        "CFG_VM_DMA_UNCONFINED") == 2


def test_pci_on_dma_fault(write_config: WriteConfig) -> None:
    """A PCI function's `on_dma_fault` reaches its stream; with the SMMU off it is an error."""
    pci_vm = VIRT.replace("image: img.bin\n  - name: b",
                          "image: img.bin\n    pci: [{qemu: edu, on_dma_fault: stop-vm}, {qemu: edu}]\n  - name: b")
    s = load_system(write_config(pci_vm), guest_sources=None)
    assert [(st.device.split("@")[0], st.on_fault, st.path) for st in dma.streams(s.spec)] == [
        ("edu", "stop-vm", "vms[0].pci[0]"), ("edu", "abort-device", "vms[0].pci[1]")]
    off = write_config("dma_isolation: none\n" + pci_vm, "o.yaml")
    assert ("o.yaml:8:37: vms[0].pci[0].on_dma_fault: 'on_dma_fault' applies to DMA through an SMMU, and the SMMUs are "
            "off ('dma_isolation: none')") in error_of(off)


def test_on_fault_means_only_the_vms_stage2_policy(write_config: WriteConfig) -> None:
    """`on_fault` is a VM's stage-2 fault policy (inject | stop); a device's or
    a PCI function's DMA fault policy is `on_dma_fault`, and the old spelling
    there is refused with an error naming the new key (#38 item 5)."""
    hint = ("'on_fault' is a VM's stage-2 fault policy (inject | stop); a device's DMA fault policy is "
            "'on_dma_fault' (abort-device | stop-vm)")
    dev = write_config(ZCU.replace("on_dma_fault: stop-vm", "on_fault: stop-vm"), "d.yaml")
    assert error_of(dev) == f"d.yaml:7:35: vms[0].devices[1].on_fault: {hint}"
    pci = write_config(VIRT.replace("image: img.bin\n  - name: b",
                                    "image: img.bin\n    pci: [{qemu: edu, on_fault: stop-vm}]\n  - name: b"), "p.yaml")
    assert error_of(pci) == f"p.yaml:7:23: vms[0].pci[0].on_fault: {hint}"
    vm = write_config(ZCU.replace("    image: img.bin\n    devices: [gem0", "    image: img.bin\n    on_fault: stop-vm\n"
                                  "    devices: [gem0"), "v.yaml")
    assert error_of(vm) == "v.yaml:7:15: vms[0].on_fault: expected one of inject, stop, got 'stop-vm'"


def test_smmu_count_name_and_smr_limits(tmp_path: Path, write_config: WriteConfig,
                                        source: list[dma.DmaStream]) -> None:
    extra = "".join(f"  - {{name: smmu{i}, type: smmuv3, base: {0x09100000 + i * 0x20000:#x}, size: 0x20000, "
                    f"irqs: {{event: {110 + i}}}, sources: [test]}}\n" for i in (0, 1, 2, 3))
    d = platform_copy(tmp_path, "qemu-virt", "smmus:\n", "smmus:\n" + extra)
    err = error_of(write_config(VIRT), d)
    assert "smmus: 5 SMMUs: the hypervisor drives at most 4" in err, err
    assert "smmus[4].name: duplicate SMMU name 'smmu0' (also smmus[0])" in err, err
    # the ZynqMP's SMMU-500 has 48 stream match registers
    source += [dma.DmaStream("smmu", 0x100 + i, "io", f"f{i}", "abort-device", "vms[0]") for i in range(46)]
    err = error_of(write_config(ZCU, "z.yaml"))
    assert "vms: SMMU 'smmu' (smmu-500) matches at most 48 streams" in err, err


def test_table_pool_holds_the_smmus_view(write_config: WriteConfig) -> None:
    """Issue #36 item 5: a VM that owns DMA streams gets table pages for the
    SMMU's view of its memory (core/mem/mem.c: a root, and a copy of each table
    that maps both RAM and a device); one without streams gets none."""
    # the root and the identity stage 1's two table pages
    assert placement.dma_view_pages([Range(0x40000000, 16 << 20)], [Range(0x10000000, 256 << 20)]) == 3
    # a device in the same GiB and the same 2 MiB slot as RAM: both tables copied
    assert placement.dma_view_pages([Range(0x40000000, 16 << 20)], [Range(0x40800000, 0x1000)]) == 5
    assert placement.dma_view_pages([Range(0x40000000, 16 << 20)], [Range(0x60000000, 0x1000)]) == 4
    on = {vm.name: vm.pt_pages for vm in load_system(write_config(ZCU), guest_sources=None).vms}
    off = {vm.name: vm.pt_pages for vm in load_system(write_config(
        "dma_isolation: none\n" + ZCU.replace("{name: zdma0, on_dma_fault: stop-vm}", "zdma0")),
        guest_sources=None).vms}
    # io's RAM and its devices (at IPA = PA, 0xff0b0000...) are GiBs apart: 3
    assert on["io"] == off["io"] + 3 and on["other"] == off["other"] + 3, (on, off)
    plain = {vm.name: vm.pt_pages for vm in load_system(write_config(VIRT), guest_sources=None).vms}
    assert plain == {vm.name: vm.pt_pages for vm in load_system(write_config(
        "dma_isolation: none\n" + VIRT), guest_sources=None).vms}  # no streams, no view
