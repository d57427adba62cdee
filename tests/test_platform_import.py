# SPDX-License-Identifier: Apache-2.0
"""``bulkhead platform import``: platform files from Linux device trees.

The real DTBs come from Debian's arm64 kernel package (``scripts/setup.sh
dtbs`` puts them in artefacts/dtbs/); the importer must reproduce every
DT-derived value of the committed platform files. Small DTBs built with dtc
cover reserved-memory overlaps, GICv2 nodes, a missing PMU and each defect of
issue #40 (the figure over every DTB: test_platform_import_all.py).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_platform_import_all import checked_text, fill, todo_keys

from bulkhead.cli import main
from bulkhead.config.dtb import DeviceTree, DtError
from bulkhead.config.dtimport import import_dtb
from bulkhead.config.dtrender import render

ROOT = Path(__file__).resolve().parent.parent
DTBS = ROOT / "artefacts" / "dtbs"
BOARDS = {
    "zcu102": "xilinx/zynqmp-zcu102-rev1.0.dtb",
    "zcu104": "xilinx/zynqmp-zcu104-revC.dtb",
    "rk3588-orangepi-5-plus": "rockchip/rk3588-orangepi-5-plus.dtb",
    "rk3588-rock-5b": "rockchip/rk3588-rock-5b.dtb",
}


def dtb(board: str) -> Path:
    path = DTBS / BOARDS[board]
    if not path.is_file():
        pytest.fail(f"{path} is missing: run `bash scripts/setup.sh dtbs` (Debian's arm64 kernel DTBs)")
    return path


def committed(board: str) -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "platforms" / f"{board}.yaml").read_text())
    assert isinstance(doc, dict)
    return doc


def imported(board: str) -> dict[str, Any]:
    return import_dtb(DeviceTree.load(dtb(board))).document()


def banks(value: Any) -> list[tuple[int, int]]:
    items = value if isinstance(value, list) else [value]
    return [(int(b["base"]), _size(b["size"])) for b in items]


def _size(v: Any) -> int:
    if isinstance(v, int):
        return v
    units = {"K": 10, "M": 20, "G": 30}
    return int(v[:-1]) << units[v[-1]]


def cpus(value: list[Any]) -> list[tuple[int, str]]:
    return [(c, "") if isinstance(c, int) else (c["mpidr"], c["type"]) for c in value]


def assert_same_dt_values(board: str, new: dict[str, Any], old: dict[str, Any], devices: bool) -> None:
    if all(isinstance(c, int) for c in old["cpus"]):
        assert [m for m, _ in cpus(new["cpus"])] == old["cpus"], board
    else:
        assert cpus(new["cpus"]) == cpus(old["cpus"]), board
    if "ram" in new:
        assert banks(new["ram"]) == banks(old["ram"]), board
    # every no-map region of the DT is reserved in the file (which may add the firmware's)
    kept = banks(old.get("reserved", []))
    for base, size in banks(new.get("reserved", [])):
        assert any(b <= base and base + size <= b + s for b, s in kept), (board, hex(base))
    # every GIC key the DT gives equals the file's; spis is the one the file adds
    assert {k: v for k, v in old["gic"].items() if k != "spis"} == new["gic"], board
    assert new["timer"] == old["timer"], board
    assert new["uart"] == {"driver": "pl011", **old["uart"]}, board
    assert new["bandwidth"]["pmu_irq"] == old["bandwidth"]["pmu_irq"], board
    if devices:
        by_base = {d["base"]: d for d in new["devices"]}
        for d in old.get("devices", []):
            got = by_base.get(d["base"])
            assert got is not None, f"{board}: device {d['name']} at 0x{d['base']:x} not imported"
            for key in ("size", "irqs", "compatible"):
                assert got.get(key) == d.get(key), f"{board}: device {d['name']} {key}"
            assert got.get("dma", False) == d.get("dma", False), f"{board}: device {d['name']} dma"
            assert got.get("amba", False) == d.get("amba", False), f"{board}: device {d['name']} amba"


@pytest.mark.parametrize("board", ["zcu102", "zcu104"])
def test_zynqmp_dtbs_give_the_committed_values(board: str) -> None:
    new, old = imported(board), committed(board)
    assert_same_dt_values(board, new, old, devices=True)
    assert banks(new["reserved"]) == banks(old["reserved"]) == [(0x3ED00000, 0x40000), (0x3EF00000, 0x40000)]


@pytest.mark.parametrize("board", ["rk3588-orangepi-5-plus", "rk3588-rock-5b"])
def test_rk3588_dtbs_give_the_committed_values(board: str) -> None:
    new, old = imported(board), committed(board)
    assert "ram" not in new  # the RK3588 DTs have no memory node: U-Boot fills it in
    assert_same_dt_values(board, new, old, devices=False)
    assert new["coloring"]["llc"] == {"size": 3 << 20, "ways": 12, "line": 64}
    assert old["coloring"]["llc"] == {"size": "3M", "ways": 12, "line": 64}
    dma = {d["base"]: d for d in new["devices"] if d.get("dma")}
    for d in old.get("devices", []):
        assert d["base"] in dma if d.get("dma") else d["base"] not in dma, d["name"]


def test_rendered_file_cites_nodes_and_marks_todos(tmp_path: Path) -> None:
    out = tmp_path / "op5p.yaml"
    assert main(["platform", "import", str(dtb("rk3588-orangepi-5-plus")), "-o", str(out)]) == 0
    text = out.read_text()
    doc = yaml.safe_load(text)
    assert doc["cpus"][4] == {"mpidr": 0x400, "type": "cortex-a76"}
    assert "# [dt /cpus/cpu@400 reg, compatible arm,cortex-a76]" in text
    assert "PPI 7 = INTID 23 on cpu@0, cpu@100, cpu@200, cpu@300 (ppi-partitions" in text
    assert "/chosen stdout-path \"serial2:1500000n8\" -> /serial@feb50000" in text
    for todo in ("TODO ram:", "TODO hypervisor:", "TODO staging:", "TODO mmio:", "TODO gic.spis",
                 "TODO bandwidth:", "TODO coloring.l1_bits and bank_bits", "TODO qos_regulators"):
        assert todo in text, todo
    assert doc["uart"] == {"base": 0xFEB50000, "irq": 365, "driver": "dw8250"}


# --- small device trees ---------------------------------------------------------------------

HEAD = """/dts-v1/;
/ {
    #address-cells = <2>; #size-cells = <2>;
    model = "test board";
    interrupt-parent = <&gic>;
    cpus { #address-cells = <1>; #size-cells = <0>;
        cpu0: cpu@0 { device_type = "cpu"; compatible = "arm,cortex-a53"; reg = <0>; };
        cpu1: cpu@1 { device_type = "cpu"; compatible = "arm,cortex-a53"; reg = <1>; };
    };
    memory@40000000 { device_type = "memory"; reg = <0 0x40000000 0 0x40000000>; };
    timer { compatible = "arm,armv8-timer"; interrupts = <1 13 4>, <1 14 4>, <1 11 4>, <1 10 4>; };
    chosen { stdout-path = "/uart@9000000:115200n8"; };
    uart@9000000 { compatible = "arm,pl011", "arm,primecell"; reg = <0 0x09000000 0 0x1000>;
                   interrupts = <0 1 4>; };
"""
GICV2 = """    gic: intc@8000000 { compatible = "arm,cortex-a15-gic"; interrupt-controller; #interrupt-cells = <3>;
        reg = <0 0x08000000 0 0x1000>, <0 0x08010000 0 0x2000>, <0 0x08030000 0 0x2000>,
              <0 0x08040000 0 0x2000>;
        interrupts = <1 9 4>; };
"""
PMU = """    pmu { compatible = "arm,cortex-a53-pmu"; interrupts = <0 10 4>, <0 11 4>;
          interrupt-affinity = <&cpu1 &cpu0>; };
"""


def build_dtb(tmp_path: Path, body: str, head: str = HEAD) -> Path:
    if shutil.which("dtc") is None:
        pytest.fail("dtc is missing (scripts/setup.sh packages)")
    src = tmp_path / "t.dts"
    src.write_text(head + body + "};\n")
    out = tmp_path / "t.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(out), str(src)], check=True)
    return out


def test_overlapping_reserved_memory_is_merged(tmp_path: Path) -> None:
    path = build_dtb(tmp_path, GICV2 + PMU + """    reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;
        a@40100000 { reg = <0 0x40100000 0 0x100000>; no-map; };
        b@40180000 { reg = <0 0x40180000 0 0x100000>; no-map; };
        c@50000000 { reg = <0 0x50000000 0 0x1000>; no-map; };
        cma@60000000 { reg = <0 0x60000000 0 0x1000000>; reusable; };
    };
