# SPDX-License-Identifier: Apache-2.0
"""Memory bandwidth reservation under QEMU (docs/bandwidth.md).

Every run uses ``-icount shift=0``: one instruction is one nanosecond of
virtual time, and QEMU's cycle counter (what ``qemu-virt`` regulates on)
counts one per nanosecond, so a budget of B events is B ns of execution.
The guest (guests/bwprobe) timestamps its own progress and reports each run
(time between two stalls) and stall; the hypervisor's telemetry
(BH_HC_BW_STATS) gives the events it charged per period.

Bounds (measured, see docs/bandwidth.md "Skid"):
- a run never exceeds B + SKID_NS; it is shorter than B by at most
  ENTRY_NS (hypervisor work at the period start, charged to the guest);
- a stall is P - run, to within STALL_NS;
- the hypervisor charges at most B + SKID_EVENTS per period and overflow.

QEMU models no caches nor memory events: these tests check the mechanism
(budgets, periods, stalls, isolation of the regulator), not interference.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import test_hotpaths_check as thc

from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, run

pytestmark = pytest.mark.qemu

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "configs"
TIMEOUT = 180.0

SKID_NS = 1000  # a run beyond the budget (measured: never; runs end 0.2-0.7 us early)
# Printing one statistics line (the console command, in the console interrupt): not
# counted since issue #12 item 2 stopped the counter at EL2 on interrupts (measured: the
# max stays B + 21; 3,459 and 3,954 beyond when it was counted).
STATS_LINE_EVENTS = 0
# Events charged beyond a grant, per overflow (docs/bandwidth.md "Skid"). Since the
# counter stops at EL2 on interrupts: 21 (the vector's instructions before the filter
# write) in every test, at every period from 1 us to 1 ms. It was 2,500 when the exit
# path was counted (420 to 2,065, moving with code layout).
SKID_EVENTS = 100
# Where the statistics cover the guest's console output (seq and reclaim modes, the
# console tests): a period whose overflow comes during an output trap overruns by the
# rest of that trap, counted whole; a line flush takes 1,663-3,517 instructions
# (bench/hyptrace.py), measured overruns 185-1,104 per vCPU, 2,298 for a two-vCPU VM.
# The bound these tests had (2,500 per overflow) is kept for them.
OUTPUT_EVENTS = 2400
ENTRY_NS = 3000  # a run's shortfall: period-start work and QEMU's round robin (measured: 0.2-0.7 us)
STALL_NS = 3000
QEMU_A53_COUNTERS = 6  # PMCR_EL0.N of QEMU's cortex-a53
TRAP_EVENTS = 1000  # a trapped PMU access emulated by core/vpmu/vpmu.c (~350-700 instructions)

SEG_RE = re.compile(r"bwprobe: vcpu (\d+) seg (\d+) run_ns=(\d+) stall_ns=(\d+) work=(\d+)")
STATS_RE = re.compile(r"bwprobe: stats (\S+) last=(\d+) max=(\d+) mean=(\d+) throttles=(\d+) stalled_ns=(\d+)")


def boot(config: str | Path, name: str | None = None, **kw: Any) -> RunResult:
    path = Path(config) if Path(config).is_absolute() else CONFIGS / config
    out = ROOT / "build" / "qemu-tests" / (name or path.stem)
    return run(path, RunOptions(timeout=TIMEOUT, icount=0, out=out, **kw))


def describe(res: RunResult) -> str:
    return f"reason: {res.reason}\n--- output ---\n{res.output}"


def check_clean(res: RunResult) -> None:
    assert res.clean, describe(res)


def segments(res: RunResult, vm: str = "bw", vcpu: int = 0, phase: int = 0) -> list[tuple[int, int, int]]:
    """(run_ns, stall_ns, work) of each run of ``vcpu``, for its ``phase``-th
    measurement (a new one starts when the seg index restarts at 0)."""
    phases: list[list[tuple[int, int, int]]] = []
    for line in res.lines(vm):
        m = SEG_RE.fullmatch(line)
        if m and int(m[1]) == vcpu:
            if int(m[2]) == 0:
                phases.append([])
            phases[-1].append((int(m[3]), int(m[4]), int(m[5])))
    assert len(phases) > phase, describe(res)
    return phases[phase]


def stats(res: RunResult, vm: str = "bw") -> dict[str, dict[str, int]]:
    """The last BH_HC_BW_STATS report of each of the VM's vCPUs and the VM."""
    out: dict[str, dict[str, int]] = {}
    for line in res.lines(vm):
        m = STATS_RE.fullmatch(line)
        if m:
            out[m[1]] = dict(zip(("last", "max", "mean", "throttles", "stalled_ns"), map(int, m.groups()[1:]), strict=True))
    return out


