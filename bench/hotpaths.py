# SPDX-License-Identifier: Apache-2.0
"""Hot-path benchmark (issue #12 item 0): interrupt delivery and hypercall
round trips, in virtual time under `-icount shift=0,align=off,sleep=off`,
where one instruction at any exception level is 1 ns.

- irqlat: the EL1 virtual timer's interrupt, from the timer firing to the
  guest's handler (guests/irqlat, 1000 samples, the vCPU waiting in WFI and
  busy), without and with a bandwidth regulator on the CPU (a budget it
  never exhausts: the regulator's timer and PMU run, nothing is throttled);
- doorbell: an inter-VM notification (guests/doorbell, measure mode, 1000
  rings): from just before the sender's BH_HC_DOORBELL to the receiver's
  handler (one way; both VMs read the same virtual counter), the receiver
  in WFI or busy; and on to the sender's handler for the reply (round trip);
- vSGI: a virtual SGI between the two vCPUs of one VM (guests/sgilat, 1000
  SGIs): from just before vCPU 0's ICC_SGI1R_EL1 write to vCPU 1's
  handler, vCPU 1 in WFI or busy;
- hcall: mean round trip of 10,000 back-to-back calls (guests/hcall): the
  vendor BH_HC_VERSION and PSCI_VERSION over HVC, and the empty loop;
- direct: a VM with ``interrupts: direct`` (docs/interrupts.md), booted
  through TF-A with SDEI (``--boot tfa``, on CPU 1): irqlat as above, and
  with the regulator (its events through SDEI); "exits/irq" is counted in a
  second run of the row under QEMU's execution trace of the hypervisor's
  image (bench/hyptrace.py window_exits): every hypervisor entry on the
  VM's CPU (a trap, an SDEI event or a FIQ) between just before the first
  interrupt and after the last, per interrupt (0: the guest's own EL1
  path only; with the regulator its period events, one per 100 us);
- fiq: the direct rows booted without TF-A (``-kernel``: no EL3, the
  hypervisor's events are Group 0 FIQs, docs/interrupts.md "FIQ or SDEI");
- sgisend: a direct VM's ICC_SGI1R_EL1 write, trapped
  (ICH_HCR_EL2.TC) and filtered to the VM's own CPUs (guests/direct mode
  sgifilter on CPUs 1-2, 128 single writes each): one naming a CPU outside
  the VM (dropped) and one naming its sibling (issued from EL2); "hyp
  insns" is the figure less the same timing with no write between the
  counter reads;
- doorbelltfa: the doorbell's one way (ping on CPU 0, pong on CPU 2,
  receiver in WFI) with both VMs booted through TF-A, into a direct VM
  (guests/direct mode emul: the doorbell is a spare SPI the hypervisor sets
  pending) and into an emulated one (guests/doorbell: a list register);
- period: the regulator's cost per period (guests/bwprobe mode overhead,
  a budget that never runs out, 100 us periods: virtual time the vCPU lost
  per clock jump), on an ordinary VM and on a direct one (SDEI, and FIQ
  without TF-A).

"hyp insns" is the figure less what the same guest pays without a
hypervisor (48 ns for irqlat, measured on the same QEMU with the guest at
EL1; the empty loop for hcall). Beside them: "before", the figures before
issue #12; "prev", main just before the last change to the path (the
hypercall fast path); Bao's (the same guests, the same QEMU 10 and flags).

QEMU models no caches, no DRAM and no pipeline: these are instruction
counts of the paths, not hardware latencies.

    python3 bench/hotpaths.py [--json] [--only irqlat,hcall,...] [--samples N]
                              [--check] [--ceiling 'PATH=NS' ...]

``--check`` compares each row's mean with its ceiling in bench/budgets.toml
([hotpaths], virtual ns: one hypervisor instruction is 1 ns) and exits 1
naming every row above its ceiling; ``--ceiling`` overrides one (the test
proves the check fails with a ceiling below the measurement).

--samples N (default 1000) sets the irqlat, doorbell and vSGI sample counts
and a tenth of the hcall count (10,000 by default); the documented figures
are from the default.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.generate import build as build_mod  # noqa: E402
from bulkhead.run import runner  # noqa: E402
from bulkhead.run.backend import RunOptions  # noqa: E402

OUT = ROOT / "build" / "bench" / "hotpaths"
NO_HYP_IRQ_NS = 48  # irqlat at EL1 on QEMU without a hypervisor (issue #12)
BEFORE = {"irqlat wfi": 848.0, "vendor": 226.0, "psci": 232.0}  # Bulkhead before issue #12
BAO = {"irqlat wfi": 240.0, "vendor": 147.0, "psci": 189.0}
PREV = {"vendor": 160.0, "psci": 165.0}  # main before the hypercall fast path

VM = """platform: qemu-virt
vms:
  - name: b
    type: baremetal
    cpus: [{cpus}]
    memory:
      - {{ipa: 0x40000000, size: 16M}}
    guest: {guest}
    params: {params}
{extra}"""
REGULATOR = "    bandwidth: {period_us: 100, budget_events: 100000000}\n"
# the doorbell's receiver and the shared page (ping is VM "b"), as tests/configs/doorbell.yaml
DOORBELL_PEER = """  - name: pong
    type: baremetal
    cpus: [1]
    memory:
      - {{ipa: 0x40000000, size: 16M}}
    guest: doorbell
    params: {{role: pong, rounds: {rounds}, wait: {wait}}}