""")
    imp = import_dtb(DeviceTree.load(path))
    doc = imp.document()
    assert doc["reserved"] == [{"base": 0x40100000, "size": 0x180000}, {"base": 0x50000000, "size": 0x1000}]
    text = render(imp)
    assert ("/reserved-memory/a@40100000 reg, no-map + /reserved-memory/b@40180000 reg, no-map "
            "(overlapping: merged)") in text
    assert "cma@60000000: reserved without no-map" in text
    # the SPIs of the PMU follow interrupt-affinity into CPU order
    assert doc["bandwidth"]["pmu_irq"] == [43, 42]
    assert doc["gic"] == {"version": 2, "gicd": 0x08000000, "gicc": 0x08010000, "gich": 0x08030000,
                          "gicv": 0x08040000, "page_stride": 0x1000, "vgicd": 0x08000000,
                          "vgicc": 0x08010000, "maintenance_irq": 25}


def test_gicv2_without_virtualization_frames_is_a_todo(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # Linux needs GICH and GICV only for KVM (Qualcomm's DTs often leave them out): a TODO
    path = build_dtb(tmp_path, """    gic: intc@8000000 { compatible = "qcom,msm-qgic2"; interrupt-controller;
        #interrupt-cells = <3>; reg = <0 0x08000000 0 0x1000>, <0 0x08010000 0 0x2000>;
        interrupts = <1 9 4>; };
