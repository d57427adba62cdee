# SPDX-License-Identifier: Apache-2.0
"""Evidence a reviewer can cite (issue #39): the version from git tags and a
dirty state that counts untracked files, the self-contained bundle and its
``--reproduce`` round trip, 95% confidence intervals over repetitions,
benchmark and workload filters. With the fake QEMU of test_experiment.py;
the round trip under QEMU is in tests/qemu/test_experiments.py."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from test_experiment import BASE, INTERF, TINY, fake_run, modelled_fake, write_spec

from bulkhead import cli
from bulkhead.base import version
from bulkhead.experiment import bundle, execute, stats
from bulkhead.experiment.charts import drawn_problems
from bulkhead.experiment.execute import reproduce, run_experiment
from bulkhead.experiment.matrix import expand
from bulkhead.experiment.spec import load
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult

SPEC = BASE + INTERF + textwrap.dedent("""\
    scenarios:
      - name: solo
      - name: interf
        overlay: {vms: [*interf]}
    repetitions: 3
    icount: 0
    tolerance: 0.02
    """)


def built_run(config: Path, options: RunOptions) -> RunResult:
    """fake_run, plus what a real run leaves for the bundle: a build
    directory with a hypervisor image and manifest.json, and an argv whose
    QEMU is a real executable."""
    result = fake_run(config, options)
    out = Path(str(options.out))
    out.mkdir(parents=True, exist_ok=True)
    hyp = out / "bulkhead.elf"
    hyp.write_text(bundle_text(Path(config)))  # differs per config, as the real image does
    guest = out / "guest.bin"
    guest.write_bytes(b"guest image")
    (out / "manifest.json").write_text(json.dumps({"images": [
        {"vm": "bench", "name": "image", "file": str(guest), "sha256": bundle.sha256(guest), "size": 11}]}))
    result.argv = (sys.executable, "-kernel", str(hyp))
    return result


def bundle_text(config: Path) -> str:
    return "".join(line for line in config.read_text().splitlines(True) if not line.startswith("#"))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout


# --- version and revision ------------------------------------------------------


def test_version_from_describe() -> None:
    c = "0123456789abcdef0123"
    assert version.from_describe("v1.2.3-0-g0123456", c, False) == "1.2.3"
    assert version.from_describe("v1.2.3-0-g0123456", c, True) == "1.2.3+g0123456789ab.dirty"
    assert version.from_describe("v1.2.3-4-g0123456\n", c, False) == "1.2.3.post4+g0123456789ab"
    assert version.from_describe(None, c, False) == f"{version.RELEASE}.dev0+g0123456789ab"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_revision_counts_untracked_files_and_tags(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("build/\n")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "a")
    rev = version.revision(repo)
    assert not rev.dirty and rev.version.startswith(f"{version.RELEASE}.dev0+g") and len(rev.commit) == 40
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("ignored\n")
    assert not version.revision(repo).dirty  # ignored files do not count
    (repo / "new.c").write_text("untracked\n")
    rev = version.revision(repo)
    assert rev.dirty and rev.short.endswith("-dirty") and any("new.c" in c for c in rev.changed)
    (repo / "new.c").unlink()
    git(repo, "tag", "v2.0.0")
    assert version.revision(repo).version == "2.0.0"
    (repo / "a.txt").write_text("b\n")
    git(repo, "commit", "-q", "-am", "b")
    assert version.revision(repo).version.startswith("2.0.0.post1+g")


# --- statistics --------------------------------------------------------------------


def test_confidence_intervals() -> None:
    assert stats.t95(1) == 12.706 and stats.t95(4) == 2.776 and stats.t95(30) == 2.042
    assert 2.000 > stats.t95(100) > 1.980 and stats.t95(10**9) == pytest.approx(1.960, abs=1e-3)
    s = stats.stat([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s is not None and s.n == 5 and s.mean == 3.0
    assert s.sd == pytest.approx(math.sqrt(2.5))
    assert s.ci == pytest.approx(2.776 * math.sqrt(2.5) / math.sqrt(5))
    one = stats.stat([7.0, None])
    assert one is not None and one.n == 1 and one.ci is None and stats.bars(one) == (0.0, 0.0)
    assert stats.text(s, ".3g") == "3 ± 1.96 (N = 5)"


def test_summary_and_report_state_n_and_intervals(tmp_path: Path) -> None:
    spec = load(write_spec(tmp_path, SPEC))
    jitter = iter(range(100))

    def noisy(config: Path, options: RunOptions) -> RunResult:  # repetitions differ, as in host time
        r = fake_run(config, options)
        k = 1 + 0.01 * (next(jitter) % 3)
        r.output = re.sub(r"ns_per_line=([0-9.]+)", lambda m: f"ns_per_line={float(m[1]) * k:.3f}", r.output)
        return r

    out = tmp_path / "out"
    run_experiment(spec, out, backend=noisy)
    with open(out / "summary.csv", newline="") as f:
        rows = {(r["scenario"], r["benchmark"]): r for r in csv.DictReader(f)}
    with open(out / "results.csv", newline="") as f:
        values = [float(r["value"]) for r in csv.DictReader(f) if r["scenario"] == "solo" and r["benchmark"] == "bw"]
    s = stats.stat(values)
    assert s is not None and s.n == 3 and s.ci is not None and s.ci > 0
    row = rows[("solo", "bw")]
    assert row["n"] == "3" and float(row["mean"]) == pytest.approx(s.mean)
    assert float(row["ci95_lo"]) == pytest.approx(s.mean - s.ci, rel=1e-5)
    assert float(row["ci95_hi"]) == pytest.approx(s.mean + s.ci, rel=1e-5)
    assert rows[("interf", "bw")]["slowdown_mean"] != ""
    report = (out / "report.md").read_text()
    assert "95% confidence interval" in report and "| N |" in report
    assert f"| solo | bw | ns_per_line (ns/line) | {s.mean:.2f} ± {s.ci:.3g}" in report
    assert "(N = 3)" in report  # the captions state N
    side = json.loads((out / "plots" / "slowdown.json").read_text())
    tops = [x for x in side["series"] if x["role"] == "error"]
    assert tops and all("95% CI" in x["label"] for x in tops)


# --- bundle and --reproduce --------------------------------------------------------


def test_bundle_is_self_contained_and_hashed(tmp_path: Path) -> None:
    spec = load(write_spec(tmp_path, SPEC))
    out = tmp_path / "out"
    run_experiment(spec, out, backend=built_run, repetitions=1)
    doc = bundle.load(out)
    rev = version.revision()
    assert doc["toolchain"]["commit"] == rev.commit and doc["toolchain"]["dirty"] == rev.dirty
    assert doc["toolchain"]["version"] == rev.version
    assert doc["command"]["repetitions"] == 1 and doc["tolerance"] == 0.02
    assert doc["command"]["timing_quantum_ns"] is None  # --reproduce runs a timing bundle in timing mode
    assert set(doc["configs"]) == {"solo-bw", "solo-lat", "interf-bw", "interf-lat"}
    for name, entry in doc["configs"].items():
        assert bundle.sha256(out / entry["file"]) == entry["sha256"], name
    assert doc["platforms"]["qemu-virt"]["sha256"] == bundle.sha256(out / "bundle" / "platforms" / "qemu-virt.yaml")
    booted = doc["booted"]["interf-bw"]
    hyp = tmp_path / "hyp"
    hyp.write_text(bundle_text(out / "configs" / "interf-bw.yaml"))
    assert booted["hypervisor"]["sha256"] == bundle.sha256(hyp)
    assert booted["qemu"]["sha256"] == bundle.sha256(sys.executable)
    assert booted["images"][0]["sha256"] == bundle.sha256(out / "build" / "w0" / "guest.bin")
    assert doc["booted"]["solo-bw"]["hypervisor"]["sha256"] != booted["hypervisor"]["sha256"]
    assert doc["columns"]["ns_per_line"] == "ns/line" and doc["columns"]["wall_s"].startswith("s")
    with open(out / "results-units.csv", newline="") as f:
        units = {r["column"]: r["unit"] for r in csv.DictReader(f)}
    with open(out / "results.csv", newline="") as f:
        assert list(units) == next(csv.reader(f))  # every column, in order
    assert units["mbps"] == "MB/s" and units["bench_ns"] == "ns"
    assert (out / "bundle" / "original" / "spec.yaml").read_text() == (tmp_path / "spec.yaml").read_text()
    copy = yaml.safe_load((out / "bundle" / "spec.yaml").read_text())
    assert "base" not in copy and copy["system"]["vms"][0]["name"] == "bench"
    assert load(out / "bundle" / "spec.yaml").benchmarks == spec.benchmarks


def test_reproduce_round_trip_reports_differences(tmp_path: Path) -> None:
    spec = load(write_spec(tmp_path, SPEC))
    first = tmp_path / "first"
    run_experiment(spec, first, backend=built_run, repetitions=2, only=["interf"])
    assert reproduce(first, backend=built_run) == 0
    text = (first / "reproduce" / "reproduce.md").read_text()
    assert "## Results that differ (0)" in text and "## Inputs that differ (0)" in text
    with open(first / "reproduce" / "results.csv", newline="") as f:
        assert {r["scenario"] for r in csv.DictReader(f)} == {"interf"}  # the bundle's --only

    # a value the new run does not reproduce (beyond the 2% tolerance), one within it
    with open(first / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    fields = list(rows[0])
    rows[0]["ns_per_line"] = f"{float(rows[0]['ns_per_line']) * 1.5:g}"
    rows[1]["ns_per_line"] = f"{float(rows[1]['ns_per_line']) * 1.01:g}"
    with open(first / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    doc = json.loads((first / "bundle.json").read_text())
    doc["qemu"]["sha256"] = "0" * 64
    (first / "bundle.json").write_text(json.dumps(doc))
    assert reproduce(first, tmp_path / "second", backend=built_run) == 1
    text = (tmp_path / "second" / "reproduce.md").read_text()
    assert "## Results that differ (1)" in text
    assert f"- interf bw #{rows[0]['repetition']}: ns_per_line " in text and "tolerance 2.00%" in text
    assert "## Inputs that differ (1)" in text and "- qemu: " in text


def test_reproduce_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["experiment", "--reproduce", str(tmp_path)]) == 1
    assert "no bundle here" in capsys.readouterr().err
    assert cli.main(["experiment"]) == 2
    bad = write_spec(tmp_path, SPEC.replace("tolerance: 0.02", "tolerance: 2"))
    assert cli.main(["experiment", str(bad), "--dry-run"]) == 1
    assert "tolerance: the tolerance must lie between 0 and 1" in capsys.readouterr().err


# --- filters and --repeat --------------------------------------------------------


def test_benchmark_and_workload_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = SPEC.replace("  - {name: lat, guest: latency}\n", "  - {name: lat, guest: latency}\n"
                        "  - {name: rt, workload: cyclictest, args: '-l 100'}\n")
    spec = load(write_spec(tmp_path, text))
    assert {p.benchmark for p in expand(spec)} == {"bw", "lat", "rt"}
    assert {p.benchmark for p in expand(spec, benchmarks=["bw"])} == {"bw"}
    assert {p.benchmark for p in expand(spec, benchmarks=["latency"])} == {"lat"}  # by guest
    assert {p.benchmark for p in expand(spec, workloads=["cyclictest"])} == {"rt"}
    assert {p.benchmark for p in expand(spec, benchmarks=["bw"], workloads=["cyclictest"])} == {"bw", "rt"}
    assert not expand(spec, benchmarks=["cyclictest"])  # a workload is not a bare-metal guest
    plans = expand(spec, 2, ["interf"], ["lat"])
    assert [(p.scenario, p.benchmark, p.repetition) for p in plans] == [("interf", "lat", 1), ("interf", "lat", 2)]
    path = str(tmp_path / "spec.yaml")
    o = str(tmp_path / "o")
    assert cli.main(["experiment", path, "--dry-run", "--out", o, "--benchmark", "bw", "--repeat", "4"]) == 0
    assert "experiment t: 8 run(s)" in capsys.readouterr().out
    # (1: the bare-metal VM under test cannot run a Linux workload; the filter chose it alone)
    assert cli.main(["experiment", path, "--dry-run", "--out", o, "--workload", "cyclictest", "--only", "solo"]) == 1
    shown = capsys.readouterr().out
    assert "experiment t: 3 run(s)" in shown and "  solo  rt  " in shown
    assert cli.main(["experiment", path, "--dry-run", "--out", o, "--benchmark", "nope"]) == 1
    assert "--benchmark/--workload: no benchmark of the spec matches nope; it has: bw (bandwidth)" \
        in capsys.readouterr().err


def test_tiny_spec_matrix_is_filtered_by_benchmark() -> None:
    spec = load(TINY)
    assert expand(spec, benchmarks=["bw-read"]) == expand(spec)
    assert expand(spec, benchmarks=["stride"]) == []


@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("qemu-system-aarch64") is None or shutil.which("aarch64-linux-gnu-gcc") is None,
                    reason="needs QEMU and the AArch64 cross compiler")
def test_tiny_bundle_reproduces_under_qemu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The tiny matrix (virtual time) into a bundle, then --reproduce: the
    same values, every booted file hashed."""
    out = tmp_path / "tiny"
    assert cli.main(["experiment", str(TINY), "--out", str(out), "--only", "solo", "--only", "interf"]) == 0
    doc = bundle.load(out)
    assert doc["command"]["only"] == ["solo", "interf"] and doc["qemu"]["version"][0].isdigit()
    assert doc["qemu"]["sha256"] == bundle.sha256(doc["qemu"]["path"])
    for stem in ("solo-bw-read", "interf-bw-read"):
        booted = doc["booted"][stem]
        assert booted["hypervisor"]["sha256"] == bundle.sha256(booted["hypervisor"]["file"]) or \
            stem == "solo-bw-read"  # the slot's build directory holds the last config's image
        assert booted["qemu"]["sha256"] == doc["qemu"]["sha256"]
        assert {i["vm"] for i in booted["images"]} == ({"bench"} if stem.startswith("solo") else {"bench", "interf"})
    report = (out / "report.md").read_text()
    rev = version.revision()
    assert f"bulkhead {rev.version}, commit {rev.short.removesuffix('-dirty')}" in report
    capsys.readouterr()
    assert cli.main(["experiment", "--reproduce", str(out)]) == 0
    assert "0 result(s) differ beyond the tolerance 1.00%" in capsys.readouterr().err
    text = (out / "reproduce" / "reproduce.md").read_text()
    assert "## Results that differ (0)" in text


