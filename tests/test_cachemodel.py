# SPDX-License-Identifier: Apache-2.0
"""The cache model plugin's toolchain side (bulkhead/run/cachemodel.py), its
platform section (``model:``) and the plugin's model and input parser as a
host C unit test (tools/cachemodel/test_model.c). The isolation proofs that
boot QEMU with the plugin are tests/qemu/test_model.py."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import BuildError, ConfigError, RunError
from bulkhead.layout.load import load_platform, load_system
from bulkhead.run import cachemodel, runner
from bulkhead.run.backend import RunOptions

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "cachemodel"
CONFIGS = ROOT / "tests" / "configs"
PLATFORM = ROOT / "platforms" / "qemu-virt.yaml"


def test_model_host_c(tmp_path: Path) -> None:
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc, "a native C compiler is required"
    exe = tmp_path / "test_model"
    build = subprocess.run(
        [cc, "-std=gnu11", "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
         "-Wall", "-Wextra", "-Werror", *(str(TOOL / f) for f in ("test_model.c", "model.c", "mapfile.c")),
         "-o", str(exe)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "test_model: ok" in run.stdout


def test_platform_model() -> None:
    spec = load_platform("qemu-virt").cachemodel
    assert spec is not None
    assert (spec.replacement, spec.seed, spec.l1d, spec.row_shift) == ("lru", 1, None, 18)


def platform_dir(tmp: Path, edit: Callable[[str], str]) -> Path:
    d = tmp / "platforms"
    d.mkdir()
    (d / "qemu-virt.yaml").write_text(edit(PLATFORM.read_text()))
    return d


MODEL = "model:\n  llc: {replacement: lru}\n  dram: {row_shift: 18}\n"


@pytest.mark.parametrize("section, expected", [
    ("model:\n  llc: {replacement: fifo}\n", "model.llc.replacement: expected one of lru, random"),
    ("model:\n  llc: {replacement: lru, seed: 3}\n", "model.llc.seed: a seed is only used by random replacement"),
    ("model:\n  l1d: {size: 48K, ways: 4, line: 64}\n", "model.l1d.size: the L1D size must be a power-of-two number of sets"),
    ("model:\n  dram: {row: 18}\n", "model.dram.row: unknown key 'row'; expected one of: row_shift"),
    ("model:\n  cache: {}\n", "model.cache: unknown key 'cache'"),
])
def test_model_section_errors(section: str, expected: str, tmp_path: Path) -> None:
    d = platform_dir(tmp_path, lambda t: t.replace(MODEL, section))
    with pytest.raises(ConfigError) as exc:
        load_system(CONFIGS / "one-hello.yaml", guest_sources=None, platforms_dir=d)
    assert expected in str(exc.value)
    assert "qemu-virt.yaml:" in str(exc.value)


@pytest.mark.parametrize("edit, expected", [
    (lambda t: t.replace("  bank_bits: [16, 17]\n", ""), "model.dram: the DRAM bank model needs the bank bits"),
    (lambda t: t.replace("row_shift: 18", "row_shift: 17"), "model.dram.row_shift: row bits start at bit 17, "
                                                           "not above the bank bits (16, 17)"),
    (lambda t: t.replace("llc: {size: 1M, ways: 16, line: 64}\n", "llc_bits: [12, 13]\n"),
     "model: the cache model needs the LLC geometry"),
    (lambda t: t[:t.index("\nmodel:\n") + 1], "has no 'model:' section"),
])
def test_model_needs_coloring(edit: Callable[[str], str], expected: str, tmp_path: Path) -> None:
    """What the model needs from coloring: is checked (located) when it is used."""
    d = platform_dir(tmp_path, edit)
    system = load_system(CONFIGS / "one-hello.yaml", guest_sources=None, platforms_dir=d)
    with pytest.raises(ConfigError) as exc:
        cachemodel.map_text(system)
    assert expected in str(exc.value)


def test_map_text_colored_pages() -> None:
    """Colored VMs interleave pages: the map gives each page to its VM."""
    system = load_system(CONFIGS / "color-walk.yaml", guest_sources=None)
    text = cachemodel.map_text(system)
    lines = text.splitlines()
    assert "llc 0x100000 16 64 lru 1" in lines and "dram 18 16 17" in lines
    owners = {int(l.split()[1]): l.split()[3] for l in lines if l.startswith("owner ")}
    assert owners[1] == "hypervisor" and owners[2] == "a" and owners[6] == "shmem:ac"
    pages: dict[int, str] = {}
    for line in lines:
        if line.startswith("range "):
            _, base, size, owner = line.split()
            for pa in range(int(base, 16), int(base, 16) + int(size, 16), 4096):
                assert pa not in pages, f"page 0x{pa:x} owned twice"
                pages[pa] = owners[int(owner)]
    for vm in system.vms:
        mine = [pa for pa, who in pages.items() if who == vm.name]
        assert len(mine) * 4096 >= vm.ram_bytes
        for m in vm.memory:
            if m.colors is not None:
                walk = list(m.colors.pages(m.pa, m.size // 4096))
                assert len(walk) * 4096 == m.size and all(m.colors.match(pa) for pa in walk)
                assert all(pages[pa] == vm.name for pa in walk)
    assert "cpu 0 2" in lines and "cpu 3 5" in lines


REPORT = {
    "version": 1, "marker": "hint #0x5b", "io_accesses": 0,
    "owners": [
        {"name": "other", "kind": "none", "run": None, "phase": None, "phase_marks": 0, "phase_ns": 0,
         "phase_id": 0, "phase_open": False},
        {"name": "hypervisor", "kind": "hyp", "run": None, "phase": None, "phase_marks": 0, "phase_ns": 0,
         "phase_id": 0, "phase_open": False},
        {"name": "v", "kind": "vm", "run": None, "phase": None, "phase_marks": 1, "phase_ns": 200_000,
         "phase_id": 1, "phase_open": False},
    ],
    "cpu_source": "TPIDR_EL2",
    "cpus": [{"index": 0, "vm": "v", "accesses": 9, "el2_accesses": 2, "llc_misses": 4, "l1d_misses": 0, "dram_accesses": 5,
              "markers": 2, "evicted": {"w": 3}, "row_conflicts_by": {"v": 1, "w": 6}},
             {"index": 1, "vm": "", "accesses": 0, "llc_misses": 0, "l1d_misses": 0, "dram_accesses": 0,
              "markers": 0, "evicted": {}}],
}


def counters(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {k: 0 for k in (
        "llc_accesses", "llc_misses", "l1d_accesses", "l1d_misses", "dram_accesses", "dram_bytes", "writebacks",
        "row_hits", "row_empty", "row_conflicts", "el2_accesses")}
    base.update(evicted_by={}, row_conflicts_by={})
    base.update(kw)
    return base


def test_report_and_table(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(REPORT))
    for o in doc["owners"]:
        o["run"] = counters(llc_accesses=0 if o["kind"] == "none" else 10)
    doc["owners"][2]["phase"] = counters(llc_accesses=5, dram_bytes=6400, el2_accesses=1,
                                         evicted_by={"v": 3, "w": 4, "hypervisor": 2},
                                         row_conflicts_by={"v": 1, "w": 7})
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    report = cachemodel.load_report(path)
    v = report.owner("v")
    assert v.measured.evicted_by_others("v") == 4 and v.measured.conflicts_by_others("v") == 7
    assert cachemodel.bytes_per_period(v, 100) == pytest.approx(3200.0)  # 6400 B in 2 periods of 100 us
    assert cachemodel.bytes_per_period(report.owner("hypervisor"), 100) is None
    text = cachemodel.table(report, 100)
    row = next(line for line in text.splitlines() if line.startswith("v "))
    assert row.split() == ["v", "phase", "5", "1", "0", "4", "2", "0", "0", "7", "3200"]
    assert "never comparable with hardware" in text
    assert not any(line.startswith("other") for line in text.splitlines())
    cpu_row = next(line for line in text.splitlines() if line.startswith("0 "))
    assert cpu_row.split() == ["0", "v", "9", "2", "4", "0", "5", "6", "w:", "3"]
    assert not any(line.startswith("1 ") for line in text.splitlines())


def test_missing_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BULKHEAD_CACHEMODEL", str(tmp_path / "nope.so"))
    with pytest.raises(BuildError, match="scripts/setup.sh cachemodel"):
        cachemodel.plugin_path()
    # without QEMU's header (setup not run) nothing is built
    monkeypatch.delenv("BULKHEAD_CACHEMODEL")
    monkeypatch.setattr(cachemodel, "API", tmp_path / "no-api")
    monkeypatch.setattr(cachemodel, "PLUGIN", tmp_path / "libcachemodel.so")
    with pytest.raises(BuildError, match="scripts/setup.sh cachemodel"):
        cachemodel.plugin_path()
    assert not (tmp_path / "libcachemodel.so").exists()


def test_experiment_model_columns(tmp_path: Path) -> None:
    """experiment --model: the runs get model=True, their reports become the
    model_* columns of results.csv (for the VM under test, read back by
    --report-only) and a report section with the caveat."""
    from bulkhead.experiment.execute import run_experiment
    from bulkhead.experiment.journal import records_from_csv
    from bulkhead.experiment.spec import load
    from bulkhead.run.runner import RunResult

    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(
        "name: t\nsystem:\n  platform: qemu-virt\n  vms:\n"
        "    - {name: v, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], guest: hello}\n"
        "critical: v\nbenchmarks: [{name: lat, guest: latency}]\nscenarios: [{name: solo}]\n")
    seen: list[object] = []

    def fake(config: Path, options: RunOptions) -> RunResult:
        seen.append(options.model)
        doc = json.loads(json.dumps(REPORT))
        for o in doc["owners"]:
            o["run"] = counters()
        doc["owners"][2]["phase"] = counters(llc_accesses=5, llc_misses=2, dram_bytes=6400,
                                             evicted_by={"hypervisor": 2})
        path = tmp_path / "report.json"
        path.write_text(json.dumps(doc))
        out = ("[v] result bench=latency cpu=0 accesses=5 ns=5 ns_per_access=1.000\n[v] latency: PASS (5)\n"
               "[bulkhead] all VMs off: clean=1 stopped=0\n")
        return RunResult(0, False, out, True, 1, "", (), path)

    spec = load(spec_path)
    result = run_experiment(spec, tmp_path / "out", backend=fake, model=True)
    assert seen == [True] and not result.failed()
    timed: list[tuple[object, object, object]] = []

    def fake_timed(config: Path, options: RunOptions) -> RunResult:
        timed.append((options.model, options.timing, options.icount))
        return fake(config, options)

    # experiment --timing: every run in timing mode, without -icount
    assert not run_experiment(spec, tmp_path / "out-timed", backend=fake_timed, timing=500, report=False).failed()
    assert timed == [(True, 500, None)]
    with open(result.csv, newline="") as f:
        row = next(csv.DictReader(f))
    assert (row["model_llc_accesses"], row["model_llc_misses"], row["model_evicted_by_hyp"]) == ("5", "2", "2")
    assert row["model_evicted_by_vms"] == "0" and row["model_interf_dram_bpp"] == ""
    assert row["model_dram_bpp"] == "32000"  # 6400 B in 200 us: per the default 1 ms period
    assert row["icount"] == "0"  # the spec sets none: the model runs under -icount 0
    assert result.report is not None
    text = result.report.read_text()
    assert "## Cache model (QEMU plugin)" in text and "never comparable with hardware" in text
    assert "plots/model.png" in text and (tmp_path / "out" / "plots" / "model.svg").is_file()
    records, _ = records_from_csv(spec, tmp_path / "out")
    assert records[0].metrics["model_llc_misses"] == 2.0


def timed_report(tmp_path: Path, name: str, victim_ps: int, series: list[list[int]]) -> cachemodel.Report:
    """A report of the model-interf system with the timing model's figures:
    the victim (CPU 0) in phase for victim_ps, the interferer's CPU 1 with
    the given regulation periods."""
    doc = json.loads(json.dumps(REPORT))
    doc["owners"][2]["name"] = "victim"
    doc["owners"].append({"name": "interf", "kind": "vm", "run": None, "phase": None, "phase_marks": 0,
                          "phase_ns": 0, "phase_id": 0, "phase_open": False})
    for o in doc["owners"]:
        o["run"] = counters()
    doc["owners"][2]["phase"] = counters()
    doc["cpus"] = [{"index": i, "vm": vm, "accesses": 0, "llc_misses": 0, "l1d_misses": 0, "dram_accesses": 0,
                    "markers": 0, "evicted": {}} for i, vm in enumerate(("victim", "interf", "interf", ""))]
    cpu = {k: 0 for k in ("insns", "modelled_ps", "stall_ps", "queue_ps", "waited_ps", "dram_lines", "phase_ps",
                          "phase_insns", "phase_stall_ps", "phase_queue_ps", "phase_dram_lines")}
    doc["timing"] = {"unit": "ps", "cpus": [cpu | {"index": i, "phase_ps": victim_ps if i == 0 else 0,
                                                   "modelled_ps": 7 * victim_ps} for i in range(4)]}
    doc["periods"] = [{"cpu": 1, "period_ns": 100_000, "line": 64, "dropped": 0, "series": series}]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return cachemodel.load_report(path)


def test_timing_figures(tmp_path: Path) -> None:
    """Modelled time (the phase's, of the VM's slowest CPU), slowdown, and the
    regulated interferer's modelled DRAM bytes per period against its
    budget, in the unit that bounded it (cycles on QEMU)."""
    system = load_system(CONFIGS / "model-interf.yaml", guest_sources=None)
    solo = timed_report(tmp_path, "solo", 200_000_000, [])
    series = [[0, 999, 5, 1], [1, 6400, 40, 2_000_000], [2, 12800, 40, 4_000_000], [3, 64, 1, 1]]
    interf = timed_report(tmp_path, "interf", 500_000_000, series)
    assert cachemodel.model_time_ns(interf, "victim") == pytest.approx(500_000.0)
    assert cachemodel.slowdown(interf, solo, "victim") == pytest.approx(2.5)
    assert cachemodel.model_time_ns(interf, "interf") == pytest.approx(3_500_000.0)  # no phase: whole run
    assert cachemodel.regulation(solo, system, "interf") is None  # no period seen
    reg = cachemodel.regulation(interf, system, "interf")
    assert reg is not None
    # the first (boot) and last periods are left out
    assert reg["series"] == [(1, 6400), (2, 12800)] and reg["periods"] == 2
    assert reg["dram_bytes_per_period_mean"] == 9600 and reg["dram_bytes_per_period_max"] == 12800
    assert reg["dram_mbps_mean"] == pytest.approx(96.0)  # 9600 B per 100 us
    assert reg["budget_per_period"] == 2_000_000_000 and reg["label"] == "modelled"
    assert reg["budget_bytes_per_period_notional"] == 2_000_000_000  # 1 B per cycle on qemu-virt
    assert reg["unit"] == "CPU cycles (instructions under -icount shift 0)"
    assert "bounded by CPU cycles" in reg["bound"] and "(modelled)" in reg["bound"]
    assert cachemodel.bounding_unit(system, "victim") is None  # not regulated
    m = cachemodel.metrics(interf, "victim", 100, system)
    assert m["model_time_ns"] == pytest.approx(500_000.0)
    assert m["model_interf_dram_bytes_per_period"] == 9600 and m["model_interf_budget_per_period"] == 2e9
    assert "model_dram_bytes_per_period" not in m  # the victim is not regulated
    assert all("(modelled)" in cachemodel.MODEL_COLUMNS[k] for k in
               ("model_time_ns", "model_slowdown", "model_interf_dram_bytes_per_period"))
    text = cachemodel.table(interf, 100, system)
    assert "MODELLED NS" in text and "every figure modelled" in text
    assert "regulated: interf: bounded by CPU cycles" in text
    text = cachemodel.table(interf, 100, system, solo)
    assert "modelled slowdown of victim: 2.500 (against the baseline run; modelled)" in text
    doc = cachemodel.document(interf, system, solo)
    assert doc["derived"]["victim"]["model_slowdown"] == pytest.approx(2.5)
    assert doc["derived"]["victim"]["model_time_ns"] == pytest.approx(500_000.0)
    assert doc["derived"]["interf"]["regulation"]["label"] == "modelled"
    assert cachemodel.document(interf, system)["derived"]["victim"]["model_slowdown"] is None


def test_experiment_model_slowdown(tmp_path: Path) -> None:
    """experiment --model: model_slowdown is each run's modelled time over the
    baseline scenario's (same benchmark), in results.csv."""
    from bulkhead.experiment.execute import run_experiment
    from bulkhead.experiment.spec import load
    from bulkhead.run.runner import RunResult

    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(
        "name: t\nsystem:\n  platform: qemu-virt\n  vms:\n"
        "    - {name: victim, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], guest: hello}\n"
        "critical: victim\nbenchmarks: [{name: lat, guest: latency}]\n"
        "scenarios: [{name: solo}, {name: again}]\nbaseline: solo\n")
    times = iter((200_000_000, 300_000_000))

    def fake(config: Path, options: RunOptions) -> RunResult:
        timed_report(tmp_path, f"r{config.stem}", next(times), [])  # writes r<stem>.json
        out = ("[victim] result bench=latency cpu=0 accesses=5 ns=5 ns_per_access=1.000\n"
               "[victim] latency: PASS (5)\n[bulkhead] all VMs off: clean=1 stopped=0\n")
        return RunResult(0, False, out, True, 1, "", (), tmp_path / f"r{config.stem}.json")

    result = run_experiment(load(spec_path), tmp_path / "out", backend=fake, model=True, report=False)
    with open(result.csv, newline="") as f:
        rows = {r["scenario"]: r for r in csv.DictReader(f)}
    assert float(rows["solo"]["model_slowdown"]) == pytest.approx(1.0)
    assert float(rows["again"]["model_slowdown"]) == pytest.approx(1.5)
    assert float(rows["again"]["model_time_ns"]) == pytest.approx(300_000.0)
    kept = sorted((tmp_path / "out" / "logs").glob("*" + cachemodel.RUN_REPORT_SUFFIX))
    assert len(kept) == 2 and cachemodel.load_report(kept[0]).raw["timing"]["unit"] == "ps"