""" + PMU)
    out = tmp_path / "board.yaml"
    assert main(["platform", "import", str(path), "-o", str(out)]) == 0
    text = out.read_text()
    assert "# TODO gic: /intc@8000000 (qcom,msm-qgic2) is a GICv2 with 2 frame(s) in the DT, no GICH and GICV" \
           in text and "\ngic:" not in text
    assert "pmu_irq: [43, 42]" in text  # the GIC's interrupts still resolve
    imp = import_dtb(DeviceTree.load(path))
    assert checked_text(tmp_path, fill(text, imp)) == ""


def test_no_pmu_gives_a_file_with_a_todo(tmp_path: Path) -> None:
    imp = import_dtb(DeviceTree.load(build_dtb(tmp_path, GICV2)))
    assert "bandwidth" not in imp.document()
    assert "TODO: the device tree has no PMU node" in render(imp)


def test_pmu_spis_without_affinity_for_each_give_a_todo(tmp_path: Path) -> None:
    # Linux carries on without the PMU interrupt: the import writes a TODO naming the property
    path = build_dtb(tmp_path, GICV2 + """    pmu { compatible = "arm,armv8-pmuv3"; interrupts = <0 10 4>, <0 11 4>;
          interrupt-affinity = <&cpu0>; };
""")
    imp = import_dtb(DeviceTree.load(path))
    assert imp.pmu_irq is None and "bandwidth" not in imp.document()
    assert "# TODO: /pmu:interrupt-affinity: 2 SPIs need as many CPU phandles, got 1" in render(imp)


def test_cli_usage_and_help(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["platform", "import", "--help"]) == 0
    assert "DTB" in capsys.readouterr().out
    assert main(["platform", "import"]) == 2
    assert main(["platform", "import", str(tmp_path / "missing.dtb")]) == 1
    bad = tmp_path / "bad.dtb"
    bad.write_bytes(b"not a dtb")
    assert main(["platform", "import", str(bad)]) == 1
    assert "not a device tree blob" in capsys.readouterr().err


# --- issue #40: each defect of the importer, on a small device tree ------------------------

NOPMU_HEAD = HEAD.replace('    chosen { stdout-path = "/uart@9000000:115200n8"; };\n', "")


def imported_text(tmp_path: Path, body: str, head: str = HEAD) -> tuple[Any, str]:
    imp = import_dtb(DeviceTree.load(build_dtb(tmp_path, body, head)))
    return imp, render(imp)


def test_output_passes_check_after_only_its_todos(tmp_path: Path) -> None:
    # overlapping devices, a device whose window would take in RAM, an SMMU-500 and a master behind it
    imp, text = imported_text(tmp_path, GICV2 + PMU + """    smmu: iommu@a000000 { compatible = "arm,mmu-500";
        reg = <0 0x0a000000 0 0x20000>; #global-interrupts = <1>; #iommu-cells = <1>;
        interrupts = <0 40 4>, <0 41 4>; };
    eth@a100000 { compatible = "vendor,eth"; reg = <0 0x0a100000 0 0x1000>; interrupts = <0 5 4>;
                  iommus = <&smmu 0x21>; };
    eth@a100800 { compatible = "vendor,eth-alias"; reg = <0 0x0a100800 0 0x1000>; };
    far@80000000 { compatible = "vendor,far"; reg = <0 0x80000000 0 0x1000>; };
