# SPDX-License-Identifier: Apache-2.0
"""Isolation proofs on the cache/DRAM model QEMU plugin (docs/model.md).

QEMU models no caches and no DRAM; the plugin (tools/cachemodel, built by
scripts/setup.sh) feeds every access, by physical address, through a model
of the platform's LLC and DRAM banks and reports who evicted whose lines and
who closed whose rows. These tests boot a victim (guests/latency) beside an
interferer (guests/interferer, two vCPUs) under -icount 0 and assert on
those counters: properties of placement and address streams (who can evict
whom), never timing.

All variants build into one output directory (incremental rebuilds of the
hypervisor's tables only), serialised by a file lock so that pytest-xdist
workers do not rebuild it under a running QEMU.
"""

from __future__ import annotations

import fcntl
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bulkhead.base.errors import BuildError
from bulkhead.generate import build, qemu
from bulkhead.layout.load import load_system
from bulkhead.layout.placement import System
from bulkhead.run import cachemodel
from bulkhead.run.backend import RunOptions
from bulkhead.run.cachemodel import HYPERVISOR, Report
from bulkhead.run.runner import judge, run, supervise

REPO_ROOT = Path(__file__).resolve().parents[2]
BASE = REPO_ROOT / "tests" / "configs" / "model-interf.yaml"
OUT = REPO_ROOT / "build" / "qemu-tests" / "model-interf"
TIMEOUT = 60.0
VICTIM_COLORS = "    #v victim colors"
INTERF_COLORS = "    #v interferer colors"
UNTHROTTLED = "budget_events: 2000000000}"
PERIOD_EVENTS = 2 * 100_000  # the interferer's 2 vCPUs x 100 us at -icount shift 0 (1 cycle per ns)


@pytest.fixture(autouse=True)
def plugin() -> None:
    """A missing plugin is a failure, not a skip: CI must prove isolation."""
    try:
        cachemodel.plugin_path()  # (re)built here if setup fetched QEMU's header
    except BuildError as exc:
        pytest.fail(f"{exc}\nrun 'scripts/setup.sh cachemodel' (or scripts/setup.sh) to fetch QEMU's plugin "
                    f"header and build the cache model plugin")


@pytest.fixture
def lock() -> Iterator[None]:
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT.parent / "model-interf.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


_reports: dict[str, tuple[Report, bytes]] = {}


def model_run(tmp_path: Path, name: str, subs: dict[str, str], fresh: bool = False) -> tuple[Report, bytes]:
    """Boot a variant of model-interf.yaml under the model; its report and raw
    JSON (a variant already run in this session is not run again unless ``fresh``)."""
    text = BASE.read_text()
    for old, new in subs.items():
        assert old in text, old
        text = text.replace(old, new)
    if text in _reports and not fresh:
        return _reports[text]
    config = tmp_path / f"{name}.yaml"
    config.write_text(text)
    res = run(config, RunOptions(timeout=TIMEOUT, out=OUT, model=True))
    assert res.clean, f"{name}: {res.reason}\n" + "\n".join(res.all_lines()[-20:])
    assert any(line.startswith("latency: PASS") for line in res.lines("victim")), res.output[-2000:]
    assert any(line.startswith("interferer: PASS") for line in res.lines("interf")), res.output[-2000:]
    assert res.model_report is not None
    _reports[text] = cachemodel.load_report(res.model_report), res.model_report.read_bytes()
    return _reports[text]


def colors(victim: str, interf: str) -> dict[str, str]:
    return {VICTIM_COLORS: f"    colors: {victim}", INTERF_COLORS: f"    colors: {interf}"}


def vms_other_than(report: Report, me: str) -> set[str]:
    return {o.name for o in report.owners if o.kind == "vm" and o.name != me}


def evicted_by_vms(report: Report, me: str, scope: str = "run") -> int:
    o = report.owner(me)
    counters = o.run if scope == "run" else o.phase
    assert counters is not None, f"{me}: no {scope} counters"
    return sum(n for who, n in counters.evicted_by.items() if who in vms_other_than(report, me))


