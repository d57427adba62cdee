# SPDX-License-Identifier: Apache-2.0
"""Timing mode's validity (docs/model.md "Timing mode", issue #37).

``run --timing``: the vCPUs run side by side (MTTCG, no -icount) and the
cache model's timing model keeps each one's modelled clock; a vCPU more than
a quantum ahead of the slowest running one waits. A sequential-read victim
(guests/bandwidth, 768 KiB: it fits the 1 MiB LLC alone) on CPU 0 beside a
neighbour VM on CPUs 1-3 (tests/configs/timing-neighbours.yaml). The figures
asserted on are the victim's modelled time in its marked phase (the plugin's
report). Timing mode runs the patched QEMU (tools/qemu-timing, built by
scripts/setup.sh qemu-timing): its virtual clock is the plugin's lock-step
time, so the guests' counter, timers, cycle counter and the regulator's
periods run on modelled time (docs/model.md "Timing mode").

Under -icount the same compute-bound neighbours made a sequential reader
36x slower (one virtual ns is one instruction of whichever vCPU runs); here
they must cost it under 2 %, while a memory bomb must slow it and disjoint
colors remove what the shared cache caused.

All runs build into one output directory, serialised by a file lock.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bulkhead.base.errors import BuildError, RunError
from bulkhead.experiment.results import parse_results
from bulkhead.run import cachemodel
from bulkhead.run.backend import RunOptions
from bulkhead.run.cachemodel import Report
from bulkhead.run.runner import run

REPO_ROOT = Path(__file__).resolve().parents[2]
BASE = REPO_ROOT / "tests" / "configs" / "timing-neighbours.yaml"
OUT = REPO_ROOT / "build" / "qemu-tests" / "timing"
# Generous: 4 vCPU threads on a loaded 2-core host, each run about a minute
# there; nothing asserted depends on host time.
TIMEOUT = 900.0
QUANTUM_NS = cachemodel.DEFAULT_QUANTUM_NS
FINE_QUANTUM_NS = 100
NEIGHBOUR_PARAMS = "params: {size: 4K, mode: read, sync: 0}   #v neighbour params"
BOMB = {NEIGHBOUR_PARAMS: "params: {footprint: exceed, sync: 0}"}  # 3 x 2 MiB written over and over
# The victim's 768 KiB fit its 14 colors (896 KiB); the bomb gets the other 2.
COLORS = {"    #v victim colors": '    colors: {llc: "0-13"}', "    #v neighbour colors": '    colors: {llc: "14-15"}'}


def one_vm(name: str, guest: str, params: str) -> str:
    """A config of one VM ``name`` on CPU 0 running ``guest`` with ``params``."""
    return f"""platform: qemu-virt
vms:
  - name: {name}
    cpus: [0]
    memory:
      - {{ipa: 0x40000000, size: 4M}}
    guest: {guest}
    params: {{{params}}}
"""


SOLO = one_vm("victim", "bandwidth", "mode: read, size: 768K, iterations: 8")


@pytest.fixture(autouse=True)
def plugin() -> None:
    """A missing plugin or timing QEMU is a failure, not a skip."""
    try:
        cachemodel.plugin_path()
        cachemodel.timing_qemu("qemu-system-aarch64")
    except (BuildError, RunError) as exc:
        pytest.fail(f"{exc}\nrun 'scripts/setup.sh cachemodel' / 'scripts/setup.sh qemu-timing' "
                    "(or scripts/setup.sh)")


@pytest.fixture
def lock() -> Iterator[None]:
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT.parent / "timing.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


_reports: dict[str, Report] = {}


def timing_run(tmp_path: Path, name: str, text: str, fresh: bool = False,
               passed: tuple[str, str] = ("victim", "bandwidth: PASS"), quantum: int = QUANTUM_NS) -> Report:
    """Boot ``text`` (a config) in timing mode with ``quantum`` ns; its model
    report (a config already run at that quantum in this session is not run
    again unless ``fresh``). VM ``passed[0]`` must print a line starting
    with ``passed[1]``."""
    key = f"{quantum}\n{text}"
    if key in _reports and not fresh:
        return _reports[key]
    config = tmp_path / f"{name}.yaml"
    config.write_text(text)
    res = run(config, RunOptions(timeout=TIMEOUT, out=OUT, timing=quantum))
    assert res.clean, f"{name}: {res.reason}\n" + "\n".join(res.all_lines()[-20:])
    assert any(line.startswith(passed[1]) for line in res.lines(passed[0])), res.output[-2000:]
    assert "-icount" not in res.argv and "tcg,thread=multi" in res.argv, res.argv
    assert res.argv[0] == cachemodel.timing_qemu("qemu-system-aarch64"), res.argv
    assert res.model_report is not None
    report = cachemodel.load_report(res.model_report)
    assert report.raw["timing"]["lockstep_ps"] == quantum * 1000
    _reports[key] = report
    return report


def variant(subs: dict[str, str]) -> str:
    text = BASE.read_text()
    for old, new in subs.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def slowdown(tmp_path: Path, name: str, subs: dict[str, str], fresh: bool = False) -> tuple[float, Report]:
    """The victim's modelled slowdown in variant ``subs`` against it alone."""
    report = timing_run(tmp_path, name, variant(subs), fresh)
    value = cachemodel.slowdown(report, timing_run(tmp_path, "solo", SOLO), "victim")
    assert value is not None, f"{name}: no modelled time"
    return value, report


