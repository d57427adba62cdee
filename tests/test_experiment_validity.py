# SPDX-License-Identifier: Apache-2.0
"""Validity checks that catch false results (issue #39, item 2) and honest
published overlays (item 7): each test builds the false case on purpose
(with the fake QEMU of test_experiment.py or recorded console lines) and
asserts the flag, the label or the caption's numbers."""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import yaml
from test_experiment import BASE, INTERF, SOLO_MBR, fake_run, write_spec

from bulkhead.experiment import validity, workloads
from bulkhead.experiment.analysis import Analysis
from bulkhead.experiment.axes import event_meaning
from bulkhead.experiment.charts import drawn_problems, figure, pyplot
from bulkhead.experiment.execute import run_experiment
from bulkhead.experiment.spec import load
from bulkhead.layout.load import load_platform
from bulkhead.run import cachemodel
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult

# The false row: cyclictest in the VM under test finished at 3.26 s,
# stress-ng in the regulated VM (which booted slower) began at 5.55 s.
CYCLICTEST = """\
bulkhead-run: begin at 2.15 s: sleep 1; cyclictest -m -p 90 -i 1000 -l 1000 -q
T: 0 (  101) P:90 I:1000 C:   1000 Min:     14 Act:   15 Avg:   14 Max:      69
bulkhead-run: end at 3.26 s: status=0
"""
STRESS = """\
bulkhead-run: begin at {begin} s: stress-ng --vm 1 --vm-bytes 16M --timeout 4s --metrics-brief
stress-ng: metrc: [91] vm                 1234      4.00      3.90      0.05       308.50       312.41
bulkhead-run: end at {end} s: status=0
"""


def _lines(vm: str, text: str) -> list[tuple[str, dict[str, str]]]:
    return [(vm, f) for f in workloads.result_fields(text.splitlines())]


def test_linux_interferer_that_started_after_the_victim_finished_is_flagged() -> None:
    late = _lines("rt", CYCLICTEST) + _lines("noisy", STRESS.format(begin="5.55", end="9.60"))
    flags = validity.coverage_flags("rt", "cyclictest", late)
    assert len(flags) == 1 and flags[0].startswith(
        "interferer-not-running: VM noisy (stress-ng block 0) ran from 5.550000 s to 9.600000 s (uptime time), "
        "not over the measured phase of VM rt, 2.150000 s to 3.260000 s: it started after it ended")
    covering = _lines("rt", CYCLICTEST) + _lines("noisy", STRESS.format(begin="1.10", end="5.20"))
    assert validity.coverage_flags("rt", "cyclictest", covering) == []
    early = _lines("rt", CYCLICTEST) + _lines("noisy", STRESS.format(begin="1.10", end="3.00"))
    assert "stopped before it ended" in validity.coverage_flags("rt", "cyclictest", early)[0]
    # still running when the run stopped (no end marker): it covered the rest of the run
    running = _lines("rt", CYCLICTEST) + _lines("noisy", STRESS.format(begin="1.10", end="5.20").split(
        "bulkhead-run: end")[0])
    assert validity.coverage_flags("rt", "cyclictest", running) == []


def stamped_run(config: Path, options: RunOptions) -> RunResult:
    """fake_run with the bare-metal guests' virtual start/end stamps and the
    interferer's regulator report; ``late: 1`` starts the interferer's load
    after the benchmark's measured loop, ``throttles: N`` is what its
    regulator reports."""
    res = fake_run(config, options)
    doc = Path(config).read_text()
    params = next((vm.get("params") or {} for vm in yaml.safe_load(doc)["vms"]
                   if vm["name"] == "interf"), {})
    out = []
    for line in res.output.splitlines():
        if line.startswith("[bench] result "):
            line += " start_ns=1000000 end_ns=6000000"
        elif line.startswith("[interf] result "):
            line += " start_ns=7000000 end_ns=9000000" if params.get("late") else " start_ns=900000 end_ns=6100000"
        out.append(line)
    if "throttles" in params:
        out.insert(-1, f"[interf] result bench=regulator vcpus=2 throttles={params['throttles']} stalled_ns=0 max=9")
    res.output = "\n".join(out) + "\n"
    return res


