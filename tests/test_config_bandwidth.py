# SPDX-License-Identifier: Apache-2.0
"""The toolchain side of memory bandwidth reservation: the ``bandwidth:``
sections (platform, VM, system), their errors and warnings, the MB/s ->
events conversion and the per-vCPU split (checked against the hypervisor's C
code), the ``bulkhead check`` report, the generated ``struct cfg_bw`` and the
``--stats`` view."""

from __future__ import annotations

import io
import json
import random
import re
import shutil
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.config import bandwidth
from bulkhead.generate.gen_c import generate
from bulkhead.layout.load import PLATFORMS_DIR, load_system
from bulkhead.run import stats

WriteConfig = Callable[..., str]
ROOT = Path(__file__).resolve().parent.parent

VM = "{name: a, cpus: [0, 1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin"

# A Cortex-A53 board model (as on a ZCU102): L2 refills at 64 bytes each,
# separate read and write variants for the split tests.
BOARD_BW = """\
bandwidth:
  counter: event
  events: {read_write: {number: 0x17, bytes_per_event: 64, model: optimistic}}
  sustainable_mbps: 4000
  pmu_irq: 23
  counter_hz: 100000000
"""
SPLIT_BW = """\
bandwidth:
  counter: event
  events:
    read: {number: 0x2a, bytes_per_event: 128, model: pessimistic}
    write: {number: 0x2b, bytes_per_event: 64}
  sustainable_mbps: 4000
  pmu_irq: 23
"""


def platform_dir(tmp: Path, section: str | None) -> Path:
    """A platforms/ directory whose qemu-virt.yaml has ``section`` as its
    bandwidth model (None: no model)."""
    text = (PLATFORMS_DIR / "qemu-virt.yaml").read_text()
    text = re.sub(r"^bandwidth:\n(?:  .*\n)+", "", text, flags=re.M)
    if section is not None:
        text += section
    d = tmp / "platforms"
    d.mkdir(exist_ok=True)
    (d / "qemu-virt.yaml").write_text(text)
    return d


def load(path: str, platforms: Path | None = None) -> object:
    if platforms is None:
        return load_system(path, guest_sources=None)
    return load_system(path, guest_sources=None, platforms_dir=platforms)