@pytest.mark.parametrize("old, new, expected", [
    ("    cpi: 1.0 ", "    cpi: 0 ", "model.timing.cpi: expected cycles per instruction (a number > 0), got"),
    ("    cpi: 1.0 ", "    cpi: fast ", "model.timing.cpi: expected cycles per instruction (a number > 0)"),
    ("row_conflict: 94}", "conflict: 94}", "model.timing.dram_ns.conflict: unknown key 'conflict'"),
    ("    window_ns: 1000 ", "    window_ns: 10 ", "model.timing.window_ns: the window must hold at least one 64 B line"),
    ("    window_ns: 1000 ", "    windows: 1000 ", "model.timing.windows: unknown key 'windows'"),
    ("    l1d: {size: 32K, ways: 4, line: 64}   # the A53", "    l1d: {size: 48K, ways: 4, line: 64}   # the A53",
     "model.timing.l1d.size: the L1D size must be a power-of-two number of sets"),
])
def test_timing_section_errors(old: str, new: str, expected: str, tmp_path: Path) -> None:
    """model.timing: located errors, nothing else changes."""
    def edit(t: str) -> str:
        assert old in t
        return t.replace(old, new)
    d = platform_dir(tmp_path, edit)
    with pytest.raises(ConfigError) as exc:
        load_system(CONFIGS / "one-hello.yaml", guest_sources=None, platforms_dir=d)
    assert expected in str(exc.value) and "qemu-virt.yaml:" in str(exc.value)