shmem:
  - name: chan
    size: 4K
    vms:
      - {{vm: b, ipa: 0x50000000, doorbell_irq: 80}}
      - {{vm: pong, ipa: 0x50000000, doorbell_irq: 80}}
"""
DOORBELL_PING = "{{role: ping, rounds: {rounds}, measure: 1, wait: {wait}}}"
RESULT_RE = re.compile(r"result bench=(\S+) (.*)$")
SGI_SEND_RE = re.compile(r"direct: (sgi send) (kind=.*)$")
OVERHEAD_RE = re.compile(r"bwprobe: (overhead) (.*)$")


def results(guest: str, params: str, extra: str = "", tag: str = "", cpus: str = "0",
            direct: bool = False, firmware: bool | None = None,
            trace_cpu: int | None = None) -> list[dict[str, str]]:
    """Boots VM "b" (``guest`` with ``params`` on ``cpus``, ``extra`` after
    it) and returns its result lines: ``direct`` makes b a direct VM,
    ``firmware`` (default: ``direct``) boots through TF-A with SDEI and the
    FIT in RAM (docs/interrupts.md). ``trace_cpu``: QEMU's execution trace of
    the hypervisor's image, and one more row, {"exits": n}, the hypervisor
    entries on that CPU between the guest's markers (bench/hyptrace.py
    window_exits)."""
    from bench.hyptrace import Symbols, window_exits
    firmware = direct if firmware is None else firmware
    text = VM.format(guest=guest, params=params, extra=extra, cpus=cpus)
    if firmware:
        text = text.replace("vms:\n", "sdei: true\nvms:\n", 1)
    if direct:
        text = text.replace("    type: baremetal\n", "    type: baremetal\n    interrupts: direct\n", 1)
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / f"{guest}.yaml"
        config.write_text(text)
        log = Path(tmp) / "exec.log"
        with open("/dev/null", "w") as null:
            qemu: tuple[str, ...] = ()
            if trace_cpu is not None:
                syms = Symbols(build_mod.build(config, OUT / f"{guest}{tag}", log=null).elf)
                qemu = ("-accel", "tcg,one-insn-per-tb=on", "-d", "exec,nochain",
                        "-dfilter", f"{syms.addrs[0]:#x}..{syms.text_end:#x}", "-D", str(log))
            res = runner.run(config, RunOptions(timeout=600, icount=0, out=OUT / f"{guest}{tag}", build_log=null,
                             boot="tfa" if firmware else "image", fit_in_ram=firmware,
                             extra_qemu_args=qemu))
        if res.clean and trace_cpu is not None:
            try:
                exits = window_exits(log, syms, trace_cpu)
            except ValueError as e:
                raise SystemExit(f"bench/hotpaths.py: the {guest} trace: {e}") from None
    if not res.clean:
        raise SystemExit(f"bench/hotpaths.py: the {guest} run was not clean: {res.reason}")
    rows = []
    for line in res.lines("b"):
        m = RESULT_RE.match(line) or OVERHEAD_RE.match(line) or SGI_SEND_RE.match(line)
        if m:
            rows.append(dict(kv.split("=", 1) for kv in m.group(2).split()))
    if trace_cpu is not None:
        rows.append({"exits": str(exits)})
    return rows


COLUMNS = ("min_ns", "mean_ns", "max_ns", "hyp_insns", "exits", "before_ns", "prev_ns", "bao_ns")


def row(path: str, **figures: float | None) -> dict[str, object]:
    """One table row: every column present (None: not measured or no reference)."""
    unknown = set(figures) - set(COLUMNS)
    if unknown:
        raise ValueError(f"unknown columns {sorted(unknown)}")
    return {"path": path, **{c: figures.get(c) for c in COLUMNS}}


GROUPS = ("irqlat", "doorbell", "vSGI", "hcall", "direct", "fiq", "sgisend", "doorbelltfa", "period")
PERIOD_US = 100  # the regulator's period for the per-period cost rows
# a clock jump above 64 ns is the hypervisor's (bench/bandwidth_overhead.py)
OVERHEAD = "{{mode: overhead, load: spin, gap_ns: 64, window_ms: 20}}"


def period_cost(direct: bool, firmware: bool | None = None) -> dict[str, object]:
    """The regulator's cost per period: virtual time a spinning vCPU lost per
    clock jump (each a period end; its budget never runs out). A direct VM
    without ``firmware`` takes the period as a Group 0 FIQ ("direct fiq")."""
    fiq = direct and firmware is False
    tag = "-overhead" + ("-direct" if direct else "") + ("-fiq" if fiq else "")
    extra = f"    bandwidth: {{period_us: {PERIOD_US}, budget_events: {4 * PERIOD_US * 1000}}}\n"
    r = results("bwprobe", OVERHEAD.format(), extra, tag, cpus="1" if direct else "0", direct=direct,
                firmware=firmware)
    o = next(x for x in r if "lost_ns" in x) if r else None
    if o is None:
        raise SystemExit("bench/hotpaths.py: bwprobe printed no overhead line")
    gaps = max(int(o["gaps"]), 1)
    return row(f"regulator period{' direct' if direct else ''}{' fiq' if fiq else ''}",
               min_ns=int(o["min_gap_ns"]), mean_ns=int(o["lost_ns"]) / gaps, max_ns=int(o["max_gap_ns"]))


def sgi_send_direct() -> list[dict[str, object]]:
    """A direct VM's trapped SGI writes (docs/interrupts.md "SGIs: trapped and
    filtered"): dropped (a CPU outside the VM) and issued (its sibling)."""
    r = {x["kind"]: x for x in results("direct", "{mode: sgifilter, sibling: 2, foreign: 0, foreign2: 3, ms: 2}",
                                         tag="-sgisend", cpus="1, 2", direct=True) if "kind" in x}
    if set(r) != {"dropped", "own", "none"}:
        raise SystemExit(f"bench/hotpaths.py: the SGI send run printed {sorted(r)}, not dropped, own and none")
    base = float(r["none"]["mean_ns"])
    return [row(f"SGI send direct {kind}", min_ns=int(r[kind]["min_ns"]), mean_ns=float(r[kind]["mean_ns"]),
                max_ns=int(r[kind]["max_ns"]), hyp_insns=float(r[kind]["mean_ns"]) - base)
            for kind in ("dropped", "own")]