def error_of(path: str, platforms: Path | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load(path, platforms)
    return str(info.value)


def warnings_of(path: str, platforms: Path | None = None) -> list[str]:
    system = load_system(path, guest_sources=None, **({"platforms_dir": platforms} if platforms else {}))
    return [str(w) for w in system.warnings]


# --- arithmetic ------------------------------------------------------------------


def test_conversion() -> None:
    # 200 MB/s over 1 ms at 64 B per event
    assert bandwidth.events_from_mbps(200, 1000, 64) == 3125
    assert bandwidth.events_from_mbps(100, 1000, 64) == 1562  # rounded down
    assert bandwidth.events_from_mbps(1, 1, 64) == 1  # at least one
    assert bandwidth.events_from_mbps(1000, 100, 128) == 781  # pessimistic A55: 2 x 64 B
    assert bandwidth.mbps_of(3125, 1000, 64) == 200.0


def test_split() -> None:
    assert bandwidth.split(10, 4, None) == ((3, 3, 2, 2), 0)
    assert bandwidth.split(1000, 3, (60, 30, 10)) == ((600, 300, 100), 0)
    assert bandwidth.split(1001, 2, (50, 25)) == ((500, 250), 251)


def test_python_and_c_agree(tmp_path: Path) -> None:
    """bulkhead/config/bandwidth.py mirrors hypervisor/isolation/bw_budget.c."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no native C compiler")
    rng = random.Random(5)
    cases = []
    for _ in range(300):
        n = rng.randint(1, 8)
        weights = None
        if rng.random() < 0.5:
            weights = [rng.randint(1, 100 // n) for _ in range(n)]
        cases.append((rng.randint(1, 10**5), rng.randint(1, 10**6), rng.choice([1, 32, 64, 128]),
                      rng.randint(1, 10**9), n, weights))
    driver = tmp_path / "drv.c"
    body = []
    for mbps, period, bpe, budget, n, weights in cases:
        w = "NULL" if weights is None else "(u32[]){" + ",".join(map(str, weights)) + "}"
        body.append(f"""{{ u32 s[8]; u64 r = bw_split({budget}ull, {n}, {w}, s);
            printf("%llu %llu", (unsigned long long)bw_events_from_mbps({mbps}, {period}, {bpe}),
                   (unsigned long long)r);
            for (int i = 0; i < {n}; i++) printf(" %u", s[i]);
            printf("\\n"); }}""")
    driver.write_text('#include <stdio.h>\n#include "isolation/bw_budget.h"\nint main(void) {\n'
                      + "\n".join(body) + "\nreturn 0; }\n")
    exe = tmp_path / "drv"
    subprocess.run([cc, "-std=c11", "-O1", f"-I{ROOT / 'hypervisor'}", str(driver),
                    str(ROOT / "hypervisor/isolation/bw_budget.c"), str(ROOT / "hypervisor/lib/div128.c"),
                    "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    for line, (mbps, period, bpe, budget, n, weights) in zip(out, cases, strict=True):
        shares, rest = bandwidth.split(budget, n, tuple(weights) if weights else None)
        expected = [bandwidth.events_from_mbps(mbps, period, bpe), rest, *shares]
        assert [int(x) for x in line.split()] == expected


# --- valid configs -----------------------------------------------------------------


def test_check_report(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, bandwidth: {{period_us: 1000, budget_events: 400000, weights: [75, 25], reclaim: true}}}}
          - {{name: b, cpus: [2], memory: [{{ipa: 0x40000000, size: 16M}}], image: img.bin, manager: true}}
        """)
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert "bandwidth: cycle counter (PMCCNTR); events: read_write 0x11 CPU_CYCLES x 1 B (notional)" in out
    rows = [re.split(r"\s{2,}", line.strip()) for line in out.splitlines()]
    assert ["a", "all", "1000 us", "read_write", "400000", "400", "100%", "reclaim"] in rows
    assert ["0", "300000", "300", "75%"] in rows
    assert ["1", "100000", "100", "25%"] in rows
    assert "guaranteed total: 400 MB/s of 1000 MB/s sustainable" in out
    assert "managers: b" in out

    assert cli.main(["check", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    bw = doc["vms"][0]["bandwidth"]
    assert bw["period_us"] == 1000 and bw["period_ticks"] == 62500 and bw["counter"] == "cycles"
    assert bw["events"][0]["vcpu_budgets"] == [300000, 100000]
    assert bw["reclaim"] is True and bw["weights"] == [75, 25]
    assert doc["vms"][1]["manager"] is True and "bandwidth" not in doc["vms"][1]


def test_vm_chooses_the_event_counter(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #12 item 4: a VM may be regulated on an event counter on a
    platform whose default is the cycle counter (and the C flag follows)."""
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, bandwidth: {{period_us: 1000, budget_events: 4000, counter: event}}}}
        """)
    assert cli.main(["check", path]) == 0
    rows = [re.split(r"\s{2,}", line.strip()) for line in capsys.readouterr().out.splitlines()]
    assert ["a", "all", "1000 us", "read_write", "4000", "4", "100%", "event-counter"] in rows
    assert cli.main(["check", "--json", path]) == 0
    assert json.loads(capsys.readouterr().out)["vms"][0]["bandwidth"]["counter"] == "event"
    c = generate(load_system(path, guest_sources=None), (), "c.yaml")
    assert "CFG_BW_CYCLES" not in c


def test_cycle_counter_on_split_events(write_config: WriteConfig, tmp_path: Path) -> None:
    platforms = platform_dir(tmp_path, SPLIT_BW)
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, bandwidth: {{period_us: 10, read_events: 1000, write_events: 1000, counter: cycles}}}}
        """)
    assert "the cycle counter cannot regulate them" in error_of(path, platforms)


def test_mbps_per_vcpu(write_config: WriteConfig, tmp_path: Path) -> None:
    platforms = platform_dir(tmp_path, BOARD_BW)
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, bandwidth: {{period_us: 100, budget_mbps: 1000}}}}
        """)
    system = load_system(path, guest_sources=None, platforms_dir=platforms)
    plan = bandwidth.plan(system.platform, system.vms[0].spec)
    assert plan is not None and not plan.cycles
    (ch,) = plan.channels
    # 1000 MB/s x 100 us / 64 B = 1562.5 -> 1562 events; even split
    assert ch.budget == 1562 and ch.shares == (781, 781) and ch.unshared == 0
    assert plan.period_ticks == 10000
    assert ch.mbps(100) == pytest.approx(999.68)
    text = bandwidth.report(system)
    assert "guaranteed total: 1000 MB/s of 4000 MB/s sustainable" in text
    assert "read_write 0x17 L2D_CACHE_REFILL x 64 B (optimistic)" in text


