# SPDX-License-Identifier: Apache-2.0
"""The per-VM interrupt delivery mode (``interrupts: emulated | direct``,
docs/interrupts.md): parsing, the checks with their positioned errors, and
the flag in the generated config.c."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.generate import gen_c
from bulkhead.layout.load import load_system

WriteConfig = Callable[..., str]
PLATFORMS = Path(__file__).resolve().parents[1] / "platforms"

GOOD = """\
platform: qemu-virt
sdei: true
vms:
  - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
  - {name: d, cpus: [2, 3], interrupts: direct, memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
"""


SHMEM = """shmem:
  - name: s
    size: 4K
    vms:
      - {{vm: a, ipa: 0x50000000, doorbell_irq: {a}}}
      - {{vm: d, ipa: 0x50000000, doorbell_irq: {d}}}
"""


def error_of(path: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None)
    return str(info.value)


def platform_error(write_config: WriteConfig, old: str, new: str) -> str:
    """The ConfigError of GOOD on a copy of qemu-virt.yaml, named 'bad', with
    ``old`` (which must be there) replaced by ``new``."""
    platform = (PLATFORMS / "qemu-virt.yaml").read_text()
    assert old in platform
    write_config(platform.replace(old, new).replace("name: qemu-virt", "name: bad"), "bad.yaml")
    path = write_config(GOOD.replace("platform: qemu-virt", "platform: bad"))
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None, platforms_dir=Path("."))
    return str(info.value)


def test_direct_vm_without_sdei_on_cpu0_accepted(write_config: WriteConfig) -> None:
    """Without 'sdei' the hypervisor's events on a direct CPU are Group 0
    FIQs (a boot with no EL3): no SDEI needed, CPU 0 allowed."""
    text = GOOD.replace("sdei: true\n", "").replace("cpus: [2, 3], interrupts", "cpus: [0, 1], interrupts")
    system = load_system(write_config(text.replace("cpus: [0], memory", "cpus: [2], memory")), guest_sources=None)
    assert not system.spec.sdei
    assert [vm.spec.cpus for vm in system.vms if vm.spec.interrupts == "direct"] == [(0, 1)]


def test_direct_linux_vm_without_sdei_accepted(write_config: WriteConfig) -> None:
    """A Linux VM in direct mode booted with no EL3 (its hypervisor events
    Group 0 FIQs, its SGIs 0-14 its own: docs/interrupts.md "Linux in
    direct mode"); under 'sdei: true' it stays an error (CASES)."""
    text = GOOD.replace("sdei: true\n", "").replace(
        "interrupts: direct, memory: [{ipa: 0x40000000, size: 16M}], image: img.bin",
        "interrupts: direct, type: linux, memory: [{ipa: 0x40000000, size: 16M}], kernel: Image")
    system = load_system(write_config(text), guest_sources=None)
    assert [(vm.spec.type, vm.spec.interrupts) for vm in system.vms] == [("baremetal", "emulated"),
                                                                          ("linux", "direct")]


def test_direct_vm_accepted_and_flagged(write_config: WriteConfig) -> None:
    system = load_system(write_config(GOOD), guest_sources=None)
    assert [vm.spec.interrupts for vm in system.vms] == ["emulated", "direct"]
    assert system.spec.sdei
    c = gen_c.generate(system, [], "c.yaml")
    flags = [line for line in c.splitlines() if ".flags = " in line]
    assert len(flags) == 2 and "CFG_VM_DIRECT" not in flags[0] and "CFG_VM_DIRECT" in flags[1], flags


CASES: dict[str, tuple[str, str]] = {
    "unknown mode": (
        GOOD.replace("interrupts: direct", "interrupts: fast"),
        "c.yaml:5:41: vms[1].interrupts: expected one of emulated, direct, got 'fast'",
    ),
    "cpu 0 under sdei": (
        GOOD.replace("cpus: [2, 3], interrupts", "cpus: [1, 0], interrupts").replace("cpus: [0], memory", "cpus: [2], memory"),
        "c.yaml:5:21: vms[1].cpus: VM 'd': CPU 0 takes the hypervisor's console and device "
        "interrupts, which under 'sdei: true' are Group 1 ones the guest would take; a VM with "
        "'interrupts: direct' cannot use it (without 'sdei', booted with no EL3, they are Group 0 "
        "FIQs: docs/interrupts.md)",
    ),
    "linux under sdei": (
        GOOD.replace("interrupts: direct, memory: [{ipa: 0x40000000, size: 16M}], image: img.bin",
                     "interrupts: direct, type: linux, memory: [{ipa: 0x40000000, size: 16M}], "
                     "kernel: img.bin"),
        "c.yaml:5:41: vms[1].interrupts: VM 'd': 'interrupts: direct' runs Linux only without 'sdei' "
        "(booted with no EL3, docs/interrupts.md \"Linux in direct mode\"): under SDEI the hypervisor drops "
        "its guest's SGI 0, Linux's rescheduling IPI",
    ),
    "doorbell not spare": (
        GOOD + SHMEM.format(a=80, d=80),
        "c.yaml:11:48: shmem[0].vms[1].doorbell_irq: VM 'd' has 'interrupts: direct': an emulated "
        "interrupt reaches it as a spare SPI the hypervisor sets pending (no list registers); "
        "doorbell_irq 80 is not one (platform 'qemu-virt' declares gic.spare_spis: 208-287); give a "
        "free spare SPI (free: 209-216 ...) or drop doorbell_irq (poll the shared memory)",
    ),
    "console not spare": (
        GOOD.replace("interrupts: direct,", "interrupts: direct, console: {irq: 40},"),
        "c.yaml:5:64: vms[1].console.irq: VM 'd' has 'interrupts: direct': an emulated interrupt "
        "reaches it as a spare SPI the hypervisor sets pending (no list registers); its virtual "
        "UART's IRQ 40 is not one (platform 'qemu-virt' declares gic.spare_spis: 208-287); leave "
        "console.irq out (the toolchain picks one) or give a free one (free: 208-215 ...)",
    ),
    "spare taken twice": (
        GOOD.replace("cpus: [0], memory", "cpus: [1], interrupts: direct, memory")
        + SHMEM.format(a=230, d=230),
        "c.yaml:10:48: shmem[0].vms[0].doorbell_irq: VM 'a': spare SPI 230 is also the doorbell of "
        "VM 'd' for shared memory 's'; each direct source needs its own (free: 210-217 ...)\n"
        "c.yaml:11:48: shmem[0].vms[1].doorbell_irq: VM 'd': spare SPI 230 is also the doorbell of "
        "VM 'a' for shared memory 's'; each direct source needs its own (free: 210-217 ...)",
    ),
    "reserved pmu param": (
        GOOD.replace("interrupts: direct,", "interrupts: direct, params: {pmu_irq: 5},"),
        "c.yaml:5:67: vms[1].params.pmu_irq: VM 'd': the parameter 'pmu_irq' is reserved in "
        "a direct VM (the toolchain sets it to its guest PMU's overflow PPI)",
    ),
    "reserved lpi param": (
        GOOD.replace("interrupts: direct,", "interrupts: direct, params: {lpi_base: 5},"),
        "c.yaml:5:68: vms[1].params.lpi_base: VM 'd': the parameter 'lpi_base' is reserved in "
        "a direct VM (the toolchain sets it to the first of its LPIs)",
    ),
    "image msi not first": (
        GOOD.replace("{name: a, cpus: [0]", "{name: a, cpus: [1], interrupts: direct, pci: [{qemu: edu}]")
        .replace("{name: d, cpus: [2, 3], interrupts: direct", "{name: d, type: image, cpus: [2, 3], "
                 "interrupts: direct, pci: [{qemu: edu}]"),
        "c.yaml:5:67: vms[1].pci: VM 'd' has 'interrupts: direct' and MSIs: its guest acknowledges its "
        "physical LPIs, 8448-8703 (8192 on are the first direct VM's with PCI functions), which only a "
        "bare-metal guest is told (the parameter 'lpi_base'); a 'type: image' guest allocates from 8192: make it "
        "the first direct VM with PCI functions",
    ),
    "reserved param": (
        GOOD.replace("interrupts: direct,", "interrupts: direct, params: {console_irq: 5},"),
        "c.yaml:5:71: vms[1].params.console_irq: VM 'd': the parameter 'console_irq' is reserved in "
        "a direct VM (the toolchain sets it to its virtual UART's INTID)",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_direct_rule(name: str, write_config: WriteConfig) -> None:
    text, expected = CASES[name]
    assert error_of(write_config(text)) == expected


def test_direct_io_device_rejected(write_config: WriteConfig) -> None:
    """The shared I/O device's doorbells would need spare SPIs too, and it is
    not tested in direct mode: it stays a clear error."""
    path = write_config(GOOD + """io:
  device: virtio0
  vm: d
  capacity: 1000
  clients:
    - {vm: a, mac: "02:00:00:00:00:0a", queue: 16}
""")
    assert ("c.yaml:5:41: vms[1].interrupts: VM 'd': the shared I/O device raises emulated interrupts; "
            "it cannot serve or be served by a VM with 'interrupts: direct'") in error_of(path).splitlines()


def test_direct_sources_get_spare_spis(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    """A direct VM's virtual UART gets the first free spare SPI (its INTID in
    the parameter block and config.c), a doorbell keeps the spare SPI given;
    an ordinary VM keeps the platform's console IRQ; `bulkhead check` shows
    the INTIDs."""
    path = write_config(GOOD.replace("cpus: [0], memory", "cpus: [1], interrupts: direct, memory")
                        .replace("  - {name: a,", "  - {name: o, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], "
                                 "image: img.bin}\n  - {name: a,") + SHMEM.format(a=208, d=212))
    system = load_system(path, guest_sources=None)
    consoles = {vm.spec.name: vm.spec.console.irq for vm in system.vms if vm.spec.console}
    assert consoles == {"o": 33, "a": 209, "d": 210}, consoles
    assert [vm.params_text for vm in system.vms][1:] == [
        "vm=a\nconsole_irq=209\npmu_irq=22\n", "vm=d\nconsole_irq=210\npmu_irq=22\n"]
    c = gen_c.generate(system, [], "c.yaml")
    assert ".console_irq = 209," in c and ".console_irq = 210," in c and ".doorbell_irq = 212" in c, c
    assert c.count(".pmu_irq = 22,") == 2, c  # the direct VMs' only: o's PMU PPI is the platform's
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert "0x9000000 irq 209" in out and "irq 212" in out, out


def test_direct_no_spare_spis(write_config: WriteConfig) -> None:
    """A platform that declares no spare SPIs: the direct VM's virtual UART
    has none, a clear error naming the platform key."""
    assert platform_error(write_config, " spare_spis: [[208, 287]],", "") == (
        "c.yaml:5:41: vms[1].interrupts: VM 'd' has 'interrupts: direct': an emulated interrupt reaches it "
        "as a spare SPI the hypervisor sets pending (no list registers); no spare SPI is left for its "
        "virtual UART (platform 'bad' declares no spare SPIs (gic.spare_spis)); give it 'console: none' "
        "or free one")


def test_check_prints_direct_errors(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    """`bulkhead check` reports a direct VM's bad doorbell with its position
    on stderr and exits 1."""
    assert cli.main(["check", write_config(GOOD + SHMEM.format(a=80, d=80))]) == 1
    err = capsys.readouterr().err
    assert "c.yaml:11:48: shmem[0].vms[1].doorbell_irq: VM 'd' has 'interrupts: direct'" in err, err


def test_direct_needs_gicv3(write_config: WriteConfig) -> None:
    """zcu102 has a GIC-400 (GICv2): direct mode is GICv3's."""
    path = write_config("""\
platform: zcu102
sdei: true
vms:
  - {name: d, cpus: [1], interrupts: direct, memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
""")
    assert "vms[0].interrupts: VM 'd': 'interrupts: direct' needs a GICv3; platform 'zcu102' has a GICv2" \
        in error_of(path)


@pytest.mark.parametrize("spare, expected", [
    ("[33, [208, 287]]", "gic.spare_spis: SPI 33 is not spare: the hypervisor's UART drives it"),
    ("[[48, 50]]", "gic.spare_spis: SPI 48 is not spare: device 'virtio0' drives it"),
    ("[[106, 106]]", "gic.spare_spis: SPI 106 is not spare: SMMU 'smmu0' drives it"),
    ("[300]", "gic.spare_spis: IRQ 300 is outside the SPI range 32-287"),
    ("[[220, 210]]", "gic.spare_spis[0]: range 220-210 is empty"),
])
def test_platform_spare_spis_checked(spare: str, expected: str, write_config: WriteConfig) -> None:
    """The platform's spare SPIs must be SPIs no device, SMMU or the
    hypervisor's UART drives."""
    error = platform_error(write_config, "spare_spis: [[208, 287]]", f"spare_spis: {spare}")
    assert expected in error, error


def test_direct_no_spare_ppi(write_config: WriteConfig) -> None:
    """A platform with a PMU PPI but no spare PPI: a direct VM's guest PMU
    overflow interrupt has nowhere to go, a clear error naming the key."""
    assert platform_error(write_config, ", spare_ppis: [22],", ",") == (
        "c.yaml:5:41: vms[1].interrupts: VM 'd' has 'interrupts: direct': its guest PMU's overflow interrupt "
        "reaches it as a spare PPI the hypervisor sets pending, and platform 'bad' declares none (list a PPI "
        "no device drives in the platform file's gic.spare_ppis)")


@pytest.mark.parametrize("spare, expected", [
    ("[23]", "gic.spare_ppis: PPI 23 is not spare: the platform file gives it a use"),
    ("[27]", "gic.spare_ppis: PPI 27 is not spare: the platform file gives it a use"),
    ("[40]", "gic.spare_ppis: IRQ 40 is not a PPI (16-31)"),
])
def test_platform_spare_ppis_checked(spare: str, expected: str, write_config: WriteConfig) -> None:
    error = platform_error(write_config, "spare_ppis: [22]", f"spare_ppis: {spare}")
    assert expected in error, error


def test_direct_image_vm_device_tree_names_physical_cpus(write_config: WriteConfig) -> None:
    """A `type: image` VM in direct mode reads its CPUs' physical MPIDRs
    (hypervisor/core/vm/vcpu.h vcpu_vmpidr), so its device tree's CPU nodes
    carry them (kvm-unit-tests and Linux find themselves there), and its PMU
    node names the spare PPI its overflow arrives on; an emulated VM's keep
    the vCPU indices and the platform's PMU PPI. The direct VM's spare
    interrupts (PMU, virtual UART) are edge-triggered, as the hypervisor
    keeps them: Linux's GICv3 driver checks the trigger it sets by reading
    it back and fails a level one."""
    from bulkhead.generate import gen_dts

    text = GOOD.replace("{name: d, cpus: [2, 3], interrupts: direct",
                        "{name: d, type: image, cpus: [2, 3], interrupts: direct") \
               .replace("{name: a, cpus: [0]", "{name: a, type: image, cpus: [0]")
    system = load_system(write_config(text), guest_sources=None)
    a, d = system.vms
    direct = gen_dts.generate(system, d)
    assert "cpu@2 {" in direct and "reg = <0x2>;" in direct and "cpu@3 {" in direct and "reg = <0x3>;" in direct
    assert "cpu@0 {" not in direct
    spare = system.platform.gic.spare_ppis[0]
    assert f"interrupts = <1 {spare - 16} 1>;" in direct  # the PMU's spare PPI, edge
    assert f"interrupts = <0 {d.console.irq - 32} 1>;" in direct  # the UART's spare SPI, edge
    emulated = gen_dts.generate(system, a)
    assert "cpu@0 {" in emulated and "reg = <0x0>;" in emulated
    assert f"interrupts = <1 {system.platform.pmu_irq - 16} 4>;" in emulated
    assert f"interrupts = <0 {a.console.irq - 32} 4>;" in emulated


@pytest.mark.parametrize("old, new, expected", [
    (", its: 0x08080000}", ", its: 0x08080000, v4: true}",
     "gic.v4: the QEMU machine has gic-version=3, so gic.v4 must be false"),
    ("gic-version=3", "gic-version=4", "gic: the QEMU machine has gic-version=4, so gic.v4 must be true"),
])
def test_gic_v4_agrees_with_the_qemu_machine(old: str, new: str, expected: str, write_config: WriteConfig) -> None:
    """gic.v4 (GICv4 direct injection and its tables built, the GICV4
    feature) is what the QEMU machine's gic-version says where it names one."""
    error = platform_error(write_config, old, new)
    assert expected in error, error


def test_gic_v4_needs_the_its(write_config: WriteConfig) -> None:
    """GICv4 direct injection on a platform without gic.its: an error at the key."""
    platform = (PLATFORMS / "qemu-virt.yaml").read_text()
    write_config(platform.replace("gic-version=3", "gic-version=4").replace(", its: 0x08080000}", ", v4: true}")
                 .replace("name: qemu-virt", "name: bad"), "bad.yaml")
    with pytest.raises(ConfigError) as info:
        load_system(write_config(GOOD.replace("platform: qemu-virt", "platform: bad")), guest_sources=None,
                    platforms_dir=Path("."))
    assert "gic.v4: GICv4 direct injection maps device events through the ITS: give gic.its too" in str(info.value)


def test_direct_vms_with_msi_get_the_first_lpi_blocks(write_config: WriteConfig,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """docs/interrupts.md "MSIs in a direct VM": the direct VMs with PCI
    functions get the physical LPI blocks from 8192 on, in their order (a
    direct guest acknowledges the physical INTIDs), each told its block in
    its parameter block and shown by `check`; an emulated VM with functions
    takes the block after those at its index; without a direct VM, 8192 +
    256 x index as before."""
    text = """\
platform: qemu-virt
sdei: true
vms:
  - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, pci: [{qemu: edu}]}
  - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
  - {name: d, cpus: [2], interrupts: direct, memory: [{ipa: 0x40000000, size: 16M}], image: img.bin,
     pci: [{qemu: edu}]}
  - {name: e, cpus: [3], interrupts: direct, memory: [{ipa: 0x40000000, size: 16M}], image: img.bin,
     pci: [{qemu: edu}]}
"""
    system = load_system(write_config(text), guest_sources=None)
    assert [vm.spec.lpi_base for vm in system.vms] == [8192 + 2 * 256, 0, 8192, 8192 + 256]
    c = gen_c.generate(system, [], "c.yaml")
    assert [ln.strip() for ln in c.splitlines() if ".lpi_base = " in ln] == \
        [".lpi_base = 8704,", ".lpi_base = 8192,", ".lpi_base = 8448,"]
    params = [vm.params_text or "" for vm in system.vms]
    assert "lpi_base=8192\n" in params[2] and "lpi_base=8448\n" in params[3]
    assert "lpi_base" not in params[0]  # (an emulated VM's LPIs are virtual: 8192 on)
    assert cli.main(["check", write_config(text)]) == 0
    out = capsys.readouterr().out
    assert "  d: BAR window 0x" in out and "; its own physical LPIs 8192-8447 (interrupts: direct)" in out, out
    assert "; its own physical LPIs 8448-8703 (interrupts: direct)" in out and out.count("its own physical") == 2
    plain = load_system(write_config(text.replace("interrupts: direct, ", "").replace("cpus: [3]", "cpus: [3]")),
                        guest_sources=None)
    assert [vm.spec.lpi_base for vm in plain.vms] == [8192, 0, 8192 + 2 * 256, 8192 + 3 * 256]


def test_a_regulated_direct_vm_without_sdei_is_warned(write_config: WriteConfig) -> None:
    """docs/interrupts.md "Closing the ICC_AP1R0_EL1 hole": without EL3 a
    direct guest can hold off the hypervisor's FIQs through ICC_AP1R0_EL1 and
    only another VM's regulated CPU takes its CPUs back, so a regulated
    direct VM without `sdei` and with no other VM regulated gets a warning
    (not an error: a trusted guest may run so); with `sdei: true`,
    unregulated, or beside another regulated VM, none."""
    regulated = GOOD.replace("interrupts: direct, memory",
                             "interrupts: direct, bandwidth: {period_us: 100, budget_events: 20000}, memory")
    def ap1r0(text: str) -> list[str]:
        system = load_system(write_config(text), guest_sources=None)
        return [str(w) for w in system.warnings if "ICC_AP1R0_EL1" in str(w)]
    assert ap1r0(regulated) == []
    assert ap1r0(GOOD.replace("sdei: true\n", "")) == []
    warned = ap1r0(regulated.replace("sdei: true\n", ""))
    assert len(warned) == 1 and "VM 'd' is regulated with 'interrupts: direct' and no 'sdei'" in warned[0], warned
    watched = regulated.replace("sdei: true\n", "").replace(
        "cpus: [0], memory", "cpus: [0], bandwidth: {period_us: 100, budget_events: 20000}, memory")
    assert watched != regulated.replace("sdei: true\n", "") and ap1r0(watched) == []
