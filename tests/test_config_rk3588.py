# SPDX-License-Identifier: Apache-2.0
"""The RK3588 platforms in the toolchain: heterogeneous CPUs (core types),
per-core-type bandwidth event models and their checks, DSU L3 way
partitions, and what reaches the hypervisor's config.c (docs/boards/rk3588.md,
docs/bandwidth.md "Per core type", docs/coloring.md "DSU L3 way
partitioning")."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.config import dsu
from bulkhead.generate.gen_c import generate
from bulkhead.layout.load import load_platform, load_system

WriteConfig = Callable[..., str]

BOARDS = ("rk3588-orangepi-5-plus", "rk3588-rock-5b")


def vm(name: str, cpus: str, extra: str = "") -> str:
    return f"  - {{name: {name}, cpus: [{cpus}], memory: [{{ipa: 0x40000000, size: 16M}}], image: img.bin{extra}}}\n"


def config(platform: str, *vms: str) -> str:
    return f"platform: {platform}\nvms:\n" + "".join(vms)


def error_of(path: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_system(path, guest_sources=None)
    return str(info.value)


@pytest.mark.parametrize("board", BOARDS)
def test_board_platforms(board: str) -> None:
    p = load_platform(board)
    assert p.mpidr == tuple(range(0, 0x800, 0x100))
    assert p.cpu_types == ("cortex-a55",) * 4 + ("cortex-a76",) * 4
    assert p.core_types == ("cortex-a55", "cortex-a76")
    assert p.qemu is None  # a board without a QEMU model
    assert (p.gic.version, p.gic.gicd, p.gic.gicr) == (3, 0xFE600000, 0xFE680000)
    assert (p.uart.base, p.uart.irq, p.uart.driver) == (0xFEB50000, 365, "dw8250")
    assert p.coloring is not None and p.coloring.n_llc == 64 and p.coloring.llc_bits == tuple(range(12, 18))
    assert p.dsu is not None and (p.dsu.l3_ways, p.dsu.groups) == (12, 4)
    pb = p.bandwidth
    assert pb is not None and pb.pmu_irq == 23
    a55, a76 = pb.core_type("cortex-a55"), pb.core_type("cortex-a76")
    assert a55 is not None and a76 is not None
    assert a55.events[0].number == 0x29 and a76.events[0].number == 0x51
    for ct in (a55, a76):
        assert ct.events[0].models == (("pessimistic", 128), ("optimistic", 64))


def test_check_prints_colors_models_and_mbps(write_config: WriteConfig,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(config(
        "rk3588-orangepi-5-plus",
        vm("little", "0, 1", ", colors: {llc: '0-31'}, bandwidth: {period_us: 1000, budget_mbps: 200, "
                             "model: optimistic}"),
        vm("big", "4, 5", ", colors: {llc: '32-63'}, bandwidth: {period_us: 1000, budget_mbps: 400}, l3_ways: 6"),
    ))
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert "coloring: LLC color bits 12-17 (64 colors), no bank bits" in out
    assert ("cortex-a55: read_write 0x29 L3D_CACHE_ALLOCATE x 128 B (pessimistic) | 64 B (optimistic); "
            "at most 900 MB/s per core") in out
    assert ("cortex-a76: read_write 0x51 L2D_CACHE_WR x 128 B (pessimistic) | 64 B (optimistic); "
            "at most 900 MB/s per core") in out
    rows = [line.split() for line in out.splitlines()]
    # little: 200 MB/s at 64 B per event = 3125 events per 1 ms, 100 MB/s per vCPU on the A55 event
    assert ["little", "all", "1000", "us", "read_write", "(optimistic)", "3125", "200", "100%", "-"] in rows
    assert ["0", "0x29", "L3D_CACHE_ALLOCATE", "cortex-a55", "1563", "100", "even"] in rows
    # big: 400 MB/s at 128 B per event (pessimistic, the default) = 3125 events
    assert ["big", "all", "1000", "us", "read_write", "(pessimistic)", "3125", "400", "100%", "-"] in rows
    assert ["1", "0x51", "L2D_CACHE_WR", "cortex-a76", "1562", "200", "even"] in rows
    assert "guaranteed total: 600 MB/s of 900 MB/s sustainable" in out
    assert "vm big: scheme ID 1, way groups 0,1, ways 0-5" in out
    assert "CLUSTERPARTCR_EL1 0x0000003c" in out
    assert cli.main(["check", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    big = next(v for v in doc["vms"] if v["name"] == "big")
    assert big["bandwidth"]["events"][0]["vcpu_events"] == [0x51, 0x51]
    assert big["bandwidth"]["events"][0]["vcpu_core_types"] == ["cortex-a76", "cortex-a76"]
    assert big["l3"] == {"scheme": 1, "groups": 3, "ways": [0, 1, 2, 3, 4, 5], "partcr": 0x3c}


def test_budget_over_a_core_types_limit(write_config: WriteConfig) -> None:
    # 2000 MB/s over two A76 vCPUs: 1000 MB/s each, above the A76's 900
    path = write_config(config("rk3588-orangepi-5-plus",
                               vm("big", "4, 5", ", bandwidth: {period_us: 1000, budget_mbps: 2000}")))
    text = error_of(path)
    assert text.startswith(
        "c.yaml:3:129: vms[0].bandwidth.budget_mbps: vCPU 0 (CPU 4, cortex-a76) would be granted 1000 MB/s "
        "under the pessimistic model, above the 900 MB/s limit of core type cortex-a76 "
        "(bandwidth.core_types.cortex-a76.max_mbps in "), text
    assert text.endswith("platforms/rk3588-orangepi-5-plus.yaml)"), text


def test_model_the_platform_does_not_offer(write_config: WriteConfig) -> None:
    path = write_config(config("rk3588-orangepi-5-plus",
                               vm("a", "0", ", bandwidth: {period_us: 1000, budget_mbps: 10, model: exact}")))
    assert error_of(path).startswith(
        "c.yaml:3:135: vms[0].bandwidth.model: the read_write event of core type cortex-a55 has no exact "
        "model (it has: pessimistic, optimistic)")


def test_a_vm_spans_core_types_only_if_told(write_config: WriteConfig) -> None:
    path = write_config(config("rk3588-orangepi-5-plus", vm("a", "3, 4")))
    assert error_of(path) == (
        "c.yaml:3:21: vms[0].cpus: the VM's CPUs are of different core types (CPU 3 cortex-a55, "
        "CPU 4 cortex-a76); say so with mixed_core_types: true")
    ok = write_config(config("rk3588-orangepi-5-plus", vm("a", "3, 4", ", mixed_core_types: true, bandwidth: "
                                                                       "{period_us: 1000, budget_mbps: 100}")))
    system = load_system(ok, guest_sources=None)
    c = generate(system, (), "c.yaml")
    assert "static const u32 vm0_bw_event[] = {\n\t0x29, 0x51,\n};" in c
    assert "\t.vcpu_event = vm0_bw_event,\n" in c


def test_overlapping_dsu_partitions(write_config: WriteConfig) -> None:
    path = write_config(config("rk3588-orangepi-5-plus",
                               vm("a", "0", ", l3_groups: [0, 1]"),
                               vm("b", "1", ", l3_groups: [1, 2]"),
                               vm("c", "2")))
    assert error_of(path) == (
        "c.yaml:4:94: vms[1].l3_groups[0]: way group 1 (ways 3-5) overlaps the L3 partition of vm a")


@pytest.mark.parametrize("extra, expected", [
    (", l3_ways: 4", "vms[0].l3_ways: 4 ways: the DSU partitions its 12 L3 ways in 4 groups of 3; give a "
                     "multiple of 3 up to 12"),
    (", l3_ways: 12", "vms[0]: the VMs' L3 partitions take every way group: b (scheme ID 0) would have no "
                      "L3 way left"),
    (", l3_groups: [4]", "vms[0].l3_groups[0]: expected a way group (integer 0-3), got 4"),
    (", l3_ways: 3, l3_groups: [1]", "vms[0].l3_groups: give l3_ways or l3_groups, not both"),
])
def test_dsu_errors(write_config: WriteConfig, extra: str, expected: str) -> None:
    path = write_config(config("rk3588-orangepi-5-plus", vm("a", "0", extra), vm("b", "1")))
    assert expected in error_of(path)


def test_l3_ways_need_a_dsu(write_config: WriteConfig) -> None:
    path = write_config(config("qemu-virt", vm("a", "0", ", l3_ways: 3")))
    text = error_of(path)
    assert text.startswith("c.yaml:3:91: vms[0].l3_ways: platform 'qemu-virt' has no DSU L3 way "
                           "partitioning (no 'dsu:' section in "), text
    assert text.endswith("platforms/qemu-virt.yaml)"), text


def test_dsu_plan_reaches_config_c(write_config: WriteConfig) -> None:
    path = write_config(config("rk3588-qemu", vm("a", "0", ", l3_groups: [3]"), vm("b", "4", ", l3_ways: 6"),
                               vm("c", "5")))
    system = load_system(path, guest_sources=None)
    plan = dsu.plan(system.spec)
    assert plan is not None
    # a: scheme 1 group 3; b: scheme 2 groups 0-1 (first fit); scheme 0 keeps group 2
    assert [(pt.vm, pt.scheme, pt.groups) for pt in plan.partitions] == [("a", 1, 0x8), ("b", 2, 0x3)]
    assert plan.rest == 0x4 and plan.partcr == 0x384  # nibbles: scheme 2 0x3, scheme 1 0x8, scheme 0 0x4
    c = generate(system, (), "c.yaml")
    assert "\t\t.l3_scheme = 1,\n\t\t.l3_groups = 0x8,\n" in c
    assert "\t\t.l3_scheme = 2,\n\t\t.l3_groups = 0x3,\n" in c
    assert "\t.dsu_groups = 4,\n\t.dsu_ways = 12,\n" in c