def line_value(res: RunResult, vm: str, prefix: str) -> str:
    found = [line for line in res.lines(vm) if line.startswith(prefix)]
    assert found, describe(res)
    return found[-1]


def assert_regulated(segs: list[tuple[int, int, int]], budget_ns: int, period_ns: int, res: RunResult,
                     step_ns: int = 0) -> None:
    """step_ns: how long one step of the guest's loop takes beyond the usual
    (its timestamps are that much coarser)."""
    assert len(segs) >= 10, describe(res)
    for run_ns, stall_ns, _ in segs:
        assert budget_ns - ENTRY_NS - step_ns <= run_ns <= budget_ns + SKID_NS, (run_ns, describe(res))
        assert abs(stall_ns - (period_ns - run_ns)) <= STALL_NS + step_ns, (stall_ns, describe(res))
        assert period_ns - budget_ns - SKID_NS <= stall_ns, (stall_ns, describe(res))


def variant(tmp_path: Path, config: str, **subs: str) -> Path:
    """A copy of tests/configs/<config> with text substitutions."""
    text = (CONFIGS / config).read_text()
    for old, new in subs.items():
        assert old in text, old
        text = text.replace(old, new)
    out = tmp_path / config
    out.write_text(text)
    return out


@pytest.mark.parametrize(("period_us", "budget"), [(1000, 300000), (100, 30000), (10, 3000)])
def test_budget_and_stall(period_us: int, budget: int, tmp_path: Path) -> None:
    """With budget B per period P, every run is at most B plus the skid and
    every stall is P minus the run."""
    config = variant(tmp_path, "bw-basic.yaml", **{"period_us: 1000": f"period_us: {period_us}",
                                                   "budget_events: 300000": f"budget_events: {budget}",
                                                   "segs: 16": "segs: 16, gap_ns: 1500"})
    res = boot(config, f"bw-basic-{period_us}")
    check_clean(res)
    assert_regulated(segments(res), budget, period_us * 1000, res)
    st = stats(res)
    assert budget <= st["vcpu0"]["last"] <= budget + SKID_EVENTS, describe(res)
    assert st["vcpu0"]["throttles"] >= 16, describe(res)
    # the regulator's interrupts are exits of this CPU
    m = re.fullmatch(r"cpu_exits exits=(\d+) irq=(\d+) reg=(\d+)",
                     line_value(res, "bw", "bwprobe: cpu_exits").removeprefix("bwprobe: "))
    assert m and int(m[3]) >= 16, describe(res)