def conflicts_by_vms(report: Report, me: str) -> int:
    c = report.owner(me).run
    return sum(n for who, n in c.row_conflicts_by.items() if who in vms_other_than(report, me))


def test_llc_colors_no_evictions(tmp_path: Path, lock: None) -> None:
    """Disjoint LLC colors: no line of the victim is ever evicted by the
    interferer (whole run); without colors, many are, also during the
    victim's marked phase (the test can fail)."""
    shared, _ = model_run(tmp_path, "shared", {})
    colored, _ = model_run(tmp_path, "llc-colored", colors('{llc: "0-7"}', '{llc: "8-15"}'))
    assert evicted_by_vms(shared, "victim") > 1000
    assert evicted_by_vms(shared, "victim", "phase") > 0
    assert evicted_by_vms(colored, "victim") == 0
    assert evicted_by_vms(colored, "interf") == 0
    # the victim's chase (2 passes over 512 KiB in half the LLC) misses only
    # on its first pass once nobody else evicts its lines
    phase = colored.owner("victim").phase
    assert phase is not None and phase.llc_accesses >= 2 * 8192
    assert phase.llc_misses <= 8192 + 16


def test_bank_colors_no_row_conflicts(tmp_path: Path, lock: None) -> None:
    """Disjoint DRAM bank colors: the interferer never closes a row the victim
    opened (zero row conflicts it causes in the victim's banks), although it
    still shares (and thrashes) the LLC; without bank colors it does."""
    shared, _ = model_run(tmp_path, "shared", {})
    banked, _ = model_run(tmp_path, "bank-colored", colors('{bank: "0-1"}', '{bank: "2-3"}'))
    assert conflicts_by_vms(shared, "victim") > 100
    assert conflicts_by_vms(banked, "victim") == 0
    assert conflicts_by_vms(banked, "interf") == 0
    assert evicted_by_vms(banked, "victim") > 0  # the LLC is still shared


def test_hypervisor_counted_separately(tmp_path: Path, lock: None) -> None:
    """The hypervisor's own accesses (its image, stacks, pools and the staging
    window) are an owner of their own: counted, and never blamed on a VM."""
    report, _ = model_run(tmp_path, "llc-colored", colors('{llc: "0-7"}', '{llc: "8-15"}'))
    hyp = report.owner(HYPERVISOR)
    assert hyp.kind == "hyp"
    assert hyp.run.llc_accesses > 10_000
    # the exception level read at every block: only EL2 touches the
    # hypervisor's memory; EL2 also writes the VMs' (their images, at start)
    assert hyp.run.el2_accesses == hyp.run.llc_accesses
    assert report.owner("victim").run.el2_accesses > 0
    assert sum(c["el2_accesses"] for c in report.cpus) >= hyp.run.el2_accesses
    for vm in ("victim", "interf"):
        c = report.owner(vm).run
        assert c.evicted_by_others(vm) == evicted_by_vms(report, vm) + sum(
            n for who, n in c.evicted_by.items() if who.startswith("shmem:"))
    # Without hypervisor_colors the hypervisor evicts VM lines; the model
    # reports them apart from the VMs' evictions (with self-coloring: none,
    # test_self_colored_hypervisor_evicts_no_vm_line).
    assert sum(report.owner(vm).run.evicted_by.get(HYPERVISOR, 0) for vm in ("victim", "interf")) > 0


def test_self_colored_hypervisor_evicts_no_vm_line(tmp_path: Path, lock: None) -> None:
    """Issue #18 with #13's self-coloring: VMs, shared memory and the
    hypervisor in disjoint LLC colors (`hypervisor_colors`) give zero VM lines
    evicted by the hypervisor over the whole run, VM start included; the same
    system without `hypervisor_colors` has the hypervisor evict lines of both
    VMs (the test can fail)."""
    system = colors('{llc: "0-6"}', '{llc: "7-13"}') | {"    size: 4K\n": '    size: 4K\n    colors: {llc: "13"}\n'}
    plain, _ = model_run(tmp_path, "hyp-plain", system)
    selfc, _ = model_run(tmp_path, "hyp-self", system | {
        "platform: qemu-virt\n": 'platform: qemu-virt\nhypervisor_colors: {llc: "14-15"}\n'})
    for vm in ("victim", "interf"):
        assert plain.owner(vm).run.evicted_by.get(HYPERVISOR, 0) > 0, vm
        assert selfc.owner(vm).run.evicted_by.get(HYPERVISOR, 0) == 0, vm
        assert evicted_by_vms(selfc, vm) == 0, vm
    assert selfc.owner(HYPERVISOR).run.llc_accesses > 10_000  # it did run, in its own colors