def test_map_text_timing() -> None:
    """The timing model's map lines: ps per instruction (CPI / clock), the
    latencies, one line at the sustainable bandwidth, the window; the
    timing-only L1D (the model has none)."""
    system = load_system(CONFIGS / "model-interf.yaml", guest_sources=None)
    lines = cachemodel.map_text(system).splitlines()
    assert "timing 833 24000 80000 66000 94000 16000 1000000" in lines
    assert "timing_l1d 0x8000 4 64" in lines
    assert not any(line.startswith("regulator ") for line in lines)  # no ELF: no period addresses


def test_timing_mode_input_and_argv(tmp_path: Path) -> None:
    """Timing mode: the plugin's input says the quantum (ps) and QEMU runs
    its vCPUs side by side (MTTCG); without it, neither."""
    system = load_system(CONFIGS / "color-walk.yaml", guest_sources=None)
    assert "lockstep 2500000" in cachemodel.map_text(system, quantum_ns=2500).splitlines()
    assert not any(line.startswith("lockstep") for line in cachemodel.map_text(system).splitlines())
    with pytest.raises(ConfigError, match="quantum must be > 0"):
        cachemodel.map_text(system, quantum_ns=0)
    d = platform_dir(tmp_path, lambda t: re.sub(r"\n  timing:\n(    .*\n)+", "\n", t))
    untimed = load_system(CONFIGS / "one-hello.yaml", guest_sources=None, platforms_dir=d)
    with pytest.raises(ConfigError, match="timing mode .* needs the timing model"):
        cachemodel.map_text(untimed, quantum_ns=1000)