def phase_cpu(report: Report, cpu: int) -> dict[str, int]:
    cpus: list[dict[str, int]] = report.raw["timing"]["cpus"]
    return cpus[cpu]


def test_compute_neighbours_cost_victim_under_2_percent(tmp_path: Path, lock: None) -> None:
    """(a) Three L1-resident loops on the other cores slow the memory-bound
    victim by less than 2 % (36x under -icount): they ran side by side with
    it, through its whole phase, each executing far more instructions."""
    value, report = slowdown(tmp_path, "neighbours", {})
    assert value < 1.02, value
    victim = phase_cpu(report, 0)
    for cpu in (1, 2, 3):
        neighbour = phase_cpu(report, cpu)
        assert neighbour["phase_ps"] >= victim["phase_ps"], (cpu, neighbour, victim)
        assert neighbour["phase_insns"] > 5 * victim["phase_insns"], (cpu, neighbour, victim)


def test_memory_bomb_slows_victim(tmp_path: Path, lock: None) -> None:
    """(b) A memory bomb on the other cores (3 vCPUs writing 2 MiB each) slows
    the victim measurably: it evicts the victim's lines from the shared LLC
    and queues beside it for DRAM."""
    value, report = slowdown(tmp_path, "bomb", BOMB)
    assert value > 2.0, value
    phase = report.owner("victim").phase
    assert phase is not None
    assert phase.evicted_by.get("neigh", 0) > 1000


def test_lockstep_rarely_times_out_beside_bomb(tmp_path: Path, lock: None) -> None:
    """Beside the memory bomb the vCPUs' clocks move mostly in memory
    callbacks (DRAM stalls, queueing), not at block starts: the lock-step
    must still wake the waiting vCPUs when the slowest one's clock moves
    there, so that waits end because the slowest caught up, not by the
    2 ms host-time bound (before the fix, 68 % of about 40,000 waits timed
    out, with every vCPU thread waiting; since, about 0.5 %: host
    preemption on the loaded host)."""
    _, report = slowdown(tmp_path, "bomb", BOMB)
    timing = report.raw["timing"]
    assert timing["lockstep_waits"] > 1000, timing
    assert timing["lockstep_timeouts"] <= 0.05 * timing["lockstep_waits"], (
        timing["lockstep_waits"], timing["lockstep_timeouts"])


