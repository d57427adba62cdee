# SPDX-License-Identifier: Apache-2.0
"""Published against Bulkhead (issue #37, item 6), on recorded small result
sets (the fake QEMU of test_experiment.py, no QEMU): the report's table
says matched / not matched / not comparable correctly, including values that
would match by accident (the baseline's own point, a flagged run, a slowdown
of -icount turns); timing mode's runs are not flagged as host time nor their
slowdowns as -icount turns; a host-time peer's figures are labelled."""

from __future__ import annotations

import csv
import textwrap
from dataclasses import replace
from pathlib import Path

from test_experiment import BASE, INTERF, fake_run, write_spec

from bulkhead import cli
from bulkhead.experiment import agreement
from bulkhead.experiment.analysis import Analysis
from bulkhead.experiment.charts import figure, flag_above_budget, pyplot
from bulkhead.experiment.execute import run_experiment
from bulkhead.experiment.spec import ExperimentSpec, load

# The fake's slowdown of bench: 1.1 beside the interferer, 1.1 + budget / 4000
# when it is regulated (1.6 at 2000, 2.1 at 4000, 3.1 at 8000); `short` runs
# 50 us inside a 100 us period: flagged inside-first-period.
SPEC = BASE + INTERF + textwrap.dedent("""\
    scenarios:
      - name: solo
        benchmarks: [bw]
      - name: interf
        benchmarks: [bw]
        overlay: {vms: [*interf]}
      - name: same
        benchmarks: [bw]
        overlay: {vms: [{name: bench, params: {keep: 2}}]}
      - name: short
        benchmarks: [bw]
        overlay: {vms: [{name: bench, params: {ns: 50000}},
                        {<<: *interf, bandwidth: {period_us: 100, budget_events: 2000}}]}
      - name: mbr
        benchmarks: [bw]
        overlay: {vms: [{<<: *interf, bandwidth: {period_us: 100, budget_events: 2000}}]}
        sweep: {vms.interf.bandwidth.budget_events: [2000, 4000, 8000]}
    icount: 0
    plots:
      - kind: slowdown
        name: table
        published:
          - {label: "a table", source: "Table 1", benchmark: bw,
             points: [[solo, 1.0], [interf, 1.0], [same, 1.2], [short, 1.6]]}
      - kind: overhead
        name: sweep
        scenario: mbr
        x: budget_events
        published:
          - {label: "a figure", source: "Fig. 2", points: [[2000, 1.6], [4000, 1.5], [16000, 4.0]]}
          - {label: "a strict figure", source: "Fig. 3", tolerance: 0.05, points: [[8000, 2.9]]}
    """)