def test_read_write_budgets(write_config: WriteConfig, tmp_path: Path) -> None:
    platforms = platform_dir(tmp_path, SPLIT_BW)
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, bandwidth: {{period_us: 1000, read_mbps: 256, write_events: 1000}}}}
        """)
    system = load_system(path, guest_sources=None, platforms_dir=platforms)
    plan = bandwidth.plan(system.platform, system.vms[0].spec)
    assert plan is not None
    read, write = plan.channels
    assert (read.event.number, read.budget, read.shares) == (0x2A, 2000, (1000, 1000))
    assert (write.event.number, write.budget, write.shares) == (0x2B, 1000, (500, 500))
    c = generate(system, (), "c.yaml")
    assert "static const u32 vm0_bw_budget[] = {\n\t1000, 1000, 500, 500,\n};" in c
    assert ".nevents = 2," in c and ".event = { 0x2a, 0x2b }," in c and ".budget = { 2000, 1000 }," in c


def test_generated_c(write_config: WriteConfig) -> None:
    path = write_config(f"""
        platform: qemu-virt
        bandwidth: {{spare_sharing: true}}
        vms:
          - {VM}, bandwidth: {{period_us: 10, budget_events: 3000, weights: [60, 40], reclaim: true}}}}
          - {{name: b, cpus: [2], memory: [{{ipa: 0x40000000, size: 16M}}], image: img.bin, manager: true,
              on_fault: stop}}
        """)
    c = generate(load_system(path, guest_sources=None), (), "c.yaml")
    assert textwrap.dedent("""\
        static const u32 vm0_bw_budget[] = {
        \t1800, 1200,
        };
        static const u32 vm0_bw_weights[] = {
        \t60, 40,
        };
        static const struct cfg_bw vm0_bw = {
        \t.period_us = 10,
        \t.period_ticks = 625,
        \t.flags = CFG_BW_CYCLES | CFG_BW_RECLAIM,
        \t.nevents = 1,
        \t.event = { 0x11 },
        \t.budget = { 3000 },
        \t.vcpu_budget = vm0_bw_budget,
        \t.weights = vm0_bw_weights,
        };""") in c
    assert "\t\t.bw = &vm0_bw,\n" in c
    assert "\t\t.flags = CFG_VM_FAULT_STOP | CFG_VM_MANAGER,\n" in c
    assert ("static const struct cfg_bw_system bw_system = {\n\t.flags = CFG_BW_SPARE_SHARING,\n"
            "\t.overflow_poll_us = 5,\n\t.counter_hz = 62500000,\n\t.regulator_events = 200,\n};") in c
    assert "\t.bw = &bw_system,\n" in c


def test_unregulated_config_unchanged(write_config: WriteConfig) -> None:
    """No bandwidth section: nothing of the regulator in config.c."""
    path = write_config("""
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        """)
    c = generate(load_system(path, guest_sources=None), (), "c.yaml")
    tables = c.split("#ifndef NULL", 1)[1]  # after the limits every config.c asserts (gen_c.SHARED)
    assert "bw" not in tables and "MANAGER" not in tables


# --- errors ------------------------------------------------------------------------------

ERRORS: dict[str, tuple[str, str]] = {
    "period 0": (
        "bandwidth: {period_us: 0, budget_events: 100}",
        "c.yaml:3:108: vms[0].bandwidth.period_us: expected a period in microseconds (integer 1-1000000), got 0",
    ),
    "period too long": (
        "bandwidth: {period_us: 1000001, budget_events: 100}",
        "c.yaml:3:108: vms[0].bandwidth.period_us: expected a period in microseconds (integer 1-1000000), "
        "got 1000001",
    ),
    "budget 0": (
        "bandwidth: {period_us: 10, budget_events: 0}",
        "c.yaml:3:127: vms[0].bandwidth.budget_events: expected a number of events per period "
        "(integer 1-2147483647), got 0",
    ),
    "negative MB/s": (
        "bandwidth: {period_us: 10, budget_mbps: -5}",
        "c.yaml:3:125: vms[0].bandwidth.budget_mbps: expected a bandwidth in MB/s (integer 1-1000000000), got -5",
    ),
    "budget as a string": (
        "bandwidth: {period_us: 10, budget_mbps: '200M'}",
        "c.yaml:3:125: vms[0].bandwidth.budget_mbps: expected a bandwidth in MB/s (integer 1-1000000000), "
        "got '200M'",
    ),
    "two budgets": (
        "bandwidth: {period_us: 10, budget_mbps: 5, budget_events: 5}",
        "c.yaml:3:143: vms[0].bandwidth.budget_events: give budget_mbps or budget_events, not both",
    ),
    "no budget": (
        "bandwidth: {period_us: 10}",
        "c.yaml:3:96: vms[0].bandwidth: missing a budget: give budget_mbps or budget_events "
        "(or read_mbps/write_mbps on platforms with separate read and write events)",
    ),
    "no period": (
        "bandwidth: {budget_events: 10}",
        "c.yaml:3:96: vms[0].bandwidth: missing required key 'period_us'",
    ),
    "unknown key": (
        "bandwidth: {period_us: 10, budget_events: 10, burst: 3}",
        "c.yaml:3:131: vms[0].bandwidth.burst: unknown key 'burst'; expected one of: period_us, budget_mbps, "
        "budget_events, read_mbps, write_mbps, read_events, write_events, weights, reclaim, counter, model",
    ),
    "weights sum above 100": (
        "bandwidth: {period_us: 10, budget_events: 1000, weights: [60, 50]}",
        "c.yaml:3:142: vms[0].bandwidth.weights: the weights sum to 110%; at most 100% of the VM's budget "
        "can be shared out",
    ),
    "weights per vCPU": (
        "bandwidth: {period_us: 10, budget_events: 1000, weights: [100]}",
        "c.yaml:3:142: vms[0].bandwidth.weights: 1 weight for 2 vCPUs: give one weight per vCPU",
    ),
    "weight 0": (
        "bandwidth: {period_us: 10, budget_events: 1000, weights: [100, 0]}",
        "c.yaml:3:148: vms[0].bandwidth.weights[1]: expected a weight in percent (integer 1-100), got 0",
    ),
    "weight share rounds to 0": (
        "bandwidth: {period_us: 10, budget_events: 50, weights: [99, 1]}",
        "c.yaml:3:145: vms[0].bandwidth.weights[1]: vCPU 1's share (1% of 50 events) rounds to 0 events "
        "per period",
    ),
    "less than one event per vCPU": (
        "bandwidth: {period_us: 10, budget_events: 1}",
        "c.yaml:3:127: vms[0].bandwidth.budget_events: a budget of 1 event per period is less than one per "
        "vCPU (2 vCPUs)",
    ),
    "share below the regulator's cost": (  # issue #12 item 3: the vCPU would be starved
        "bandwidth: {period_us: 10, budget_events: 150}",
        "c.yaml:3:127: vms[0].bandwidth.budget_events: the smallest vCPU share (75 events per period) is less "
        "than the regulator's own cost on platform 'qemu-virt' (about 200 events per period, charged to the "
        "vCPU): the vCPU would be starved; give each vCPU at least 200 events per period",
    ),
    "unknown counter": (
        "bandwidth: {period_us: 10, budget_events: 2000, counter: pmccntr}",
        "c.yaml:3:142: vms[0].bandwidth.counter: expected one of cycles, event, got 'pmccntr'",
    ),
    "reclaim not a boolean": (
        "bandwidth: {period_us: 10, budget_events: 10, reclaim: 1}",
        "c.yaml:3:140: vms[0].bandwidth.reclaim: expected true or false, got 1",
    ),
    "manager not a boolean": (
        "manager: yes please",
        "c.yaml:3:94: vms[0].manager: expected true or false, got 'yes please'",
    ),
    "read budget without split events": (
        "bandwidth: {period_us: 10, read_mbps: 10, write_mbps: 10}",
        "c.yaml:3:123: vms[0].bandwidth.read_mbps: platform 'qemu-virt' has no separate read and write events: "
        "give budget_mbps or budget_events",
    ),
    "read without write": (
        "bandwidth: {period_us: 10, read_mbps: 10}",
        "c.yaml:3:96: vms[0].bandwidth: missing the write budget: give write_mbps or write_events",
    ),
    "mixed forms": (
        "bandwidth: {period_us: 10, budget_mbps: 10, write_mbps: 10}",
        "c.yaml:3:141: vms[0].bandwidth.write_mbps: give one budget: budget_mbps for all traffic, or read and "
        "write budgets, not both",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str, write_config: WriteConfig) -> None:
    snippet, expected = ERRORS[name]
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, {snippet}}}
        """)
    assert error_of(path) == expected