CHECKS = BASE + INTERF + textwrap.dedent("""\
    scenarios:
      - name: solo
        benchmarks: [bw]
      - name: interf
        benchmarks: [bw]
        overlay: {vms: [*interf]}
      - name: late
        benchmarks: [bw]
        overlay: {vms: [*interf, {name: interf, params: {late: 1}}]}
      - name: mbr
        benchmarks: [bw]
        overlay: {vms: [*interf, {name: interf, params: {throttles: 412},
                                  bandwidth: {period_us: 100, budget_events: 2000}}]}
      - name: mbr-idle
        benchmarks: [bw]
        overlay: {vms: [*interf, {name: interf, params: {throttles: 0},
                                  bandwidth: {period_us: 100, budget_events: 2000}}]}
      - name: self
        benchmarks: [bw]
        overlay: {vms: [{name: bench, bandwidth: {period_us: 100, budget_events: 200000}}]}
    icount: 0
    max_slowdown: 100000000
    plots:
      - {kind: slowdown}
    """)


def test_late_interferer_and_idle_regulator_are_flagged_listed_and_not_drawn(tmp_path: Path) -> None:
    spec = load(write_spec(tmp_path, CHECKS))
    out = tmp_path / "out"
    run_experiment(spec, out, backend=stamped_run)
    with open(out / "results.csv", newline="") as f:
        flags = {r["scenario"]: r["flags"] for r in csv.DictReader(f)}
    assert flags["solo"] == flags["interf"] == flags["mbr"] == flags["self"] == ""
    assert flags["late"].startswith("interferer-not-running: VM interf (interferer vCPU 0) ran from 0.007000 s to "
                                    "0.009000 s (counter time), not over the measured phase of VM bench, 0.001000 s "
                                    "to 0.006000 s: it started after it ended")
    assert flags["mbr-idle"].startswith("regulator-idle: VM interf is regulated (100 us period) but its regulator "
                                        "never throttled it")
    doc = json.loads((out / "plots" / "slowdown.json").read_text())
    assert {d["label"] for d in doc["left_out"]} == {"late", "mbr-idle"}
    drawn = {run for s in doc["series"] for run in s["runs"]}
    assert drawn and not drawn & {d["run"] for d in doc["left_out"]}
    report = (out / "report.md").read_text()
    assert "## Artefacts: runs not drawn as results" in report
    assert "| late | bw | 1 |" in report and "| mbr-idle | bw | 1 |" in report and "regulator-idle:" in report


def test_icount_cross_vm_slowdown_is_labelled_as_qemu_scheduling(tmp_path: Path) -> None:
    """Under -icount a slowdown beside a VM the baseline does not run is
    QEMU's turns: labelled so in the legend, the JSON and the caption; the
    VM under test's own regulation (no other VM) is not; runs recorded without
    -icount (the timing mode) are not labelled."""
    spec = load(write_spec(tmp_path, CHECKS))
    out = tmp_path / "out"
    records = run_experiment(spec, out, backend=stamped_run).records
    plt = pyplot()
    fig, text, dr = figure(Analysis(spec, records, out), spec.plots[0], 1)
    plt.close(fig)
    marked = {s["label"]: s["qemu_scheduling"] for s in dr.series if s["role"] == "measured"}
    note = " (QEMU -icount scheduling, not interference)"
    assert marked == {"scenario solo": False, f"scenario interf{note}": True, f"scenario mbr{note}": True,
                      "scenario self": False}
    assert "Series marked 'QEMU -icount scheduling' ran beside VMs the baseline does not run" in text
    for r in records:
        r.icount = None
    fig, text, dr = figure(Analysis(spec, records, out), spec.plots[0], 1)
    plt.close(fig)
    assert not any(s.get("qemu_scheduling") for s in dr.series) and "QEMU -icount scheduling" not in text


