# SPDX-License-Identifier: Apache-2.0
"""Direct interrupt mode (docs/interrupts.md): a VM with ``interrupts:
direct`` takes its own interrupts on the physical GIC CPU interface, the
hypervisor's events on its CPUs come from TF-A through SDEI.

Every run boots through the firmware chain (``--boot tfa``: TF-A with
Bulkhead's SDEI event table from ``scripts/setup.sh tfa``, U-Boot, then
Bulkhead) under ``-icount shift=0``: one instruction is one nanosecond of
virtual time. U-Boot boots the FIT QEMU loaded into RAM (``fit_in_ram``),
not over TFTP, whose user-mode network answers in host time: each run
repeats instruction for instruction. QEMU models no caches or DRAM: the figures are instruction
counts, not memory interference.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.generate import qemu
from bulkhead.run import stats
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, run

pytestmark = pytest.mark.qemu

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "configs"
OUT = ROOT / "build" / "qemu-tests"
TIMEOUT = 180.0

# Regulation bounds (tests/qemu/test_bandwidth.py's, with what the SDEI path adds):
SKID_NS = 1000  # a run beyond the budget
ENTRY_NS = 3000  # a run's shortfall: period-start work and QEMU's round robin
STALL_NS = 3000
# A short gap inside a period's run: -icount runs one CPU at a time, and the ordinary
# VM's tick on CPU 0 (every 2 ms) takes a slice of virtual time (measured 8.9 us,
# every other period); an SDEI round trip at a period end costs 3.0 us
# (bench/hotpaths.py "regulator period direct"). Bound with margin.
SDEI_NS = 15000
# Events charged beyond a grant: the ordinary path's 21 plus the EL2 SDEI handler and
# exit before the counter is read (measured 128); bound with margin.
SKID_EVENTS_DIRECT = 400

SEG_RE = re.compile(r"bwprobe: vcpu (\d+) seg (\d+) run_ns=(\d+) stall_ns=(\d+) work=(\d+)")
STATS_RE = re.compile(r"bwprobe: stats (\S+) last=(\d+) max=(\d+) mean=(\d+) throttles=(\d+) stalled_ns=(\d+)")


def boot(config: str | Path, name: str, tfa: bool = True, **kw: object) -> RunResult:
    """Boots config through TF-A (tfa: False: by -kernel, no EL3)."""
    assert not tfa or qemu.TFA_FLASH.is_file(), "run 'bash scripts/setup.sh tfa' first (the TF-A flash image)"
    path = Path(config) if Path(config).is_absolute() else CONFIGS / config
    how = {"boot": "tfa", "fit_in_ram": True} if tfa else {}
    res = run(path, RunOptions(timeout=TIMEOUT, icount=0, out=OUT / name, **how, **kw))  # type: ignore[arg-type]
    assert not res.timed_out, res.output[-4000:]
    return res


def hyp(res: RunResult) -> list[str]:
    return [ln.removeprefix("[bulkhead] ") for ln in res.hyp_lines()]


def assert_delivered(res: RunResult) -> None:
    """VM "direct" (guests/direct) took its timer, SPI and SGIs with no exit,
    VM "ordinary" (guests/ticker) its 20 ticks."""
    d = res.lines("direct")
    assert d[-1] == "direct: PASS", res.output[-4000:]
    for line in ("direct: timer 20 ticks ok", "direct: spi 10 ok", "direct: sgi 10 in order",
                 "direct: exits timer total=0 irq=0", "direct: exits spi total=0 irq=0"):
        assert line in d, res.output[-4000:]
    assert res.lines("ordinary")[-1] == "ticker: PASS (20 ticks)", res.output[-4000:]


def test_direct_timer_spi_sgi_beside_ordinary_vm() -> None:
    """The direct VM (CPUs 2-3) takes 20 virtual timer interrupts, 10 of its
    passthrough RTC's SPI and 10 SGIs from its sibling vCPU in order, each
    phase with no exit on its CPU (BH_HC_CPU_EXITS), while the ordinary VM on
    CPU 0 ticks 20 times through the list registers."""
    res = boot("direct.yaml", "direct")
    assert_delivered(res)
    h = hyp(res)
    assert "cpu 2: interrupts direct (SDEI 1.0), EL2 timer and PMU through SDEI" in h, h
    assert "cpu 3: interrupts direct (SDEI 1.0), EL2 timer and PMU through SDEI" in h, h
    assert "all VMs off: clean=3 stopped=0" in h, h  # with VM "idle" on CPU 1
    # its SGIs went to its own CPUs only: none dropped or filtered (run --json too)
    assert res.sgi_dropped() == {"direct": 0}, h
    assert cli._run_doc(res)["sgi_dropped"] == {"direct": 0}
    assert res.clean, res.reason


def periods(res: RunResult) -> list[tuple[int, int]]:
    """bwprobe's segments merged into periods: (run_ns, stall_ns) where a
    short stall (another CPU's slice inside a period) joins the runs around it."""
    segs = [(int(m[3]), int(m[4])) for m in SEG_RE.finditer(res.output) if m[1] == "0"]
    assert len(segs) >= 10, res.output[-4000:]
    out: list[tuple[int, int]] = []
    run_ns = 0
    for r, s in segs:
        run_ns += r
        if s < SDEI_NS:
            run_ns += s
            continue
        out.append((run_ns, s))
        run_ns = 0
    return out


def test_direct_vm_held_to_its_budget() -> None:
    """bw-basic.yaml's budget (300,000 cycles per 1 ms) on a direct VM: the
    period timer and the overflow come through SDEI; every period runs the
    budget (less what other CPUs' slices took) and stalls the rest, the charged events
    stay within the budget plus the SDEI path's skid."""
    res = boot("direct-bw.yaml", "direct-bw")
    assert "bwprobe: PASS (measure)" in res.lines("bw"), res.output[-4000:]
    budget, period = 300_000, 1_000_000
    full = periods(res)
    assert len(full) >= 8, full
    for run_ns, stall_ns in full:
        assert budget - ENTRY_NS - SDEI_NS <= run_ns <= budget + SKID_NS, (run_ns, full)
        assert abs(stall_ns - (period - run_ns)) <= STALL_NS + SDEI_NS, (stall_ns, full)
    st = {m[1]: (int(m[3]), int(m[5])) for m in STATS_RE.finditer(res.output)}
    peak, throttles = st["vcpu0"]
    assert budget <= peak <= budget + SKID_EVENTS_DIRECT, st
    assert throttles >= 10, st
    assert res.lines("ordinary")[-1] == "ticker: PASS (10 ticks)", res.output[-4000:]
    assert res.clean, res.reason


HOSTILE = """\
# generated by tests/qemu/test_direct.py
platform: qemu-virt
sdei: true
vms:
  - name: victim
    cpus: [0]
    memory:
      - {{ipa: 0x40000000, size: 16M}}
    guest: victim
    params: {{cpus: 1, ram: 16M, prints: 300, beats: 5, period_ms: 20}}
  - name: idle
    cpus: [1]
    memory:
      - {{ipa: 0x40000000, size: 4M}}
    guest: hello
  - name: direct
    cpus: [2, 3]
    interrupts: direct
    memory:
      - {{ipa: 0x40000000, size: 16M}}
    guest: direct
    params: {{mode: hostile, sibling: 3, storm_target: 0, ms: 200, quiet: {quiet}}}
    bandwidth:
      period_us: 1000
      budget_events: 600000
"""
# VM "idle" (hello: it prints and powers off) holds CPU 1 only so that the hypervisor
# starts it: a CPU no VM names stays in TF-A's QEMU holding pen (BL1 poll_mailbox: a
# WFE loop, which QEMU's TCG runs as a yield), never idle, so -icount cannot skip the
# time every other CPU sleeps and each virtual ms costs ~250,000 turns of that loop
# (docs/firmware.md "Unused CPUs under -icount"). With it a run takes 2.4 s of host CPU
# instead of 40 s (the test 5-14 s instead of 102 s), the figures without the pen's turns.
LATE_US_MAX = 100_000  # tests/qemu/test_attack.py's bound on a heartbeat's lateness


def hostile_run(quiet: int, template: str = HOSTILE, prefix: str = "direct-hostile",
                tfa: bool = True) -> tuple[RunResult, dict[str, int]]:
    """template (HOSTILE's shape) with quiet, booted; the victim's figures."""
    name = f"{prefix}-{quiet}"
    (OUT / name).mkdir(parents=True, exist_ok=True)
    cfg = OUT / name / f"{name}.yaml"
    cfg.write_text(template.format(quiet=quiet))
    res = boot(cfg, f"{name}/build", tfa=tfa)
    v = res.lines("victim")
    assert v and v[-1] == "victim: PASS", res.output[-4000:]
    heartbeat = next(ln for ln in v if ln.startswith("victim: heartbeat beats=5 "))
    assert "pattern=ok params=ok foreign_irqs=0" in heartbeat, heartbeat
    late = int(re.findall(r"max_late_us=(\d+)", heartbeat)[0])
    summary = next(ln for ln in v if ln.startswith("victim: print median_ns="))
    figures = {k: int(x) for k, x in re.findall(r"(\w+)=(\d+)", summary)} | {"late_us": late}
    return res, figures


def test_hostile_direct_guest() -> None:
    """A direct guest that scribbles ICC_PMR/AP1R0/IGRPEN1/CTLR/BPR1, takes
    an interrupt and never ends it, masks DAIF for good and storms SGIs (all
    SGI IDs, at the victim's CPU, broadcast and at itself) while sweeping
    memory: its regulation holds (SDEI is Group 0, above anything a
    non-secure guest can mask), the victim on CPU 0 gets no foreign
    interrupt and keeps its print latency within test_attack.py's 1.5x of
    the baseline (the same VM whose vCPU 1 only sweeps memory), and the
    hypervisor still powers the hostile VM off."""
    _, quiet = hostile_run(1)
    res, figures = hostile_run(0)
    d = res.lines("direct")
    assert "direct: hostile (storm at 0 and self)" in d, res.output[-4000:]
    m = re.search(r"direct: hostile vcpu1 max=(\d+) last=(\d+) mean=(\d+) throttles=(\d+)", res.output)
    assert m, res.output[-4000:]
    peak, last, mean, throttles = (int(x) for x in m.groups())
    print(m[0])
    # vCPU 1's share is half the VM's 600,000. As for test_attack.py's regulated
    # tamperer, a period may be charged more than the share: QEMU's cycle counter
    # follows virtual time, which goes on while -icount runs the other CPUs, so an
    # overflow is taken only when vCPU 1's CPU next runs (measured: max 317,574, mean
    # 300,405, last 300,123; with the FIT over TFTP, whose timing varies, max
    # 306,302-469,958 and once last 302,096: the same effect on the last period).
    # The attack suite's mean bound; the peak stays far below an unregulated period
    # (1,000,000); the last period is held to the share within 1 % plus the skid.
    # With CPU 1 started (VM "idle", no pen CPU taking turns): max 301,891, mean
    # 300,386, last 301,891.
    # It is deterministic for one build, but where its overflow falls in QEMU's
    # round robin moves with any change of the hypervisor's instruction counts: at
    # b2ff885 300,123; with the console's continuation mark 302,105, with the GIC
    # drivers built for size 302,112 (the same effect as above, on the last period).
    share = 300_000
    assert mean <= 1.1 * share + SKID_EVENTS_DIRECT and peak < 2 * share, m[0]
    assert last <= 1.01 * share + SKID_EVENTS_DIRECT and throttles >= 100, m[0]
    assert d[-1] == "direct: PASS", res.output[-4000:]
    print(f"victim print latency (virtual ns): quiet {quiet}, hostile {figures}")
    # The attack suite's bounds (tests/qemu/test_attack.py): heartbeat lateness, median
    # and p90 print latency within 1.5x of the baseline. Measured (deterministic: the
    # FIT in RAM): p90 54,400 against 57,600 ns (0.94x), mean 41,740 against 41,873,
    # median equal, heartbeat 0 us late in both (57,952, 1.01x, with this branch's
    # hypervisor before its last change: a code change moves every timer's phase).
    # With CPU 1 started (VM "idle"): p90 63,120 against 61,424 (1.03x), mean 42,032
    # against 41,721 (1.007x), median equal, both heartbeats on time.
    assert figures["late_us"] <= LATE_US_MAX, figures
    assert figures["median_ns"] <= 1.5 * quiet["median_ns"], (quiet, figures)
    assert figures["p90_ns"] <= 1.5 * quiet["p90_ns"], (quiet, figures)
    # Before the hypervisor masked a direct guest's pending interrupts in its EL2 waits
    # (irq_direct_wfi), the hostile VM's throttled vCPUs spun in vcpu_stall, and QEMU's
    # round robin gave each spin a turn in the one virtual clock whenever CPU 0 left
    # its own (docs/interrupts.md "Hostile guests on QEMU"): mean 1.46x and p90 1.52x
    # (87,312 against 57,600 ns), the heartbeat 14.5-23.7 ms late against 0. A stalled vCPU that sleeps costs the victim
    # nothing measurable: mean within 10% and the heartbeat as on time as the baseline's.
    assert figures["mean_ns"] <= 1.1 * quiet["mean_ns"], (quiet, figures)
    assert figures["late_us"] <= quiet["late_us"] + 1000, (quiet, figures)
    h = hyp(res)
    assert "vm direct: off (clean)" in h and "vm victim: off (clean)" in h, h
    assert not [ln for ln in h if "PANIC" in ln], h
    # its storm's writes naming SGI 0, the victim's CPU, ICC_SGI0R/ASGI1R: counted,
    # reported at its power-off (one per trapped write; at least 3 per storm round)
    dropped = res.sgi_dropped()
    print(f"SGI writes dropped or filtered: {dropped}")
    assert set(dropped) == {"direct"} and dropped["direct"] >= 3 * throttles, (dropped, h)


def test_stats_command_shows_dropped_sgis() -> None:
    """Ctrl-T b (what `bulkhead run --stats` sends every 0.25 s) prints each
    direct VM's dropped SGI writes beside the regulator's lines: the hostile
    guest's count grows while it runs and ends at the count of its stop line."""
    name = "direct-hostile-0"
    (OUT / name).mkdir(parents=True, exist_ok=True)
    cfg = OUT / name / f"{name}.yaml"
    cfg.write_text(HOSTILE.format(quiet=0))
    res = boot(cfg, f"{name}/build", poke=(stats.STATS_POKE, 0.05))
    seen = [p[1] for p in map(stats.parse_sgi_stats, res.hyp_lines()) if p and p[0] == "direct"]
    print(f"Ctrl-T b: direct's dropped SGI writes in {len(seen)} answers, last {seen[-1:]}; "
          f"at its stop {res.sgi_dropped()}")
    assert seen and seen == sorted(seen) and seen[-1] > 0, res.hyp_lines()
    assert seen[-1] <= res.sgi_dropped()["direct"], (seen, res.sgi_dropped())
    assert res.lines("victim")[-1] == "victim: PASS", res.output[-4000:]


SGIFILTER = """\
# generated by tests/qemu/test_direct.py
platform: qemu-virt
sdei: true
vms:
  - name: ordinary
    cpus: [0]
    memory:
      - {ipa: 0x40000000, size: 16M}
    guest: direct
    params: {mode: sink, delay_ms: 3, ms: 20}
  - name: other
    cpus: [1]
    interrupts: direct
    memory:
      - {ipa: 0x40000000, size: 16M}
    guest: direct
    params: {mode: sink, delay_ms: 3, ms: 20}
  - name: sender
    cpus: [2, 3]
    interrupts: direct
    memory:
      - {ipa: 0x40000000, size: 16M}
    guest: direct
    params: {mode: sgifilter, sibling: 3, foreign: 0, foreign2: 1, ms: 30}
"""
SINK_RE = re.compile(r"direct: sink sgis=(\d+) irq_exits=(\d+) window_ms=(\d+)")


def test_direct_sgis_reach_only_own_cpus() -> None:
    """A direct guest (CPUs 2-3) sends, for 30 ms, SGIs of every ID at an
    ordinary VM's CPU 0 and another direct VM's CPU 1, SGI 0 (the
    hypervisor's kick) and ICC_SGI0R/ASGI1R_EL1 at its sibling, a broadcast
    and a target list naming CPUs 0-3. ICH_HCR_EL2.TC traps the sends and
    the hypervisor issues only those at the VM's own CPUs: neither
    neighbour takes an SGI or an interrupt exit in a 20 ms window inside
    the storm, while the sibling receives the broadcast, the list and the
    sequence-numbered SGIs once per round and in order."""
    name = "direct-sgifilter"
    (OUT / name).mkdir(parents=True, exist_ok=True)
    cfg = OUT / name / f"{name}.yaml"
    cfg.write_text(SGIFILTER)
    res = boot(cfg, f"{name}/build")
    sinks = {}
    for vm in ("ordinary", "other"):
        m = next((SINK_RE.search(ln) for ln in res.lines(vm) if SINK_RE.search(ln)), None)
        assert m and int(m[3]) >= 20, (vm, res.output[-4000:])
        sinks[vm] = (int(m[1]), int(m[2]))
    print(f"neighbours (SGIs, interrupt exits) in their window: {sinks}")
    assert sinks == {"ordinary": (0, 0), "other": (0, 0)}, sinks
    for vm in ("ordinary", "other"):
        assert res.lines(vm)[-1] == "direct: PASS", (vm, res.output[-4000:])
    s = res.lines("sender")
    assert s[-1] == "direct: PASS", res.output[-4000:]
    m = re.search(r"direct: sgifilter rounds=(\d+) bcast=(\d+) list=(\d+) seq=ok", res.output)
    assert m and int(m[1]) >= 10 and m[1] == m[2] == m[3], res.output[-4000:]
    print(m[0])
    cost = re.search(r"direct: sgi send median_ns dropped=(\d+) own=(\d+)", res.output)
    assert cost, res.output[-4000:]
    print(f"trapped SGI send, median virtual ns (= instructions): dropped {cost[1]}, own {cost[2]}")
    h = hyp(res)
    for what in ("ICC_SGI1R_EL1 naming SGI 0", "ICC_SGI1R_EL1 naming a CPU outside the VM",
                 "ICC_SGI0R_EL1", "ICC_ASGI1R_EL1"):
        assert any(ln.startswith(f"vm sender vcpu 1: {what}") for ln in h), (what, h)
    dropped = res.sgi_dropped()
    print(f"SGI writes dropped or filtered: {dropped}")
    assert set(dropped) == {"other", "sender"} and dropped["other"] == 0, dropped
    assert dropped["sender"] >= 4 * int(m[1]), dropped  # SGI 0, SGI0R, ASGI1R, the foreign CPUs
    assert res.clean, res.reason


def test_direct_image_vm_finds_its_physical_cpu_in_its_device_tree() -> None:
    """A `type: image` VM (the arm64 boot protocol: kvm-unit-tests, an RTOS)
    in direct mode on CPUs 2 and 3 reads MPIDR 2 on its boot vCPU, and its
    generated device tree has /cpus/cpu@2 with that reg (before, cpu@0 and
    cpu@1: such a guest could not find itself); the ordinary VM beside it
    keeps vCPU indices."""
    res = boot("direct-image.yaml", "direct-image")
    assert res.clean, res.reason + "\n" + res.output[-3000:]
    assert "dtbcheck: mpidr 0x2 is /cpus/cpu@2" in res.lines("img"), res.lines("img")
    assert "dtbcheck: PASS" in res.lines("img"), res.lines("img")
    assert "dtbcheck: mpidr 0x0 is /cpus/cpu@0" in res.lines("ordinary"), res.lines("ordinary")
    assert "dtbcheck: PASS" in res.lines("ordinary")