def test_timing_mode_qemu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Timing mode runs the patched QEMU (tools/qemu-timing) in place of the
    platform's qemu-system-aarch64; a missing one is an error naming the
    setup step, and another platform binary has no patched twin."""
    fake = tmp_path / "qemu-system-aarch64"
    fake.write_text("")
    monkeypatch.setenv("BULKHEAD_TIMING_QEMU", str(fake))
    assert cachemodel.timing_qemu("qemu-system-aarch64") == str(fake)
    assert cachemodel.timing_qemu("/usr/bin/qemu-system-aarch64") == str(fake)
    with pytest.raises(RunError, match="patched qemu-system-aarch64 only, not qemu-system-x86_64"):
        cachemodel.timing_qemu("qemu-system-x86_64")
    monkeypatch.setenv("BULKHEAD_TIMING_QEMU", str(tmp_path / "missing"))
    with pytest.raises(RunError, match="scripts/setup.sh qemu-timing"):
        cachemodel.timing_qemu("qemu-system-aarch64")
    monkeypatch.delenv("BULKHEAD_TIMING_QEMU")
    assert cachemodel.TIMING_QEMU == ROOT / "build" / "qemu-timing" / "qemu-system-aarch64"


def test_timing_mode_refuses_icount_and_stray_quantum(capsys: pytest.CaptureFixture[str]) -> None:
    """--timing runs without -icount (refused before building); --quantum
    belongs to --timing."""
    with pytest.raises(RunError, match="without -icount"):
        runner.prepare(CONFIGS / "one-hello.yaml", RunOptions(timeout=None, icount=0, timing=1000))
    assert cli.main(["run", str(CONFIGS / "one-hello.yaml"), "--quantum", "500"]) != 0
    assert "--quantum is the timing mode's" in capsys.readouterr().err
    assert cli.main(["run", str(CONFIGS / "one-hello.yaml"), "--timing", "--quantum", "0"]) != 0
