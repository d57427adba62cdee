# SPDX-License-Identifier: Apache-2.0
"""Schema errors (shape, types, syntax) with their positions, and the
platform file's own checks."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead.base.errors import ConfigError
from bulkhead.generate.build import hypervisor_make_args, object_dir
from bulkhead.generate.gen_c import generate
from bulkhead.layout.load import PLATFORMS_DIR, load_platform, load_system

# every platform file of the repository, as `unknown platform` lists them
PLATFORM_NAMES = sorted(p.stem for p in PLATFORMS_DIR.glob("*.yaml"))

WriteConfig = Callable[..., str]

VM = "{name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}"


def error_of(path: str, **kwargs: object) -> str:
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None, **kwargs)  # type: ignore[arg-type]
    return str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "platform: qemu-virt\nvms:\n  - {name: a, cpu: [0]}\n",
            "c.yaml:3:15: vms[0].cpu: unknown key 'cpu'; expected one of: name, type, cpus, memory, kernel, "
            "initrd, bootargs, guest, image, entry, params, console, devices, on_fault, manager, introspection, "
            "mixed_core_types, colors, ida, pci, bandwidth, interrupts, l3_ways, l3_groups",
        ),
        (
            "platform: qemu-virt\nvm: []\n",
            "c.yaml:2:1: vm: unknown key 'vm'; expected one of: platform, console_input, vms, shmem, "
            "hypervisor_colors, recolor_pool, io, disk, pci_bridges, bandwidth, dma_isolation, sdei",
        ),
        (
            "platform: qemu-virt\nvms:\n  - name: a\n    cpus: [0, a]\n    memory: [{ipa: 0x40000000, size: 16M}]\n",
            "c.yaml:4:15: vms[0].cpus[1]: expected a CPU index (integer), got 'a'",
        ),
        (
            "platform: qemu-virt\nvms:\n  - name: a\n    cpus: [-1]\n    memory: [{ipa: 0x40000000, size: 16M}]\n",
            "c.yaml:4:12: vms[0].cpus[0]: expected a CPU index (integer), got -1",
        ),
        (
            "platform: qemu-virt\nvms:\n  - name: a\n    cpus: 0\n    memory: [{ipa: 0x40000000, size: 16M}]\n",
            "c.yaml:4:11: vms[0].cpus: expected a list of CPU indices, got 0",
        ),
        (
            "platform: qemu-virt\nvms:\n  - {name: a, cpus: [true], memory: [{ipa: 0x40000000, size: 16M}]}\n",
            "c.yaml:3:22: vms[0].cpus[0]: expected a CPU index (integer), got true",
        ),
        (
            "platform: qemu-virt\nvms:\n  - {name: A1, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}]}\n",
            "c.yaml:3:12: vms[0].name: invalid VM name 'A1': use lowercase letters, digits, '_' and '-', "
            "starting with a letter, at most 16 characters",
        ),
        (
            "platform: qemu-virt\nvms:\n  - {name: a, cpus: [0]}\n",
            "c.yaml:3:5: vms[0]: missing required key 'memory'",
        ),
        (
            "platform: qemu-virt\nvms:\n  - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16Q}]}\n",
            "c.yaml:3:59: vms[0].memory[0].size: expected a size (integer, or a string like '16M'), got '16Q'",
        ),
        (
            "platform: qemu-virt\nvms:\n  - {name: a, cpus: [0], memory: [{ipa: '0x4', size: 4K}]}\n",
            "c.yaml:3:41: vms[0].memory[0].ipa: expected an address (integer), got '0x4'",
        ),
        (
            "platform: qemu-virt\nvms:\n  - {name: a, cpus: [0], memory: [{ipa: 0, size: 0}]}\n",
            "c.yaml:3:50: vms[0].memory[0].size: size must be greater than 0, got 0",
        ),
        (
            "platform: qemu-virt\nvms:\n  - {name: a, cpus: [0], memory: {ipa: 0, size: 4K}}\n",
            "c.yaml:3:34: vms[0].memory: expected a list of memory regions, got a mapping",
        ),
        (
            "platform: qemu-virt\nvms:\n  - {name: a, type: rtos, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}]}\n",
            "c.yaml:3:21: vms[0].type: expected one of linux, baremetal, image, got 'rtos'",
        ),
        (
            f"platform: qemu-virt\nvms:\n  - {VM[:-1]}, on_fault: retry}}\n",
            "c.yaml:3:92: vms[0].on_fault: expected one of inject, stop, got 'retry'",
        ),
        (
            f"platform: qemu-virt\nvms:\n  - {VM[:-1]}, params: {{rounds: [1]}}}}\n",
            "c.yaml:3:99: vms[0].params.rounds: expected a parameter value (string, integer or boolean), "
            "got a list",
        ),
        (
            f"platform: qemu-virt\nvms:\n  - {VM[:-1]}, params: {{vm: x}}}}\n",
            "c.yaml:3:91: vms[0].params.vm: the parameter 'vm' is reserved (always set to the VM name)",
        ),
        (
            f"platform: qemu-virt\nvms:\n  - {VM[:-1]}, console: {{ipa: 0x9000000, baud: 9600}}}}\n",
            "c.yaml:3:108: vms[0].console.baud: unknown key 'baud'; expected one of: ipa, irq",
        ),
        (
            f"platform: qemu-virt\nvms:\n  - {VM[:-1]}, bootargs: \"a\\nb\"}}\n",
            "c.yaml:3:92: vms[0].bootargs: must not contain control characters (newline, tab, ...)",
        ),
        (
            "platform: qemu-virt\nvms: []\n",
            "c.yaml:2:6: vms: at least one VM is required",
        ),
        (
            "platform: nosuch\nvms: []\n",
            "c.yaml:1:11: platform: unknown platform 'nosuch'; available: " + ", ".join(PLATFORM_NAMES),
        ),
        (
            "platform: ../x\nvms: []\n",
            "c.yaml:1:11: platform: invalid platform name '../x': use lowercase letters, digits, '_' and '-', "
            "starting with a letter",
        ),
        (
            "- just\n- a list\n",
            "c.yaml:1:1: expected a mapping, got a list",
        ),
        (
            "platform: qemu-virt\nplatform: qemu-virt\n",
            "c.yaml:2:1: duplicate key 'platform' (first at line 1)",
        ),
        (
            "platform: qemu-virt\nvms: [\n",
            "c.yaml:3:1: invalid YAML: expected the node content, but found '<stream end>' (while parsing a flow node)",
        ),
        (
            "platform: qemu-virt\nvms: *nothing\n",
            "c.yaml:2:6: invalid YAML: found undefined alias 'nothing'",
        ),
        (
            "platform: qemu-virt\nvms: !custom [1]\n",
            "c.yaml:2:15: vms[0]: expected a VM (mapping), got 1",
        ),
        (
            "platform: qemu-virt\nvms: [!custom 1]\n",
            "c.yaml:2:7: unsupported YAML tag '!custom'",
        ),
        (
            "",
            "c.yaml:1:1: empty document (no YAML content in the file)",
        ),
        (
            "platform: qemu-virt\nvms:\n  - &a [*a]\n",
            "c.yaml:3:5: recursive YAML alias",
        ),
        (
            "shmem:\n  - {name: s, size: 4K, vms: []}\nplatform: qemu-virt\nvms:\n  - " + VM + "\n",
            "c.yaml:2:30: shmem[0].vms: at least one VM is required",
        ),
        (
            "platform: qemu-virt\nvms:\n  - " + VM + "\nshmem:\n  - {name: s, size: 4K, vms: [{vm: a}]}\n",
            "c.yaml:5:31: shmem[0].vms[0]: missing required key 'ipa'",
        ),
    ],
)
def test_schema_error(text: str, expected: str, write_config: WriteConfig, sandbox: Path) -> None:
    (sandbox / "c.yaml").write_text(text)
    assert error_of("c.yaml") == expected


def test_missing_file(sandbox: Path) -> None:
    assert error_of("nope.yaml") == "nope.yaml: file not found"


def test_not_utf8(sandbox: Path) -> None:
    (sandbox / "c.yaml").write_bytes(b"platform: \xff\n")
    assert error_of("c.yaml") == "c.yaml:1:11: not UTF-8 text (byte 10)"


def test_sizes_and_merge_keys(write_config: WriteConfig) -> None:
    path = write_config("""
        platform: qemu-virt
        defaults: &vm
          cpus: [0]
          image: img.bin
        vms:
          - <<: *vm
            name: a
            memory:
              - {ipa: 0x40000000, size: 16M}
              - {ipa: 0x80000000, size: "0x2000"}
              - {ipa: 0x90000000, size: 8k}
              - {ipa: 0xA0000000, size: 1G}
              - {ipa: 0x100000000, size: 4096}
    """.replace("defaults: &vm", "x-defaults: &vm"))
    # unknown top-level keys are errors, even for YAML anchors' sake
    assert "unknown key 'x-defaults'" in error_of(path)
    text = (Path(path).read_text().replace("x-defaults: &vm\n  cpus: [0]\n  image: img.bin\n", "")
            .replace("  - <<: *vm\n", "  - <<: {cpus: [0], image: img.bin}\n"))
    Path(path).write_text(text)
    system = load_system(path, guest_sources=None)
    assert [m.size for m in system.vms[0].memory] == [16 << 20, 0x2000, 8 << 10, 1 << 30, 4096]


def test_console_none_and_defaults(write_config: WriteConfig) -> None:
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM[:-1]}, console: none}}
          - {{name: b, cpus: [1], memory: [{{ipa: 0x40000000, size: 16M}}], image: img.bin,
             console: {{irq: 40}}}}
    """)
    system = load_system(path, guest_sources=None)
    assert system.vms[0].console is None
    assert system.vms[1].console is not None
    assert (system.vms[1].console.ipa, system.vms[1].console.irq) == (0x09000000, 40)
    assert system.console_input == 1  # the first VM with a console


