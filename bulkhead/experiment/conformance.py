# SPDX-License-Identifier: Apache-2.0
"""``bulkhead conformance``: kvm-unit-tests' Arm suite as Bulkhead guests.

kvm-unit-tests (gitlab.com/kvm-unit-tests/kvm-unit-tests) is the suite KVM,
QEMU and other hypervisors check their Arm virtual machines against: small
flat images that take a device tree in ``x0`` (the arm64 boot protocol),
test one architectural feature each (PSCI, the GIC, the timers, the PMU,
debug, exception vectors, SMP) and end with ``EXIT: STATUS=n`` (1 pass, 77
skipped, anything else a failure). Each case of the suite's
``arm/unittests.cfg`` runs as a ``type: image`` VM with the case's vCPUs
and memory and its arguments as ``bootargs``, and, for comparison, on the
same QEMU without a hypervisor (``-M virt`` with the platform's GIC version
and CPU model), where the same image runs at EL1 of a bare machine. A case
conforms unless it fails under Bulkhead where it passed or skipped on the
bare machine, or fails checks the bare machine passed. ``--template`` runs
the cases inside a user's system (beside its other VMs, with its colors,
budgets or direct interrupts). docs/conformance.md.

The suite is GPL and not ours: it is never committed; the user builds it
(``./configure --arch=arm64 --cross-prefix=aarch64-linux-gnu- && make``)
and names its directory.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from bulkhead.base.errors import BuildError, ConfigError
from bulkhead.base.tree import REPO_ROOT
from bulkhead.config.model import Platform
from bulkhead.generate import qemu
from bulkhead.layout.load import PLATFORMS_DIR, load_platform
from bulkhead.run import runner
from bulkhead.run.backend import RunOptions

PASS, SKIP, FAIL, NONE = "pass", "skip", "fail", "no result"
DEFAULT_MEM_MIB = 256  # kvm-unit-tests' default guest memory
DEFAULT_TIMEOUT = 300.0  # the timer case busy-waits: 2 min of host time under --icount 0 on 4 CPUs
VM_IPA = 0x40000000
STATUS_RE = re.compile(r"EXIT: STATUS=(\d+)\s*$")
SUMMARY_RE = re.compile(r"SUMMARY: (.*?)\s*$")
_SMP_TERNARY = re.compile(r"^\$\(\(\(\$MAX_SMP\s*<\s*(\d+)\)\s*\?\s*\$MAX_SMP\s*:\s*(\d+)\)\)$")


@dataclass(frozen=True)
class Case:
    """One ``[name]`` section of ``arm/unittests.cfg``."""
    name: str
    file: str  # e.g. selftest.flat
    smp: str = "1"  # as written: a number, $MAX_SMP or $((($MAX_SMP < N)?$MAX_SMP:N))
    args: str = ""
    groups: tuple[str, ...] = ()
    arch: str = ""  # "" (both), arm or arm64
    accel: str = ""  # "" (any), tcg or kvm
    qemu_params: str = ""
    timeout: float | None = None


@dataclass
class Outcome:
    verdict: str  # PASS, SKIP, FAIL or NONE
    status: int | None  # the EXIT: STATUS value
    summary: str
    failures: list[str]


@dataclass
class CaseResult:
    name: str
    smp: int
    args: str
    bulkhead: Outcome
    reference: Outcome | None

    @property
    def comparison(self) -> str:
        """``same`` verdict as the bare machine; ``absent``: the case skipped
        itself under Bulkhead (a feature the VM is not given, e.g. an ITS)
        where the bare machine ran it; ``worse``: failed (or ended without a
        verdict) where the bare machine passed or skipped, or failed checks
        the bare machine passed; ``better``; or,
        with no reference run, ``ok`` (passed or skipped) or ``worse``."""
        mine = self.bulkhead.verdict
        if self.reference is None:
            return "ok" if mine in (PASS, SKIP) else "worse"
        ref = self.reference.verdict
        if mine == ref == FAIL:  # compare what failed
            extra = set(self.bulkhead.failures) - set(self.reference.failures)
            fewer = set(self.reference.failures) - set(self.bulkhead.failures)
            return "worse" if extra else "better" if fewer else "same"
        if mine == ref:
            return "same"
        if mine == SKIP and ref == PASS:
            return "absent"
        if mine in (FAIL, NONE):
            return "worse"
        return "better"

    @property
    def conforms(self) -> bool:
        return self.comparison != "worse"


def parse_unittests(text: str, source: str = "unittests.cfg") -> list[Case]:
    """The cases of a kvm-unit-tests ``unittests.cfg`` (an INI-like file:
    ``[name]`` then ``key = value`` lines; ``#`` comments)."""
    cases: list[Case] = []
    name: str | None = None
    fields: dict[str, str] = {}

    def close() -> None:
        if name is None:
            return
        if "file" not in fields:
            raise ValueError(f"{source}: [{name}] has no 'file ='")
        timeout = fields.get("timeout", "").rstrip("s")
        cases.append(Case(
            name=name, file=fields["file"], smp=fields.get("smp", "1"),
            args=_unquote(fields.get("test_args", "")), groups=tuple(fields.get("groups", "").split()),
            arch=fields.get("arch", ""), accel=fields.get("accel", ""),
            qemu_params=fields.get("qemu_params", ""), timeout=float(timeout) if timeout else None))

    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            close()
            name, fields = line[1:-1].strip(), {}
            continue
        if name is None or "=" not in line:
            raise ValueError(f"{source}:{n}: expected '[name]' or 'key = value', got '{line}'")
        key, value = line.split("=", 1)
        fields[key.strip()] = value.strip()
    close()
    return cases


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def smp_count(expr: str, max_smp: int) -> int:
    """The vCPU count a case asks for, given the most the platform offers."""
    expr = expr.strip()
    if expr == "$MAX_SMP":
        return max_smp
    m = _SMP_TERNARY.match(expr)
    if m:
        return max_smp if max_smp < int(m.group(1)) else int(m.group(2))
    if expr.isdigit():
        return int(expr)
    raise ValueError(f"smp = {expr}: not a number or a $MAX_SMP expression")


def memory_mib(case: Case) -> int:
    """``-m N`` of the case's qemu_params, else the suite's default."""
    m = re.search(r"(?:^|\s)-m\s+(\d+)", case.qemu_params)
    return int(m.group(1)) if m else DEFAULT_MEM_MIB


def gic_version(case: Case) -> int | None:
    """The GIC version a case is written for (``gic-version=N``), if any."""
    m = re.search(r"gic-version=(\d)", case.qemu_params)
    return int(m.group(1)) if m else None


def not_applicable(case: Case, gic: int, smp: int, ncpus: int) -> str | None:
    """Why a case does not run on this platform (None: it runs)."""
    if case.arch == "arm":
        return "32-bit Arm only"
    if case.accel == "kvm":
        return "written for KVM (accel = kvm)"
    if "migration" in case.groups or case.name.endswith("migration"):
        return "needs live migration"
    want = gic_version(case)
    if want is not None and want != gic:
        return f"needs a GICv{want}; the platform has a GICv{gic}"
    if smp > ncpus:
        return f"needs {smp} CPUs; {ncpus} available"
    return None


def outcome(output: str) -> Outcome:
    """The verdict of one case from what it printed."""
    status = None
    summary = ""
    failures = []
    for line in output.splitlines():
        text = line.split("] ", 1)[1] if line.startswith("[") and "] " in line else line
        if text.startswith("FAIL: "):
            failures.append(text[6:].strip())
        if m := SUMMARY_RE.match(text):
            summary = m.group(1)
        if m := STATUS_RE.match(text):
            status = int(m.group(1))
    if status is None:
        verdict = NONE
    elif status == 1:
        verdict = PASS
    elif status == 77:
        verdict = SKIP
    else:
        verdict = FAIL
    return Outcome(verdict, status, summary, failures)


@dataclass(frozen=True)
class Template:
    """A system config the cases run in (``--template``): its VM named
    ``kut`` becomes each case's VM, on the first vCPU-count CPUs of its
    ``cpus``; every other VM (an interferer, say) and key stays."""
    doc: dict[str, Any]
    platform: str
    cpus: tuple[int, ...]


def load_template(path: Path) -> Template:
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError.single(str(path), f"cannot read the template: {exc}") from None
    vms = doc.get("vms") if isinstance(doc, dict) else None
    kut = [v for v in vms if isinstance(v, dict) and v.get("name") == "kut"] if isinstance(vms, list) else []
    if len(kut) != 1:
        raise ConfigError.single(str(path), "a template needs one VM named 'kut' under 'vms:' (it becomes "
                                 "each case's VM)")
    cpus = kut[0].get("cpus")
    if not isinstance(cpus, list) or not cpus or not all(isinstance(c, int) for c in cpus):
        raise ConfigError.single(str(path), "VM 'kut' needs 'cpus': a list of CPU indices (a case with n "
                                 "vCPUs takes the first n)")
    if not isinstance(doc.get("platform"), str):
        raise ConfigError.single(str(path), "the template needs 'platform:'")
    return Template(doc, doc["platform"], tuple(cpus))


def config_text(case: Case, platform: str, image: Path, smp: int, template: Template | None = None,
                mixed: bool = False, its: bool = False) -> str:
    """A system config that runs ``image`` as the case's VM ``kut``: alone
    (``mixed``: its CPUs are of several core types, e.g. the RK3588's A55s
    and A76s), or in ``template`` (whose ``kut`` keeps its other keys but no
    guest, kernel or parameters of its own). A case of the ``its`` group on
    a platform with an ITS (``its``) gets QEMU's ``edu`` as its VM's PCI
    function unless ``kut`` has functions of its own: a VM has a virtual
    ITS only when it owns one (docs/interrupts.md)."""
    vm: dict[str, Any] = {"name": "kut", "type": "image", "cpus": list(range(smp)),
                          "memory": [{"ipa": VM_IPA, "size": f"{memory_mib(case)}M"}]}
    if mixed:
        vm["mixed_core_types"] = True
    doc: dict[str, Any] = {"platform": platform, "vms": [vm]}
    if template is not None:
        doc = copy.deepcopy(template.doc)
        kut = next(v for v in doc["vms"] if isinstance(v, dict) and v.get("name") == "kut")
        for key in ("guest", "kernel", "initrd", "params", "image", "bootargs", "entry"):
            kut.pop(key, None)
        kut.setdefault("memory", vm["memory"])
        kut.update(type="image", cpus=list(template.cpus[:smp]))
        vm = kut
    vm.update(image=str(image.absolute()), bootargs=case.args)
    if its and "its" in case.groups and not vm.get("pci"):
        vm["pci"] = [{"qemu": "edu"}]
    return (f"# kvm-unit-tests case [{case.name}] (bulkhead conformance)\n"
            + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100))