@pytest.mark.parametrize("load", ["spin", "mask", "pmu"])
def test_tamper(load: str, tmp_path: Path) -> None:
    """A guest that spins, masks its interrupts, or reprograms the PMU (all of
    its registers, the cycle counter and the reserved counter included) gets
    no more than its budget. It sees the counters the regulator leaves it
    (hypervisor/core/vpmu/vpmu.c): on qemu-virt the regulator counts on PMCCNTR,
    so all of QEMU's 6 event counters and no cycle counter."""
    # a step of the pmu load traps 20 times (7-12 us): stalls are longer than that
    gap = ", gap_ns: 20000" if load == "pmu" else ""
    config = variant(tmp_path, "bw-basic.yaml", **{"load: mem": f"load: {load}, tamper: 1{gap}"})
    res = boot(config, f"bw-tamper-{load}")
    check_clean(res)
    pmu = line_value(res, "bw", "bwprobe: pmu ")
    m = re.fullmatch(r"bwprobe: pmu pmcr=0x([0-9a-f]+) pmccntr=(\d+) evcntr=(\d+) after_writes=(\d+)", pmu)
    assert m, describe(res)
    assert (int(m[1], 16) >> 11) & 0x1F == QEMU_A53_COUNTERS, pmu  # PMCR_EL0.N: the guest's share
    assert int(m[1], 16) & 1 == 0, pmu  # PMCR_EL0.E reads as 0
    assert (m[2], m[3], m[4]) == ("0", "0", "0"), pmu
    # ... and the last timestamp of a run comes up to a step earlier
    assert_regulated(segments(res), 300000, 1000000, res, step_ns=15000 if load == "pmu" else 0)
    # an overflow during a trap is taken after it (interrupts are masked at
    # EL2): the pmu load's emulated accesses add up to one trap's length (measured:
    # max B + 1,126 once, B + 300-500 otherwise)
    skid = SKID_EVENTS + (TRAP_EVENTS if load == "pmu" else 0)
    st = stats(res)
    assert 300000 <= st["vcpu0"]["last"] <= 300000 + skid, describe(res)
    assert st["vcpu0"]["max"] <= 300000 + skid, describe(res)


def test_weights() -> None:
    """75/25 split of 400000 events: each vCPU, measured alone, runs its own
    share per period."""
    res = boot("bw-weights.yaml")
    check_clean(res)
    assert_regulated(segments(res, vcpu=0), 300000, 1000000, res)
    assert_regulated(segments(res, vcpu=1), 100000, 1000000, res)
    st = stats(res)
    skid = SKID_EVENTS + OUTPUT_EVENTS
    assert st["vcpu0"]["max"] <= 300000 + skid, describe(res)
    assert st["vcpu1"]["max"] <= 100000 + skid, describe(res)
    assert st["vm"]["max"] <= 300000 + skid, describe(res)  # never both at once



# The VM total covers the period in which vCPU 1 is powered on: it kept one
# event at that period's start (off) and takes from the pool before its first
# instruction (bw.c bw_unpark_hook). Left to that event's overflow, QEMU
# delivered the interrupt after the sibling CPU's round-robin slice, all of it
# charged: 641,797 (issue #12).
def test_reclaim() -> None:
    """600000 events split evenly, with reclaim: alone, vCPU 0 also uses its
    idle sibling's share (exceeding its own by no more than that share);
    beside a busy sibling it gets its own share only, and the VM never more
    than its budget."""
    res = boot("bw-reclaim.yaml")
    check_clean(res)
    share, vm_budget = 300000, 600000
    alone = segments(res, phase=0)
    assert len(alone) >= 10, describe(res)
    for run_ns, stall_ns, _ in alone:
        assert vm_budget - ENTRY_NS <= run_ns <= vm_budget + 2 * SKID_NS, (run_ns, describe(res))
        assert abs(stall_ns - (1000000 - run_ns)) <= STALL_NS, describe(res)
    samples = [tuple(map(int, m.groups())) for m in
               (re.fullmatch(r"bwprobe: sample \d+ vcpu0=(\d+) vcpu1=(\d+) vm=(\d+)", line) for line in res.lines("bw"))
               if m]
    assert len(samples) == 8, describe(res)
    for v0, v1, vm in samples:
        assert share <= v0 <= share + SKID_EVENTS + OUTPUT_EVENTS, describe(res)
        assert share <= v1 <= share + SKID_EVENTS + OUTPUT_EVENTS, describe(res)
        assert vm <= vm_budget + 2 * (SKID_EVENTS + OUTPUT_EVENTS), describe(res)
    # beside the sibling QEMU runs the two CPUs in turns (round robin), so the
    # guest sees shorter runs; never longer than its own share
    shared = segments(res, phase=1)
    assert len(shared) >= 10, describe(res)
    assert all(run_ns <= share + SKID_NS for run_ns, _, _ in shared), describe(res)
    assert stats(res)["vm"]["max"] <= vm_budget + 3 * (SKID_EVENTS + OUTPUT_EVENTS), describe(res)