def test_spare_sharing_not_a_boolean(write_config: WriteConfig) -> None:
    path = write_config(f"""
        platform: qemu-virt
        bandwidth: {{spare_sharing: sometimes}}
        vms:
          - {VM}}}
        """)
    assert error_of(path) == ("c.yaml:2:28: bandwidth.spare_sharing: expected true or false, "
                              "got 'sometimes'")


def test_platform_without_model(write_config: WriteConfig, tmp_path: Path) -> None:
    platforms = platform_dir(tmp_path, None)
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, bandwidth: {{period_us: 10, budget_events: 10}}}}
        """)
    assert error_of(path, platforms) == ("c.yaml:3:96: vms[0].bandwidth: platform 'qemu-virt' has no "
                                         "bandwidth model (add a 'bandwidth:' section to platforms/qemu-virt.yaml)")


def test_whole_budget_on_split_platform(write_config: WriteConfig, tmp_path: Path) -> None:
    platforms = platform_dir(tmp_path, SPLIT_BW)
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, bandwidth: {{period_us: 10, budget_mbps: 10}}}}
        """)
    assert error_of(path, platforms) == (
        "c.yaml:3:125: vms[0].bandwidth.budget_mbps: platform 'qemu-virt' counts reads and writes separately: "
        "give read_mbps and write_mbps (or read_events/write_events)")