def reference_argv(case: Case, image: Path, smp: int, platform: Platform, icount: int | None) -> list[str]:
    """The same case on the same QEMU with no hypervisor: EL1 of a bare
    ``virt`` with the platform's GIC version and CPU model."""
    q = qemu.model(platform)
    argv = [q.binary, "-M", f"virt,gic-version={platform.gic.version}", "-cpu", q.cpu,
            "-smp", str(smp), "-m", f"{memory_mib(case)}M", "-display", "none", "-monitor", "none",
            "-serial", "stdio", "-kernel", str(image.absolute()), "-append", case.args]
    if icount is not None:
        argv += ["-icount", f"shift={icount},align=off,sleep=off"]
    return argv


def run_reference(argv: Sequence[str], timeout: float, log: Path) -> Outcome:
    """Runs the bare machine (killed after ``timeout`` seconds); its console goes to ``log``."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        text = proc.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as exc:
        text = (exc.stdout or b"").decode(errors="replace")
    log.write_text(text)
    return outcome(text)


def run_bulkhead(config: Path, out: Path, timeout: float, icount: int | None, boot: str = "image",
                 fit_in_ram: bool = False) -> Outcome:
    """Builds and boots the case's system (``boot``, ``fit_in_ram``: as
    ``bulkhead run``'s); its console goes to ``out/console.log``. A case that
    cannot be built or run has no verdict (the reason is its summary)."""
    try:
        with open(out / "build.log", "w") as log:
            r = runner.run(config, RunOptions(timeout=timeout, icount=icount, out=out, build_log=log, boot=boot,
                                              fit_in_ram=fit_in_ram))
    except (ConfigError, BuildError) as exc:
        return Outcome(NONE, None, f"not run: {str(exc).splitlines()[0]}", [])
    (out / "console.log").write_text(r.output)
    return outcome("\n".join(r.lines("kut")))


def select(cases: Iterable[Case], only: Sequence[str] | None) -> list[Case]:
    cases = list(cases)
    if not only:
        return cases
    names = {c.name for c in cases}
    unknown = [n for n in only if n not in names]
    if unknown:
        raise ConfigError.single("unittests.cfg", f"--only: no case named '{unknown[0]}'")
    return [c for c in cases if c.name in only]


def table(results: Sequence[CaseResult], skipped: Sequence[tuple[str, str]]) -> str:
    rows = [("case", "vCPUs", "bare QEMU", "Bulkhead", "")]
    for r in results:
        ref = r.reference.verdict if r.reference else "-"
        mark = r.comparison.upper() if r.comparison == "worse" else r.comparison
        rows.append((r.name, str(r.smp), ref, r.bulkhead.verdict, mark))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    for r in results:
        if r.bulkhead.verdict == NONE and r.bulkhead.summary:
            lines.append(f"  {r.name}: {r.bulkhead.summary}")
        for f in r.bulkhead.failures:
            lines.append(f"  {r.name}: FAIL: {f}")
    for name, why in skipped:
        lines.append(f"not run: {name}: {why}")
    counts = {k: sum(r.comparison == k for r in results) for k in ("same", "absent", "better", "ok", "worse")}
    cases = f"{len(results)} case" + ("" if len(results) == 1 else "s")
    lines.append(f"{cases}: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
                 + (" (absent: the case skipped itself, a feature the VM is not given)" if counts["absent"] else ""))
    return "\n".join(lines) + "\n"


def add_parser(sub: Any) -> None:
    """Register ``bulkhead conformance`` on the CLI's subparsers."""
    p = sub.add_parser(
        "conformance", help="run kvm-unit-tests' Arm suite as Bulkhead guests",
        description="Run every case of KUT/arm/unittests.cfg that applies to the platform as a Bulkhead "
                    "'type: image' VM, and the same image on the same QEMU without a hypervisor; print "
                    "both verdicts (docs/conformance.md). Exit 0 unless a case fails (or ends without a "
                    "verdict) under Bulkhead where it passed or skipped without the hypervisor (with "
                    "--no-reference: unless a case fails).")
    p.add_argument("kut", metavar="KUT", type=Path, help="a built kvm-unit-tests tree (arm/*.flat)")
    p.add_argument("--platform", metavar="NAME", help="platforms/NAME.yaml (default qemu-virt, or the template's)")
    p.add_argument("--template", metavar="CONFIG", type=Path,
                   help="run each case as VM 'kut' of this system config (on the first n of its CPUs), "
                        "beside its other VMs, with its colors, budget and so on")
    p.add_argument("--only", metavar="CASE", action="append", help="run only this case (repeatable)")
    p.add_argument("--icount", metavar="N", type=int, help="-icount shift=N for both runs")
    p.add_argument("--boot", choices=("image", "uboot", "tfa"), default="image",
                   help="how Bulkhead is started, as for 'bulkhead run' (tfa: through TF-A and U-Boot, which "
                        "'interrupts: direct' in a --template needs)")
    p.add_argument("--fit-in-ram", action="store_true", help="with --boot uboot|tfa: as for 'bulkhead run'")
    p.add_argument("--timeout", metavar="S", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds per run (default {DEFAULT_TIMEOUT:.0f})")
    p.add_argument("--no-reference", action="store_true", help="do not run the cases without the hypervisor")
    p.add_argument("--out", metavar="DIR", type=Path, help="configs and logs (default build/conformance/<platform>)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")


def command(args: argparse.Namespace) -> int:
    if args.fit_in_ram and args.boot == "image":
        sys.stderr.write("bulkhead: error: --fit-in-ram needs --boot uboot or --boot tfa\n")
        return 2
    cfg_file = args.kut / "arm" / "unittests.cfg"
    if not cfg_file.is_file():
        raise ConfigError.single(str(args.kut), "not a kvm-unit-tests tree (no arm/unittests.cfg); build one with "
                                 "'./configure --arch=arm64 --cross-prefix=aarch64-linux-gnu- && make' "
                                 "(docs/conformance.md)")
    try:
        cases = select(parse_unittests(cfg_file.read_text(), str(cfg_file)), args.only)
    except ValueError as exc:
        raise ConfigError.single(str(cfg_file), str(exc)) from None
    template = load_template(args.template) if args.template else None
    if template and args.platform and args.platform != template.platform:
        raise ConfigError.single(str(args.template), f"the template's platform is '{template.platform}', "
                                 f"not '{args.platform}' (--platform)")
    name = template.platform if template else args.platform or "qemu-virt"
    platform = load_platform(name, PLATFORMS_DIR)
    qemu.model(platform)  # refuses a board QEMU does not model before anything runs
    out = (args.out or REPO_ROOT / "build" / "conformance" / (args.template.stem if args.template else name)).absolute()
    ncpus = len(template.cpus) if template else platform.ncpus
    max_smp = min(ncpus, 8)
    results: list[CaseResult] = []
    skipped: list[tuple[str, str]] = []
    for case in cases:
        try:
            smp = smp_count(case.smp, max_smp)
        except ValueError as exc:
            skipped.append((case.name, str(exc)))
            continue
        why = not_applicable(case, platform.gic.version, smp, ncpus)
        image = args.kut / "arm" / case.file
        if why is None and not image.is_file():
            why = f"{image} is not built"
        if why:
            skipped.append((case.name, why))
            continue
        case_out = out / case.name
        case_out.mkdir(parents=True, exist_ok=True)
        config = case_out / "config.yaml"
        mixed = template is None and len({platform.cpu_type(c) for c in range(smp)}) > 1
        config.write_text(config_text(case, name, image, smp, template, mixed, bool(platform.gic.its)))
        timeout = max(args.timeout, case.timeout or 0.0)
        mine = run_bulkhead(config, case_out, timeout, args.icount, args.boot, args.fit_in_ram)
        ref = None
        if not args.no_reference:
            ref = run_reference(reference_argv(case, image, smp, platform, args.icount), timeout,
                                case_out / "reference.log")
        result = CaseResult(case.name, smp, case.args, mine, ref)
        results.append(result)
        if not args.json:
            sys.stderr.write(f"bulkhead: conformance: {case.name}: bare {ref.verdict if ref else '-'}, "
                             f"Bulkhead {mine.verdict}\n")
    if args.json:
        doc = {"platform": name, "template": str(args.template) if args.template else None, "cases": [asdict(r) | {"comparison": r.comparison} for r in results],
               "not_run": [{"case": n, "why": w} for n, w in skipped]}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(table(results, skipped))
    return 0 if all(r.conforms for r in results) else 1
