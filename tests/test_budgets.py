# SPDX-License-Identifier: Apache-2.0
"""The hypervisor's size budget (issue #26 item 5, docs/performance.md
"Size budget"): configs/dual.yaml's hypervisor is built and its .text
compared with the budget recorded in bench/budgets.toml, through
bench/size.py --check; the check is shown to fail below the measurement.
What is built follows the platform and the configuration
(bulkhead/generate/features.py, hypervisor/Makefile): dual.yaml's
image holds none of the mechanisms it does not use, and a hypervisor built
without one stops the boot of a configuration that needs it (when config.c's
build-time refusal, tests/test_features.py, is taken out)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from bulkhead.generate import build, features
from bulkhead.layout import placement
from bulkhead.layout.load import load_spec

ROOT = Path(__file__).resolve().parent.parent


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


needs_cross = pytest.mark.skipif(shutil.which("aarch64-linux-gnu-gcc") is None
                                 or not (ROOT / "artefacts" / "linux" / "Image").exists(),
                                 reason="needs the AArch64 cross compiler and the Linux artefacts")


@pytest.fixture(scope="module")
def dual(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, list[tuple[str, int]]]:
    """configs/dual.yaml's hypervisor, built once: (output directory, .text, objects)."""
    size = _bench("size")
    config, _ = size.budget()
    out = tmp_path_factory.mktemp("size") / "dual"
    total, objs = size.measure(config, out)
    return out, total, objs


@needs_cross
def test_text_within_budget(dual: tuple[Path, int, list[tuple[str, int]]],
                            capsys: pytest.CaptureFixture[str]) -> None:
    size = _bench("size")
    config, budget = size.budget()
    out, total, objs = dual
    assert objs and total > 0
    assert total <= budget, (f"the hypervisor's .text for {config.name} is {total} bytes, above its budget "
                             f"of {budget} bytes (bench/budgets.toml; largest: {objs[:3]})")
    # the check itself: passes at the budget, fails (exit 1, both figures named) just below the measurement
    assert size.main(["--out", str(out), "--check"]) == 0
    # bench/size.py's smoke test (tests/qemu/test_bench_smoke.py): its table, the total and the 10 largest objects
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f"hypervisor .text for {config.name}: {total} bytes ({total / 1024:.1f} KiB); "
                        f"budget {budget} bytes"), lines
    assert [line.split() for line in lines[1:]] == [[str(n), name] for name, n in objs[:10]], lines
    assert size.main(["--out", str(out), "--check", "--budget", str(total - 1)]) == 1
    err = capsys.readouterr().err
    assert f".text is {total} bytes, above the budget of {total - 1} bytes" in err