# --- flags on every chart -------------------------------------------------------------


def test_modelled_slowdown_chart_leaves_flagged_runs_out(tmp_path: Path) -> None:
    """A run flagged interferer-idle (its interferer moved nothing) carries a
    modelled time: the modelled-slowdown chart must not draw it, and must
    list it as left out."""
    spec = load(write_spec(tmp_path, BASE + INTERF + textwrap.dedent("""\
        scenarios:
          - name: solo
            benchmarks: [bw]
          - name: interf
            benchmarks: [bw]
            overlay: {vms: [*interf]}
          - name: idle
            benchmarks: [bw]
            overlay: {vms: [{<<: *interf, params: {idle: 1}}]}
        icount: 0
        """)))

    out = tmp_path / "out"
    run_experiment(spec, out, backend=modelled_fake({"time_ns": 1_000_000}, {"time_ns": 3_000_000}))
    with open(out / "results.csv", newline="") as f:
        rows = {r["scenario"]: r for r in csv.DictReader(f)}
    assert rows["idle"]["flags"].startswith("interferer-idle") and rows["idle"]["modelled_time_ns"] == "3000000"
    doc = json.loads((out / "plots" / "modelled-slowdown.json").read_text())
    flagged = {int(r["run"]) for r in rows.values() if r["flags"]}
    assert drawn_problems(doc, flagged) == []
    assert [s["label"] for s in doc["series"]] == ["scenario solo (modelled)", "scenario interf (modelled)"]
    assert [d["label"] for d in doc["left_out"]] == ["idle"]
    assert {r for s in doc["series"] for r in s["runs"]} == {int(rows["solo"]["run"]), int(rows["interf"]["run"])}


def test_a_timing_bundle_records_the_timing_qemu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--timing runs the patched QEMU of timing mode: the bundle hashes that
    binary, not the stock one (before: the stock qemu-system-aarch64)."""
    fake = tmp_path / "qemu-system-aarch64"
    fake.write_text("#!/bin/sh\necho 'QEMU emulator version 10.0.2'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BULKHEAD_TIMING_QEMU", str(fake))
    cfg = execute._Config(tmp_path / "c.yaml", "0", "qemu-virt", "qemu-system-aarch64", "")
    rev = version.revision()
    _, stock = execute._qemu_of({"c": cfg}, rev)
    _, timing = execute._qemu_of({"c": cfg}, rev, timing=True)
    assert timing["path"] == str(fake) and timing["sha256"] == bundle.sha256(str(fake))
    assert stock["path"] != str(fake)