def test_budget_over_counter_range(write_config: WriteConfig, tmp_path: Path) -> None:
    platforms = platform_dir(tmp_path, BOARD_BW.replace("bytes_per_event: 64", "bytes_per_event: 1"))
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, bandwidth: {{period_us: 1000000, budget_mbps: 3000}}}}
        """)
    assert error_of(path, platforms) == (
        "c.yaml:3:130: vms[0].bandwidth.budget_mbps: 3000000000 events per period is more than the counter "
        "can take (2147483647): use a shorter period or a smaller budget")


PLATFORM_ERRORS: dict[str, tuple[str, str]] = {
    "pmu irq is a timer": (
        BOARD_BW.replace("pmu_irq: 23", "pmu_irq: 26"),
        "bandwidth.pmu_irq: PPI 26 is already timer.hyp_irq",
    ),
    "pmu irq not a PPI": (
        BOARD_BW.replace("pmu_irq: 23", "pmu_irq: 40"),
        "bandwidth.pmu_irq: expected a PPI (integer 16-31) or a list of one SPI per CPU, got 40",
    ),
    "pmu spis not one per cpu": (
        BOARD_BW.replace("pmu_irq: 23", "pmu_irq: [100, 101]"),
        "bandwidth.pmu_irq: 2 SPIs for 4 CPUs: give one per CPU, in the order of cpus",
    ),
    "pmu spi given twice": (
        BOARD_BW.replace("pmu_irq: 23", "pmu_irq: [100, 101, 100, 103]"),
        "bandwidth.pmu_irq[2]: SPI 100 is given twice",
    ),
    "pmu spi is the uart's": (
        BOARD_BW.replace("pmu_irq: 23", "pmu_irq: [100, 33, 102, 103]"),
        "bandwidth.pmu_irq[1]: SPI 33 is already uart.irq",
    ),
    "pmu spi beyond the gic": (
        BOARD_BW.replace("pmu_irq: 23", "pmu_irq: [100, 101, 102, 300]"),
        "bandwidth.pmu_irq[3]: SPI 300 is beyond the GIC's 256 SPIs (INTIDs 32-287)",
    ),
    "pmu spi list with a ppi": (
        BOARD_BW.replace("pmu_irq: 23", "pmu_irq: [100, 23, 102, 103]"),
        "bandwidth.pmu_irq[1]: expected an SPI (integer 32-1019), got 23",
    ),
    "pmu spi list empty": (
        BOARD_BW.replace("pmu_irq: 23", "pmu_irq: []"),
        "bandwidth.pmu_irq: expected a PPI (integer 16-31) or a list of one SPI per CPU, got an empty list",
    ),
    "fallback on the cycle counter": (
        BOARD_BW.replace("counter: event", "counter: cycles") + "  fallback: {event: 0x11, overflow_poll_us: 5}\n",
        "bandwidth.fallback: a fallback event needs counter: event",
    ),
    "fallback event 0": (
        BOARD_BW + "  fallback: {event: 0, overflow_poll_us: 5}\n",
        "bandwidth.fallback.event: expected a PMU event number (integer 1-0x3f), got 0",
    ),
    "fallback without poll": (
        BOARD_BW + "  fallback: {event: 0x11}\n",
        "bandwidth.fallback: missing required key 'overflow_poll_us'",
    ),
    "cycles with split events": (
        SPLIT_BW.replace("counter: event", "counter: cycles"),
        "bandwidth.events: counter: cycles regulates on one counter: give only a read_write event",
    ),
    "no events": (
        BOARD_BW.replace("events: {read_write: {number: 0x17, bytes_per_event: 64, model: optimistic}}",
                         "events: {}"),
        "bandwidth.events: at least one event is required (read_write, or read and write)",
    ),
    "read without write": (
        SPLIT_BW.replace("    write: {number: 0x2b, bytes_per_event: 64}\n", ""),
        "bandwidth.events: give a read_write event, or both read and write events",
    ),
    "bad model": (
        BOARD_BW.replace("optimistic", "hopeful"),
        "bandwidth.events.read_write.model: expected one of exact, pessimistic, optimistic, notional, "
        "got 'hopeful'",
    ),
    "zero bytes per event": (
        BOARD_BW.replace("bytes_per_event: 64", "bytes_per_event: 0"),
        "bandwidth.events.read_write.bytes_per_event: expected a number of bytes per event (integer 1-4096), "
        "got 0",
    ),
    "unknown counter": (
        BOARD_BW.replace("counter: event", "counter: instructions"),
        "bandwidth.counter: expected one of cycles, event, got 'instructions'",
    ),
}


@pytest.mark.parametrize("name", sorted(PLATFORM_ERRORS))
def test_platform_errors(name: str, write_config: WriteConfig, tmp_path: Path) -> None:
    section, expected = PLATFORM_ERRORS[name]
    platforms = platform_dir(tmp_path, section)
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}}}
        """)
    err = error_of(path, platforms)
    assert re.fullmatch(r"\S*qemu-virt\.yaml:\d+:\d+: " + re.escape(expected), err), err