@pytest.mark.parametrize("counter", ["cycles", "event"])
def test_unregulated_neighbour_unaffected(counter: str, tmp_path: Path) -> None:
    """The unregulated VM takes exactly the same exits, none of them for the
    regulator, and computes the same result, whether its neighbour is
    regulated or not, on the cycle counter or on an event counter (with its
    looks every 5 us on QEMU, see test_event_counter)."""
    pair = CONFIGS / "bw-pair.yaml" if counter == "cycles" else variant(
        tmp_path, "bw-pair.yaml", **{"budget_events: 30000": "budget_events: 30000\n      counter: event"})
    assert_neighbour_unaffected(pair, CONFIGS / "bw-pair-off.yaml", counter)


def assert_neighbour_unaffected(pair: Path, off: Path, tag: str) -> list[RunResult]:
    """Boots ``pair`` (VM `reg` regulated beside the unregulated `free`) and
    ``off`` (the same unregulated): `free` takes the same exits, none of them
    an interrupt or for the regulator, and computes the same checksum; `reg`'s
    CPU takes regulation exits only when regulated. Returns the two runs."""
    exits_re = re.compile(r"bwprobe: exits exits=(\d+) irq=(\d+) reg=(\d+) sum=(0x[0-9a-f]+)")
    results = {}
    runs = []
    for config in (pair, off):
        res = boot(config, f"{config.stem}-{tag}")
        check_clean(res)
        runs.append(res)
        m = exits_re.fullmatch(line_value(res, "free", "bwprobe: exits "))
        assert m, describe(res)
        results[config] = m.groups()
        cpu0 = re.fullmatch(r"bwprobe: cpu_exits exits=(\d+) irq=(\d+) reg=(\d+)",
                            line_value(res, "reg", "bwprobe: cpu_exits"))
        assert cpu0, describe(res)
        regulated = config == pair
        assert (int(cpu0[3]) > 100) == regulated, describe(res)  # the neighbour's CPU pays
    assert results[pair] == results[off]
    exits, irqs, reg, _ = results[pair]
    assert int(exits) > 200 and irqs == "0" and reg == "0"
    return runs


def test_spare_sharing() -> None:
    """Spare sharing on, one regulated vCPU: whenever it is throttled every
    regulated vCPU is, so it is released at once and never stalls long."""
    res = boot("bw-spare.yaml")
    check_clean(res)
    assert line_value(res, "bw", "bwprobe: vcpu 0 measure") == "bwprobe: vcpu 0 measure segs=0", describe(res)
    st = stats(res)["vcpu0"]
    assert st["throttles"] >= 15, describe(res)
    assert st["stalled_ns"] <= st["throttles"] * 2000, describe(res)
    assert st["last"] > 900000, describe(res)  # it ran (almost) the whole period


def test_manager_changes_budget() -> None:
    """A manager VM raises another VM's budget at run time; the change shows
    in the regulated VM's runs. Non-managers are denied."""
    res = boot("bw-manage.yaml")
    check_clean(res)
    assert res.lines("mgr")[:2] == ["bwprobe: set 0", "bwprobe: set bad vm -3"], describe(res)
    assert "bwprobe: self_set -4" in res.lines("bw"), describe(res)
    assert "[bulkhead] bw: vm bw: 500000 events per 1000 us (set by vm mgr)" in res.hyp_lines(), describe(res)
    segs = segments(res)
    assert len(segs) == 40, describe(res)
    assert_regulated(segs[:12], 200000, 1000000, res)
    assert_regulated(segs[-12:], 500000, 1000000, res)