def _names(elf: Path, code: bool = False) -> set[str]:
    """The symbols of ``elf`` (``code``: only those of .text, not config.c's tables)."""
    syms = subprocess.run(["aarch64-linux-gnu-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in syms.splitlines() if not code or line.split()[-2] in "Tt"}


@needs_cross
def test_platform_selection_leaves_out_what_virt_does_not_use(dual: tuple[Path, int, list[tuple[str, int]]]) -> None:
    """QEMU virt (GICv3, no QoS-400) and dual.yaml (no regulation, recolor
    pool, IDA, PCI function or L3 partition): none of those is linked; what
    Bao has on virt is (coloring, the SMMUv3 the platform always drives)."""
    names = _names(dual[0] / "hyp" / "bulkhead.elf")
    assert "vgic_v3_ops" in names and "vgic_v2_ops" not in names
    assert not {n for n in names if n.startswith("qos400_")}
    assert "__udivti3" not in names  # 128-bit divisions go through lib/div128.c
    left_out = ("bw_", "color_recolor", "recolor_", "color_ida", "pci_", "vpci_", "pcienum_", "dsu_", "sdei_",
                "irq_direct", "sgi_filter", "spintable_", "bcm2835_pm_")  # PSCI starts CPUs and powers off
    assert not {n for n in _names(dual[0] / "hyp" / "bulkhead.elf", code=True) if n.startswith(left_out)}
    assert "el2_vectors_pmu" not in names  # the regulator's vector table goes with it
    assert {"color_init", "color_set_next", "smmuv3_init", "dma_init", "el2_vectors"} <= names


@needs_cross
def test_text_has_no_alignment_padding_or_frame_pointers(dual: tuple[Path, int, list[tuple[str, int]]]) -> None:
    """Issues #38/#43 (.text at most 57,700 bytes): the boot code fills the
    first vector table's EL2t slots (the image's first 512 bytes; the other
    slots follow at +0x200, no 2 KiB-alignment padding), and no function
    sets up a frame pointer."""
    out = dual[0] / "hyp"
    syms = subprocess.run(["aarch64-linux-gnu-nm", str(out / "bulkhead.elf")], capture_output=True, text=True,
                          check=True).stdout
    addr = {line.split()[-1]: int(line.split()[0], 16) for line in syms.splitlines() if len(line.split()) == 3}
    assert addr["el2_vectors"] == addr["_start"] and addr["el2_vectors"] % 0x800 == 0
    assert addr["secondary_entry"] < addr["el2_vectors"] + 0x200
    table = re.search(r"^ \.text\.vectors\s+0x([0-9a-f]+)\s", (out / "bulkhead.map").read_text(), re.M)
    assert table and int(table.group(1), 16) == addr["el2_vectors"] + 0x200
    code = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", str(out / "bulkhead.elf")],
                          capture_output=True, text=True, check=True).stdout
    assert re.search(r"\tmov\tx29, sp$", code, re.M) is None


@pytest.mark.parametrize(("config", "on"), [
    ("configs/dual.yaml", set()),
    ("tests/configs/bw-basic.yaml", {"BW"}),
    ("tests/configs/color-recolor.yaml", {"RECOLOR"}),
    ("tests/configs/color-ida.yaml", {"BW", "IDA"}),  # IDA at each regulation period
    ("tests/configs/dma-stop-vm.yaml", {"PCI", "ITS"}),  # qemu-virt has gic.its
    ("tests/configs/rk3588-dsu.yaml", {"DSU"}),
    ("tests/configs/zcu102-qos.yaml", {"QOS"}),
    ("tests/configs/direct.yaml", {"DIRECT"}),
    ("configs/io-virtio.yaml", {"VIRTIO"}),
])
def test_features_follow_the_config(config: str, on: set[str]) -> None:
    """Each switch is on exactly when the configuration uses its mechanism."""
    system = placement.resolve(load_spec(ROOT / config, guest_sources=None))
    feats = features.features(system)
    assert set(feats) == {"BW", "RECOLOR", "IDA", "PCI", "ITS", "DSU", "DIRECT", "GICV4", "QOS", "VIRTIO"}
    assert {k for k, v in feats.items() if v} == on


# the GICv4 tables (drivers/gic/gicv3_its.c): vPE table, virtual pending and vLPI configuration tables
GICV4_TABLES = {"its_vpetab", "its_vpend", "its_vprop"}


def _section(elf: Path, name: str) -> int:
    out = subprocess.run(["aarch64-linux-gnu-size", "-A", str(elf)], capture_output=True, text=True, check=True).stdout
    return next(int(line.split()[1]) for line in out.splitlines() if line.split()[:1] == [name])


@needs_cross
def test_gicv4_tables_only_where_the_platform_has_a_gicv4(tmp_path: Path) -> None:
    """Issue #41: an ITS build (a VM owning an edu) on a GICv3 platform
    (qemu-virt) carries none of the GICv4 direct injection's tables; on
    qemu-virt-gicv4 (gic.v4) it has them, 640 KiB more of .dmamem."""
    config = (ROOT / "tests" / "configs" / "dma-stop-vm.yaml").read_text()
    dmamem = {}
    for platform, v4 in (("qemu-virt", False), ("qemu-virt-gicv4", True)):
        path = tmp_path / f"{platform}.yaml"
        path.write_text(config.replace("platform: qemu-virt\n", f"platform: {platform}\n"))
        with open("/dev/null", "w") as null:
            res = build.build(path, tmp_path / platform, log=null)
        assert features.features(res.system)["ITS"] and features.features(res.system)["GICV4"] == v4
        names = _names(res.elf)
        assert "its_init" in names and (GICV4_TABLES <= names if v4 else not GICV4_TABLES & names), platform
        dmamem[platform] = _section(res.elf, ".dmamem")
    assert dmamem["qemu-virt-gicv4"] - dmamem["qemu-virt"] >= 640 * 1024, dmamem


@needs_cross
@pytest.mark.skipif(shutil.which("qemu-system-aarch64") is None, reason="needs QEMU")
def test_hypervisor_without_the_regulator_refuses_a_regulated_config(tmp_path: Path) -> None:
    """bw-basic.yaml regulates a VM; its hypervisor rebuilt with BW=0 (what
    `bulkhead build` passes for a config without regulation), from a config.c
    without its build-time refusal, stops the boot naming the VM, before any
    VM runs, instead of running it unregulated."""
    with open("/dev/null", "w") as null:
        res = build.build(ROOT / "tests" / "configs" / "bw-basic.yaml", tmp_path / "bw", log=null)
    config_c = tmp_path / "bw" / "unchecked-config.c"
    config_c.write_text((tmp_path / "bw" / "config.c").read_text().replace(
        '#error "vm bw is regulated (bandwidth)', '// "vm bw is regulated (bandwidth)'))
    args = [a for a in build.hypervisor_make_args(res.system, tmp_path / "bw")
            if not a.startswith(("O=", "FEATURES_MK=", "CONFIG_C="))]
    off = tmp_path / "bw" / "hyp-off"
    fragment = build.write_features(tmp_path, {**features.contents(res.system), "BW": False}, "BW off")
    subprocess.run(["make", "-s", "--no-print-directory", "-C", str(ROOT / "hypervisor"), f"O={off}",
                    f"FEATURES_MK={fragment}", f"CONFIG_C={config_c}", *args], check=True, stdout=subprocess.DEVNULL)
    assert not {n for n in _names(off / "bulkhead.elf", code=True) if n.startswith("bw_")}
    # booted self-contained (it moves and checks its payload), in place of the placed ELF
    argv = [str(off / "bulkhead.elf") if a in (str(res.elf), str(res.placed_elf)) else a for a in res.qemu_argv]
    assert str(off / "bulkhead.elf") in argv
    try:
        out = subprocess.run([*argv, "-icount", "shift=0"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL).stdout
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    vm = res.system.vms[[v.spec.bandwidth is not None for v in res.system.vms].index(True)].name
    assert (f"PANIC: vm {vm} is regulated, and the hypervisor was built without the regulator (BW=0)"
            in out), out[-2000:]
    assert "bw: vm " not in out


def test_boot_bench_splits_a_firmware_chain() -> None:
    """bench/boot.py's split of a firmware boot: the firmware's part is the
    chain's `C entered` less the same image's under -kernel; TF-A's is the
    probe's BL33 entry, U-Boot's the rest, the hypervisor's from its entry to
    the last VM's first instruction; the parts add up to the total. Its
    `until` pattern waits for every VM (under TF-A the boot CPU's VM is not
    the last to start)."""
    boot = _bench("boot")

    def log(c_entered: int, firsts: dict[str, int]) -> list[str]:
        return [f"[bulkhead] boot phases (us since reset): C entered {c_entered}, console and MMU 1, GIC and DTB 2, "
                "images 3, VMs 4, interrupts and devices 5; starting the other CPUs",
                *(f"[bulkhead] vm {vm}: first guest instruction at {us} us" for vm, us in firsts.items())]

    direct = log(28, {"rt": 29414, "linux": 29417})
    chain = log(328637, {"linux": 358076, "rt": 359894})
    parts = boot.split(chain, direct, 15022.4)
    assert list(parts.values()) == [15022, 313587, 31285, 359894]
    assert sum(list(parts.values())[:-1]) == parts["total"]
    assert list(boot.split(chain, direct, None).values()) == [328609, 31285, 359894]
    system = placement.resolve(load_spec(ROOT / "configs" / "dual.yaml", guest_sources=None))
    until = re.compile(boot.until_last(system))
    text = "\n".join(chain)
    assert until.search(text) and not until.search(text.rsplit("\n", 1)[0])