# a pong on CPU 2 for the ping on CPU 0, both through TF-A: guests/doorbell in
# an emulated VM (the doorbell a list register) or guests/direct mode=emul in a
# direct one (a spare SPI the hypervisor sets pending, docs/interrupts.md)
DOORBELL_PONG_FW = """  - name: pong
    type: baremetal
    cpus: [2]
{body}
    memory:
      - {{ipa: 0x40000000, size: 16M}}
shmem:
  - name: chan
    size: 4K
    vms:
      - {{vm: b, ipa: 0x50000000, doorbell_irq: 80}}
      - {{vm: pong, ipa: 0x50000000, doorbell_irq: {irq}}}
"""
PONG_EMULATED = "    guest: doorbell\n    params: {{role: pong, rounds: {rounds}, wait: wfi}}"
PONG_DIRECT = "    interrupts: direct\n    guest: direct\n    params: {{mode: emul, lines: 0, rings: {rounds}}}"


def doorbell_firmware(n: int) -> list[dict[str, object]]:
    """A ring's one-way latency into a direct VM and into an emulated one,
    both booted through TF-A (the doorbell group's rows boot without it)."""
    rows = []
    for label, body, irq in (("direct", PONG_DIRECT, 209), ("emulated", PONG_EMULATED, 80)):
        r = results("doorbell", DOORBELL_PING.format(rounds=n, wait="wfi"),
                    DOORBELL_PONG_FW.format(body=body.format(rounds=n), irq=irq), f"-fw-{label}", firmware=True)[0]
        rows.append(row(f"doorbell tfa {label}", min_ns=int(r["min_ns"]), mean_ns=float(r["mean_ns"]),
                        max_ns=int(r["max_ns"])))
    return rows