def bytes_per_period(report: Report) -> float:
    value = cachemodel.bytes_per_period(report.owner("interf"), 100)
    assert value is not None, "the interferer marked no phase"
    return value


def test_bandwidth_budget_sweep(tmp_path: Path, lock: None) -> None:
    """The interferer's modelled DRAM bytes per 100 us period of virtual time
    fall with its budget: monotonically over the sweep, and at least 3.5x
    lower at 20% of what its two vCPUs can run per period than unthrottled."""
    shares = (None, 60, 40, 20, 10)
    figures = []
    for share in shares:
        subs = {} if share is None else {UNTHROTTLED: f"budget_events: {PERIOD_EVENTS * share // 100}}}"}
        report, _ = model_run(tmp_path, f"budget-{share or 'none'}", subs)
        figures.append(bytes_per_period(report))
    text = ", ".join(f"{s or 'unthrottled'}: {f:.0f}" for s, f in zip(shares, figures, strict=True))
    assert all(a > b for a, b in zip(figures, figures[1:], strict=False)), text
    # ideally 5x at a 20% budget; QEMU delivers the budget's PMU overflow
    # late under -icount, and how late moves with the code's layout: 3.7-3.8x
    # measured after the SMMU/PCIe/size merges (4.0x and more before)
    assert figures[0] >= 3.5 * figures[shares.index(20)], text


def test_identical_runs(tmp_path: Path, lock: None) -> None:
    """Under -icount the model's report is the same, byte for byte, on two runs."""
    _, first = model_run(tmp_path, "shared", {}, fresh=True)
    _, second = model_run(tmp_path, "shared", {}, fresh=True)
    assert first == second
    doc = json.loads(first)
    assert doc["owners"][2]["name"] == "victim" and doc["owners"][2]["phase_marks"] == 1
    # counting stopped at the hypervisor's PSCI SYSTEM_OFF: what the other
    # vCPUs run until QEMU's main loop stops them depends on host timing
    assert doc["ended_by_psci"] is True


def test_per_cpu(tmp_path: Path, lock: None) -> None:
    """Accesses are counted per CPU that ran them (the hypervisor's TPIDR_EL2),
    not per vCPU that translated the code (QEMU's index under -icount): both
    of the interferer's vCPUs load memory and mark their phase."""
    report, _ = model_run(tmp_path, "shared", {})
    assert report.raw["cpu_source"] == "TPIDR_EL2"
    cpus = {c["index"]: c for c in report.cpus}
    assert [cpus[i]["vm"] for i in range(3)] == ["victim", "interf", "interf"]
    for i in (1, 2):
        assert cpus[i]["accesses"] > 100_000 and cpus[i]["markers"] == 2, cpus[i]
        assert cpus[i]["evicted"].get("victim", 0) > 0
    assert cpus[0]["markers"] == 2
    assert cpus[3]["accesses"] == 0


