# SPDX-License-Identifier: Apache-2.0
"""Experiment specs: a base system, benchmarks, scenarios as config overlays.

A spec (``bench/experiments/*.yaml``, reference in docs/experiments.md) is
checked like a system config: unknown keys, types and references are errors
naming ``file:line:col`` and the key path. :func:`bulkhead.experiment.matrix.expand`
turns a spec into the run matrix, and :func:`bulkhead.experiment.matrix.generate`
makes the system config of one run:

1. the base system config (``base:`` file or inline ``system:``),
2. the scenario's overlays, deep-merged (``extends`` first),
3. the sweep values, set at their key paths,
4. the benchmark: ``guest`` and ``params`` of the VM under test,
5. the start/stop handshake: a shared page between the VM under test and
   every VM running the ``interferer`` guest.

Deep merge: see :mod:`bulkhead.experiment.plain`. The runner
knows no config keys beyond those of the core format: coloring or bandwidth
settings are just overlay content.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bulkhead.base.errors import ConfigError, Diagnostic
from bulkhead.config import yamlpos
from bulkhead.config.model import Locs
from bulkhead.config.reader import Reader, join
from bulkhead.config.schema import PLATFORM_NAME_RE
from bulkhead.config.yamlpos import YList, YMap, YNode, YScalar, describe
from bulkhead.experiment import workloads
from bulkhead.experiment.plain import absolute_files, to_plain
from bulkhead.experiment.results import GUEST_METRICS, METRIC_COLUMNS, Metric, register_metric
from bulkhead.layout.load import GUESTS_DIR, display_path

SCENARIO_RE = re.compile(r"[a-z0-9][a-z0-9_.+-]{0,47}\Z")
LABEL_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}\Z")
SYNC_DEFAULT_IPA = 0xF000_0000
SYNC_SIZE = 0x1000
PLOT_KINDS = ("slowdown", "consumed", "overhead")
# Keys of a VM whose relative file paths are made absolute in generated configs.

TOP_KEYS = (
    "name", "description", "base", "system", "platform", "critical", "benchmarks", "scenarios",
    "baseline", "repetitions", "icount", "timeout", "sync", "plots", "network", "metrics", "max_slowdown",
    "tolerance",
)
NETWORKS = ("none", "peer")
BETTER = ("lower", "higher")


@dataclass(frozen=True)
class Benchmark:
    name: str
    guest: str  # a bare-metal guest, or a workload's tool (cyclictest, stress-ng, iperf3, ping)
    params: dict[str, Any]
    metric: Metric
    command: str = ""  # a Linux workload (docs/workloads.md): the bulkhead.run command


@dataclass(frozen=True)
class Sweep:
    key: str  # dotted path into the system config
    label: str  # its column in results.csv
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    overlays: tuple[dict[str, Any], ...]  # extends chain first, own overlay last
    sweeps: tuple[Sweep, ...]
    zip: bool
    optional: bool
    benchmarks: tuple[str, ...]  # names, in spec order

    def variants(self) -> list[tuple[tuple[str, Any], ...]]:
        """Every combination of sweep values, as ((label, value), ...)."""
        if not self.sweeps:
            return [()]
        rows: Iterable[tuple[Any, ...]]
        if self.zip:
            rows = zip(*(s.values for s in self.sweeps), strict=False)
        else:
            rows = itertools.product(*(s.values for s in self.sweeps))
        return [tuple((s.label, v) for s, v in zip(self.sweeps, row, strict=True)) for row in rows]


@dataclass(frozen=True)
class RefLine:
    """A horizontal reference line: a budget or a guarantee (``lines:``)."""

    y: float
    label: str
    kind: str = "budget"  # budget: an upper bound values are checked against; guarantee: a lower bound


@dataclass(frozen=True)
class Published:
    """Values digitised from a publication, drawn beside ours (``published:``):
    points (x, value), where x is a sweep value or, in a slowdown chart, a
    scenario name; ``benchmark`` names the benchmark of ours they stand beside
    (slowdown charts; default: every benchmark)."""

    label: str
    source: str
    points: tuple[tuple[Any, float], ...]
    benchmark: str = ""


@dataclass(frozen=True)
class PlotSpec:
    kind: str  # slowdown | consumed | overhead
    title: str
    scenarios: tuple[str, ...]  # slowdown: which (all if empty); others: exactly one
    x: str  # sweep label (consumed, overhead)
    y: str  # metric column (consumed)
    assigned: float | None  # consumed: draw y = assigned * x
    per_cpu: bool  # consumed: one line per vCPU of the VM under test
    logx: bool  # a logarithmic x axis, only when asked for (linear by default)
    reproduces: str = ""  # the published figure this plot reproduces (for its caption)
    comparable: str = ""  # what is comparable with the publication, and what is not (caption)
    relative_to: str = ""  # consumed: y divided by this scenario's mean of the same column
    assigned_power: float = 1.0  # consumed: the assigned line is y = assigned * x ** assigned_power
    lines: tuple[RefLine, ...] = ()  # budgets and guarantees, drawn as lines
    published: tuple[Published, ...] = ()
    logy: bool | None = None  # None: log when the values span two decades or more
    name: str = ""  # the figure's file stem (default: from kind, scenario and x)
    assigned_label: str = ""  # consumed: the budget line's legend (default: its equation)
    tolerance: float = 0.0  # consumed: how far (fraction) above the budget a value may lie beyond one period


@dataclass(frozen=True)
class SyncSpec:
    ipa: int
    size: int


@dataclass(frozen=True)
class ExperimentSpec:
    file: Path
    display: str
    name: str
    description: str
    base: dict[str, Any]  # the base system config (file paths made absolute)
    base_display: str
    platform: str | None
    critical: str
    benchmarks: tuple[Benchmark, ...]
    scenarios: tuple[Scenario, ...]
    baseline: str
    repetitions: int
    icount: int | None
    timeout: float
    sync: SyncSpec | None
    plots: tuple[PlotSpec, ...]
    network: str = "none"  # "peer": every run gets a frame peer on its shared I/O device (docs/io.md)
    max_slowdown: float = 1000.0  # slowdowns above it (or below its inverse) are flagged as artefacts
    tolerance: float = 0.01  # --reproduce: how far (relative) a value may lie from the bundle's

    def scenario(self, name: str) -> Scenario:
        return next(s for s in self.scenarios if s.name == name)

    def benchmark(self, name: str) -> Benchmark:
        return next(b for b in self.benchmarks if b.name == name)

    def sweep_labels(self) -> list[str]:
        labels: list[str] = []
        for s in self.scenarios:
            for sw in s.sweeps:
                if sw.label not in labels:
                    labels.append(sw.label)
        return labels


@dataclass(frozen=True)
class RunPlan:
    """One QEMU run of the matrix."""

    index: int  # 1-based, in matrix order
    scenario: str
    variant: tuple[tuple[str, Any], ...]
    benchmark: str
    repetition: int  # 1-based
    optional: bool

    @property
    def variant_text(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.variant)

    @property
    def config_stem(self) -> str:
        """Name of the generated config (shared by the repetitions)."""
        parts = [self.scenario] + [f"{k}{v}" for k, v in self.variant] + [self.benchmark]
        return re.sub(r"[^A-Za-z0-9_.+-]", "_", "-".join(parts))

    @property
    def label(self) -> str:
        """Scenario and sweep values, e.g. ``interf-mbr[period_us=100]``."""
        return f"{self.scenario}[{self.variant_text}]" if self.variant else self.scenario


# --- parsing ---------------------------------------------------------------


def load(path: Path | str, *, guests_dir: Path = GUESTS_DIR) -> ExperimentSpec:
    """Parse and check an experiment spec; ConfigError on any problem."""
    file = Path(path)
    display = str(path)
    node, _ = yamlpos.load(file, display)
    return _Parser(file, display, guests_dir).parse(node)


class _Parser:
    def __init__(self, file: Path, display: str, guests_dir: Path) -> None:
        self.file = file
        self.display = display
        self.guests_dir = guests_dir
        self.r = Reader(Locs(display))

    def fail(self, node: YNode | YScalar, path: str, message: str) -> ConfigError:
        return self.r.fail(node, path, message)

    def number(self, node: YNode, path: str, what: str) -> float:
        if isinstance(node, YScalar) and type(node.value) in (int, float):
            assert isinstance(node.value, (int, float))
            return float(node.value)
        raise self.fail(node, path, f"expected {what}, got {describe(node)}")

    def parse(self, node: YNode) -> ExperimentSpec:
        r = self.r
        # "x-..." keys are free: a place for YAML anchors shared by scenarios.
        extra = tuple(k.raw for k, _ in node.items if k.raw.startswith("x-")) if isinstance(node, YMap) else ()
        top = r.mapping(node, "", TOP_KEYS + extra, ("name", "critical", "benchmarks", "scenarios"),
                        "an experiment spec (mapping)")
        name = r.name(top["name"], "name", "an experiment name", PLATFORM_NAME_RE)
        description = r.string(top["description"], "description") if "description" in top else ""

        base, base_display = self.base(top, node)
        vm_names = [vm.get("name") for vm in base.get("vms", []) if isinstance(vm, dict)]
        platform = None
        if "platform" in top:
            platform = r.name(top["platform"], "platform", "a platform name", PLATFORM_NAME_RE)
        critical = r.name(top["critical"], "critical", "a VM name")
        if critical not in vm_names:
            listed = ", ".join(str(n) for n in vm_names) or "none"
            raise self.fail(top["critical"], "critical",
                            f"the base system has no VM '{critical}'; it has: {listed}")

        if "metrics" in top:
            self.metrics(top["metrics"], "metrics")
        benchmarks = r.each(top["benchmarks"], "benchmarks", self.benchmark, "a list of benchmarks")
        if not benchmarks:
            raise self.fail(top["benchmarks"], "benchmarks", "at least one benchmark is required")
        self.unique([b.name for b in benchmarks], top["benchmarks"], "benchmarks", "benchmark")
        bench_names = tuple(b.name for b in benchmarks)

        scen_nodes = r.seq(top["scenarios"], "scenarios", "a list of scenarios")
        if not scen_nodes:
            raise self.fail(top["scenarios"], "scenarios", "at least one scenario is required")
        scenarios: list[Scenario] = []
        for i, sn in enumerate(scen_nodes):
            scenarios.append(self.scenario(sn, f"scenarios[{i}]", scenarios, bench_names))

        baseline = scenarios[0].name
        if "baseline" in top:
            baseline = r.string(top["baseline"], "baseline", "a scenario name")
            match = [s for s in scenarios if s.name == baseline]
            if not match:
                raise self.fail(top["baseline"], "baseline", f"no scenario named '{baseline}'")
            if match[0].sweeps:
                raise self.fail(top["baseline"], "baseline",
                                f"the baseline scenario '{baseline}' must not have a sweep")

        repetitions = r.integer(top["repetitions"], "repetitions", "a number of repetitions (1-1000)",
                                1, 1000) if "repetitions" in top else 1
        icount: int | None = None
        if "icount" in top and not (isinstance(top["icount"], YScalar) and top["icount"].value is None):
            icount = r.integer(top["icount"], "icount", "an icount shift (0-10) or null", 0, 10)
        timeout = 300.0
        if "timeout" in top:
            timeout = self.number(top["timeout"], "timeout", "a timeout in seconds")
            if timeout <= 0:
                raise self.fail(top["timeout"], "timeout", "the timeout must be greater than 0")

        sync: SyncSpec | None = SyncSpec(SYNC_DEFAULT_IPA, SYNC_SIZE)
        if "sync" in top:
            sn = top["sync"]
            if isinstance(sn, YScalar) and sn.value is False:
                sync = None
            else:
                sm = r.mapping(sn, "sync", ("ipa",), (), "a mapping {ipa} or false")
                if "ipa" in sm:
                    sync = SyncSpec(r.address(sm["ipa"], "sync.ipa"), SYNC_SIZE)

        network = r.choice(top["network"], "network", NETWORKS) if "network" in top else "none"
        max_slowdown = 1000.0
        if "max_slowdown" in top:
            max_slowdown = self.number(top["max_slowdown"], "max_slowdown", "a ratio above 1")
            if max_slowdown <= 1:
                raise self.fail(top["max_slowdown"], "max_slowdown", "max_slowdown must be above 1")

        tolerance = 0.01
        if "tolerance" in top:
            tolerance = self.number(top["tolerance"], "tolerance", "a relative tolerance (0 to 1)")
            if not 0 <= tolerance <= 1:
                raise self.fail(top["tolerance"], "tolerance", "the tolerance must lie between 0 and 1")

        plots: tuple[PlotSpec, ...] = ()
        if "plots" in top:
            plots = r.each(top["plots"], "plots", lambda n, p: self.plot(n, p, scenarios),
                           "a list of plots")
        else:
            plots = default_plots(scenarios)

        return ExperimentSpec(
            file=self.file, display=self.display, name=name, description=description.strip(),
            base=base, base_display=base_display, platform=platform, critical=critical,
            benchmarks=benchmarks, scenarios=tuple(scenarios), baseline=baseline,
            repetitions=repetitions, icount=icount, timeout=timeout, sync=sync, plots=plots,
            network=network, max_slowdown=max_slowdown, tolerance=tolerance,
        )

    def metrics(self, node: YNode, path: str) -> None:
        """``metrics: {column: {unit, better}}``: result-line keys of further
        workloads (e.g. cyclictest's) as metric columns."""
        r = self.r
        if not isinstance(node, YMap):
            raise self.fail(node, path, f"expected a mapping of metric columns, got {describe(node)}")
        for key_node, value in node.items:
            column = key_node.raw
            kp = join(path, column)
            if not LABEL_RE.match(column) or (column in RESERVED_COLUMNS and column not in METRIC_COLUMNS):
                raise self.fail(key_node, kp, f"invalid metric column '{column}' (letters, digits and '_', "
                                              "not one of the fixed columns)")
            m = r.mapping(value, kp, ("unit", "better"), ("better",), "a mapping {unit, better}")
            unit = r.string(m["unit"], join(kp, "unit")) if "unit" in m else ""
            better = r.choice(m["better"], join(kp, "better"), BETTER)
            register_metric(Metric(column, better == "lower", unit))

    def base(self, top: dict[str, YNode], node: YNode) -> tuple[dict[str, Any], str]:
        r = self.r
        if ("base" in top) == ("system" in top):
            raise self.fail(node, "", "give exactly one of 'base' (a system config file) "
                                      "and 'system' (an inline system config)")
        if "base" in top:
            path = r.file(top["base"], "base", self.file.parent)
            shown = display_path(path)
            try:
                base_node, _ = yamlpos.load(path, shown)
            except ConfigError as exc:
                d = exc.diagnostics[0]
                if d.line is None:  # the file itself is missing or unreadable
                    raise self.fail(top["base"], "base", f"{shown}: {d.message}") from None
                raise
            if not isinstance(base_node, YMap):
                raise ConfigError([Diagnostic.at(base_node.mark, "", "expected a system config "
                                                 f"(mapping), got {describe(base_node)}")])
            base = to_plain(base_node)
            base_dir = path.parent
        else:
            if not isinstance(top["system"], YMap):
                raise self.fail(top["system"], "system",
                                f"expected an inline system config (mapping), got {describe(top['system'])}")
            base = to_plain(top["system"])
            shown = f"{self.display} (system)"
            base_dir = self.file.parent
        if not isinstance(base.get("vms"), list):
            where = top.get("base", top.get("system"))
            assert where is not None
            raise self.fail(where, "base" if "base" in top else "system",
                            "the base system config has no 'vms' list")
        absolute_files(base["vms"], base_dir)
        return base, shown

    def unique(self, names: Sequence[str], node: YNode, path: str, what: str) -> None:
        seen: set[str] = set()
        for i, n in enumerate(names):
            if n in seen:
                item = node.items[i] if isinstance(node, YList) else node
                raise self.fail(item, f"{path}[{i}]", f"duplicate {what} name '{n}'")
            seen.add(n)

    def benchmark(self, node: YNode, path: str) -> Benchmark:
        r = self.r
        m = r.mapping(node, path, ("name", "guest", "params", "metric", "workload", "args", "command"), (),
                      "a benchmark (mapping)")
        if "workload" in m or "guest" not in m:
            return self.workload(m, node, path)
        for key in ("args", "command"):
            if key in m:
                raise self.fail(m[key], join(path, key), f"'{key}' belongs to a Linux workload ('workload:')")
        guest = r.name(m["guest"], join(path, "guest"), "a guest name")
        if self.guests_dir is not None and not (self.guests_dir / guest).is_dir():
            raise self.fail(m["guest"], join(path, "guest"),
                            f"no guest '{guest}' (no directory guests/{guest}/)")
        name = r.name(m["name"], join(path, "name"), "a benchmark name", PLATFORM_NAME_RE) if "name" in m else guest
        params: dict[str, Any] = {}
        if "params" in m:
            pn = m["params"]
            if not isinstance(pn, YMap):
                raise self.fail(pn, join(path, "params"), f"expected a mapping of parameters, got {describe(pn)}")
            for key_node, value in pn.items:
                key = key_node.raw
                kp = join(join(path, "params"), key)
                r.plain_boolean(value, kp)
                if not (isinstance(value, YScalar) and isinstance(value.value, (str, int, bool))):
                    raise self.fail(value, kp, "expected a parameter value (string, integer or boolean), "
                                               f"got {describe(value)}")
                params[key] = value.value
        if "metric" in m:
            column = r.choice(m["metric"], join(path, "metric"), tuple(METRIC_COLUMNS))
            metric = METRIC_COLUMNS[column]
        elif guest in GUEST_METRICS:
            metric = GUEST_METRICS[guest]
        else:
            raise self.fail(m["guest"], join(path, "guest"),
                            f"guest '{guest}' has no default metric; add 'metric:' "
                            f"(one of {', '.join(METRIC_COLUMNS)})")
        return Benchmark(name, guest, params, metric)

    def workload(self, m: dict[str, YNode], node: YNode, path: str) -> Benchmark:
        """A Linux workload: ``workload: <tool>`` with ``args`` (the command is
        the tool and its arguments) or ``command`` (a shell command running it)."""
        r = self.r
        if "workload" not in m:
            raise self.fail(node, path, "a benchmark needs 'guest' (a bare-metal guest) or 'workload' "
                                        f"(a Linux workload: {', '.join(workloads.WORKLOADS)})")
        if "guest" in m or "params" in m:
            key = "guest" if "guest" in m else "params"
            raise self.fail(m[key], join(path, key), f"a workload benchmark has no '{key}' (give 'args' or 'command')")
        tool = r.choice(m["workload"], join(path, "workload"), workloads.WORKLOADS)
        if "args" in m and "command" in m:
            raise self.fail(m["command"], join(path, "command"), "give 'args' or 'command', not both")
        try:
            if "command" in m:
                command = r.text(m["command"], join(path, "command"), "a shell command")
                if tool not in command.split() and not any(w.endswith("/" + tool) for w in command.split()):
                    raise ValueError(f"the command does not run {tool}")
            else:
                args = r.text(m["args"], join(path, "args"), "the tool's arguments") if "args" in m else ""
                command = workloads.command(tool, args)
            workloads.with_run("", command)
        except ValueError as exc:
            key = "command" if "command" in m else "args" if "args" in m else "workload"
            raise self.fail(m[key], join(path, key), str(exc)) from None
        name = r.name(m["name"], join(path, "name"), "a benchmark name", PLATFORM_NAME_RE) if "name" in m else tool
        column = workloads.PRIMARY[tool]
        if "metric" in m:
            column = r.choice(m["metric"], join(path, "metric"), tuple(METRIC_COLUMNS))
        return Benchmark(name, tool, {}, METRIC_COLUMNS[column], command)

    def scenario(self, node: YNode, path: str, earlier: Sequence[Scenario],
                 bench_names: tuple[str, ...]) -> Scenario:
        r = self.r
        m = r.mapping(node, path, ("name", "description", "extends", "overlay", "sweep", "zip", "optional",
                                   "benchmarks"), ("name",), "a scenario (mapping)")
        name = r.string(m["name"], join(path, "name"), "a scenario name")
        if not SCENARIO_RE.match(name):
            raise self.fail(m["name"], join(path, "name"), f"invalid scenario name '{name}': use lowercase "
                            "letters, digits, '_', '.', '+' and '-', at most 48 characters")
        if any(s.name == name for s in earlier):
            raise self.fail(m["name"], join(path, "name"), f"duplicate scenario name '{name}'")
        overlays: list[dict[str, Any]] = []
        sweeps: list[Sweep] = []
        if "extends" in m:
            parent_name = r.string(m["extends"], join(path, "extends"), "a scenario name")
            parents = [s for s in earlier if s.name == parent_name]
            if not parents:
                raise self.fail(m["extends"], join(path, "extends"),
                                f"no earlier scenario named '{parent_name}'")
            overlays.extend(parents[0].overlays)
        if "overlay" in m:
            ov = m["overlay"]
            r.visit(ov, join(path, "overlay"))
            if not isinstance(ov, YMap):
                raise self.fail(ov, join(path, "overlay"), f"expected a mapping (a partial system config), "
                                                           f"got {describe(ov)}")
            plain = to_plain(ov)
            if "vms" in plain:
                absolute_files(plain["vms"], self.file.parent)
            overlays.append(plain)
        if "sweep" in m:
            sweeps = list(self.sweeps(m["sweep"], join(path, "sweep")))
        zipped = r.boolean(m["zip"], join(path, "zip")) if "zip" in m else False
        if zipped and len({len(s.values) for s in sweeps}) > 1:
            raise self.fail(m["zip"], join(path, "zip"), "zipped sweeps need lists of the same length")
        benches = bench_names
        if "benchmarks" in m:
            benches = r.each(m["benchmarks"], join(path, "benchmarks"),
                             lambda n, p: r.string(n, p, "a benchmark name"), "a list of benchmark names")
            for i, b in enumerate(benches):
                if b not in bench_names:
                    item = m["benchmarks"].items[i] if isinstance(m["benchmarks"], YList) else m["benchmarks"]
                    raise self.fail(item, f"{join(path, 'benchmarks')}[{i}]", f"no benchmark named '{b}'")
        return Scenario(
            name=name,
            description=r.string(m["description"], join(path, "description")).strip() if "description" in m else "",
            overlays=tuple(overlays), sweeps=tuple(sweeps), zip=zipped,
            optional=r.boolean(m["optional"], join(path, "optional")) if "optional" in m else False,
            benchmarks=tuple(benches),
        )

    def sweeps(self, node: YNode, path: str) -> list[Sweep]:
        r = self.r
        found: list[Sweep] = []
        if isinstance(node, YMap):
            r.visit(node, path)
            for key_node, values in node.items:
                kp = join(path, key_node.raw)
                found.append(Sweep(self.sweep_key(key_node, kp), key_node.raw.split(".")[-1],
                                   self.sweep_values(values, kp)))
        else:
            for i, item in enumerate(r.seq(node, path, "a sweep (mapping key: [values], or a list)")):
                ip = f"{path}[{i}]"
                sm = r.mapping(item, ip, ("key", "values", "label"), ("key", "values"),
                               "a sweep item {key, values, label}")
                key = r.string(sm["key"], join(ip, "key"), "a dotted config key")
                self.sweep_key(sm["key"], join(ip, "key"))
                label = key.split(".")[-1]
                if "label" in sm:
                    label = r.string(sm["label"], join(ip, "label"), "a column name")
                found.append(Sweep(key, label, self.sweep_values(sm["values"], join(ip, "values"))))
        if not found:
            raise self.fail(node, path, "a sweep needs at least one key")
        for s, other in itertools.combinations(found, 2):
            if s.label == other.label:
                raise self.fail(node, path, f"two sweep keys have the same label '{s.label}'; "
                                            "use the list form with 'label:'")
        for s in found:
            if not LABEL_RE.match(s.label) or s.label in RESERVED_COLUMNS:
                raise self.fail(node, path, f"invalid sweep label '{s.label}' (a column name: letters, digits "
                                            "and '_', not one of the fixed columns)")
        return found

    def sweep_key(self, node: YNode | YScalar, path: str) -> str:
        key = node.raw if isinstance(node, YScalar) else ""
        if not key or any(not part for part in key.split(".")):
            raise self.fail(node, path, f"invalid sweep key '{key}': a dotted path such as "
                                        "vms.interf.params.size")
        return key

    def sweep_values(self, node: YNode, path: str) -> tuple[Any, ...]:
        items = self.r.seq(node, path, "a list of values")
        if not items:
            raise self.fail(node, path, "a sweep needs at least one value")
        return tuple(to_plain(v) for v in items)

    def plot(self, node: YNode, path: str, scenarios: Sequence[Scenario]) -> PlotSpec:
        r = self.r
        m = r.mapping(node, path, ("kind", "title", "scenario", "scenarios", "x", "y", "assigned", "per_cpu",
                                   "logx", "reproduces", "comparable", "relative_to", "assigned_power", "lines",
                                   "published", "logy", "name", "tolerance", "assigned_label"), ("kind",),
                      "a plot (mapping)")
        kind = r.choice(m["kind"], join(path, "kind"), PLOT_KINDS)
        names = [s.name for s in scenarios]
        chosen: tuple[str, ...] = ()
        if "scenarios" in m:
            chosen = r.each(m["scenarios"], join(path, "scenarios"),
                            lambda n, p: r.string(n, p, "a scenario name"), "a list of scenario names")
        if "scenario" in m:
            chosen = (r.string(m["scenario"], join(path, "scenario"), "a scenario name"),)
        for c in chosen:
            if c not in names:
                raise self.fail(m.get("scenario", m.get("scenarios", node)), path, f"no scenario named '{c}'")
        x = r.string(m["x"], join(path, "x"), "a sweep label") if "x" in m else ""
        y = r.choice(m["y"], join(path, "y"), tuple(METRIC_COLUMNS)) if "y" in m else ""
        if kind != "slowdown":
            if len(chosen) != 1:
                raise self.fail(node, path, f"a '{kind}' plot needs 'scenario:' (one swept scenario)")
            scen = next(s for s in scenarios if s.name == chosen[0])
            labels = [s.label for s in scen.sweeps]
            if not labels:
                raise self.fail(node, path, f"scenario '{scen.name}' has no sweep to plot against")
            if not x:
                x = labels[0]
            if x not in labels:
                raise self.fail(m.get("x", node), join(path, "x"),
                                f"scenario '{scen.name}' sweeps {', '.join(labels)}, not '{x}'")
            if kind == "consumed" and not y:
                y = "mbps"
        assigned = self.number(m["assigned"], join(path, "assigned"), "a number (MB/s per unit of x)") \
            if "assigned" in m else None
        relative_to = ""
        if "relative_to" in m:
            relative_to = r.string(m["relative_to"], join(path, "relative_to"), "a scenario name")
            if relative_to not in names:
                raise self.fail(m["relative_to"], join(path, "relative_to"), f"no scenario named '{relative_to}'")
        lines = r.each(m["lines"], join(path, "lines"), self.ref_line, "a list of {y, label}") \
            if "lines" in m else ()
        published = r.each(m["published"], join(path, "published"), self.published, "a list of published series") \
            if "published" in m else ()
        name = ""
        if "name" in m:
            name = r.string(m["name"], join(path, "name"), "a file stem")
            if not SCENARIO_RE.match(name):
                raise self.fail(m["name"], join(path, "name"), f"invalid figure name '{name}'")
        default_title = {
            "slowdown": "Slowdown relative to the baseline",
            "consumed": f"Consumed bandwidth ({y}) versus {x}",
            "overhead": f"Overhead versus {x}",
        }[kind]
        return PlotSpec(
            kind=kind,
            title=r.text(m["title"], join(path, "title")) if "title" in m else default_title,
            scenarios=chosen, x=x, y=y, assigned=assigned,
            per_cpu=r.boolean(m["per_cpu"], join(path, "per_cpu")) if "per_cpu" in m else False,
            logx=r.boolean(m["logx"], join(path, "logx")) if "logx" in m else False,
            reproduces=" ".join(r.text(m["reproduces"], join(path, "reproduces")).split())
            if "reproduces" in m else "",
            comparable=" ".join(r.text(m["comparable"], join(path, "comparable")).split())
            if "comparable" in m else "",
            relative_to=relative_to,
            assigned_power=self.number(m["assigned_power"], join(path, "assigned_power"), "an exponent")
            if "assigned_power" in m else 1.0,
            lines=lines, published=published,
            logy=r.boolean(m["logy"], join(path, "logy")) if "logy" in m else None,
            name=name,
            assigned_label=r.text(m["assigned_label"], join(path, "assigned_label"))
            if "assigned_label" in m else "",
            tolerance=self.number(m["tolerance"], join(path, "tolerance"), "a fraction (0-1)")
            if "tolerance" in m else 0.0,
        )

    def ref_line(self, node: YNode, path: str) -> RefLine:
        m = self.r.mapping(node, path, ("y", "label", "kind"), ("y", "label"), "a reference line {y, label, kind}")
        return RefLine(self.number(m["y"], join(path, "y"), "a number"),
                       self.r.text(m["label"], join(path, "label")),
                       self.r.choice(m["kind"], join(path, "kind"), ("budget", "guarantee")) if "kind" in m
                       else "budget")

    def published(self, node: YNode, path: str) -> Published:
        r = self.r
        m = r.mapping(node, path, ("label", "source", "points", "benchmark"), ("label", "source", "points"),
                      "published values {label, source, points, benchmark}")
        points = []
        for i, pn in enumerate(r.seq(m["points"], join(path, "points"), "a list of [x, value] pairs")):
            pp = f"{join(path, 'points')}[{i}]"
            pair = r.seq(pn, pp, "an [x, value] pair")
            if len(pair) != 2 or not isinstance(pair[0], YScalar):
                raise self.fail(pn, pp, "expected an [x, value] pair")
            points.append((pair[0].value, self.number(pair[1], pp, "a published value")))
        return Published(r.text(m["label"], join(path, "label")), " ".join(r.text(m["source"],
                         join(path, "source")).split()), tuple(points),
                         r.string(m["benchmark"], join(path, "benchmark")) if "benchmark" in m else "")


# Columns of results.csv that a sweep label may not take.
RESERVED_COLUMNS = frozenset({
    "run", "scenario", "variant", "benchmark", "guest", "repetition", "status", "metric", "value",
    "unit", "wall_s", "config", "config_hash", "platform", "icount", "bulkhead_version", "git_rev",
    "qemu_version", "host", "error",
}) | frozenset(METRIC_COLUMNS)


def default_plots(scenarios: Sequence[Scenario]) -> tuple[PlotSpec, ...]:
    """Without ``plots:``: the slowdown chart and an overhead chart per swept scenario."""
    plots = [PlotSpec("slowdown", "Slowdown relative to the baseline", (), "", "", None, False, False)]
    for s in scenarios:
        if s.sweeps:
            x = s.sweeps[0].label
            plots.append(PlotSpec("overhead", f"{s.name}: slowdown versus {x}", (s.name,), x, "", None,
                                  False, False))
    return tuple(plots)