def ceilings() -> dict[str, float]:
    """Row name -> ceiling of its mean (virtual ns), from bench/budgets.toml [hotpaths]."""
    doc = tomllib.loads((ROOT / "bench" / "budgets.toml").read_text())
    return {str(k): float(v) for k, v in doc.get("hotpaths", {}).items()}


def check(table: list[dict[str, object]], limits: dict[str, float]) -> list[str]:
    """The rows whose mean is above their ceiling, as messages."""
    over = []
    for t in table:
        limit = limits.get(str(t["path"]))
        mean = t["mean_ns"]
        if limit is not None and isinstance(mean, float) and mean > limit:
            over.append(f"{t['path']}: mean {mean:.1f} ns is above its ceiling of {limit:g} ns")
    return over


def _ceiling(text: str) -> tuple[str, float]:
    path, _, value = text.rpartition("=")
    try:
        return path.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not PATH=NS: {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", default=",".join(GROUPS), help=f"comma-separated groups of rows ({', '.join(GROUPS)})")
    ap.add_argument("--samples", type=int, default=1000, help="interrupts, rings or SGIs per row (hcall: x10 calls)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a row's mean is above its ceiling (bench/budgets.toml [hotpaths])")
    ap.add_argument("--ceiling", type=_ceiling, action="append", default=[], metavar="PATH=NS",
                    help="override one row's ceiling, e.g. 'irqlat wfi=150'")
    args = ap.parse_args(argv)
    only = {g.strip() for g in args.only.split(",") if g.strip()}
    if only - set(GROUPS):
        ap.error(f"--only: unknown group(s) {', '.join(sorted(only - set(GROUPS)))}")
    n = args.samples
    table: list[dict[str, object]] = []
    for extra, label in (("", ""), (REGULATOR, " +regulator")) if "irqlat" in only else ():
        for wait in ("wfi", "busy"):
            r = results("irqlat", f"{{samples: {n}, period_us: 100, wait: {wait}}}", extra, "-bw" if extra else "")[0]
            name = f"irqlat {wait}"
            table.append(row(name + label, min_ns=int(r["min_ns"]), mean_ns=float(r["mean_ns"]),
                             max_ns=int(r["max_ns"]), hyp_insns=float(r["mean_ns"]) - NO_HYP_IRQ_NS,
                             before_ns=BEFORE.get(name) if not extra else None,
                             prev_ns=PREV.get(name) if not extra else None,
                             bao_ns=BAO.get(name) if not extra else None))
    for wait in ("wfi", "busy") if "doorbell" in only else ():
        r = results("doorbell", DOORBELL_PING.format(rounds=n, wait=wait),
                    DOORBELL_PEER.format(rounds=n, wait=wait))[0]
        table.append(row(f"doorbell {wait}", min_ns=int(r["min_ns"]), mean_ns=float(r["mean_ns"]),
                         max_ns=int(r["max_ns"])))
        if wait == "busy":
            continue  # the round trip then waits for QEMU's round-robin to leave the spinning CPU (-icount)
        table.append(row(f"doorbell {wait} rtt", min_ns=int(r["rt_min_ns"]), mean_ns=float(r["rt_mean_ns"]),
                         max_ns=int(r["rt_max_ns"])))
    for wait in ("wfi", "busy") if "vSGI" in only else ():
        r = results("sgilat", f"{{samples: {n}, wait: {wait}}}", tag=f"-{wait}", cpus="0, 1")[0]
        table.append(row(f"vSGI {wait}", min_ns=int(r["min_ns"]), mean_ns=float(r["mean_ns"]),
                         max_ns=int(r["max_ns"])))
    rows = results("hcall", f"{{calls: {10 * n}}}") if "hcall" in only else []
    nop = float(next((r["mean_ns"] for r in rows if r["kind"] == "nop"), 0))
    for r in rows:
        if r["kind"] == "nop":
            continue
        mean = float(r["mean_ns"])
        table.append(row(f"hcall {r['kind']}", mean_ns=mean, hyp_insns=mean - nop, before_ns=BEFORE.get(r["kind"]),
                         prev_ns=PREV.get(r["kind"]), bao_ns=BAO.get(r["kind"])))
    for fiq in [f for f in (False, True) if ("fiq" if f else "direct") in only]:
        for extra, label in (("", ""), (REGULATOR, " +regulator")):
            for wait in ("wfi", "busy"):
                tag = f"-direct{'-fiq' if fiq else ''}{'-bw' if extra else ''}"
                r = results("irqlat", f"{{samples: {n}, period_us: 100, wait: {wait}}}", extra, tag, cpus="1",
                            direct=True, firmware=not fiq)[0]
                # the exits: a second run, traced, its interrupts between the guest's markers
                traced = results("irqlat", f"{{samples: {n}, period_us: 100, wait: {wait}, warmup: 0, mark: 1}}",
                                 extra, tag + "-trace", cpus="1", direct=True, firmware=not fiq, trace_cpu=1)[-1]
                table.append(row(f"irqlat direct{' fiq' if fiq else ''} {wait}{label}", min_ns=int(r["min_ns"]),
                                 mean_ns=float(r["mean_ns"]), max_ns=int(r["max_ns"]),
                                 exits=int(traced["exits"]) / n))
    if "sgisend" in only:
        table += sgi_send_direct()
    if "doorbelltfa" in only:
        table += doorbell_firmware(n)
    if "period" in only:
        table.append(period_cost(False))
        table.append(period_cost(True))
        table.append(period_cost(True, firmware=False))
    over = check(table, {**ceilings(), **dict(args.ceiling)}) if args.check else []
    for msg in over:
        print(f"bench/hotpaths.py: {msg}", file=sys.stderr)
    if args.json:
        json.dump(table, sys.stdout, indent=2)
        print()
        return 1 if over else 0
    print("Hot paths, virtual time (-icount shift=0: 1 instruction = 1 ns; QEMU models no caches)")
    print(f"{'path':<24} {'min':>7} {'mean':>9} {'max':>7} {'hyp insns':>10} {'exits/irq':>9} {'before':>8} "
          f"{'prev':>6} {'Bao':>6}")
    for t in table:
        def f(key: str, fmt: str, t: dict[str, object] = t) -> str:
            v = t.get(key)
            return format(v, fmt) if v is not None else "-"
        print(f"{t['path']:<24} {f('min_ns', 'd'):>7} {f('mean_ns', '.1f'):>9} {f('max_ns', 'd'):>7} "
              f"{f('hyp_insns', '.1f'):>10} {f('exits', '.3f'):>9} {f('before_ns', '.0f'):>8} {f('prev_ns', '.0f'):>6} "
              f"{f('bao_ns', '.0f'):>6}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
