# SPDX-License-Identifier: Apache-2.0
"""One invalid config per semantic rule, with the exact error text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead.base.errors import ConfigError
from bulkhead.layout.load import load_system

WriteConfig = Callable[..., str]


def error_of(path: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None)
    return str(info.value)


CASES: dict[str, tuple[str, str]] = {
    "cpu twice in one VM": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0, 0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        """,
        "c.yaml:3:25: vms[0].cpus[1]: CPU 0 is given twice (also vms[0].cpus[0])",
    ),
    "cpu twice across VMs": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0, 1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        """,
        "c.yaml:4:22: vms[1].cpus[0]: CPU 1 is given twice (also vms[0].cpus[1])",
    ),
    "cpu not on platform": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [4], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        """,
        "c.yaml:3:22: vms[0].cpus[0]: CPU 4 does not exist on platform 'qemu-virt' (CPUs 0-3)",
    ),
    "zero cpus": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        """,
        "c.yaml:3:21: vms[0].cpus: a VM needs at least one CPU",
    ),
    "more VMs than CPUs": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 4M}], image: img.bin}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 4M}], image: img.bin}
          - {name: c, cpus: [2], memory: [{ipa: 0x40000000, size: 4M}], image: img.bin}
          - {name: d, cpus: [3], memory: [{ipa: 0x40000000, size: 4M}], image: img.bin}
          - {name: e, cpus: [], memory: [{ipa: 0x40000000, size: 4M}], image: img.bin}
        """,
        "c.yaml:3:3: vms: 5 VMs but platform 'qemu-virt' has only 4 CPUs\n"
        "c.yaml:7:21: vms[4].cpus: a VM needs at least one CPU",
    ),
    "memory overlaps between VMs": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M, pa: 0x60000000}], image: img.bin}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 16M, pa: 0x60800000}], image: img.bin}
        """,
        "c.yaml:4:68: vms[1].memory[0].pa: PA range 0x60800000-0x617fffff overlaps vms[0].memory[0] "
        "(PA 0x60000000-0x60ffffff)",
    ),
    "memory overlaps the hypervisor": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M, pa: 0x41000000}], image: img.bin}
        """,
        "c.yaml:3:68: vms[0].memory[0].pa: PA range 0x41000000-0x41ffffff overlaps the hypervisor area "
        "(0x40200000-0x41ffffff)",
    ),
    "memory overlaps staging": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M, pa: 0xA0000000}], image: img.bin}
        """,
        "c.yaml:3:68: vms[0].memory[0].pa: PA range 0xa0000000-0xa0ffffff overlaps the staging area "
        "(0xa0000000-0xbfffffff)",
    ),
    "memory outside RAM": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M, pa: 0xBFF00000}], image: img.bin}
        """,
        "c.yaml:3:68: vms[0].memory[0].pa: PA range 0xbff00000-0xc0efffff is outside platform RAM "
        "(0x40000000-0xbfffffff)",
    ),
    "shmem overlaps memory": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M, pa: 0x60000000}], image: img.bin}
        shmem:
          - {name: s, size: 4K, pa: 0x60001000, vms: [{vm: a, ipa: 0x50000000}]}
        """,
        "c.yaml:5:29: shmem[0].pa: PA range 0x60001000-0x60001fff overlaps vms[0].memory[0] "
        "(PA 0x60000000-0x60ffffff)",
    ),
    "shmem overlaps the hypervisor": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        shmem:
          - {name: s, size: 4K, pa: 0x40200000, vms: [{vm: a, ipa: 0x50000000}]}
        """,
        "c.yaml:5:29: shmem[0].pa: PA range 0x40200000-0x40200fff overlaps the hypervisor area "
        "(0x40200000-0x41ffffff)",
    ),
    "shmem names an unknown VM": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        shmem:
          - {name: s, size: 4K, vms: [{vm: a, ipa: 0x50000000}, {vm: b, ipa: 0x50000000}]}
        """,
        "c.yaml:5:62: shmem[0].vms[1].vm: unknown VM 'b'",
    ),
    "shmem names a VM twice": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        shmem:
          - {name: s, size: 4K, vms: [{vm: a, ipa: 0x50000000}, {vm: a, ipa: 0x51000000}]}
        """,
        "c.yaml:5:62: shmem[0].vms[1].vm: VM 'a' is listed twice (also shmem[0].vms[0].vm)",
    ),
    "unknown device": (
        """
        platform: qemu-virt
        vms:
          - name: a
            cpus: [0]
            memory: [{ipa: 0x40000000, size: 16M}]
            image: img.bin
            devices: [rtc, uart9]
        """,
        "c.yaml:7:20: vms[0].devices[1]: unknown device 'uart9'; platform 'qemu-virt' has: rtc, gpio, "
        + ", ".join(f"virtio{i}" for i in range(32)),
    ),
    "device given twice in one VM": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, devices: [rtc, rtc]}
        """,
        "c.yaml:3:97: vms[0].devices[1]: device 'rtc' is listed twice (also vms[0].devices[0])",
    ),
    "device given to two VMs": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, devices: [rtc]}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, devices: [rtc]}
        """,
        "c.yaml:4:92: vms[1].devices[0]: device 'rtc' is already passed through to VM 'a' (vms[0].devices[0])",
    ),
    "devices sharing an MMIO page across VMs": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, devices: [virtio0]}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, devices: [virtio1]}
        dma_isolation: none
        """,
        "c.yaml:4:92: vms[1].devices[0]: device 'virtio1' shares a 4 KiB page with device 'virtio0' of VM 'a' "
        "(vms[0].devices[0])",
    ),
    "console irq collides with a passthrough irq": (
        """
        platform: qemu-virt
        vms:
          - name: a
            cpus: [0]
            memory: [{ipa: 0x40000000, size: 16M}]
            image: img.bin
            devices: [rtc]
            console: {irq: 34}
        """,
        "c.yaml:8:20: vms[0].console.irq: console IRQ 34 collides with device 'rtc' of VM 'a'",
    ),
    "doorbell irq collides with the console irq": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        shmem:
          - {name: s, size: 4K, vms: [{vm: a, ipa: 0x50000000, doorbell_irq: 33}]}
        """,
        "c.yaml:5:70: shmem[0].vms[0].doorbell_irq: doorbell IRQ 33 collides with the console IRQ of VM 'a'",
    ),
    "doorbell irq outside the SPI range": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        shmem:
          - {name: s, size: 4K, vms: [{vm: a, ipa: 0x50000000, doorbell_irq: 300}]}
        """,
        "c.yaml:5:70: shmem[0].vms[0].doorbell_irq: IRQ 300 is outside the SPI range 32-287",
    ),
    "console irq is a PPI": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, console: {irq: 27}}
        """,
        "c.yaml:3:97: vms[0].console.irq: IRQ 27 is outside the SPI range 32-287",
    ),
    "unaligned size": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 0x1800}], image: img.bin}
        """,
        "c.yaml:3:59: vms[0].memory[0].size: size 0x1800 is not a multiple of 4 KiB",
    ),
    "unaligned ipa": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000800, size: 16M}], image: img.bin}
        """,
        "c.yaml:3:41: vms[0].memory[0].ipa: IPA 0x40000800 is not 4 KiB aligned",
    ),
    "unaligned shmem ipa": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        shmem:
          - {name: s, size: 4K, vms: [{vm: a, ipa: 0x50000010}]}
        """,
        "c.yaml:5:44: shmem[0].vms[0].ipa: IPA 0x50000010 is not 4 KiB aligned",
    ),
    "memory regions of one VM collide": (
        """
        platform: qemu-virt
        vms:
          - name: a
            cpus: [0]
            memory:
              - {ipa: 0x40000000, size: 16M}
              - {ipa: 0x40800000, size: 16M}
            image: img.bin
        """,
        "c.yaml:7:15: vms[0].memory[1].ipa: memory[1] at IPA 0x40800000-0x417fffff collides with memory[0] "
        "at IPA 0x40000000-0x40ffffff in VM 'a'",
    ),
    "memory collides with shmem": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        shmem:
          - {name: s, size: 4K, vms: [{vm: a, ipa: 0x40001000}]}
        """,
        "c.yaml:5:44: shmem[0].vms[0].ipa: shared memory 's' at IPA 0x40001000-0x40001fff collides with "
        "memory[0] at IPA 0x40000000-0x40ffffff in VM 'a'",
    ),
    "memory collides with a device": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x9000000, size: 1M}], image: img.bin, devices: [rtc], console: none}
        """,
        "c.yaml:3:90: vms[0].devices[0]: device 'rtc' at IPA 0x9010000-0x9010fff collides with memory[0] "
        "at IPA 0x9000000-0x90fffff in VM 'a'",
    ),
    "memory collides with the console page": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x9000000, size: 1M}], image: img.bin}
        """,
        "c.yaml:3:41: vms[0].memory[0].ipa: memory[0] at IPA 0x9000000-0x90fffff collides with the console "
        "page at IPA 0x9000000-0x9000fff in VM 'a'",
    ),
    "memory collides with the virtual GIC": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0, 1], memory: [{ipa: 0x080C0000, size: 64K}], image: img.bin}
        """,
        "c.yaml:3:44: vms[0].memory[0].ipa: memory[0] at IPA 0x80c0000-0x80cffff collides with the virtual "
        "GIC redistributors at IPA 0x80a0000-0x80dffff in VM 'a'",
    ),
    "console_input names an unknown VM": (
        """
        platform: qemu-virt
        console_input: b
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        """,
        "c.yaml:2:16: console_input: unknown VM 'b'",
    ),
    "console_input VM has no console": (
        """
        platform: qemu-virt
        console_input: a
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, console: none}
        """,
        "c.yaml:2:16: console_input: VM 'a' has no console",
    ),
    "missing image file": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: nope.bin}
        """,
        "c.yaml:3:73: vms[0].image: file not found: {tmp}/nope.bin",
    ),
    "linux VM without kernel": (
        """
        platform: qemu-virt
        vms:
          - {name: a, type: linux, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}]}
        """,
        "c.yaml:3:5: vms[0]: Linux VM 'a' needs a 'kernel'",
    ),
    "baremetal VM with neither guest nor image": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}]}
        """,
        "c.yaml:3:5: vms[0]: bare-metal VM 'a' needs one of 'guest' or 'image'",
    ),
    "baremetal VM with both guest and image": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], guest: hello, image: img.bin}
        """,
        "c.yaml:3:87: vms[0].image: give either 'guest' or 'image', not both",
    ),
    "kernel on a baremetal VM": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, kernel: Image}
        """,
        "c.yaml:3:90: vms[0].kernel: 'kernel' is only valid for Linux VMs (add 'type: linux')",
    ),
    "duplicate VM name": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
          - {name: a, cpus: [1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        """,
        "c.yaml:4:12: vms[1].name: duplicate VM name 'a' (also vms[0].name)",
    ),
    "entry outside memory": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, entry: 0x50000000}
        """,
        "c.yaml:3:89: vms[0].entry: entry 0x50000000 is not inside the VM's memory",
    ),
    "image does not fit (baremetal)": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 8K}], image: Image}
        """,
        "c.yaml:3:72: vms[0].image: image does not fit its region: 8192 bytes at IPA 0x40000000, "
        "only 4096 bytes available",
    ),
    "image does not fit (linux kernel)": (
        """
        platform: qemu-virt
        vms:
          - {name: a, type: linux, cpus: [0], memory: [{ipa: 0x40000000, size: 2M}], kernel: Image}
        """,
        "c.yaml:3:72: vms[0].memory[0].size: the first memory region of a Linux VM needs at least 4 MiB",
    ),
    "image does not fit (linux kernel and initrd)": (
        """
        platform: qemu-virt
        vms:
          - name: a
            type: linux
            cpus: [0]
            memory: [{ipa: 0x40000000, size: 4M}]
            kernel: Image
            initrd: big.img
        """,
        "c.yaml:8:13: vms[0].initrd: image does not fit its region: the initrd (1572864 bytes) would start "
        "at 0x40080000, below the kernel's end 0x40100000",
    ),
    "linux region not 2 MiB aligned": (
        """
        platform: qemu-virt
        vms:
          - {name: a, type: linux, cpus: [0], memory: [{ipa: 0x40100000, size: 16M}], kernel: Image}
        """,
        "c.yaml:3:54: vms[0].memory[0].ipa: the first memory region of a Linux VM must be 2 MiB aligned "
        "(IPA 0x40100000)",
    ),
    "not an arm64 kernel": (
        """
        platform: qemu-virt
        vms:
          - {name: a, type: linux, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], kernel: img.bin}
        """,
        "c.yaml:3:87: vms[0].kernel: not an arm64 Image (no 'ARM\\x64' magic at offset 56)",
    ),
    "no free RAM": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 1G}], image: img.bin}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 1G}], image: img.bin}
        """,
        "c.yaml:4:59: vms[1].memory[0].size: no free RAM for 1G (largest free block: 480M)",
    ),
    "image VM with params": (
        """
        platform: qemu-virt
        vms:
          - {name: a, type: image, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, params: {x: 1}}
        """,
        "c.yaml:3:103: vms[0].params: an 'image' VM gets a device tree in x0, not a parameter block",
    ),
    "image VM with a broken ELF file": (
        """
        platform: qemu-virt
        vms:
          - {name: a, type: image, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: elf.img}
        """,
        "c.yaml:3:86: vms[0].image: not a 64-bit little-endian ELF file",
    ),
    "image VM entry above its device tree": (
        """
        platform: qemu-virt
        vms:
          - {name: a, type: image, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin,
             entry: 0x40ff8000}
        """,
        "c.yaml:4:13: vms[0].entry: entry 0x40ff8000 is not in memory[0] below the device tree at 0x40ff0000",
    ),
    "parameter block too large": (
        """
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, params: {x: XXX}}
        """,
        "c.yaml:3:90: vms[0].params: the parameter block is 4099 bytes; the limit is 4096",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_semantic_rule(name: str, write_config: WriteConfig) -> None:
    text, expected = CASES[name]
    if "big.img" in text:
        Path("big.img").write_bytes(b"\0" * (3 << 19))  # 1.5 MiB
    if "elf.img" in text:
        Path("elf.img").write_bytes(b"\x7fELF" + b"\0" * 60)
    text = text.replace("XXX", "y" * 4090)
    path = write_config(text)
    assert error_of(path) == expected.replace("{tmp}", str(Path.cwd()))


def test_all_problems_reported_in_file_order(write_config: WriteConfig) -> None:
    path = write_config("""
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0, 9], memory: [{ipa: 0x40000800, size: 16M}], image: img.bin}
          - {name: b, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
    """)
    lines = error_of(path).splitlines()
    assert lines == [
        "c.yaml:3:25: vms[0].cpus[1]: CPU 9 does not exist on platform 'qemu-virt' (CPUs 0-3)",
        "c.yaml:3:44: vms[0].memory[0].ipa: IPA 0x40000800 is not 4 KiB aligned",
        "c.yaml:4:22: vms[1].cpus[0]: CPU 0 is given twice (also vms[0].cpus[0])",
    ]


def test_valid_minimal_config(write_config: WriteConfig) -> None:
    path = write_config("""
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
    """)
    system = load_system(path, guest_sources=None)
    assert [vm.name for vm in system.vms] == ["a"]
    assert system.console_input == 0


def test_shared_interrupt_owned_by_two_vms(write_config: WriteConfig, tmp_path: Path) -> None:
    """Two platform devices sharing an IRQ cannot go to different VMs."""
    from bulkhead.layout.load import PLATFORMS_DIR

    pdir = tmp_path / "plats"
    pdir.mkdir()
    text = (PLATFORMS_DIR / "qemu-virt.yaml").read_text().replace("irqs: [39]", "irqs: [34]")
    (pdir / "qemu-virt.yaml").write_text(text)
    path = write_config("""
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, devices: [rtc]}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin, devices: [gpio]}
    """)
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None, platforms_dir=pdir)
    assert str(info.value) == ("c.yaml:4:92: vms[1].devices[0]: IRQ 34 of device 'gpio' is already owned by "
                               "VM 'a' (device 'rtc')")


def test_image_vm_layouts(write_config: WriteConfig) -> None:
    """`type: image`: a raw image at `entry` (default memory[0]), a Linux
    Image at memory[0] + text_offset; x0 = the DTB in the last 64 KiB of
    memory[0]; no parameter block."""
    header = bytearray(64)
    header[8:16] = (0x80000).to_bytes(8, "little")  # text_offset
    header[16:24] = (0x200000).to_bytes(8, "little")  # image_size
    header[56:60] = b"ARM\x64"
    Path("Image").write_bytes(bytes(header))
    Path("raw.bin").write_bytes(b"\0" * 4096)
    path = write_config("""
        platform: qemu-virt
        vms:
          - {name: a, type: image, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: Image}
          - {name: b, type: image, cpus: [1], memory: [{ipa: 0x40000000, size: 8M}], image: raw.bin,
             entry: 0x40100000, bootargs: "x=1"}
    """)
    a, b = load_system(path, guest_sources=None).vms
    assert (a.entry, a.boot_arg) == (0x40080000, 0x40FF0000)
    assert [(i.name, i.dst_ipa) for i in a.images] == [("image", 0x40080000), ("dtb", 0x40FF0000)]
    assert (b.entry, b.boot_arg, b.params_text) == (0x40100000, 0x407F0000, None)
    assert b.linux is not None and b.linux.bootargs == "x=1"
