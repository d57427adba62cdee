# SPDX-License-Identifier: Apache-2.0
"""``bulkhead experiment``: spec checking, overlays and sweeps, the runner's
bookkeeping (with a fake QEMU), and the tiny matrix end to end under QEMU."""

from __future__ import annotations

import csv
import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from bulkhead import cli
from bulkhead.base.errors import BuildError, ConfigError
from bulkhead.experiment.analysis import Analysis
from bulkhead.experiment.charts import drawn_problems, figure, pyplot
from bulkhead.experiment.execute import run_experiment
from bulkhead.experiment.matrix import expand, generate
from bulkhead.experiment.plain import PathError, deep_merge, set_path
from bulkhead.experiment.report import DISCLAIMER
from bulkhead.experiment.results import parse_result_line, reduce_metrics
from bulkhead.experiment.spec import load
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult

REPO_ROOT = Path(__file__).resolve().parent.parent
TINY = REPO_ROOT / "tests" / "configs" / "bench-tiny.yaml"
SHIPPED = sorted((REPO_ROOT / "bench" / "experiments").glob("*.yaml"))

BASE = """\
name: t
system:
  platform: qemu-virt
  vms:
    - {name: bench, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], guest: hello, params: {keep: 1}}
critical: bench
benchmarks:
  - {name: bw, guest: bandwidth, params: {mode: read, size: 64K}}
  - {name: lat, guest: latency}
"""

INTERF = """\
x-interf: &interf
  name: interf
  cpus: [1, 2]
  memory: [{ipa: 0x40000000, size: 16M}]
  guest: interferer
"""