""")
    doc = imp.document()
    assert doc["smmus"] == [{"name": "smmu", "type": "smmu-500", "base": 0x0A000000, "size": 0x20000,
                             "irqs": {"event": 72, "gerror": 72}, "enable": "with-streams",
                             "sources": ["t.dtb node /iommu@a000000"]}]
    eth = next(d for d in doc["devices"] if d["base"] == 0x0A100000)
    assert eth["stream_ids"] == [0x21] and eth["dma"] is True
    assert [d["base"] for d in doc["devices"]] == [0x0A100000]
    assert "/eth@a100800 reg[0] 0xa100800+0x1000: overlaps /eth@a100000 reg[0]" in text
    assert "/far@80000000 reg[0] 0x80000000+0x1000: the window would take in RAM 0x40000000+0x40000000" in text
    assert "\nbandwidth:" not in text and "#   pmu_irq: [43, 42]" in text  # a TODO, not half a section
    assert todo_keys(text) <= {"board", "qemu", "hypervisor", "staging", "mmio", "gic.spis", "bandwidth",
                               "coloring", "qos_regulators"}
    assert checked_text(tmp_path, fill(text, imp)) == ""


def test_ns16550_console_names_its_register_spacing(tmp_path: Path) -> None:
    head = HEAD.replace('/uart@9000000:115200n8', '/serial@9100000').replace(
        "    uart@9000000 {", """    serial@9100000 { compatible = "fsl,ns16550", "ns16550a"; reg = <0 0x09100000 0 0x100>;
                      reg-shift = <0>; reg-io-width = <1>; interrupts = <0 7 4>; };
    dw@9200000 { compatible = "snps,dw-apb-uart"; reg = <0 0x09200000 0 0x100>; reg-shift = <2>;
                 reg-io-width = <4>; interrupts = <0 8 4>; };
    uart@9000000 {""")
    imp, _ = imported_text(tmp_path, GICV2 + PMU, head)
    assert imp.document()["uart"] == {"base": 0x09100000, "irq": 39, "driver": "ns16550", "reg_shift": 0,
                                      "reg_io_width": 1}
    (tmp_path / "b").mkdir()
    imp, _ = imported_text(tmp_path / "b", GICV2 + PMU, head.replace("/serial@9100000", "/dw@9200000"))
    assert imp.document()["uart"] == {"base": 0x09200000, "irq": 40, "driver": "dw8250"}


def test_memreserve_entries_are_reserved(tmp_path: Path) -> None:
    imp, text = imported_text(tmp_path, GICV2 + PMU, "/dts-v1/;\n/memreserve/ 0x40000000 0x1000;\n"
                              + HEAD.removeprefix("/dts-v1/;\n"))
    assert imp.document()["reserved"] == [{"base": 0x40000000, "size": 0x1000}]
    assert "0x40000000, size: 0x1000}  # [dt /memreserve/" in text
    # the next tree has none: the fdt library's entries list, shared by its
    # instances, kept the last tree's (it leaked into kv260's and versal's checks)
    (tmp_path / "again").mkdir()
    other, _ = imported_text(tmp_path / "again", GICV2 + PMU, HEAD)
    assert "reserved" not in other.document()


def test_a_lying_size_header_and_dts_text_are_clear_errors(tmp_path: Path) -> None:
    blob = bytearray(build_dtb(tmp_path, GICV2 + PMU).read_bytes())
    blob[4:8] = (len(blob) + 0x1000).to_bytes(4, "big")
    with pytest.raises(DtError, match=r"its header says \d+ bytes, the file has \d+"):
        DeviceTree(bytes(blob), "lying.dtb")
    for text in ((tmp_path / "t.dts").read_bytes(), b'#include "soc.dtsi"\n/ { model = "x"; };\n'):
        with pytest.raises(DtError, match="device tree source text"):
            DeviceTree(text, "t.dts")


def test_one_l2_per_cluster_takes_the_one_with_most_colors(tmp_path: Path) -> None:
    head = HEAD.replace("""        cpu1: cpu@1 { device_type = "cpu"; compatible = "arm,cortex-a53"; reg = <1>; };""",
                        """        cpu1: cpu@100 { device_type = "cpu"; compatible = "arm,cortex-a72"; reg = <0x100>;
                        next-level-cache = <&l2b>; };
        l2a: l2-cache0 { compatible = "cache"; cache-level = <2>; cache-size = <0x80000>;
                         cache-line-size = <64>; cache-sets = <512>; };
        l2b: l2-cache1 { compatible = "cache"; cache-level = <2>; cache-size = <0x100000>;
                         cache-line-size = <64>; cache-sets = <1024>; };""").replace(
        'compatible = "arm,cortex-a53"; reg = <0>;', 'compatible = "arm,cortex-a53"; reg = <0>; next-level-cache = <&l2a>;')
    imp, text = imported_text(tmp_path, GICV2, head)
    assert imp.llc == {"size": 0x100000, "ways": 16, "line": 64}  # the A72's: 16 colors, not the A53's 8
    assert "this one, of cpu@100, has the most colors (16); the others: /cpus/l2-cache0 (cpu@0: 8 colors)" in text


def test_every_register_window_is_kept_and_disabled_parents_disable(tmp_path: Path) -> None:
    imp, text = imported_text(tmp_path, GICV2 + PMU + """    pcie@a000000 { compatible = "vendor,pcie";
        reg = <0 0x0a000000 0 0x1000>, <0 0x0a200000 0 0x10000>; interrupts = <0 9 4>; };
    bus@b000000 { compatible = "simple-bus"; #address-cells = <2>; #size-cells = <2>; ranges;
                  status = "disabled";
        wdt@b000000 { compatible = "vendor,wdt"; reg = <0 0x0b000000 0 0x1000>; }; };
""")
    windows = [(d["base"], d["size"]) for d in imp.document()["devices"] if d["compatible"] == ["vendor,pcie"]]
    assert windows == [(0x0A000000, 0x1000), (0x0A200000, 0x10000)]
    assert "name: pcie0-r1, base: 0xA200000, size: 0x10000" in text and "# [dt /pcie@a000000 reg[1];" in text
    assert DeviceTree.load(tmp_path / "t.dtb").node("/bus@b000000/wdt@b000000").enabled is False  # type: ignore
    assert "# [dt /bus@b000000/wdt@b000000 (disabled)]" in text


def test_pmu_without_affinity_and_behind_another_controller(tmp_path: Path) -> None:
    imp, text = imported_text(tmp_path, GICV2 + """    pmu { compatible = "arm,cortex-a53-pmu";
          interrupts = <0 10 4>, <0 11 4>; };
""")
    assert imp.pmu_irq == [42, 43]  # CPU order, as Linux guesses
    assert "no interrupt-affinity: taken in CPU order" in text
    (tmp_path / "b").mkdir()
    imp, text = imported_text(tmp_path / "b", GICV2 + """    icu: intc@c000000 { compatible = "vendor,icu";
        interrupt-controller; #interrupt-cells = <2>; reg = <0 0x0c000000 0 0x1000>; };
    pmu { compatible = "arm,cortex-a53-pmu"; interrupt-parent = <&icu>; interrupts = <1 4>, <2 4>; };
""")
    assert imp.pmu_irq is None
    assert "# TODO: /pmu:interrupts: a PMU interrupt that is not a GIC SPI or PPI (its controller: " \
           "/intc@c000000)" in text


def test_interrupt_map_buses_reach_the_gic(tmp_path: Path) -> None:
    imp, _ = imported_text(tmp_path, GICV2 + PMU + """    bus@d000000 { compatible = "simple-bus"; #address-cells = <2>;
        #size-cells = <2>; ranges; #interrupt-cells = <1>; interrupt-map-mask = <0 0 7>;
        interrupt-map = <0 0 1 &gic 0 60 4>, <0 0 2 &gic 0 61 4>;
        dev@d000000 { compatible = "vendor,dev"; reg = <0 0x0d000000 0 0x1000>; interrupts = <2>; }; };
""")
    assert next(d for d in imp.devices if d["base"] == 0x0D000000)["irqs"] == [93]


def test_a_console_without_a_driver_is_a_todo(tmp_path: Path) -> None:
    head = HEAD.replace('"arm,pl011", "arm,primecell"', '"vendor,own-uart"')
    imp, text = imported_text(tmp_path, GICV2 + PMU, head)
    assert "uart" not in imp.document()
    assert "# TODO uart: no Bulkhead UART driver for compatible vendor,own-uart: write one" in text
    assert "#   uart: {base: 0x9000000, irq: 33, driver: TODO}" in text
    assert checked_text(tmp_path, fill(text, imp)) == ""


def test_no_gic_and_other_timer_ppis_are_todos(tmp_path: Path) -> None:
    # an armv7-timer compatible is the same timer; PPIs other than the SBSA's are a TODO (the
    # hypervisor routes 27 and 30), and so is a board without a GIC, naming its controller
    imp, text = imported_text(tmp_path, GICV2 + PMU, HEAD.replace("arm,armv8-timer", "arm,armv7-timer"))
    assert imp.timer == {"hyp_irq": 26, "virt_irq": 27, "phys_irq": 30, "secure_irq": 29}
    (tmp_path / "b").mkdir()
    imp, text = imported_text(tmp_path / "b", GICV2 + PMU, HEAD.replace("<1 11 4>, <1 10 4>", "<1 3 4>, <1 1 4>"))
    assert not imp.timer and "# TODO timer: /timer gives the EL1 virtual and physical timers PPIs 3 and 14" in text
    (tmp_path / "c").mkdir()
    imp, text = imported_text(tmp_path / "c", """    gic: intc@8000000 { compatible = "vendor,intc";
        interrupt-controller; #interrupt-cells = <3>; reg = <0 0x08000000 0 0x1000>; };
""" + PMU)
    assert not imp.gic and "# TODO gic: no GIC in the device tree (its interrupt controller: " \
                           "/intc@8000000 (vendor,intc))" in text
    assert checked_text(tmp_path / "c", fill(text, imp)) == ""