def _verdicts(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    with open(out / "agreement.csv", newline="") as f:
        return {(r["source"], r["at"]): r for r in csv.DictReader(f)}


def test_table_says_matched_and_not_matched_correctly(tmp_path: Path) -> None:
    spec = load(write_spec(tmp_path, SPEC))
    out = tmp_path / "out"
    records = run_experiment(spec, out, backend=fake_run, timing=1000).records
    assert all(r.status == "ok" for r in records)
    rows = _verdicts(out)
    v = {k: (r["verdict"], r["bulkhead"]) for k, r in rows.items()}
    assert v[("a table", "interf")] == ("matched", "1.1")  # +10%, within the default 25%
    assert v[("a figure", "2000")] == ("matched", "1.6")
    assert v[("a figure", "4000")] == ("not matched", "2.1")  # +40%
    assert v[("a strict figure", "8000")] == ("not matched", "3.1")  # +6.9%: outside its own 5%
    assert v[("a figure", "16000")] == ("not comparable", "")
    assert rows[("a figure", "16000")]["why"].startswith("not run")
    # false matches: ours equals the published value, and still nothing is matched
    assert v[("a table", "solo")] == ("not comparable", "1")
    assert "baseline's own point" in rows[("a table", "solo")]["why"]
    assert v[("a table", "short")] == ("not comparable", "")  # its 1.6 would match: flagged, so not a value
    assert "inside-first-period" in rows[("a table", "short")]["why"]
    # no effect (1.0) within 25% of a published +20% effect: the effect is missing, not matched
    assert v[("a table", "same")] == ("not matched", "1")
    assert "the published effect (+20.0%) is not there (+0.0%" in rows[("a table", "same")]["why"]
    report = (out / "report.md").read_text()
    assert "## Published against Bulkhead" in report and "2 matched, 3 not matched, 3 not comparable" in report
    assert "| Figure 2: sweep | a figure | 4000 | bw | 1.5 | 2.1 | +40.0% | ±25% | **not matched** |" in report
    assert "time base | modelled time (timing mode" in report
    assert "a figure at 4000 (bw): published 1.5, Bulkhead 2.1 (+40.0%): not matched within ±25%" in report
    assert "Figures without a published value" not in report
    bare = load(write_spec(tmp_path, SPEC.split("plots:")[0] + "plots:\n  - {kind: slowdown, name: bars}\n",
                           "bare.yaml"))
    run_experiment(bare, tmp_path / "bare", backend=fake_run, timing=1000)
    assert ("## Published against Bulkhead\n\nFigures without a published value (nothing to match: see each "
            "caption's 'Comparable'): Figure 1 (`bars`).") in (tmp_path / "bare" / "report.md").read_text()
    assert not (tmp_path / "bare" / "agreement.csv").exists()


def test_icount_turns_are_not_comparable(tmp_path: Path) -> None:
    """The same result set under -icount: interf's 1.1 would match 1.0, but
    beside another VM it is QEMU's turn-taking, not interference."""
    spec = load(write_spec(tmp_path, SPEC))
    out = tmp_path / "out"
    run_experiment(spec, out, backend=fake_run)
    row = _verdicts(out)[("a table", "interf")]
    assert (row["verdict"], row["bulkhead"]) == ("not comparable", "1.1")
    assert "QEMU -icount scheduling" in row["why"]
    assert "time base | virtual time (-icount shift=0)" in (out / "report.md").read_text()


def test_timing_runs_are_not_host_time_nor_turns(tmp_path: Path) -> None:
    """Timing mode runs without -icount on modelled time: its runs are not
    flagged host-time, and a slowdown above 1.5 x the vCPUs is not blamed on
    -icount turns (it is, under -icount); --report-only keeps the mode."""
    text = SPEC.replace("[2000, 4000, 8000]", "[2000, 100000000]") + "max_slowdown: 100000000\n"
    spec = load(write_spec(tmp_path, text))
    out = tmp_path / "timing"
    records = run_experiment(spec, out, backend=fake_run, timing=1000).records
    flags = {r.plan.label: r.flags for r in records}
    assert flags["solo"] == flags["interf"] == flags["mbr[budget_events=100000000]"] == []
    assert flags["short"] and flags["short"][0].startswith("inside-first-period")
    assert cli.main(["experiment", str(tmp_path / "spec.yaml"), "--out", str(out), "--report-only"]) == 0
    with open(out / "results.csv", newline="") as f:
        assert not [r for r in csv.DictReader(f) if "host-time" in r["flags"]]
    assert "timing mode" in (out / "report.md").read_text()
    icount = run_experiment(spec, tmp_path / "icount", backend=fake_run).records
    big = next(r for r in icount if r.plan.label == "mbr[budget_events=100000000]")
    assert big.flags and big.flags[0].startswith("implausible-slowdown")


def test_timing_relative_traffic_above_cycle_share_is_not_an_overrun(tmp_path: Path) -> None:
    """A budget in cycles bounds a regulated VM's traffic relative to the
    unregulated one's only under -icount (a cycle is an instruction there);
    in timing mode a throttled VM queues less and moves more per modelled
    cycle, so its run stays a result (it is flagged above-budget under
    -icount). The fake's interferer moves 20x its unregulated traffic."""
    text = SPEC.replace("plots:\n", "plots:\n  - {kind: consumed, scenario: mbr, x: budget_events, y: interf_mbps, "
                        "relative_to: interf, assigned: 0.0001}\n")
    spec = load(write_spec(tmp_path, text))
    timing = run_experiment(spec, tmp_path / "timing", backend=fake_run, timing=1000, report=False).records
    icount = run_experiment(spec, tmp_path / "icount", backend=fake_run, report=False).records
    for records, flagged, mode in ((timing, False, replace(spec, icount=None, timing_ns=1000)),
                                   (icount, True, spec)):
        an = Analysis(mode, records, tmp_path)
        assert mode.plots[0].kind == "consumed"
        flag_above_budget(an, mode.plots[0])
        mbr = [r for r in records if r.plan.scenario == "mbr"]
        assert all(bool(r.flags) == flagged for r in mbr), [r.flags for r in mbr]
        assert not flagged or mbr[0].flags[0].startswith("above-budget")


def test_host_time_peer_is_labelled(tmp_path: Path) -> None:
    """A spec whose runs talk to a host-time frame peer (CLARE) says so in
    timing mode, in every caption and above the table; not under -icount."""
    spec = load(write_spec(tmp_path, SPEC))
    out = tmp_path / "out"
    records = run_experiment(spec, out, backend=fake_run, timing=1000, report=False).records
    plt = pyplot()

    def texts(s: ExperimentSpec) -> tuple[str, str]:
        an = Analysis(s, records, out)
        fig, text, _ = figure(an, s.plots[0], 1)
        plt.close(fig)
        return text, "\n".join(agreement.section(an, [(s.plots[0], 1)]))

    caption, section = texts(replace(spec, network="peer", icount=None, timing_ns=1000))
    assert agreement.HOST_PACED in caption and agreement.HOST_PACED in section
    assert "**matched**: Host-time paced" in section
    caption, section = texts(replace(spec, network="peer"))
    assert "Host-time paced" not in caption + section