def test_console_stats_command(tmp_path: Path) -> None:
    """Ctrl-T b on the console prints the regulator's statistics (what
    `bulkhead run --stats` shows)."""
    config = variant(tmp_path, "bw-basic.yaml", **{"period_us: 1000": "period_us: 10000",
                                                   "budget_events: 300000": "budget_events: 3000000",
                                                   "segs: 16": "segs: 64, window_ms: 1000"})
    res = boot(config, "bw-stats", poke=(b"\x14b", 0.05))
    check_clean(res)
    lines = [line for line in res.hyp_lines() if line.startswith("[bulkhead] bw vm=")]
    assert lines, describe(res)
    rx = re.compile(r"\[bulkhead\] bw vm=bw vcpu=0 last=(\d+) max=(\d+) mean=\d+ throttled=(\d+) "
                    r"stalled_us=(\d+)")
    for line in lines:
        m = rx.fullmatch(line)
        assert m, line
        # The command itself runs at EL2 on the regulated vCPU's CPU, in the
        # console interrupt, which the counter does not count (issue #12
        # item 2): its printing is not charged.
        assert int(m[2]) <= 3000000 + SKID_EVENTS + OUTPUT_EVENTS + STATS_LINE_EVENTS, line
    assert any(int(m[3]) > 0 and int(m[4]) > 0 for m in map(rx.fullmatch, lines) if m), lines


