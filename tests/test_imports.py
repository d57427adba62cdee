# SPDX-License-Identifier: Apache-2.0
"""The toolchain's layout is its pipeline (#16, docs/ARCHITECTURE.md).

``bulkhead/`` is one subpackage per stage, in the order ``bulkhead.STAGES``
declares; the CLI (``bulkhead.cli``, ``bulkhead.__main__``) sits on top. The
import graph is read from the source (ast): every ``import``, including those
inside functions and under ``if TYPE_CHECKING:``, is an edge. The tests fail on
a module outside the stage packages, an import from a stage into a later
one, and any cycle between modules; and every module must import on its own
in a fresh interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import bulkhead

PKG = Path(bulkhead.__file__).resolve().parent
TOP = ("bulkhead.cli", "bulkhead.__main__")


def modules(pkg: Path) -> dict[str, Path]:
    """Dotted name -> file of every module below ``pkg`` (packages by their __init__)."""
    out = {}
    for path in sorted(pkg.rglob("*.py")):
        parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` imports (``from p import m``
    of a submodule ``m`` counts as importing ``p.m``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{a.name}" for a in node.names)
    return {m for m in found if m in known and m != name}


def graph(pkg: Path) -> dict[str, set[str]]:
    mods = modules(pkg)
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), and self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1 or v in edges[v]:
                out.append(sorted(scc))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def stage_of(name: str, root: str, stages: tuple[str, ...]) -> int | None:
    """A module's stage index: the package root re-exports the base (0), the
    CLI is above every stage, the rest by their subpackage (None: none)."""
    if name == root:
        return 0
    if name in {f"{root}.cli", f"{root}.__main__"}:
        return len(stages)
    parts = name.split(".")
    if len(parts) >= 2 and parts[1] in stages:
        return stages.index(parts[1])
    return None


def backward(edges: dict[str, set[str]], root: str, stages: tuple[str, ...]) -> list[str]:
    """Every import of a module from a later stage than its own."""
    bad = []
    for m, deps in sorted(edges.items()):
        sm = stage_of(m, root, stages)
        for d in sorted(deps):
            sd = stage_of(d, root, stages)
            if sm is not None and sd is not None and sd > sm:
                bad.append(f"{m} ({stages[sm] if sm < len(stages) else 'cli'}) imports {d} ({stages[sd]})")
    return bad


def test_every_module_is_in_a_stage() -> None:
    assert bulkhead.STAGES[0] == "base"
    for stage in bulkhead.STAGES:
        assert (PKG / stage / "__init__.py").is_file(), stage
    outside = [m for m in graph(PKG) if stage_of(m, "bulkhead", bulkhead.STAGES) is None]
    assert outside == []


def test_no_import_from_a_later_stage() -> None:
    assert backward(graph(PKG), "bulkhead", bulkhead.STAGES) == []


def test_no_import_cycle() -> None:
    edges = graph(PKG)
    assert len(edges) > 30 and sum(map(len, edges.values())) > 80  # the graph was really read
    assert cycles(edges) == []


def test_the_checks_find_cycles_and_backward_imports(tmp_path: Path) -> None:
    """The checks themselves, on a small package that breaks both rules in
    the ways the toolchain did before #16 (a TYPE_CHECKING import closing a
    cycle, a lazy import inside a function, a relative import)."""
    pkg = tmp_path / "toy"
    for d in ("", "base", "config", "layout"):
        (pkg / d).mkdir(exist_ok=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "base" / "errors.py").write_text("")
    (pkg / "config" / "schema.py").write_text("from toy.config import bandwidth\nfrom ..base import errors\n")
    (pkg / "config" / "bandwidth.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.layout.placement import System\n")
    (pkg / "layout" / "placement.py").write_text("from toy.config.schema import join\n")
    (pkg / "layout" / "report.py").write_text("def f() -> None:\n    from . import summary\n")
    (pkg / "layout" / "summary.py").write_text("import toy.layout.report\n")
    edges = graph(pkg)
    assert edges["toy.config.schema"] == {"toy.config", "toy.config.bandwidth", "toy.base", "toy.base.errors"}
    assert sorted(cycles(edges)) == [["toy.config.bandwidth", "toy.config.schema", "toy.layout.placement"],
                             ["toy.layout.report", "toy.layout.summary"]]
    assert backward(edges, "toy", ("base", "config", "layout")) == [
        "toy.config.bandwidth (config) imports toy.layout.placement (layout)"]


@pytest.mark.parametrize("stage", [*bulkhead.STAGES, "cli"])
def test_every_module_imports_alone_in_a_fresh_interpreter(stage: str) -> None:
    """One interpreter per module, so that no module works only because
    another one was imported first."""
    names = sorted(m for m in graph(PKG) if m != "bulkhead.__main__"
                   and stage_of(m, "bulkhead", bulkhead.STAGES) == (*bulkhead.STAGES, "cli").index(stage))
    assert names
    procs = {m: subprocess.Popen([sys.executable, "-c", f"import {m}"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT) for m in names}
    failed = {}
    for m, p in procs.items():
        out, _ = p.communicate(timeout=120)
        if p.returncode != 0:
            failed[m] = out.decode(errors="replace")[-2000:]
    assert failed == {}