def test_params_rendering(write_config: WriteConfig) -> None:
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM[:-1]}, params: {{rounds: 0x10, role: ping, verbose: true, quiet: "no", ratio: "1.5"}}}}
    """)
    system = load_system(path, guest_sources=None)
    assert system.vms[0].params_text == "vm=a\nrounds=16\nrole=ping\nverbose=true\nquiet=no\nratio=1.5\n"


# --- platform files -------------------------------------------------------


RAM = "ram: {base: 0x40000000, size: 2G}"


def platform_error(tmp_path: Path, old: str, new: str, name: str = "qemu-virt") -> str:
    text = (PLATFORMS_DIR / f"{name}.yaml").read_text()
    assert old in text
    (tmp_path / f"{name}.yaml").write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError) as info:
        load_platform(name, tmp_path)
    return str(info.value).replace(str(tmp_path) + "/", "")


def test_repo_platform_is_valid() -> None:
    p = load_platform("qemu-virt")
    assert p.ncpus == 4
    assert [d.name for d in p.devices][:2] == ["rtc", "gpio"]
    assert p.device("virtio31") is not None
    virtio31 = p.device("virtio31")
    assert virtio31 is not None and (virtio31.base, virtio31.irqs) == (0x0A003E00, (79,))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("cpu: cortex-a53, memory: 2G}", "cpu: cortex-a53, memory: 2G, smp: 4}",
         "qemu-virt.yaml:4:128: qemu.smp: unknown key 'smp'; expected one of: binary, machine, cpu, memory, args, "
         "serial, kernel, dtb"),
        ("staging: {base: 0xA0000000, size: 512M}", "staging: {base: 0xB0000000, size: 512M}",
         "qemu-virt.yaml:8:10: staging: staging area 0xb0000000-0xcfffffff is not inside RAM "
         "(0x40000000-0xbfffffff)"),
        ("hypervisor: {base: 0x40200000, size: 30M}", "hypervisor: {base: 0xA0000000, size: 32M}",
         "qemu-virt.yaml:8:10: staging: staging area 0xa0000000-0xbfffffff overlaps the hypervisor area "
         "(0xa0000000-0xa1ffffff)"),
        ("cpus: [0x0, 0x1, 0x2, 0x3]", "cpus: [0x0, 0x1, 0x1, 0x3]",
         "qemu-virt.yaml:5:18: cpus[2]: MPIDR 0x1 is given twice (also cpus[1])"),
        ("cpus: [0x0, 0x1, 0x2, 0x3]", "cpus: [0, 1, 2, 3, 4, 5, 6, 7, 8]",
         "qemu-virt.yaml:5:7: cpus: a platform has 1 to 8 CPUs, got 9"),
        ("irqs: [34]", "irqs: [33]",
         "qemu-virt.yaml:15:56: devices[0].irqs[0]: IRQ 33 belongs to the hypervisor's UART"),
        ("irqs: [39]", "irqs: [20]",
         "qemu-virt.yaml:16:57: devices[1].irqs[0]: IRQ 20 is outside the SPI range 32-287"),
        ("base: 0x09030000", "base: 0x09010800",
         "qemu-virt.yaml:16:5: devices[1]: device 'gpio' (0x9010800-0x90117ff) overlaps device 'rtc' "
         "(0x9010000-0x9010fff)"),
        ("base: 0x09030000", "base: 0x09000000",
         "qemu-virt.yaml:16:5: devices[1]: device 'gpio' (0x9000000-0x9000fff) overlaps the UART "
         "(0x9000000-0x9000fff)"),
        ("name: gpio", "name: rtc",
         "qemu-virt.yaml:16:12: devices[1].name: duplicate device name 'rtc' (also devices[0])"),
        ("hyp_irq: 26", "hyp_irq: 36",
         "qemu-virt.yaml:11:18: timer.hyp_irq: IRQ 36 is not a PPI (16-31)"),
        ("phys_irq: 30", "phys_irq: 28",
         "qemu-virt.yaml:11:46: timer.phys_irq: IRQ 28: Bulkhead routes the EL1 phys timer as PPI 30 (the Arm SBSA "
         "number)"),
        ("gic: {version: 3,", "gic: {version: 4,",
         "qemu-virt.yaml:10:16: gic.version: expected a GIC version (2 or 3), got 4"),
        ("gic: {version: 3,", "gic: {version: 2,",
         "qemu-virt.yaml:10:37: gic.gicr: unknown key 'gicr'; expected one of: version, driver, gicd, gicc, gich, "
         "gicv, page_stride, vgicd, vgicc, spis, maintenance_irq, spare_spis"),
        # the driver must drive the architecture (bulkhead/drivers/gic/)
        ("gic: {version: 3,", "gic: {version: 3, driver: gicv2,",
         "qemu-virt.yaml:10:27: gic.driver: expected one of gicv3, got 'gicv2'"),
        ("uart: {base: 0x09000000, irq: 33}", "uart: {base: 0x09000000, irq: 33, driver: 8250}",
         "qemu-virt.yaml:12:43: uart.driver: expected one of cadence, dw8250, imx, ns16550, pl011, got 8250"),
        # the register spacing: one the driver honours (bulkhead/drivers/uart/<driver>.py)
        ("uart: {base: 0x09000000, irq: 33}", "uart: {base: 0x09000000, irq: 33, reg_shift: 0}",
         "qemu-virt.yaml:12:46: uart.reg_shift: the pl011 driver takes 2, got 0"),
        ("uart: {base: 0x09000000, irq: 33}", "uart: {base: 0x09000000, irq: 33, driver: ns16550, reg_shift: 3}",
         "qemu-virt.yaml:12:63: uart.reg_shift: the ns16550 driver takes 0, 1 or 2, got 3"),
        ("uart: {base: 0x09000000, irq: 33}", "uart: {base: 0x09000000, irq: 33, driver: ns16550, reg_io_width: 2}",
         "qemu-virt.yaml:12:66: uart.reg_io_width: the ns16550 driver takes 1 or 4, got 2"),
        ("uart: {base: 0x09000000, irq: 33}", "uart: {base: 0x09000000, irq: 33, driver: ns16550, reg_io_width: 4}",
         "qemu-virt.yaml:12:66: uart.reg_io_width: 4-byte registers every 1 bytes overlap (reg_shift 0): "
         "give reg_shift 2"),
        ("uart: {base: 0x09000000, irq: 33}", "uart: {base: 0x09000000, irq: 33, driver: ns16550, reg_shift: two}",
         "qemu-virt.yaml:12:63: uart.reg_shift: expected an integer (0, 1 or 2), got 'two'"),
        # RAM as a list of DRAM banks (platforms/zcu102.yaml)
        (RAM, "ram: [{base: 0x40000000, size: 1G}, {base: 0x60000000, size: 1G}]",
         "qemu-virt.yaml:6:37: ram[1]: RAM bank 0x60000000-0x9fffffff overlaps ram[0] (0x40000000-0x7fffffff)\n"
         "qemu-virt.yaml:8:10: staging: staging area 0xa0000000-0xbfffffff is not inside the first RAM bank "
         "(0x40000000-0x7fffffff)"),
        (RAM, "ram: [{base: 0x40000000, size: 1G}, {base: 0x100000000, size: 1G}, {base: 0x180000000, size: 1G}]",
         "qemu-virt.yaml:6:6: ram: RAM size 0xc0000000 is larger than the QEMU memory 0x80000000\n"
         "qemu-virt.yaml:8:10: staging: staging area 0xa0000000-0xbfffffff is not inside the first RAM bank "
         "(0x40000000-0x7fffffff)"),
        (RAM, "ram: []", "qemu-virt.yaml:6:6: ram: expected at least one RAM bank {base, size}"),
        (RAM, "ram: [{base: 0x40000000, size: 2G}, {base: 0x100000000, size: 1M}, {base: 0x100100000, size: 1M}, "
              "{base: 0x100200000, size: 1M}, {base: 0x100300000, size: 1M}]",
         "qemu-virt.yaml:6:6: ram: 5 RAM banks: at most 4\n"
         "qemu-virt.yaml:6:6: ram: RAM size 0x80400000 is larger than the QEMU memory 0x80000000"),
    ],
)
def test_platform_error(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert platform_error(tmp_path, old, new) == expected


def test_ram_banks(write_config: WriteConfig) -> None:
    """The ZCU102's two DDR banks: VM memory fills the low bank first, then
    the high bank at 0x8_0000_0000; a PA between the banks is not RAM."""
    p = load_platform("zcu102")
    assert [(b.base, b.size) for b in p.banks] == [(0x0, 0x80000000), (0x800000000, 0x80000000)]
    assert p.ram == p.banks[0]
    path = write_config("""
        platform: zcu102
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 512M}], image: img.bin}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 1G}], image: img.bin}
        """)
    system = load_system(path, guest_sources=None)
    a, b = (vm.memory[0].pa for vm in system.vms)
    assert a + (512 << 20) <= 0x80000000 and b == 0x800000000  # the low bank cannot hold both
    assert "\t.nram = 2,\n\t.ram = { { 0x0, 0x80000000 }, { 0x800000000, 0x80000000 } },\n" in \
        generate(system, (), "c.yaml")
    gap = write_config("""
        platform: zcu102
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 1M, pa: 0x80000000}], image: img.bin}
        """)
    with pytest.raises(ConfigError) as info:
        load_system(gap, guest_sources=None)
    assert "vms[0].memory[0].pa: PA range 0x80000000-0x800fffff is outside platform RAM " \
           "(0x0-0x7fffffff, 0x800000000-0x87fffffff)" in str(info.value)


def test_reserved_memory_is_never_given_to_a_vm(write_config: WriteConfig) -> None:
    """The ZynqMP device trees mark 0x3ED00000 and 0x3EF00000 (256 KiB each)
    no-map: first-fit placement from PA 0 used to put VM memory over them."""
    p = load_platform("zcu102")
    reserved = [(r.base, r.size) for r in p.reserved]
    assert reserved == [(0x3ED00000, 0x40000), (0x3EF00000, 0x40000)]
    path = write_config("""
        platform: zcu102
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 256M}], image: img.bin}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 512M}], image: img.bin}
          - {name: c, cpus: [2], memory: [{ipa: 0x40000000, size: 256M}], image: img.bin}
        """)
    system = load_system(path, guest_sources=None)
    for vm in system.vms:
        pa, size = vm.memory[0].pa, vm.memory[0].size
        for base, rsize in reserved:
            assert pa + size <= base or base + rsize <= pa, (vm.name, hex(pa))
    assert system.vms[0].memory[0].pa == 0  # the first fit still starts at PA 0
    over = write_config("""
        platform: zcu102
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 2M, pa: 0x3EE00000}], image: img.bin}
        """)
    with pytest.raises(ConfigError) as info:
        load_system(over, guest_sources=None)
    assert "vms[0].memory[0].pa: PA range 0x3ee00000-0x3effffff overlaps reserved memory " \
           "0x3ef00000-0x3ef3ffff" in str(info.value)


def test_config_uses_given_platform_dir(write_config: WriteConfig, tmp_path: Path) -> None:
    pdir = tmp_path / "plats"
    pdir.mkdir()
    shutil.copy(PLATFORMS_DIR / "qemu-virt.yaml", pdir / "other.yaml")
    path = write_config(f"platform: other\nvms:\n  - {VM}\n")
    system = load_system(path, guest_sources=None, platforms_dir=pdir)
    assert system.platform.name == "qemu-virt"  # the file's own name: key
    assert system.platform.file == pdir / "other.yaml"


def test_gicv3_vms_see_their_gic_where_the_platform_says() -> None:
    """GICv3 ``vgicd``/``vgicr``: the i.MX 8M Plus's GIC is at 0x38800000,
    its VMs see theirs where the bare-metal guests look (QEMU virt's
    addresses); without the keys (qemu-virt) VMs see the physical frames'
    addresses. config.c and the VMs' device trees follow."""
    virt = load_platform("qemu-virt").gic
    assert (virt.vgicd, virt.vgicr) == (virt.gicd, virt.gicr) == (0x08000000, 0x080A0000)
    g = load_platform("imx8mp-evk").gic
    assert (g.gicd, g.gicr, g.vgicd, g.vgicr) == (0x38800000, 0x38880000, 0x08000000, 0x080A0000)
    assert [(what, r.base, r.size) for what, r in g.vm_frames(2)] == [
        ("the virtual GIC distributor", 0x08000000, 0x10000),
        ("the virtual GIC redistributors", 0x080A0000, 0x40000)]
    system = load_system(Path(__file__).parent / "configs" / "imx8mp-qemu.yaml", guest_sources=None)
    text = generate(system, (), "c.yaml")
    assert ".gicd = 0x38800000" in text and ".vgicd_ipa = 0x8000000" in text, text
    assert ".vgicr_ipa = 0x80a0000" in text, text