def test_cli_run_model_json(tmp_path: Path, lock: None, capsys: pytest.CaptureFixture[str]) -> None:
    """`bulkhead run --model --json`: the report with derived figures and the
    caveat on stdout, the console on stderr, and the run's members (docs/dma.md)."""
    from bulkhead import cli

    assert cli.main(["run", str(BASE), "--model", "--json", "--out", str(OUT), "--timeout", "60"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert "[victim] latency: PASS" in err and "cache model report:" in err
    assert "never comparable with hardware" in doc["caveat"] and doc["period_us"] == 100
    assert doc["clean"] is True and doc["dma_faults"] == {}
    assert doc["derived"]["victim"]["scope"] == "phase"
    assert doc["derived"]["victim"]["evicted_by_others"] > 0
    assert doc["derived"]["interf"]["dram_bytes_per_period"] > 0


def edited_map_run(tmp_path: Path, name: str, subs: dict[str, str], edit: Callable[[str], str]) -> Report:
    """Boot a variant with the plugin's input edited (model options the
    platform file does not set: an L1D, random replacement)."""
    text = BASE.read_text()
    for old, new in subs.items():
        text = text.replace(old, new)
    config = tmp_path / f"{name}.yaml"
    config.write_text(text)
    res = build.build(config, OUT, log=io.StringIO())
    mapfile, report = tmp_path / f"{name}.map", tmp_path / f"{name}.json"
    mapfile.write_text(edit(cachemodel.map_text(res.system, res.elf)))
    argv = qemu.command(res.system.platform, res.elf, (), icount=0,
                        extra=["-plugin", f"{cachemodel.PLUGIN},map={mapfile},out={report}"])
    status, timed_out, output = supervise(argv, timeout=TIMEOUT)
    clean, reason = judge(status, timed_out, output, len(res.system.vms))
    assert clean, f"{name}: {reason}\n{output[-2000:]}"
    return cachemodel.load_report(report)


def test_l1d_filters_the_llc(tmp_path: Path, lock: None) -> None:
    """With a private 32 KiB L1D per CPU, the LLC sees only L1D misses (plus
    dirty L1D victims' write-backs, which are not LLC accesses)."""
    report = edited_map_run(tmp_path, "l1d", {}, lambda m: m.replace("\nram ", "\nl1d 0x8000 4 64\nram ", 1))
    for vm in ("victim", "interf"):
        c = report.owner(vm).run
        assert 0 < c.l1d_misses < c.l1d_accesses
        assert c.llc_accesses == c.l1d_misses
    assert sum(cpu["l1d_misses"] for cpu in report.cpus) > 0


def test_random_replacement_isolation(tmp_path: Path, lock: None) -> None:
    """Random replacement (fixed seed): disjoint colors still mean zero
    evictions by the other VM, without colors many; and the seed makes runs
    identical."""
    def rnd(m: str) -> str:
        return m.replace(" lru 1\n", " random 7\n")
    colored = colors('{llc: "0-7"}', '{llc: "8-15"}')
    assert evicted_by_vms(edited_map_run(tmp_path, "rnd-shared", {}, rnd), "victim") > 1000
    first = edited_map_run(tmp_path, "rnd-colored", colored, rnd)
    second = edited_map_run(tmp_path, "rnd-colored2", colored, rnd)
    assert evicted_by_vms(first, "victim") == 0
    assert first.raw == second.raw


IDA_VM = """platform: qemu-virt
vms:
  - name: ida
    cpus: [0]
    colors: {{llc: "0-3"}}
    ida: [call]
    memory:
      - {{ipa: 0x40000000, size: 2M}}
    guest: ida
    params: {{fill: 2, prepare: {prepare}}}
"""


def ida_misses_per_line(tmp_path: Path, prepare: int) -> float:
    """The ida guest's fill phase (two passes over a buffer the size of its
    LLC partition, after filling the partition with other lines) under the
    model with random replacement: LLC misses per line of the buffer."""
    config = tmp_path / f"ida-{prepare}.yaml"
    config.write_text(IDA_VM.format(prepare=prepare))
    out = REPO_ROOT / "build" / "qemu-tests" / "model-ida"
    res = build.build(config, out, log=io.StringIO())
    mapfile, report_path = tmp_path / f"ida-{prepare}.map", tmp_path / f"ida-{prepare}.json"
    mapfile.write_text(cachemodel.map_text(res.system, res.elf).replace(" lru 1\n", " random 7\n"))
    argv = qemu.command(res.system.platform, res.elf, (), icount=0,
                        extra=["-plugin", f"{cachemodel.PLUGIN},map={mapfile},out={report_path}"])
    status, timed_out, output = supervise(argv, timeout=TIMEOUT)
    clean, reason = judge(status, timed_out, output, len(res.system.vms))
    assert clean, f"ida-{prepare}: {reason}\n{output[-2000:]}"
    assert "[ida] ida: PASS" in output, output[-2000:]
    phase = cachemodel.load_report(report_path).owner("ida").phase
    assert phase is not None, "the ida guest marked no phase"
    lines = 4 * 64 * 16  # 4 of 16 colors of a 1 MiB 16-way LLC of 64 B lines: 256 KiB
    assert phase.llc_accesses >= 2 * lines
    return phase.llc_misses / lines


def test_ida_one_miss_per_line(tmp_path: Path, lock: None) -> None:
    """Issue #13 item 2: after BH_HC_IDA_PREPARE every fill of the VM's
    partition lands in an invalid way, so two passes over a partition-sized
    buffer cost one miss per line even with random replacement (TX1-like);
    unprepared, random replacement evicts the buffer's own lines (the test
    can fail)."""
    prepared = ida_misses_per_line(tmp_path, 1)
    unprepared = ida_misses_per_line(tmp_path, 0)
    assert prepared <= 1.02, prepared
    assert unprepared > 1.1, unprepared


# --- the timing model (docs/model.md "Timing model") -------------------------

# The victim's chase fits in half the LLC (its 8 colors when colored) and
# runs 8 passes, so that its phase spans many 100 us regulation periods.
TIMED_VICTIM = {"size: 512K, iterations: 2, sync: 0": "size: 256K, iterations: 8, sync: 0"}
SOLO_VM = """platform: qemu-virt
vms:
  - name: victim
    cpus: [0]
    memory:
      - {ipa: 0x40000000, size: 4M}
    guest: latency
    params: {size: 256K, iterations: 8}
"""


def variant_system(tmp_path: Path, name: str, subs: dict[str, str]) -> System:
    """The system of a variant of model-interf.yaml (as model_run boots it)."""
    text = BASE.read_text()
    for old, new in subs.items():
        text = text.replace(old, new)
    config = tmp_path / f"system-{name}.yaml"
    config.write_text(text)
    return load_system(config, guest_sources=None)


def solo_report(tmp_path: Path) -> Report:
    """The victim alone (the baseline of its modelled slowdown)."""
    key = "solo:" + SOLO_VM
    if key not in _reports:
        config = tmp_path / "solo.yaml"
        config.write_text(SOLO_VM)
        res = run(config, RunOptions(timeout=TIMEOUT, out=OUT, model=True))
        assert res.clean, f"solo: {res.reason}\n" + "\n".join(res.all_lines()[-20:])
        assert res.model_report is not None
        _reports[key] = cachemodel.load_report(res.model_report), res.model_report.read_bytes()
    return _reports[key][0]


def interferer_mbps(report: Report) -> float:
    """The interferer's modelled DRAM bandwidth: its CPUs' DRAM bytes over
    their modelled time, summed (MB/s)."""
    cpus = {int(c["index"]) for c in report.cpus if c["vm"] == "interf"}
    return sum(int(c["dram_lines"]) * 64 / (int(c["modelled_ps"]) / 1e6)
               for c in report.raw["timing"]["cpus"] if int(c["index"]) in cpus)


def modelled_slowdown(tmp_path: Path, name: str, subs: dict[str, str]) -> tuple[float, Report]:
    report, _ = model_run(tmp_path, name, TIMED_VICTIM | subs)
    value = cachemodel.slowdown(report, solo_report(tmp_path), "victim")
    assert value is not None, f"{name}: no modelled time (is model.timing in the platform?)"
    return value, report


def test_timing_slowdown_colors(tmp_path: Path, lock: None) -> None:
    """Issue #28: the victim's modelled slowdown (modelled time of its phase
    beside the interferer / alone) is above 1.2 with an uncolored memory
    interferer and below 1.05 with disjoint LLC and bank colors."""
    shared, report = modelled_slowdown(tmp_path, "timed-shared", {})
    colored, _ = modelled_slowdown(tmp_path, "timed-colored",
                                   colors('{llc: "0-7", bank: "0-1"}', '{llc: "8-15", bank: "2-3"}'))
    print(f"modelled slowdown: uncolored {shared:.3f}, colored {colored:.3f}")
    assert shared > 1.2, shared
    assert colored < 1.05, colored
    assert report.raw["timing"]["late_lines"] == 0  # no line fell behind the settled windows
    # the DRAM base latency's -icount fit (docs/model.md "Calibration") holds:
    # CLARE's > 2 GB/s for the 2-vCPU write interferer. The LLC hit latency
    # is fitted in timing mode now (RTAS'19's 4.4x: tests/test_calibration.py);
    # under -icount this chase models 2.9x with it (4.3x with the 14 ns that
    # -icount's interleaving fitted)
    mbps = interferer_mbps(report)
    print(f"interferer: {mbps:.0f} MB/s modelled")
    assert 2000 <= mbps < 2000 * 1.1, mbps


def test_timing_slowdown_falls_with_budget(tmp_path: Path, lock: None) -> None:
    """Issue #28: the victim's modelled slowdown decreases monotonically with
    the (uncolored) interferer's budget; the interferer's modelled DRAM
    bytes per regulation period (the hypervisor's periods, read by the
    plugin) fall with it, and the unit that bounded it is the cycle counter.
    The budgets are spaced widely: close ones (40 % and 20 %) were not told
    apart by the model once the hypervisor's layout changed (1.889 against
    1.991 at the session-7 merge; QEMU's turn interleaving under -icount
    moves the victim's evictions), docs/model.md "Limits"."""
    shares = (None, 50, 20, 5)
    slowdowns, traffic = [], []
    for share in shares:
        subs = {} if share is None else {UNTHROTTLED: f"budget_events: {PERIOD_EVENTS * share // 100}}}"}
        value, report = modelled_slowdown(tmp_path, f"timed-budget-{share or 'none'}", subs)
        system = variant_system(tmp_path, f"budget-{share or 'none'}", TIMED_VICTIM | subs)
        reg = cachemodel.regulation(report, system, "interf")
        assert reg is not None, "no regulation periods seen"
        assert reg["unit"].startswith("CPU cycles") and reg["label"] == "modelled"
        slowdowns.append(value)
        traffic.append(reg["dram_bytes_per_period_mean"])
    text = ", ".join(f"{s or 'unthrottled'}: slowdown {v:.3f}, {b:,.0f} B/period"
                     for s, v, b in zip(shares, slowdowns, traffic, strict=True))
    print(text)
    # strictly falling until the interferer no longer slows the victim at all
    # (1.000 within the model's resolution): at the lean IRQ path's merge
    # (issue #43 item 4) the figures moved from 2.972, 1.595, 1.549, 1.000
    # to 2.703, 1.881, 1.000, 1.000 (20 % and 5 % both leave the victim's
    # lines alone; the interferer's traffic still falls at every step)
    none = [abs(v - 1.0) < 0.005 for v in slowdowns]
    assert all(a > b or (na and nb) for a, b, na, nb in zip(slowdowns, slowdowns[1:], none, none[1:],
                                                            strict=False)), text
    assert slowdowns[0] > slowdowns[1] > slowdowns[-1] and not none[1], text
    assert all(a > b for a, b in zip(traffic, traffic[1:], strict=False)), text


def test_timing_identical_runs(tmp_path: Path, lock: None) -> None:
    """Two runs give identical modelled figures (the timing model, the
    regulation periods' series)."""
    _, first = model_run(tmp_path, "timed-shared", TIMED_VICTIM, fresh=True)
    _, second = model_run(tmp_path, "timed-shared", TIMED_VICTIM, fresh=True)
    a, b = json.loads(first), json.loads(second)
    assert a["timing"] == b["timing"] and a["periods"] == b["periods"]
    assert a["periods"] and a["periods"][0]["series"]