def test_run_stats_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`bulkhead run --stats` shows the statistics as a table on stderr and
    keeps the `bw vm=` lines out of the console output."""
    from bulkhead import cli

    config = variant(tmp_path, "bw-basic.yaml", **{"period_us: 1000": "period_us: 10000",
                                                   "budget_events: 300000": "budget_events: 3000000",
                                                   "segs: 16": "segs: 64, window_ms: 1000"})
    out = ROOT / "build" / "qemu-tests" / "bw-stats-cli"
    assert cli.main(["run", str(config), "--stats", "--icount", "0", "--timeout", str(TIMEOUT),
                     "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "bwprobe: PASS (measure)" in captured.out
    assert "bw vm=" not in captured.out
    assert "warning" not in captured.err, captured.err  # --icount: no host-time warning
    tables = captured.err.split("bandwidth (events per period; virtual time, --icount 0), update ")
    assert len(tables) >= 2, captured.err  # at least the one asked for at boot
    rows = [line.split() for line in tables[-1].splitlines()[1:]]
    assert rows[0] == ["VM", "VCPU", "LAST", "MAX", "MEAN", "THROTTLED", "STALLED_US"], captured.err
    # (the statistics lines are printed in the console interrupt, not charged: see test_console_stats_command)
    assert rows[1][:2] == ["bw", "0"] and \
        int(rows[1][3]) <= 3000000 + SKID_EVENTS + OUTPUT_EVENTS + STATS_LINE_EVENTS, \
        captured.err


def test_telemetry_counts_complete_periods_only(tmp_path: Path) -> None:
    """Issue #10 item 4: BH_HC_BW_STATS reports what the regulation charged
    per complete period. Under a 100,000-cycle / 1 ms budget the boot period
    (the hypervisor loading images before the guest runs, counted at EL2) used
    to show as a max of millions of events; now max and mean stay within the
    budget plus the documented skid."""
    budget = 100000
    config = variant(tmp_path, "bw-basic.yaml", **{"budget_events: 300000": f"budget_events: {budget}"})
    res = boot(config, "bw-telemetry")
    check_clean(res)
    st = stats(res)["vcpu0"]
    assert st["throttles"] >= 16, describe(res)
    assert budget <= st["max"] <= budget + SKID_EVENTS, describe(res)
    assert st["mean"] <= budget + SKID_EVENTS, describe(res)
    assert st["last"] <= budget + SKID_EVENTS, describe(res)


@pytest.mark.parametrize("counter", ["cycles", "event", "event-toggled"])
def test_el2_not_charged(counter: str, tmp_path: Path) -> None:
    """Issue #12 item 2: the hypervisor's own work is not charged. The
    regulator's counter stops counting at EL2 on an interrupt's entry
    (PMCCFILTR/PMEVTYPER.NSH = 0, honoured by QEMU) and counts again from the
    return to the guest; traps a guest causes are counted whole. With a
    budget bwprobe never spends (2 x P at P = 10 us) a period is charged what
    the guest executed in it: P (10,000 ns, one event per ns at -icount
    shift=0) less the period timer's hot path (~150 instructions since issue #12 item 1, ~15 of
    them counted; on the cycle counter since issue #43 the lean period end of
    isolation/bw_lean.S, 45 instructions, the ~23 between its counter read and
    reload uncharged), not the whole period as when EL2 counted. The exception:
    QEMU's event-counter path, whose looks every 5 us stand in for the
    overflow interrupt QEMU raises late, keeps counting at EL2 (the whole
    period is charged), so that a run stays within a look of its budget.
    event-toggled: the event counter on a copy of qemu-virt without looks,
    so that it stops at EL2 on interrupts as on a board (vectors.S pmu_el2's
    PMSELR/PMXEVTYPER branch, which no other QEMU test runs; the budget is
    never spent, so QEMU's late overflow does not matter)."""
    params = "{mode: overhead, gap_ns: 64, window_ms: 2}"
    config = variant(tmp_path, "bw-basic.yaml", **{"{mode: measure, load: mem, segs: 16}": params,
                                                   "period_us: 1000": "period_us: 10",
                                                   "budget_events: 300000": "budget_events: 20000\n"
                                                   f"      counter: {counter.removesuffix('-toggled')}"})
    kw: dict[str, Any] = {}
    if counter == "event-toggled":
        platforms = tmp_path / "platforms"
        platforms.mkdir()
        for f in (ROOT / "platforms").glob("*.yaml"):
            (platforms / f.name).write_text(f.read_text())
        virt = platforms / "qemu-virt.yaml"
        assert "\n  overflow_poll_us: 5\n" in virt.read_text()
        virt.write_text(virt.read_text().replace("\n  overflow_poll_us: 5\n", "\n"))
        kw["platforms_dir"] = platforms
    res = boot(config, f"bw-el2-{counter}", **kw)
    check_clean(res)
    st = stats(res)["vcpu0"]
    assert st["throttles"] == 0, describe(res)
    # measured: mean 9,827 (cycles, before issue #12 item 1), 9,996 (event:
    # everything counted), 9,879 (event-toggled, after item 1: ~120 of the 148
    # instructions of the period end uncharged); the max (10,067 / 10,160) is a
    # period of console output, whose traps count. The upper bound is what is
    # never charged whatever the interrupt entry costs: the regulator's handler
    # alone (bw_period_hot, ~50 instructions), so a faster entry keeps passing
    # and EL2 counting (>= 9,996) still fails. cycles: the lean period end
    # (isolation/bw_lean.S, 45 instructions in all) leaves the ~23 between its
    # counter read and reload uncharged: measured 9,966; with the read and the
    # reload side by side (its whole exit charged) 9,987, which fails here.
    if counter == "cycles":
        assert 9000 <= st["mean"] <= 10000 - 20, describe(res)
    elif counter == "event-toggled":
        assert 9000 <= st["mean"] <= 10000 - 40, describe(res)
    else:
        assert 10000 - 50 <= st["mean"] <= 10000 + 50, describe(res)


def test_forward_progress(tmp_path: Path) -> None:
    """Issue #12 item 3: no accepted configuration starves a vCPU. What the
    regulator charges a vCPU per period besides the guest's own work is the
    vector's instructions around the filter toggles (the counter stops at EL2
    on interrupts): measured 54 cycles per period (max 100) at shift 0 with a
    budget that runs out every period (`bandwidth_overhead.py --floor`), i.e.
    2^shift times as many cycles under `-icount shift`; a share of 100 left
    the guest 0-48 ns per 10 us period. `regulator_events: 200` in
    platforms/qemu-virt.yaml (it was 500 while EL2 was counted). The
    reproducer (H-MBR budgets of a few hundred events at shift > 0, which
    left bwprobe one step per one or two periods, run_ns=0, when the
    regulator's ~400 instructions were charged) is refused below the floor;
    at the limit the vCPU progresses every period."""
    from bulkhead.base.errors import ConfigError, RunError
    from bulkhead.layout.load import load_system

    def config(budget: int) -> Path:
        return variant(tmp_path, "bw-basic.yaml", **{"period_us: 1000": "period_us: 10",
                                                     "budget_events: 300000": f"budget_events: {budget}",
                                                     "segs: 16": "segs: 16, window_ms: 5"})

    with pytest.raises(ConfigError, match=r"share \(150 events per period\) is less than the regulator's own "
                                          r"cost .* would be starved"):
        load_system(config(150))
    out = ROOT / "build" / "qemu-tests" / "bw-progress"
    with pytest.raises(RunError, match=r"share of 600 cycles per period is less than the regulator's own cost "
                                       r"at -icount shift=2 \(200 x 2\^2 = 800 cycles\)"):
        run(config(600), RunOptions(timeout=TIMEOUT, icount=2, out=out))
    res = run(config(800), RunOptions(timeout=TIMEOUT, icount=2, out=out))
    check_clean(res)
    segs = segments(res)
    assert len(segs) == 16, describe(res)
    # measured: runs of 464-608 ns (4-5 steps) in each 10 us period
    assert all(run_ns >= 200 and work >= 2 for run_ns, _, work in segs), describe(res)
    assert stats(res)["vcpu0"]["throttles"] >= 16, describe(res)


POLL_NS = 5000  # platforms/qemu-virt.yaml overflow_poll_us: a look at the event counter every 5 us


@pytest.mark.parametrize("load", ["mem", "pmu"])
def test_event_counter(load: str, tmp_path: Path) -> None:
    """Issue #12 item 4: the regulator on an event counter (a VM's
    `counter: event`; qemu-virt's event is CPU_CYCLES, so budgets mean what
    they mean on the cycle counter). QEMU raises an event counter's overflow
    interrupt only at the next exception entry; the regulator looks every
    5 us (overflow_poll_us), so a run overshoots its budget by at most that
    (measured: 3.7 us, charged B + 4,200). The guest gets every event counter
    but the reserved last one (PMCR.N = 5) and the cycle counter, and cannot
    touch the reserved counter through any register path (`pmu` load)."""
    gap = ", gap_ns: 20000" if load == "pmu" else ""
    config = variant(tmp_path, "bw-basic.yaml", **{"load: mem": f"load: {load}, tamper: 1{gap}",
                                                   "budget_events: 300000": "budget_events: 300000\n"
                                                                            "      counter: event"})
    res = boot(config, f"bw-event-{load}")
    check_clean(res)
    m = re.fullmatch(r"bwprobe: pmu pmcr=0x([0-9a-f]+) pmccntr=(\d+) evcntr=(\d+) after_writes=(\d+)",
                     line_value(res, "bw", "bwprobe: pmu "))
    assert m and (int(m[1], 16) >> 11) & 0x1F == QEMU_A53_COUNTERS - 1, describe(res)
    assert (m[3], m[4]) == ("0", "0"), describe(res)  # the reserved counter: out of reach
    segs = segments(res)
    assert len(segs) >= 10, describe(res)
    step = 15000 if load == "pmu" else 0
    for run_ns, stall_ns, _ in segs:
        assert 300000 - ENTRY_NS - step <= run_ns <= 300000 + POLL_NS + SKID_NS, (run_ns, describe(res))
        assert abs(stall_ns - (1000000 - run_ns)) <= STALL_NS + step, (stall_ns, describe(res))
    st = stats(res)["vcpu0"]
    assert 300000 <= st["max"] <= 300000 + POLL_NS + SKID_EVENTS + (TRAP_EVENTS if load == "pmu" else 0), \
        describe(res)
    assert st["throttles"] >= 16, describe(res)


def test_regulator_period_within_its_ceiling() -> None:
    """Issue #43 item 4: the regulator's period on an emulated CPU costs at
    most bench/budgets.toml's ceiling ("regulator period"): bench/hotpaths.py's
    row, a 100 us period and a budget never exhausted, the virtual time the
    spinning vCPU lost per period end over 20 ms. The lean period end
    (isolation/bw_lean.S, 45 traced instructions) loses 80 ns per period;
    the C hot path behind the full IRQ entry lost 141.4."""
    hp = thc._hotpaths()
    r = hp.period_cost(False)
    print(r)
    assert r["path"] == "regulator period"
    assert 0 < r["mean_ns"] <= hp.ceilings()["regulator period"], r