def test_lockstep_waits_out_a_loaded_host(tmp_path: Path, lock: None) -> None:
    """On the timing QEMU a lock-step wait or a timer hold ends when the
    slowest vCPU caught up (QEMU ran the timer), or when QEMU kicks the
    waiting vCPU (exclusive work, an interrupt: it then runs to the end of
    its block and leaves its loop), not after a few milliseconds of host
    time: beside the bomb and four busy host processes on the 2 cores, none
    times out (docs/model.md "Liveness"; with the former 2 ms and 20 ms
    bounds 0.2-0.7 % of the waits timed out on a loaded host)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4)]
    try:
        report = timing_run(tmp_path, "bomb-loaded", variant(BOMB), fresh=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    timing = report.raw["timing"]
    assert timing["guest_clock"] == "modelled", timing
    assert timing["lockstep_waits"] > 1000, timing
    assert timing["lockstep_timeouts"] == 0, timing
    assert timing["deadline_timeouts"] == 0, timing
    assert "lockstep_kicks" in timing and "deadline_kicks" in timing, timing  # the report counts kicks


def test_fine_quantum_changes_bomb_slowdown_little(tmp_path: Path, lock: None) -> None:
    """The quantum's effect (docs/model.md "Timing mode", "Quantum"): a
    10x finer quantum (100 ns) changes the victim's modelled slowdown
    beside the bomb by at most 10 % against the default 1 us (measured:
    means of 3 runs 7.88 against 7.58, 4 %; single runs 1-6.4 % apart).
    Coarser quanta lower it (10 us: 7.15, 100 us: 6.83) and spread it more.
    The baseline is the solo run at the default quantum: one CPU has
    nobody to wait for (its modelled time was 1,591,562 ns at all four)."""
    default, _ = slowdown(tmp_path, "bomb", BOMB)
    bomb = timing_run(tmp_path, "bomb-fine", variant(BOMB), quantum=FINE_QUANTUM_NS)
    fine = cachemodel.slowdown(bomb, timing_run(tmp_path, "solo", SOLO), "victim")
    assert fine is not None
    assert abs(fine - default) <= 0.10 * default, (fine, default)


def test_colors_remove_shared_cache_part(tmp_path: Path, lock: None) -> None:
    """(c) With disjoint LLC colors the bomb evicts none of the victim's lines
    and the victim's slowdown falls to under 2 % (its reads stay in its
    colors: no DRAM traffic left to queue), against > 2 uncolored."""
    shared, _ = slowdown(tmp_path, "bomb", BOMB)
    colored, report = slowdown(tmp_path, "bomb-colored", BOMB | COLORS)
    phase = report.owner("victim").phase
    assert phase is not None
    assert phase.evicted_by.get("neigh", 0) == 0
    assert colored < 1.02, colored
    assert colored < shared, (colored, shared)


def test_guest_counter_is_modelled_time(tmp_path: Path, lock: None) -> None:
    """The guest's own counter (CNTVCT: the phase's start and end stamps it
    passes with its markers) measures the phase as the model's clock does:
    QEMU's virtual clock is the lock-step time. Alone and beside the
    compute-bound neighbours, within two quanta (the lock-step time may lag
    the victim's own clock by up to one at each end) plus 0.5 %; on stock
    QEMU the counter reads host time, 20-1000x the modelled time."""
    for name, text in (("solo", SOLO), ("neighbours", variant({}))):
        report = timing_run(tmp_path, name, text)
        modelled = cachemodel.model_time_ns(report, "victim")
        guest = report.owner("victim").phase_ns
        assert modelled is not None and modelled > 1_000_000, (name, modelled)
        assert abs(guest - modelled) <= 2 * QUANTUM_NS + 0.005 * modelled, (name, guest, modelled)
        assert report.raw["timing"]["guest_clock"] == "modelled", name


TICKS, PERIOD_MS = 5, 20
TICKER = one_vm("ticker", "ticker", f"ticks: {TICKS}, period_ms: {PERIOD_MS}")


def test_all_idle_reaches_next_timer(tmp_path: Path, lock: None) -> None:
    """Every vCPU waits in WFI between the ticker's timer interrupts (the
    other CPUs park at EL2): nobody runs to move the lock-step time, and QEMU
    jumps its virtual clock to the next timer instead (no deadlock, no host
    spin). The ticker gets all its ticks, none early (it checks), and the
    modelled time of its CPU spans them: ticks x period, plus boot."""
    report = timing_run(tmp_path, "ticker", TICKER, passed=("ticker", "ticker: PASS"))
    timing = report.raw["timing"]
    span_ns = TICKS * PERIOD_MS * 1_000_000
    cpu0 = phase_cpu(report, 0)
    assert cpu0["modelled_ps"] >= span_ns * 1000, cpu0
    assert cpu0["waited_ps"] >= span_ns * 1000 * 9 // 10, cpu0
    assert timing["guest_clock"] == "modelled"
    assert span_ns <= timing["virtual_ns"] < span_ns + 50_000_000, timing["virtual_ns"]
    assert cpu0["modelled_ps"] <= timing["virtual_ns"] * 1000 + QUANTUM_NS * 1000, (cpu0, timing["virtual_ns"])


IRQLAT = one_vm("lat", "irqlat", "samples: 500, period_us: 100, warmup: 5, wait: busy")


def test_timer_held_at_deadline(tmp_path: Path, lock: None) -> None:
    """A vCPU runs no more than a quantum past a virtual timer's deadline
    before QEMU's main loop has run the timer (raised the interrupt):
    guests/irqlat, spinning between 500 timer interrupts, sees them at most
    about a quantum late in modelled time (p99; a host-time bound of 20 ms
    per hold can let the odd one through on an overloaded host). Without
    the hold the vCPU ran on while the main loop got to the timer: p99
    8,200-9,200 ns, up to 10 us."""
    config = tmp_path / "irqlat.yaml"
    config.write_text(IRQLAT)
    res = run(config, RunOptions(timeout=TIMEOUT, out=OUT, timing=QUANTUM_NS))
    assert res.clean, f"irqlat: {res.reason}\n" + "\n".join(res.all_lines()[-20:])
    found = [r for r in parse_results(res.lines("lat")) if r.get("bench") == "irqlat" and "p99_ns" in r]
    assert found and any(line.startswith("irqlat: PASS") for line in res.lines("lat")), res.output[-2000:]
    p99 = int(found[0]["p99_ns"])
    assert p99 <= 2 * QUANTUM_NS, (p99, found[0])


# The bomb's regulation: budgets in cycles of the (modelled) 1 GHz cycle
# counter, as shares of its 3 vCPUs' cycles per period.
PERIOD_US = 20
# 90 % gave 7.26 against 7.74 unregulated (6 % apart: within run-to-run
# noise of regulated runs); 50 % gave 1.08, then 1.06-1.22 in three runs
# beside 4-10 busy host loops, and 1.00004 in one run of the full suite
# beside a benchmark (the bomb held back through the whole victim phase);
# 5 % gave 1.0000-1.0006
SHARES = (50, 5)
# a smaller budget may not slow the victim more than this factor: at the
# floor (1.0) the two regulated values are within noise of each other
FLOOR_NOISE = 1.01


def test_budget_lowers_slowdown_monotonically(tmp_path: Path, lock: None) -> None:
    """(d) A bandwidth budget on the bomb lowers the victim's modelled
    slowdown, the more the smaller it is: the regulator's periods and its
    cycle counter run on the modelled clock (on stock QEMU they ran on host
    time, and budgets of 50, 20 and 5 % gave 1.27, 1.22 and 2.76 against
    7.43: not monotonic). 20 us periods: with 100 us ones (16-20 periods
    per victim phase) 90 % gave 2.60 in one run and 1.37 in another; at
    20 us it stays within 6 % of unregulated, so the sweep is 50 and 5 %.
    Each budget lowers the slowdown below the unregulated one, and the
    smaller never gives more than the larger (within FLOOR_NOISE: both can
    reach the floor, 1.0, and then a strict order would be noise)."""
    free, _ = slowdown(tmp_path, "bomb", BOMB)
    values, clocks = [free], set()
    for share in SHARES:
        budget = 3 * PERIOD_US * 1000 * share // 100
        regulated = BOMB | {"    #v neighbour budget":
                            f"    bandwidth: {{period_us: {PERIOD_US}, budget_events: {budget}}}"}
        value, report = slowdown(tmp_path, f"bomb-budget-{budget}", regulated)
        clocks.add(report.raw["timing"]["guest_clock"])
        values.append(value)
    assert free > values[1], values
    assert all(b <= a * FLOOR_NOISE for a, b in itertools.pairwise(values[1:])), values
    assert values[-1] < 0.5 * free, values
    assert clocks == {"modelled"}, clocks


# Measured 2026-11-29 on the loaded 2-core host (29 bomb runs, load 5-7, up
# to two timing runs side by side): slowdowns 4.58-4.95, sd 1.8 % of the
# mean. The spread is the victim's DRAM stall time (row hits against row
# conflicts: 7.36-8.49 ms in its phase, queueing 4.05-4.37 ms), i.e. the
# order in which the four vCPUs' lines reach the banks within a quantum,
# which host threads decide; it does not follow the lock-step time-outs
# (the widest runs had few). Five runs drawn from the 29: the largest
# deviation from their mean is 2.4 % at the median, 4.9 % at the 99th
# percentile, 5.4 % at the 99.9th (the old 5 % bound failed about one run
# in a hundred; one suite run read 5.3 %). 8 % is 4.4 sd of one run's
# deviation from a mean of five, and 0.38 of a slowdown of 4.7: a tenth of
# the bomb's effect (+3.7), far below the colors' (back to 1.00).
AGREE = 0.08


def test_runs_agree(tmp_path: Path, lock: None) -> None:
    """(e) Timing mode is not bit-exact (host threads interleave within the
    quantum), but five runs of the bomb scenario give the victim's modelled
    slowdown within ``AGREE`` (8 %) of their mean."""
    values = [slowdown(tmp_path, f"bomb-{i}", BOMB, fresh=True)[0] for i in range(5)]
    mean = statistics.mean(values)
    assert max(abs(v - mean) for v in values) <= AGREE * mean, values


def test_bench_timing_smoke(tmp_path: Path) -> None:
    """bench/timing.py runs (one vCPU, timing mode and -icount, a small
    read) and gives each mode a positive simulated time and ratio; timing
    mode's simulated time is its modelled phase time, at least its reads'
    LLC hits (1024 lines of 64 B, missing the 32 KiB L1D, 14 ns each)."""
    res = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "timing.py"), "--vcpus", "1",
                          "--modes", "timing", "icount", "--size", "64K", "--iterations", "1",
                          "--out", str(tmp_path / "bench"), "--json"],
                         capture_output=True, text=True, timeout=2 * TIMEOUT)
    assert res.returncode == 0, res.stderr[-3000:]
    rows = {r["mode"]: r for r in json.loads(res.stdout)}
    assert set(rows) == {"timing", "icount"}
    for row in rows.values():
        assert row["vcpus"] == 1 and row["wall_s"] > 0 and row["simulated_s"] > 0
        assert row["wall_per_simulated_s"] > 0
    assert rows["timing"]["simulated_s"] >= 1024 * 14e-9