def test_zynqmp_pmu_spis_and_fallback(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    """The ZCU102's model: one PMU SPI per CPU (routed to it by the hypervisor),
    VMs see the guest platform's PPI 23, and the fallback event QEMU counts."""
    path = write_config("""
        platform: zcu102
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin,
             bandwidth: {period_us: 1000, budget_mbps: 64}}
        """)
    system = load_system(path, guest_sources=None)
    pb = system.platform.bandwidth
    assert pb is not None and pb.pmu_spis == (175, 176, 177, 178) and pb.pmu_irq == 0
    assert system.platform.pmu_irq == 23  # what VMs see
    assert pb.fallback is not None and (pb.fallback.event, pb.fallback.overflow_poll_us) == (0x11, 5)
    c = generate(system, (), "c.yaml")
    assert "\t.pmu_irq = 23,\n" in c and "\t.pmu_spi = { 175, 176, 177, 178 },\n" in c  # bandwidth's member
    assert "\t.fallback_event = 0x11,\n\t.fallback_poll_us = 5,\n" in c
    assert "\t.event = { 0x19 },\n\t.budget = { 1000 },\n" in c  # 64 MB/s x 1 ms / 64 B
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert "bandwidth: event counters; events: read_write 0x19 BUS_ACCESS x 64 B (optimistic)\n" \
           "  on a CPU without them (QEMU): event 0x11 instead, the overflow looked for every 5 us\n" in out


# --- warnings ------------------------------------------------------------------------------


def test_oversubscription_warns(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config("""
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin,
             bandwidth: {period_us: 1000, budget_mbps: 700}}
          - {name: b, cpus: [1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin,
             bandwidth: {period_us: 100, budget_events: 60000}}
        """)
    assert cli.main(["check", path]) == 0
    captured = capsys.readouterr()
    assert ("bulkhead: warning: c.yaml:3:3: vms: the guaranteed bandwidth budgets sum to 1300 MB/s, above the "
            "1000 MB/s platform 'qemu-virt' sustains: they cannot all be met") in captured.err
    assert "guaranteed total: 1300 MB/s of 1000 MB/s sustainable  (OVER: not every budget can be met)" \
        in captured.out


def test_other_warnings(write_config: WriteConfig, tmp_path: Path) -> None:
    platforms = platform_dir(tmp_path, BOARD_BW)
    path = write_config("""
        platform: qemu-virt
        bandwidth: {spare_sharing: true}
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin,
             bandwidth: {period_us: 10, budget_mbps: 1, reclaim: true}}
        """)
    assert warnings_of(path, platforms) == [
        "c.yaml:5:46: vms[0].bandwidth.budget_mbps: 1 MB/s is less than one 64-byte event per 10 us period; "
        "the budget is 1 event per period",
        "c.yaml:5:58: vms[0].bandwidth.reclaim: reclaim has no effect on a VM with one vCPU",
    ]
    path = write_config("""
        platform: qemu-virt
        bandwidth: {spare_sharing: true}
        vms:
          - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
        """, "d.yaml")
    assert warnings_of(path) == ["d.yaml:2:28: bandwidth.spare_sharing: spare sharing has no effect: "
                                 "no VM is regulated"]


def test_share_below_the_regulator_cost_warns(write_config: WriteConfig) -> None:
    path = write_config("""
        platform: qemu-virt
        vms:
          - {name: a, cpus: [0, 1], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin,
             bandwidth: {period_us: 10, budget_events: 600, weights: [50, 40]}}
          - {name: b, cpus: [2], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin,
             bandwidth: {period_us: 10, budget_events: 400}}
        """)
    assert warnings_of(path) == [
        "c.yaml:4:48: vms[0].bandwidth.budget_events: the smallest vCPU share (240 events per period) is "
        "less than twice the regulator's own cost on platform 'qemu-virt' (about 200 events per period, "
        "charged to the vCPU): the vCPU may make little or no progress",
    ]


# --- bulkhead run --stats --------------------------------------------------------------------


def test_stats_view() -> None:
    out, err = io.StringIO(), io.StringIO()
    view = stats.StatsView(out, err, stats.stats_timebase(0))
    view.write("[bw] hello\n[bulkhead] bw vm=bw vcpu=0 last=300421 max=300476 mean=300209 thr")
    view.write("ottled=19 stalled_us=13284\n[bulkhead] bw vm=bw vcpu=1 last=5 max=6 mean=5 throttled=0 "
               "stalled_us=0\n[bw] partial")
    view.flush()
    view.close()
    assert out.getvalue() == "[bw] hello\n[bw] partial"
    table = err.getvalue().splitlines()
    assert table[0] == "bandwidth (events per period; virtual time, --icount 0), update 1:"
    assert re.split(r"\s+", table[2].strip()) == ["bw", "0", "300421", "300476", "300209", "19", "13284"]
    assert re.split(r"\s+", table[3].strip()) == ["bw", "1", "5", "6", "5", "0", "0"]
    assert stats.parse_stats("[bulkhead] bw: vm bw: 1 cycles per 1 us over 1 vCPU(s)") is None


def test_stats_view_sgi_dropped() -> None:
    """Ctrl-T b's ``sgi vm=`` lines (a direct VM's dropped SGI writes) are
    kept out of the console and shown as a table of their own."""
    out, err = io.StringIO(), io.StringIO()
    view = stats.StatsView(out, err, stats.stats_timebase(0))
    view.write("[bulkhead] bw vm=d vcpu=1 last=5 max=6 mean=5 throttled=0 stalled_us=0\n"
               "[bulkhead] sgi vm=d dropped=1789\n[bulkhead] sgi vm=calm dropped=0\n[d] text\n")
    view.flush()
    view.write("[bulkhead] sgi vm=d dropped=1800\n")
    view.flush()
    view.close()
    assert out.getvalue() == "[d] text\n"
    text = err.getvalue().splitlines()
    at = text.index("direct VMs' SGI writes dropped or filtered, update 2:")
    assert [re.split(r"\s+", ln.strip()) for ln in text[at + 1:at + 4]] == [
        ["VM", "SGI_WRITES_DROPPED"], ["calm", "0"], ["d", "1800"]]
    assert stats.parse_sgi_stats("[bulkhead] sgi vm=d dropped=12") == ("d", 12)
    assert stats.parse_sgi_stats("[bulkhead] sgi vm=d dropped=x") is None


@pytest.mark.parametrize("icount", [None, 0, 3])
def test_run_stats_time_base(icount: int | None, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`run --stats` names the time base of its figures; without --icount it
    warns once on stderr, before QEMU runs, that they are host-time artefacts."""
    from bulkhead.run import runner
    from bulkhead.run.backend import RunOptions

    seen: list[str] = []

    def fake_run(config: Path, options: RunOptions) -> runner.RunResult:
        seen.append(capsys.readouterr().err)  # what was printed before the run
        assert options.poke == (stats.STATS_POKE, 0.25)  # regulated: Ctrl-T b every 0.25 s
        assert options.stream is not None
        options.stream.write("[bulkhead] bw vm=bw vcpu=0 last=16005345 max=16005345 mean=1 throttled=0 "
                             "stalled_us=0\n")
        options.stream.flush()
        return runner.RunResult(0, False, "", True, 1, "", ())

    monkeypatch.setattr(runner, "run", fake_run)
    # a regulated system: --stats pokes Ctrl-T b only when some VM is regulated
    (tmp_path / "cfg.yaml").write_text((Path(__file__).parent / "configs" / "bw-basic.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    argv = ["run", "cfg.yaml", "--stats", "--timeout", "5"] + ([] if icount is None else ["--icount", str(icount)])
    assert cli.main(argv) == 0
    before, after = seen[0], capsys.readouterr().err
    if icount is None:
        assert before.count("warning:") == 1 and "--stats without --icount" in before, before
        assert "host-dependent rate" in before and "host time" in before, before
        assert "warning" not in after, after
        assert "(events per period; host time, no --icount: not comparable to budgets), update 1:" in after
    else:
        assert before == "", before
        assert f"(events per period; virtual time, --icount {icount}), update 1:" in after, after


def test_starved_under_icount(write_config: WriteConfig) -> None:
    """Issue #12 item 3: QEMU's cycle counter and CPU_CYCLES count 2^shift per
    instruction, so under -icount shift the regulator's own cost grows with
    it; `run` refuses shares below regulator_events x 2^shift (200 x 4 here)."""
    path = write_config(f"""
        platform: qemu-virt
        vms:
          - {VM}, bandwidth: {{period_us: 10, budget_events: 1200}}}}
          - {{name: b, cpus: [2], memory: [{{ipa: 0x40000000, size: 16M}}], image: img.bin,
             bandwidth: {{period_us: 10, budget_events: 799, counter: event}}}}
          - {{name: c, cpus: [3], memory: [{{ipa: 0x40000000, size: 16M}}], image: img.bin,
             bandwidth: {{period_us: 10, budget_events: 800}}}}
        """)
    system = load_system(path, guest_sources=None)
    assert bandwidth.starved_under_icount(system, 0) == []
    assert bandwidth.starved_under_icount(system, 2) == [
        "vm a: a vCPU share of 600 cycles per period is less than the regulator's own cost at -icount shift=2 "
        "(200 x 2^2 = 800 cycles): the vCPU would be starved; raise the budget or lower --icount",
        "vm b: a vCPU share of 799 cycles per period is less than the regulator's own cost at -icount shift=2 "
        "(200 x 2^2 = 800 cycles): the vCPU would be starved; raise the budget or lower --icount",
    ]