def test_published_points_open_unjoined_and_compared_in_numbers(tmp_path: Path) -> None:
    """A paper's two points are not a curve: open markers, no line, no fill;
    the caption says per published value, in numbers, whether Bulkhead
    matches it or why it cannot be compared."""
    spec = load(write_spec(tmp_path, BASE + INTERF + SOLO_MBR + textwrap.dedent("""\
        icount: 0
        plots:
          - {kind: overhead, scenario: mbr, x: budget_events,
             published: [{label: "a study", source: "Fig. 10", points: [[1000, 1.2], [2000, 1.6], [8000, 2.0]]}]}
          - {kind: slowdown, published: [{label: "a table", source: "Table 2", benchmark: bw,
                                          points: [[mbr, 9.9]]}]}
        """)))
    out = tmp_path / "out"
    records = run_experiment(spec, out, backend=fake_run).records
    plt = pyplot()
    fig, text, dr = figure(Analysis(spec, records, out), spec.plots[0], 1)
    ax = fig.axes[0]
    assert not [ln for ln in ax.get_lines() if "published" in str(ln.get_label())]  # never joined
    (dots,) = [c for c in ax.collections if "published" in str(c.get_label())]
    assert len(dots.get_facecolors()) == 0 and dots.get_offsets().tolist() == [[1000, 1.2], [2000, 1.6], [8000, 2.0]]
    plt.close(fig)
    # the fake's slowdown is 1.1 + budget / 4000: 1.6 at 2000, 3.1 at 8000, beside the interferer under
    # -icount (QEMU's turns: not comparable, however close); the verdicts: test_experiment_agreement.py
    assert ("Published against Bulkhead: a study at 1000 (bw): published 1.2, Bulkhead –: not comparable (not run: "
            "no run at this point in this result set); a study at 2000 (bw): published 1.6, Bulkhead 1.6: not "
            "comparable (beside other VMs under -icount (QEMU -icount scheduling, not interference); run it with "
            "--timing); a study at 8000 (bw): published 2, Bulkhead 3.1: not comparable") in text
    pub = next(s for s in dr.series if s["role"] == "published")
    assert (pub["color"], pub["edge"], pub["joined"]) == ("none", "black", False)
    fig, text, _ = figure(Analysis(spec, records, out), spec.plots[1], 2)
    plt.close(fig)
    assert "a table at mbr[budget_events=2000] (bw)" not in text  # not a scenario label of the spec's points
    assert "a table at mbr (bw): published 9.9, Bulkhead –: not comparable (not run" in text
    for side in (out / "plots").glob("*.json"):
        assert drawn_problems(json.loads(side.read_text()), set()) == []


def test_rk3588_captions_name_each_core_types_event() -> None:
    text = event_meaning(load_platform("rk3588-qemu"), "rk3588-qemu")
    assert "cortex-a55: read_write: L3D_CACHE_ALLOCATE (PMU event 0x29)" in text
    assert "cortex-a76: read_write: L2D_CACHE_WR (PMU event 0x51)" in text
    assert "every CPU counts the fallback, CPU_CYCLES (0x11)" in text
    board = event_meaning(load_platform("rk3588-orangepi-5-plus"), "rk3588-orangepi-5-plus")
    assert "L2D_CACHE_WR" in board and "fallback" not in board


def test_regulation_mean_only_over_the_interferers_active_periods() -> None:
    """Idle periods after the interferer stopped (and before it started) are
    no part of its traffic: 45% idle periods would understate it by 45%."""
    busy = [(i, 50_000 + (i % 3) * 1000) for i in range(2, 13)]
    series = [(0, 0), (1, 12)] + busy + [(i, 0) for i in range(13, 22)]
    assert cachemodel.active_periods(series) == busy
    assert cachemodel.active_periods([(0, 0), (1, 0)]) == [(0, 0), (1, 0)]
