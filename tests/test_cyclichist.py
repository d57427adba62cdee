# SPDX-License-Identifier: Apache-2.0
"""cyclictest -h histograms (bulkhead/experiment/cyclichist.py), on console
output recorded from runs under Bulkhead (tests/fixtures/workloads/):

- rt-cyclictest-hist.txt: PREEMPT_RT VM alone, ``cyclictest -m -p 90 -i 1000
  -l 1000 -q -h 100`` (QEMU 10.0, -icount 0, 2026-11-29);
- rt-cyclictest-hist-stress.txt: the same with ``-h 200`` beside a Linux VM
  running ``stress-ng --vm 1`` (193 samples beyond 200 µs; the console
  wrapped the long overflow line).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bulkhead.experiment import cyclichist
from bulkhead.experiment import workloads as w

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "workloads"


def fixture(name: str) -> list[str]:
    return (FIXTURES / name).read_text().splitlines()


def bucket_rows(lines: list[str]) -> list[int]:
    """The recorded counts of thread 0, read independently of the parser."""
    start = lines.index("# Histogram") + 1
    out: list[int] = []
    for line in lines[start:]:
        if line.startswith("#"):
            break
        us, count = line.split()
        assert int(us) == len(out)
        out.append(int(count))
    return out


def nearest_rank(samples: list[int], q: float) -> int:
    return sorted(samples)[math.ceil(q * len(samples)) - 1]


def test_histogram_run_succeeds_and_gives_percentiles() -> None:
    lines = fixture("rt-cyclictest-hist.txt")
    assert w.failure(lines, "cyclictest") is None  # -h used to fail the run: no T: line
    (row,) = w.result_fields(lines)
    counts = bucket_rows(lines)
    samples = [us for us, c in enumerate(counts) for _ in range(c)]
    assert len(samples) == 1000 and row["cycles"] == "1000"
    assert row["hist_us"] == "100" and row["overflows"] == "0"
    assert (row["min_us"], row["avg_us"], row["max_us"]) == ("14", "14", "17")
    for key, q in cyclichist.PERCENTILES:
        assert row[key] == str(nearest_rank(samples, q)), key
    assert cyclichist.decode(row["hist"], 100) == counts
    cols = w.reduce_workload(w.result_fields(lines))
    assert cols["lat_p50_us"] == 14 and cols["lat_p99_us"] == 15 and cols["lat_p999_us"] == 16
    assert cols["lat_max_us"] == 17 and cols["lat_overflows"] == 0


def test_histogram_with_overflows_beside_stress_ng() -> None:
    lines = fixture("rt-cyclictest-hist-stress.txt")
    assert w.failure(lines, "cyclictest") is None
    (row,) = w.result_fields(lines)
    counts = bucket_rows(lines)
    assert sum(counts) == 807 and row["overflows"] == "193" and row["cycles"] == "1000"
    samples = [us for us, c in enumerate(counts) for _ in range(c)] + [10**6] * 193
    assert row["p50_us"] == str(nearest_rank(samples, 0.5))
    # the 99th percentile lies beyond the 200 buckets: unknown, not invented
    assert nearest_rank(samples, 0.99) == 10**6 and "p99_us" not in row and "p999_us" not in row
    assert row["max_us"] == "504"
    cols = w.reduce_workload([row])
    assert cols["lat_overflows"] == 193 and cols["lat_max_us"] == 504 and "lat_p99_us" not in cols


def test_threads_are_merged_for_the_run_columns() -> None:
    lines = ["bulkhead-run: begin at 1.0 s: cyclictest -t 2 -h 4 -q", "# Histogram",
             "000000 000000 000000", "000001 000003 000000", "000002 000001 000001", "000003 000000 000002",
             "# Total: 000000004 000000003", "# Min Latencies: 00001 00002", "# Avg Latencies: 00001 00002",
             "# Max Latencies: 00002 00009", "# Histogram Overflows: 00000 00001",
             "# Histogram Overflow at cycle number:", "# Thread 0:", "# Thread 1: 00003",
             "bulkhead-run: end at 2.0 s: status=0"]
    rows = w.result_fields(lines)
    assert [r["cpu"] for r in rows] == ["0", "1"]
    assert rows[1]["p50_us"] == "3" and "p99_us" not in rows[1]  # 2, 3, 3, overflow
    cols = w.reduce_workload(rows)
    # merged: 1,1,1,2 | 2,3,3 | >=4: 8 samples
    assert cols["lat_p50_us"] == 2 and "lat_p99_us" not in cols and cols["lat_overflows"] == 1
    assert cols["lat_max_us"] == 9 and cols["cpus"] == 2


@pytest.mark.parametrize("cut, why", [
    (True, "cut short: no Min Latencies, Avg Latencies, Max Latencies, Histogram Overflows"),
    (False, "thread 0's buckets hold 1001 samples, its Total says 1000"),
])
def test_a_broken_histogram_fails_the_run(cut: bool, why: str) -> None:
    lines = fixture("rt-cyclictest-hist.txt")
    total = lines.index("# Total: 000001000")
    if cut:  # the four summary lines after Total lost
        broken = lines[:total + 1] + lines[total + 5:]
    else:  # one more sample in the last bucket than Total counts
        broken = lines[:total - 1] + ["000099 000001"] + lines[total:]
    assert why in (w.failure(broken, "cyclictest") or "")
    with pytest.raises(w.ParseError, match="histogram"):
        w.result_fields(broken)
    assert w.result_fields(broken, strict=False) == []


def test_report_draws_the_histograms_of_unflagged_runs(tmp_path: Path) -> None:
    import json

    from bulkhead.experiment.matrix import expand
    from bulkhead.experiment.record import OK, Environment, RunRecord
    from bulkhead.experiment.report import render
    from bulkhead.experiment.spec import load

    # cyclictest alone and beside stress-ng (the recorded runs used -h)
    spec = load(Path(__file__).resolve().parent / "configs" / "bench-workloads-rt.yaml")
    solo, stress = expand(spec)
    records = []
    for plan, name, flags in ((solo, "rt-cyclictest-hist.txt", []),
                              (stress, "rt-cyclictest-hist-stress.txt", []),
                              (stress, "rt-cyclictest-hist.txt", ["interferer-not-running: made up"])):
        rows = w.result_fields(fixture(name))
        records.append(RunRecord(plan, "cyclictest", "lat_max_us", "us", OK,
                                 metrics=w.reduce_workload(rows), lines=[("rt", r) for r in rows], flags=flags))
    records[2].plan = type(stress)(3, stress.scenario, stress.variant, stress.benchmark, 2, False)
    report, files = render(spec, tmp_path, records, Environment("0", "abc", "10.0", "host"), 1)
    text = report.read_text()
    assert "## Latency histograms" in text
    assert "| solo | cyclictest | 1 | 1000 | 14 | 15 | 16 | 17 | 0 |" in text
    assert "| stress-ng | cyclictest | 1 | 1000 | 19 | > 199 | > 199 | 504 | 193 |" in text  # flagged run left out
    assert tmp_path / "plots" / "latency-hist-cyclictest.png" in files
    doc = json.loads((tmp_path / "plots" / "latency-hist-cyclictest.json").read_text())
    assert [s["runs"] for s in doc["series"]] == [[1], [2]]
    assert [d["run"] for d in doc["left_out"]] == [3]
    solo_counts = bucket_rows(fixture("rt-cyclictest-hist.txt"))
    assert doc["series"][0]["x"] == [float(us) for us, c in enumerate(solo_counts) if c]
    assert sum(doc["series"][0]["y"]) == pytest.approx(100.0)
    assert sum(doc["series"][1]["y"]) == pytest.approx(80.7)  # 193 of 1000 beyond 200 µs
    assert "stress-ng: p50 19 µs, p99 > 199 µs" in doc["caption"] and "1 run(s) flagged" in doc["caption"]
