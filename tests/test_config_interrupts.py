# SPDX-License-Identifier: Apache-2.0
"""The per-VM interrupt delivery mode (``interrupts: emulated | direct``,
docs/interrupts.md): parsing, the checks with their positioned errors, and
the flag in the generated config.c."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bulkhead.base.errors import ConfigError
from bulkhead.generate import gen_c
from bulkhead.layout.load import load_system

WriteConfig = Callable[..., str]

GOOD = """\
platform: qemu-virt
sdei: true
vms:
  - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
  - {name: d, cpus: [2, 3], interrupts: direct, memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
"""


def error_of(path: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None)
    return str(info.value)


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
    "no sdei": (
        GOOD.replace("sdei: true\n", ""),
        "c.yaml:4:41: vms[1].interrupts: VM 'd': 'interrupts: direct' needs the secure firmware's "
        "SDEI, which the system does not declare (TF-A built with SDEI_SUPPORT=1 "
        "EL3_EXCEPTION_HANDLING=1 and Bulkhead's event table, then 'sdei: true' in the system "
        "file; docs/interrupts.md)",
    ),
    "cpu 0": (
        GOOD.replace("cpus: [2, 3], interrupts", "cpus: [1, 0], interrupts").replace("cpus: [0], memory", "cpus: [2], memory"),
        "c.yaml:5:21: vms[1].cpus: VM 'd': CPU 0 takes the hypervisor's console and device "
        "interrupts; a VM with 'interrupts: direct' cannot use it",
    ),
    "linux": (
        GOOD.replace("interrupts: direct, memory: [{ipa: 0x40000000, size: 16M}], image: img.bin",
                     "interrupts: direct, type: linux, memory: [{ipa: 0x40000000, size: 16M}], "
                     "kernel: img.bin"),
        "c.yaml:5:41: vms[1].interrupts: VM 'd': 'interrupts: direct' runs bare-metal guests only "
        "(a Linux VM's device tree would need the physical MPIDRs its vCPUs see)",
    ),
    "doorbell": (
        GOOD + """shmem:
  - name: s
    size: 4K
    vms:
      - {vm: a, ipa: 0x50000000, doorbell_irq: 80}
      - {vm: d, ipa: 0x50000000, doorbell_irq: 80}
""",
        "c.yaml:11:48: shmem[0].vms[1].doorbell_irq: VM 'd' has 'interrupts: direct': a doorbell is "
        "an emulated interrupt, which needs the list registers; drop doorbell_irq (poll the shared "
        "memory)",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_direct_rule(name: str, write_config: WriteConfig) -> None:
    text, expected = CASES[name]
    assert error_of(write_config(text)) == expected


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