def write_spec(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def spec_error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load(write_spec(tmp_path, text))
    return str(info.value)


# --- spec checking ---------------------------------------------------------


def test_shipped_specs_parse_and_generate_valid_core_configs(tmp_path: Path) -> None:
    assert {p.name for p in SHIPPED} >= {"bao-thesis.yaml", "hmbr.yaml", "rk3588-linear.yaml", "qos-dma.yaml"}
    for path in SHIPPED:
        spec = load(path)
        plans = expand(spec)
        assert plans and spec.repetitions <= 3
        # The baseline scenario uses only core config keys: it must be valid today.
        from bulkhead.layout.load import load_system

        base = next(p for p in plans if p.scenario == spec.baseline)
        cfg = tmp_path / f"{path.stem}.yaml"
        cfg.write_text(yaml.safe_dump(generate(spec, base)))
        load_system(cfg)


@pytest.mark.parametrize("text, expected", [
    (BASE + "scenarios: [{name: solo}]\nbogus: 1\n", "spec.yaml:11:1: bogus: unknown key 'bogus'"),
    (BASE.replace("critical: bench", "critical: nope") + "scenarios: [{name: solo}]\n",
     "spec.yaml:6:11: critical: the base system has no VM 'nope'; it has: bench"),
    (BASE + "scenarios: [{name: solo}, {name: b, extends: zzz}]\n",
     "spec.yaml:10:46: scenarios[1].extends: no earlier scenario named 'zzz'"),
    (BASE + "scenarios: [{name: solo}, {name: solo}]\n",
     "spec.yaml:10:34: scenarios[1].name: duplicate scenario name 'solo'"),
    (BASE + "scenarios: [{name: solo, benchmarks: [bw, nope]}]\n",
     "scenarios[0].benchmarks[1]: no benchmark named 'nope'"),
    (BASE + "scenarios:\n  - name: s\n    sweep: {vms.bench.params.status: [1]}\n",
     "invalid sweep label 'status'"),
    (BASE + "scenarios:\n  - name: s\n    sweep: {a.x: [1], b.x: [2]}\n",
     "two sweep keys have the same label 'x'"),
    (BASE + "scenarios:\n  - name: s\n    zip: true\n    sweep: {a.x: [1], b.y: [2, 3]}\n",
     "zipped sweeps need lists of the same length"),
    (BASE + "scenarios: [{name: solo}]\nplots: [{kind: overhead, scenario: solo}]\n",
     "scenario 'solo' has no sweep to plot against"),
    (BASE + "scenarios: [{name: solo}]\nbaseline: other\n", "baseline: no scenario named 'other'"),
    (BASE.replace("guest: latency", "guest: nosuchguest") + "scenarios: [{name: solo}]\n",
     "no guest 'nosuchguest'"),
    (BASE + "scenarios: [{name: solo}]\nicount: 11\n", "icount: expected an icount shift (0-10)"),
    (BASE.replace("mode: read", "mode: off") + "scenarios: [{name: solo}]\n",
     "spec.yaml:8:49: benchmarks[0].params.mode: off is a boolean (false) in YAML 1.1, not the text 'off'"),
    ("name: t\ncritical: a\nbenchmarks: []\nscenarios: []\n",
     "give exactly one of 'base' (a system config file) and 'system'"),
    (BASE.replace("system:\n  platform: qemu-virt", "base: missing.yaml\nx-unused:\n  platform: qemu-virt")
     + "scenarios: [{name: solo}]\n", "missing.yaml: file not found"),
])
def test_spec_errors_name_file_line_col(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in spec_error(tmp_path, text)


def test_base_file_paths_are_made_absolute(tmp_path: Path) -> None:
    (tmp_path / "sys").mkdir()
    (tmp_path / "sys" / "base.yaml").write_text(
        "platform: qemu-virt\nvms:\n  - {name: bench, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], "
        "image: img.bin}\n")
    spec = load(write_spec(tmp_path, "name: t\nbase: sys/base.yaml\ncritical: bench\n"
                                     "benchmarks: [{guest: latency}]\nscenarios: [{name: solo}]\n"))
    assert spec.base["vms"][0]["image"] == str((tmp_path / "sys" / "img.bin").resolve())
    config = generate(spec, expand(spec)[0])
    assert "image" not in config["vms"][0] and config["vms"][0]["guest"] == "latency"


# --- overlays, sweeps, generation ---------------------------------------------


def test_deep_merge() -> None:
    base: dict[str, Any] = {"a": 1, "vms": [{"name": "x", "cpus": [0], "params": {"p": 1, "q": 2}}],
            "shmem": [{"name": "s", "vms": [{"vm": "x", "ipa": 1}]}]}
    overlay = {"b": 2, "vms": [{"name": "x", "cpus": [3], "params": {"q": None, "r": 3}},
                               {"name": "y", "cpus": [1]}],
               "shmem": [{"name": "s", "vms": [{"vm": "y", "ipa": 2}]}]}
    merged = deep_merge(base, overlay)
    assert merged == {
        "a": 1, "b": 2,
        "vms": [{"name": "x", "cpus": [3], "params": {"p": 1, "r": 3}}, {"name": "y", "cpus": [1]}],
        "shmem": [{"name": "s", "vms": [{"vm": "x", "ipa": 1}, {"vm": "y", "ipa": 2}]}],
    }
    assert base["vms"][0]["cpus"] == [0]  # inputs untouched
    assert deep_merge({"l": [1, 2]}, {"l": [3]}) == {"l": [3]}


def test_set_path() -> None:
    config: dict[str, Any] = {"vms": [{"name": "a"}, {"name": "b", "bandwidth": {"period_us": 1}}]}
    set_path(config, "vms.b.bandwidth.period_us", 10)
    set_path(config, "vms.a.colors.llc", "0-3")
    set_path(config, "vms.0.params.size", "1M")
    assert config["vms"] == [{"name": "a", "colors": {"llc": "0-3"}, "params": {"size": "1M"}},
                             {"name": "b", "bandwidth": {"period_us": 10}}]
    with pytest.raises(PathError, match="vms has no item 'zz'"):
        set_path(config, "vms.zz.x", 1)


def test_matrix_and_generated_configs(tmp_path: Path) -> None:
    spec = load(write_spec(tmp_path, BASE + INTERF + textwrap.dedent("""\
        scenarios:
          - name: solo
          - name: interf
            overlay: {vms: [*interf], shmem: [{name: other, size: 4K, vms: [{vm: interf, ipa: 0x50000000}]}]}
          - name: mbr
            extends: interf
            benchmarks: [bw]
            overlay: {vms: [{name: interf, bandwidth: {period_us: 10, budget_events: 1}}]}
            sweep:
              vms.interf.bandwidth.period_us: [1, 10]
              vms.interf.bandwidth.budget_events: [5, 50, 500]
          - name: zipped
            extends: interf
            benchmarks: [lat]
            zip: true
            sweep:
              - {key: vms.interf.params.size, values: [4K, 8K], label: isize}
              - {key: vms.interf.params.mode, values: [read, write]}
        repetitions: 2
        """)))
    plans = expand(spec)
    assert len(plans) == (2 + 2 + 6 + 2) * 2
    assert len(expand(spec, repetitions=1, only=["mbr"])) == 6
    assert spec.sweep_labels() == ["period_us", "budget_events", "isize", "mode"]
    mbr = [p for p in plans if p.scenario == "mbr"]
    assert [p.variant_text for p in mbr[::2]] == [
        "period_us=1,budget_events=5", "period_us=1,budget_events=50", "period_us=1,budget_events=500",
        "period_us=10,budget_events=5", "period_us=10,budget_events=50", "period_us=10,budget_events=500"]
    assert mbr[0].config_stem == "mbr-period_us1-budget_events5-bw" == mbr[1].config_stem
    assert [p.variant_text for p in plans if p.scenario == "zipped"][::2] == [
        "isize=4K,mode=read", "isize=8K,mode=write"]

    solo = generate(spec, plans[0])
    assert solo["vms"] == [{"name": "bench", "cpus": [0], "memory": [{"ipa": 0x40000000, "size": "16M"}],
                            "guest": "bandwidth", "params": {"keep": 1, "mode": "read", "size": "64K"}}]
    assert "shmem" not in solo  # no interferer: no handshake

    config = generate(spec, mbr[4])  # period_us=1, budget_events=500
    bench, interf = config["vms"]
    assert interf["bandwidth"] == {"period_us": 1, "budget_events": 500}
    # The handshake page: index among each VM's regions (interf already has 'other').
    assert config["shmem"][-1] == {"name": "bench-sync", "size": 4096, "vms": [
        {"vm": "bench", "ipa": 0xF0000000}, {"vm": "interf", "ipa": 0xF0000000}]}
    assert bench["params"]["sync"] == 0 and interf["params"]["sync"] == 1

    spec_nosync = load(write_spec(tmp_path, BASE + INTERF + "scenarios: [{name: i, overlay: {vms: [*interf]}}]\n"
                                  "sync: false\n", "nosync.yaml"))
    assert "shmem" not in generate(spec_nosync, expand(spec_nosync)[0])


def test_result_lines_and_metrics() -> None:
    assert parse_result_line("bandwidth: PASS") is None
    assert parse_result_line("result x=1") is None
    own = [parse_result_line(f"result bench=bandwidth cpu={c} mode=read mbps={m} ns_per_line={n}")
           for c, m, n in ((0, "100.5", "2.0"), (1, "300.5", "4.0"))]
    other = [parse_result_line(f"result bench=interferer cpu={c} mbps=50.000") for c in (0, 1, 2)]
    metrics = reduce_metrics("bandwidth", [o for o in own if o], [o for o in other if o])
    assert metrics == {"mbps": 401.0, "mbps_per_cpu": 200.5, "ns_per_line": 3.0, "cpus": 2.0,
                       "interf_mbps": 150.0, "interf_cpus": 3.0}
    stride = [parse_result_line(x) for x in (
        "result bench=stride kind=step cpu=0 step=64 mbps=10.0 ns_per_line=6.0",
        "result bench=stride kind=step cpu=0 step=128 mbps=5.0 ns_per_line=12.0",
        "result bench=stride kind=summary cpu=0 steps=2 slowest_step=128 min_mbps=5.000 max_mbps=10.000")]
    assert reduce_metrics("stride", [s for s in stride if s], []) == {
        "min_mbps": 5.0, "max_mbps": 10.0, "slowest_step": 128.0, "ns_per_line": 9.0, "cpus": 1.0}
    irq = parse_result_line("result bench=irqlat cpu=0 samples=5 min_ns=1 mean_ns=2.5 p50_ns=2 p99_ns=4 max_ns=5")
    assert irq is not None
    assert reduce_metrics("irqlat", [irq], []) == {"min_ns": 1.0, "mean_ns": 2.5, "p50_ns": 2.0, "p99_ns": 4.0,
                                                   "max_ns": 5.0, "cpus": 1.0}


# --- the runner, with a fake QEMU ----------------------------------------------


def fake_run(config: Path, options: RunOptions) -> RunResult:
    """Pretends to boot: the VM under test is slower the larger the
    interferer's budget; some benchmarks fail in specific ways."""
    doc = yaml.safe_load(Path(config).read_text())
    vms = {vm["name"]: vm for vm in doc["vms"]}
    bench = vms["bench"]
    guest, params = bench["guest"], bench.get("params", {})
    if params.get("behave") == "build":
        raise BuildError("make failed")
    if params.get("behave") == "hang":
        return RunResult(-9, True, "[bench] bandwidth: 1 vCPUs\n", False, len(vms), "timed out after 1 s (QEMU killed)")
    budget = vms.get("interf", {}).get("bandwidth", {}).get("budget_events", 0)
    ns = params.get("ns", 5_000_000)  # the benchmark's duration: many regulation periods unless told
    slow = 1.0 + (0.1 if "interf" in vms else 0.0) + min(budget, 10_000) / 4000
    if budget >= 100_000_000:  # an artefact, as -icount scheduling makes them
        slow = 1.1 + budget / 4000
    lines = [f"[bench] {guest}: 1 vCPUs"]
    if params.get("behave") == "fail":
        lines.append(f"[bench] {guest}: FAIL (vcpu 0: something)")
    else:
        lines.append(f"[bench] result bench=bandwidth cpu=0 mode=read bytes=64 ns={ns} mbps={1000 / slow:.3f} "
                     f"ns_per_line={20 * slow:.3f}")
        lines.append(f"[bench] {guest}: PASS (1 vCPUs, 64 bytes counted)")
    if "interf" in vms:
        mbps = 100.0 * (budget or 100) / 100
        moved = 0 if vms["interf"].get("params", {}).get("idle") else 640_000
        lines.append(f"[interf] result bench=interferer cpu=0 mode=write bytes={moved} mbps={mbps:.3f}")
        lines.append(f"[interf] result bench=interferer cpu=1 mode=write bytes={moved} mbps={mbps:.3f}")
    lines.append(f"[bulkhead] all VMs off: clean={len(vms)} stopped=0")
    return RunResult(0, False, "\n".join(lines) + "\n", True, len(vms), "")


def modelled_fake(solo: dict[str, float], interfered: dict[str, float]) -> Any:
    """fake_run whose result carries the VM under test's modelled figures
    (``interfered`` beside an interferer, ``solo`` otherwise)."""
    def run(config: Path, options: RunOptions) -> RunResult:
        res = fake_run(config, options)
        res.modelled = {"bench": interfered if "guest: interferer" in Path(config).read_text() else solo}  # type: ignore[attr-defined]
        return res
    return run


def test_runner_statuses_csv_plots_report(tmp_path: Path) -> None:
    benchmarks = BASE.replace("guest: latency", "guest: bandwidth, params: {behave: fail}") + (
        "  - {name: hang, guest: bandwidth, params: {behave: hang}}\n"
        "  - {name: nobuild, guest: bandwidth, params: {behave: build}}\n")
    spec = load(write_spec(tmp_path, benchmarks + INTERF + textwrap.dedent("""\
        scenarios:
          - name: solo
          - name: interf
            overlay: {vms: [*interf]}
          - name: mbr
            extends: interf
            benchmarks: [bw]
            overlay: {vms: [{name: interf, bandwidth: {period_us: 10, budget_events: 1}}]}
            sweep: {vms.interf.bandwidth.budget_events: [10, 100, 1000]}
          - name: bad
            benchmarks: [bw]
            overlay: {vms: [{name: bench, cpus: [7]}]}
          - name: bad-optional
            optional: true
            benchmarks: [bw]
            overlay: {vms: [{name: bench, cpus: [7]}]}
          - name: bad-path
            benchmarks: [bw]
            sweep: {vms.nobody.params.x: [1]}
        repetitions: 2
        plots:
          - {kind: slowdown}
          - {kind: consumed, scenario: mbr, y: interf_mbps, assigned: 2.5}
          - {kind: consumed, scenario: mbr, y: mbps, per_cpu: true}
          - {kind: overhead, scenario: mbr}
        icount: 0
        """)))
    out = tmp_path / "out"
    result = run_experiment(spec, out, backend=fake_run, jobs=2)
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(expand(spec)) == 2 * (4 + 4 + 3 + 1 + 1 + 1)
    assert [int(r["run"]) for r in rows] == list(range(1, len(rows) + 1))
    by = {(r["scenario"], r["variant"], r["benchmark"], r["repetition"]): r for r in rows}
    assert by[("solo", "", "bw", "1")]["status"] == "ok"
    assert float(by[("solo", "", "bw", "1")]["value"]) == 20.0
    assert by[("solo", "", "lat", "1")]["status"] == "fail"
    assert "FAIL (vcpu 0: something)" in by[("solo", "", "lat", "1")]["error"]
    assert by[("solo", "", "hang", "2")]["status"] == "timeout"
    assert by[("solo", "", "nobuild", "1")]["status"] == "build-error"
    mbr = by[("mbr", "budget_events=1000", "bw", "2")]
    assert mbr["status"] == "ok" and mbr["budget_events"] == "1000" and float(mbr["interf_mbps"]) == 2000.0
    assert float(mbr["ns_per_line"]) == pytest.approx(20 * 1.35)
    assert by[("bad", "", "bw", "1")]["status"] == "invalid"
    assert "cpus[0]: CPU 7 does not exist" in by[("bad", "", "bw", "1")]["error"]
    assert by[("bad-optional", "", "bw", "1")]["status"] == "unsupported"
    bad_path = [r for r in rows if r["scenario"] == "bad-path"]
    assert bad_path and all(r["status"] == "invalid" and "has no item 'nobody'" in r["error"] for r in bad_path)
    for r in rows:
        assert r["bulkhead_version"] and r["qemu_version"] and r["host"] and r["icount"] == "0"
        assert r["config"].startswith("configs/")
        assert (r["config_hash"].startswith("0x")) == (r["status"] not in ("invalid", "unsupported"))
    assert {r.status for r in result.failed()} == {"fail", "timeout", "build-error", "invalid"}

    with open(out / "results-lines.csv", newline="") as f:
        lines = list(csv.DictReader(f))
    assert {(x["vm"], x["bench"]) for x in lines} == {("bench", "bandwidth"), ("interf", "interferer")}

    names = sorted(p.name for p in (out / "plots").iterdir())
    assert names == sorted(f"{stem}.{ext}" for ext in ("png", "svg", "json") for stem in (
        "slowdown", "consumed-mbr-budget_events", "consumed-mbr-budget_events-2", "overhead-mbr-budget_events"))
    assert all(p.stat().st_size > 1000 for p in (out / "plots").iterdir())
    report = (out / "report.md").read_text()
    assert report.startswith(DISCLAIMER)
    assert "![Slowdown relative to the baseline](plots/slowdown.png)" in report
    assert "| mbr[budget_events=1000] | bw | ns_per_line (ns/line) | 27 ± 0 [27–27] | 2 | 1.350 ± 0.000 | 2,000 | " \
        "2 ok |" in report
    assert "## Runs that did not succeed" in report and "unsupported" in report

    # --report-only redraws from the CSV files.
    (out / "report.md").unlink()
    shutil.rmtree(out / "plots")
    assert cli.main(["experiment", str(spec.file), "--out", str(out), "--report-only"]) == 0
    assert (out / "report.md").read_text().startswith(DISCLAIMER)
    assert (out / "plots" / "overhead-mbr-budget_events.svg").is_file()


def test_plots_for_a_paper(tmp_path: Path) -> None:
    """Axes in words with units, linear x unless asked, legends naming the VM
    a line belongs to, a numbered caption with the platform's event and the
    QEMU caveat (in the figure, its SVG text and report.md)."""
    spec = load(write_spec(tmp_path, BASE + INTERF + textwrap.dedent("""\
        scenarios:
          - name: solo
          - name: mbr
            benchmarks: [bw]
            overlay: {vms: [*interf, {name: interf, bandwidth: {period_us: 100, budget_events: 2000}}]}
            sweep: {vms.interf.bandwidth.budget_events: [2000, 4000, 8000]}
        plots:
          - {kind: slowdown}
          - {kind: consumed, scenario: mbr, y: interf_mbps, assigned: 2.5,
             reproduces: "H-MBR on ZCU104, interfering VM's bandwidth versus its budget"}
          - {kind: consumed, scenario: mbr, y: mbps, per_cpu: true, logx: true}
          - {kind: overhead, scenario: mbr}
        icount: 0
        """)))
    out = tmp_path / "out"
    an = Analysis(spec, run_experiment(spec, out, backend=fake_run, jobs=1).records)
    plt = pyplot()
    budget = "bandwidth budget of VM interf (events per period)"
    slowdown = "slowdown of VM bench relative to 'solo' (ratio)"
    turns = " (QEMU -icount scheduling, not interference)"  # beside a VM solo lacks, under -icount
    want = [  # (x label, y label, x scale, legend)
        ("benchmark run by VM bench", slowdown, "linear", ["scenario solo", f"scenario mbr[budget_events=2000]{turns}",
                                                           f"scenario mbr[budget_events=4000]{turns}",
                                                           f"scenario mbr[budget_events=8000]{turns}"]),
        (budget, "total bandwidth of the interfering VMs (MB/s)", "linear",
         ["interfering VMs, beside VM bench running bw", "budget, y = 2.5 x"]),
        (budget, "bandwidth per vCPU of VM bench (MB/s)", "log", ["VM bench vCPU 0, bw"]),
        (budget, slowdown, "linear", [f"VM bench, bw{turns}"]),
    ]
    for n, (plot, (xl, yl, scale, legend)) in enumerate(zip(spec.plots, want, strict=True), 1):
        fig, text, _ = figure(an, plot, n)
        ax = fig.axes[0]
        assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_xscale()) == (xl, yl, scale)
        assert [t.get_text() for t in ax.get_legend().get_texts()] == legend
        assert text.startswith(f"Figure {n}: {plot.title}. ")
        assert "one regulation event is one CPU cycle of guest execution" in text
        assert "QEMU models no caches, DRAM or memory bus" in text and "virtual time (-icount shift=0)" in text
        assert ("Mirrors: H-MBR on ZCU104" in text) == (n == 2)
        assert [t.get_text().replace("\n", " ") for t in fig.texts] == [text]
        # the legend sits outside the axes: it covers no data
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        legend_box, axes_box = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
        assert legend_box.x0 >= axes_box.x1
        plt.close(fig)
    svg = (out / "plots" / "consumed-mbr-budget_events.svg").read_text()
    assert budget in svg and "interfering VMs, beside VM bench running bw" in svg and "Figure 2: " in svg
    report = (out / "report.md").read_text()
    assert "### Figure 2: Consumed bandwidth (interf_mbps) versus budget_events\n" in report
    assert "*Figure 2: Consumed bandwidth (interf_mbps) versus budget_events. Total bandwidth of the interfering" \
        in report


def test_cli_dry_run_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["experiment", str(TINY), "--dry-run", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "experiment tiny: 3 run(s)" in out and "unsupported: " in out and "2 ok, 1 unsupported" in out
    assert cli.main(["experiment", str(TINY), "--dry-run", "--reps", "3", "--only", "solo",
                     "--out", str(tmp_path / "o")]) == 0
    assert "experiment tiny: 3 run(s)" in capsys.readouterr().out
    assert cli.main(["experiment", str(TINY), "--only", "nope", "--out", str(tmp_path / "o")]) == 1
    assert "--only: no scenario named 'nope'" in capsys.readouterr().err
    bad = write_spec(tmp_path, BASE + "scenarios: [{name: solo}]\nrepetitions: 0\n")
    assert cli.main(["experiment", str(bad), "--dry-run"]) == 1
    assert f"{bad}:11:14: repetitions: expected a number of repetitions (1-1000)" in capsys.readouterr().err
    assert cli.main(["experiment", str(TINY), "--jobs", "0"]) == 2


# --- end to end under QEMU -----------------------------------------------------


@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("qemu-system-aarch64") is None or shutil.which("aarch64-linux-gnu-gcc") is None,
                    reason="needs QEMU and the AArch64 cross compiler")
def test_tiny_matrix_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tiny"
    assert cli.main(["experiment", str(TINY), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "[1/3] solo bw-read #1: ok" in err and "2 ok, 1 unsupported" in err
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["scenario"], r["benchmark"], r["status"]) for r in rows] == [
        ("solo", "bw-read", "ok"), ("interf", "bw-read", "ok"), ("broken", "bw-read", "unsupported")]
    solo, interf, broken = rows
    for r in (solo, interf):
        assert r["metric"] == "ns_per_line" and float(r["value"]) > 0 and float(r["mbps"]) > 0
        assert r["icount"] == "3" and r["platform"] == "qemu-virt" and r["config_hash"].startswith("0x")
        assert r["qemu_version"][0].isdigit()
    assert interf["interf_mbps"] and float(interf["interf_mbps"]) > 0 and not solo["interf_mbps"]
    assert "CPU 9 does not exist" in broken["error"]
    assert (out / "plots" / "slowdown.png").stat().st_size > 1000
    assert (out / "plots" / "slowdown.svg").read_text().lstrip().startswith("<?xml")
    report = (out / "report.md").read_text()
    assert report.startswith(DISCLAIMER) and "(plots/slowdown.png)" in report
    log = (out / "logs" / "interf-bw-read-r1.log").read_text()
    assert "[bench] bandwidth: sync: 1 of 1 interfering VMs ready" in log
    assert "[interf] interferer: PASS (1 vCPUs, until done" in log


def test_deterministic_timeouts_are_not_repeated(tmp_path: Path) -> None:
    spec = load(write_spec(tmp_path, BASE + "  - {name: hang, guest: bandwidth, params: {behave: hang}}\n"
                           "scenarios: [{name: solo, benchmarks: [hang, bw]}]\nrepetitions: 3\nicount: 3\n"))
    calls: list[Path] = []

    def counting(config: Path, options: RunOptions) -> RunResult:
        calls.append(Path(config))
        return fake_run(config, options)

    result = run_experiment(spec, tmp_path / "out", backend=counting, report=False)
    assert [(r.plan.benchmark, r.status) for r in result.records] == [("hang", "timeout")] * 3 + [("bw", "ok")] * 3
    assert len(calls) == 1 + 3
    assert "earlier repetition of this config timed out" in result.records[1].error


# --- artefacts and plot checks ---------------------------------------------------


def check_drawn(plots: Path, rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Every chart's side JSON: values inside the axes, no repeated colour and
    marker, no flagged run drawn as a result, legend outside the axes."""
    flagged = {int(r["run"]) for r in rows if r.get("flags")}
    docs = []
    for side in sorted(plots.glob("*.json")):
        doc = json.loads(side.read_text())
        assert drawn_problems(doc, flagged) == [], side.name
        docs.append(doc)
    return docs


def test_drawn_problems_are_found() -> None:
    doc = {"series": [{"role": "measured", "label": "a", "color": "c", "marker": "o", "x": [1.0], "y": [5.0],
                       "runs": [1]},
                      {"role": "published", "label": "b", "color": "c", "marker": "o", "x": [1.0], "y": [1.0],
                       "runs": []}],
           "lines": [{"label": "budget", "x": [], "y": [9.0]}], "left_out": [{"run": 2, "flags": ["x"]}],
           "ylim": [0.0, 4.0], "xlim": [0.0, 2.0], "legend_outside": False}
    assert drawn_problems(doc, {1}) == [
        "a colour/marker pair repeats: [('c', 'o'), ('c', 'o')]", "a: y values [5.0] outside the axis 0..4",
        "line budget outside the y axis", "flagged runs drawn as results: [1]", "the legend is inside the axes"]


# The VM under test alone and beside an interferer regulated at three budgets.
SOLO_MBR = """\
scenarios:
  - name: solo
    benchmarks: [bw]
  - name: mbr
    benchmarks: [bw]
    overlay: {vms: [*interf, {name: interf, bandwidth: {period_us: 100, budget_events: 2000}}]}
    sweep: {vms.interf.bandwidth.budget_events: [2000, 4000, 8000]}
"""


def test_planted_artefacts_are_flagged_and_not_drawn(tmp_path: Path) -> None:
    """A run that ends inside its first regulation period, one whose
    interferer never moved a byte, an impossible slowdown and a consumed
    value above its budget are flagged, listed and left out of every chart."""
    spec = load(write_spec(tmp_path, BASE + INTERF + SOLO_MBR + textwrap.dedent("""\
          - name: short
            extends: mbr
            benchmarks: [bw]
            overlay: {vms: [{name: bench, params: {ns: 50000}}]}
            sweep: {vms.interf.bandwidth.budget_events: [2000, 4000, 8000]}
          - name: idle
            benchmarks: [bw]
            overlay: {vms: [*interf, {name: interf, params: {idle: 1}}]}
          - name: huge
            benchmarks: [bw]
            overlay: {vms: [*interf, {name: interf, bandwidth: {period_us: 100, budget_events: 200000000}}]}
        icount: 0
        plots:
          - {kind: slowdown}
          - {kind: overhead, scenario: short}
          - {kind: consumed, scenario: mbr, y: interf_mbps, assigned: 0.5,
             lines: [{y: 3000, label: "a guarantee", kind: guarantee}],
             published: [{label: "a study", source: "Fig. 1", points: [[2000, 1000], [8000, 3000]]}]}
        """)))
    out = tmp_path / "out"
    result = run_experiment(spec, out, backend=fake_run)
    assert not result.failed()
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    by = {(r["scenario"], r["variant"]): r for r in rows}
    for budget in (2000, 4000, 8000):
        assert by[("short", f"budget_events={budget}")]["flags"].startswith(
            "inside-first-period: the benchmark ran 50 us, inside the first 100 us regulation period")
        assert by[("mbr", f"budget_events={budget}")]["flags"].startswith("above-budget: ")  # the chart's
    assert by[("idle", "")]["flags"].startswith("interferer-idle: VM interf moved no bytes")
    an = Analysis(spec, result.records, out)
    huge = next(r for r in an.records if r.plan.scenario == "huge")
    assert any(f.startswith("implausible-slowdown: slowdown 50,001.1") for f in huge.flags)
    docs = {d["kind"]: d for d in check_drawn(out / "plots", rows)}
    slowdown, overhead, consumed = docs["slowdown"], docs["overhead"], docs["consumed"]
    # the mbr runs' interferer exceeded its budget (the consumed chart's): left out of every chart
    assert [s["label"] for s in slowdown["series"] if s["role"] == "measured"] == ["scenario solo"]
    assert {d["label"] for d in slowdown["left_out"]} >= {"idle", "huge", "mbr[budget_events=2000]"}
    assert not [s for s in overhead["series"] if s["role"] == "measured"] and len(overhead["left_out"]) == 3
    # interf_mbps is 2 x budget: above y = 0.5 x by more than one period (100 us of 5 ms): shown as
    # violations (red crosses, not a result), not silently removed
    assert consumed["left_out"] == [] and consumed["yscale"] == "linear"
    assert [ln["label"] for ln in consumed["lines"]] == ["budget, y = 0.5 x", "a guarantee"]
    assert [(s["role"], s["x"], s["y"]) for s in consumed["series"]] == [
        ("violation", [2000.0, 4000.0, 8000.0], [4000.0, 8000.0, 16000.0]),
        ("published", [2000.0, 8000.0], [1000.0, 3000.0])]
    report = (out / "report.md").read_text()
    assert "## Artefacts: runs not drawn as results" in report
    assert "| short[budget_events=2000] | bw | 1 |" in report and "above-budget:" in report
    assert "| idle | bw | ns_per_line (ns/line) | – | 0 | – | – | 1 ok (1 flagged: not a result) |" in report
    with open(out / "results.csv", newline="") as f:  # the charts' flags are written back
        above = [r for r in csv.DictReader(f) if r["flags"].startswith("above-budget")]
    assert [r["scenario"] for r in above] == ["mbr"] * 3
    assert "not drawn (report: 'Artefacts')" in report


def test_log_axis_when_values_span_decades(tmp_path: Path) -> None:
    spec = load(write_spec(tmp_path, BASE + INTERF + textwrap.dedent("""\
        scenarios:
          - name: solo
            benchmarks: [bw]
          - name: mbr
            benchmarks: [bw]
            overlay: {vms: [*interf, {name: interf, bandwidth: {period_us: 100, budget_events: 400}}]}
            sweep: {vms.interf.bandwidth.budget_events: [400, 4000, 40000, 400000]}
        icount: 0
        plots:
          - {kind: consumed, scenario: mbr, y: interf_mbps}
        """)))
    out = tmp_path / "out"
    run_experiment(spec, out, backend=fake_run)
    doc = json.loads(next((out / "plots").glob("consumed*.json")).read_text())
    assert (doc["xscale"], doc["yscale"]) == ("log", "log")


def test_modelled_figures_are_labelled(tmp_path: Path) -> None:
    """A run result carrying a timing model's per-VM figures (the adapter,
    bulkhead/experiment/modelled.py) gets modelled_* columns, a modelled
    section and chart, every figure labelled modelled."""
    spec = load(write_spec(tmp_path, BASE + INTERF + textwrap.dedent("""\
        scenarios:
          - name: solo
            benchmarks: [bw]
          - name: interf
            benchmarks: [bw]
            overlay: {vms: [*interf]}
        icount: 0
        """)))

    out = tmp_path / "out"
    run_experiment(spec, out, backend=modelled_fake({"time_ns": 1_000_000, "dram_bpp": 640},
                                                   {"time_ns": 2_000_000, "dram_bpp": 640}))
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["modelled_time_ns"], r["modelled_dram_bpp"]) for r in rows] == [("1000000", "640"),
                                                                             ("2000000", "640")]
    report = (out / "report.md").read_text()
    assert "## Modelled figures (timing model: not measured)" in report
    assert "modelled_time_ns (modelled)" in report
    doc = json.loads((out / "plots" / "modelled-slowdown.json").read_text())
    assert [(s["label"], s["y"]) for s in doc["series"]] == [("scenario solo (modelled)", [1.0]),
                                                            ("scenario interf (modelled)", [2.0])]
    # the model's own column names (docs/model.md) are read as the same figures
    from bulkhead.experiment import modelled

    assert modelled.canonical({"model_slowdown": 1.5, "model_time_ns": 3.0, "modelled_time_ns": 4.0}) == {
        "modelled_slowdown": 1.5, "modelled_time_ns": 4.0}


def test_spec_metrics_and_guest_result_lines(tmp_path: Path) -> None:
    """``metrics:`` adds result-line keys of further workloads as columns;
    ``<guest>: result k=v`` lines (ioclient) read like ``result bench=``."""
    spec = load(write_spec(tmp_path, BASE.replace(
        "  - {name: lat, guest: latency}\n", "  - {name: rt, guest: latency, metric: lat_max_us}\n")
        + "metrics:\n  lat_max_us: {unit: us, better: lower}\nscenarios: [{name: solo}]\n"))
    rt = spec.benchmark("rt")
    assert (rt.metric.column, rt.metric.lower_is_better, rt.metric.unit) == ("lat_max_us", True, "us")
    line = parse_result_line("result bench=latency cpu=0 lat_max_us=42")
    assert line is not None and reduce_metrics("latency", [line], [])["lat_max_us"] == 42.0
    assert parse_result_line("ioclient: result frames=4 elapsed_us=10 fps=400 rtt_mean_us=7") == {
        "bench": "ioclient", "frames": "4", "elapsed_us": "10", "fps": "400", "rtt_mean_us": "7"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_spec_dry_run(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["experiment", str(path), "--dry-run", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "invalid" not in out and "unsupported" not in out
    spec = load(path)
    assert spec.icount is not None  # timing is plotted: every shipped spec runs in virtual time
    if path.stem != "cachemodel":  # the cache model's own spec (docs/model.md) mirrors no publication
        for plot in spec.plots:
            assert plot.name, f"{path.name}: every figure is named after the publication's figure"


def test_turn_taking_bound_on_qemu() -> None:
    """On QEMU a CPU-bound benchmark beside busy vCPUs slows down by at most
    about their number; far beyond, it is QEMU's scheduling."""
    from bulkhead.experiment.validity import turns_flag

    config = {"vms": [{"name": "bench", "cpus": [0]}, {"name": "interf", "cpus": [1, 2, 3]}]}
    assert turns_flag(4.8, "bandwidth", True, config, "bench") is None
    flag = turns_flag(24.0, "bandwidth", True, config, "bench")
    assert flag is not None and flag.startswith("implausible-slowdown: slowdown 24.0 above the 4 vCPUs")
    assert turns_flag(24.0, "bandwidth", False, config, "bench") is None  # a board: contention is real
    assert turns_flag(24.0, "ioclient", True, config, "bench") is None  # I/O queues behind other traffic
    regulated = {"vms": [{"name": "bench", "cpus": [0], "bandwidth": {"period_us": 100}}]}
    assert turns_flag(80.0, "bandwidth", True, regulated, "bench") is None  # its own budget slows it


def test_per_vcpu_values_above_their_budget_are_flagged(tmp_path: Path) -> None:
    """rk3588-linear's check: each vCPU's consumed bandwidth against the
    budget line; the runs above it (by more than one period) are left out."""
    spec = load(write_spec(tmp_path, BASE + INTERF + SOLO_MBR + textwrap.dedent("""\
        icount: 0
        plots:
          - {kind: consumed, name: per-vcpu, scenario: mbr, y: mbps, per_cpu: true, assigned: 0.2}
        """)))
    out = tmp_path / "out"
    run_experiment(spec, out, backend=fake_run)
    # the VM under test moves 1000 / (1.6 ... 3.1) MB/s: above 0.2 x 2000 = 400 at 2000 only
    doc = json.loads((out / "plots" / "per-vcpu.json").read_text())
    assert doc["left_out"] == []  # shown as a violation, not removed
    assert [(s["role"], s["x"]) for s in doc["series"]] == [("violation", [2000.0]), ("measured", [4000.0, 8000.0])]
    assert "Red crosses: 1 run(s) above the budget" in doc["caption"]


def test_regulated_interferer_drawn_against_its_budget(tmp_path: Path) -> None:
    """experiment --model (issue #28, item 3): each regulated scenario gets a
    chart of the interferer's modelled DRAM bytes per period, read from the
    run's kept cache model report, with its budget as a line, labelled
    modelled, its caption naming what bounded it; an unregulated scenario
    gets none."""
    path = write_spec(tmp_path, BASE + INTERF + textwrap.dedent("""\
        scenarios:
          - name: interf
            benchmarks: [bw]
            overlay: {vms: [*interf]}
          - name: mbr
            extends: interf
            benchmarks: [bw]
            overlay: {vms: [{name: interf, bandwidth: {period_us: 100, budget_events: 20000}}]}
        icount: 0
        """))
    out = tmp_path / "out"
    run_experiment(load(path), out, backend=fake_run)
    # what experiment --model keeps beside each log: the interferer's CPUs' per-period series
    series = [[i, 50_000 + 1000 * i, 20_000, 0] for i in range(6)]
    raw = {"owners": [], "cpus": [], "periods": [
        {"cpu": cpu, "period_ns": 100_000, "line": 64, "dropped": 0, "series": series} for cpu in (1, 2)]}
    for log in (out / "logs").glob("*-r1.log"):
        log.with_suffix(".cachemodel.json").write_text(json.dumps(raw))
    assert cli.main(["experiment", str(path), "--out", str(out), "--report-only"]) == 0
    doc = json.loads((out / "plots" / "regulation-mbr.json").read_text())
    assert [(s["role"], s["y"]) for s in doc["series"]] == [
        ("modelled", [2.0 * (50_000 + 1000 * i) for i in range(1, 5)])]  # first and last period left out
    assert "(modelled)" in doc["series"][0]["label"] and doc["label"] == "modelled"
    assert [ln["y"] for ln in doc["lines"]] == [[20_000.0]]  # the budget: 1 B per cycle, notional
    assert "CPU cycles" in doc["caption"] and drawn_problems(doc, set()) == []
    assert (out / "plots" / "regulation-mbr.png").is_file()
    assert not list((out / "plots").glob("regulation-interf*"))
    report = (out / "report.md").read_text()
    assert "## Regulated interferers: modelled DRAM traffic against the budget" in report
    assert "| mbr | bw | 2 | interf | CPU cycles" in report


def test_a_result_line_the_console_split_is_joined() -> None:
    """The hypervisor's console cuts a line another VM's line comes between
    and writes its rest under "[vm]+ ": bandwidth's result line lost its
    end_ns (recorded from tests/configs/bench-sync-late.yaml) until the rest
    was joined again."""
    from bulkhead.experiment.results import parse_results
    from bulkhead.run.result import RunResult

    first = ("result bench=bandwidth cpu=0 mode=read size=262144 iterations=8 lines=32768 bytes=2097152 "
             "ns=281920 mbps=7438.820 ns_per_line=8.604 start_ns=1702211616 end_ns=")
    output = "\n".join([f"[bw] {first}", "[other] line between", "[bw]+ 1702493536",
                        "[bw] bandwidth: vcpu 0: 7438.820 MB/s, 4.862 ns per line", "[bw]+ tail"])
    res = RunResult(returncode=0, timed_out=False, output=output, clean=True)
    assert res.lines("bw") == [first + "1702493536", "bandwidth: vcpu 0: 7438.820 MB/s, 4.862 ns per linetail"]
    assert res.lines("other") == ["line between"]
    (row,) = parse_results(res.lines("bw"))
    assert (row["start_ns"], row["end_ns"]) == ("1702211616", "1702493536")
    (short,) = parse_results(["result bench=x a=1", "b=2"])
    assert short == {"bench": "x", "a": "1"}