def test_gic_virq_is_a_quirk_of_the_platform_that_names_it() -> None:
    """``gic.virq: software`` (QEMU's imx8mp-evk, whose GIC's virtual IRQ line
    is not connected) reaches the hypervisor's make as GIC_VIRQ, so only that
    platform's objects contain core/vgic/vgic_v3_virq.c; the board itself and
    every other platform keep the wired line (and their objects)."""
    assert load_platform("imx8mp-evk-qemu").gic.virq == "software"
    assert {load_platform(n).gic.virq for n in ("imx8mp-evk", "qemu-virt", "zcu102", "rpi4b")} == {"wired"}
    quirk = load_system(Path(__file__).parent / "configs" / "imx8mp-qemu.yaml", guest_sources=None)
    board = load_system(Path(__file__).parents[1] / "configs" / "imx8mp-evk.yaml", guest_sources=None)
    assert "GIC_VIRQ=software" in hypervisor_make_args(quirk, Path("/o"))
    assert "GIC_VIRQ=wired" in hypervisor_make_args(board, Path("/o"))
    assert object_dir(quirk) != object_dir(board)


@pytest.mark.parametrize(("name", "old", "new", "expected"), [
    ("qemu-virt", "spare_ppis: [22],", "spare_ppis: [22], virq: always,",
     "qemu-virt.yaml:10:159: gic.virq: expected one of wired, software, got 'always'"),
    ("rpi4b", "gic: {version: 2,", "gic: {version: 2, virq: software,",
     "rpi4b.yaml:77:19: gic.virq: unknown key 'virq'; expected one of: version, driver, gicd, gicc, gich, gicv, "
     "page_stride, vgicd, vgicc, spis, maintenance_irq, spare_spis"),
])
def test_gic_virq_errors(tmp_path: Path, name: str, old: str, new: str, expected: str) -> None:
    assert platform_error(tmp_path, old, new, name) == expected
