# SPDX-License-Identifier: Apache-2.0
"""The hypervisor's C layering (#26 item 1, docs/ARCHITECTURE.md "Layers").

The layers, lowest first: ``lib`` < ``arch`` and ``drivers`` < ``core`` <
``isolation`` < ``platform`` < ``main.c``. Two graphs between the files of
``hypervisor/`` are built and checked:

- includes: every ``#include "..."`` of every ``.c``/``.h`` file;
- calls: every ``.c`` file is compiled with the cross compiler through the
  hypervisor's own Makefile (each GIC version, every driver and board, so
  the flags are the build's), and ``nm`` gives what each object defines and
  what it leaves undefined. An undefined symbol that another object defines
  as a function is a call from one file to the other. (Shared data such as
  ``vms[]`` is not a call, and header inlines are covered by the includes.)

The tests fail on a cycle between ``.c`` files in the call graph, a cycle in
the include graph, and any call or include from a layer into a higher one.
The assembly entry points (``boot.S``, ``vectors.S`` jumping to
``hyp_cpu_main`` and ``trap_*``) are the documented exception and are not
read. A planted cycle and a planted upward call in a copy of the tree prove
the checks can fail.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from test_imports import cycles  # Tarjan's strongly connected components

ROOT = Path(__file__).resolve().parents[1]
HYP = ROOT / "hypervisor"
CONFIGS = {2: ROOT / "tests" / "golden" / "zynqmp.config.c", 3: ROOT / "tests" / "golden" / "hello.config.c"}
NM = "aarch64-linux-gnu-nm"
GCC = "aarch64-linux-gnu-gcc"

LAYERS = {"lib": 0, "arch": 1, "drivers": 1, "core": 2, "isolation": 3, "platform": 4, "main.c": 5}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FUNCTION_TYPES = set("TW")
ASM_ONLY = "arch/aarch64/asm_offsets.c"  # compiled to assembly only (the generated asm_offsets.h)  # nm: defined text (global or weak)

pytestmark = pytest.mark.skipif(shutil.which(GCC) is None or shutil.which(NM) is None,
                                reason="needs the aarch64-linux-gnu cross toolchain")


def layer(rel: str) -> int:
    return LAYERS[rel.split("/")[0]]


def sources(src: Path, suffixes: Iterable[str] = (".c",)) -> list[str]:
    return sorted(str(p.relative_to(src)) for s in suffixes for p in src.rglob(f"*{s}"))


def include_graph(src: Path) -> dict[str, set[str]]:
    """File -> the files of the tree it includes (paths relative to ``src``)."""
    files = sources(src, (".c", ".h"))
    known = set(files)
    return {f: {m for m in INCLUDE_RE.findall((src / f).read_text()) if m in known} for f in files}


def build_objects(src: Path, out: Path, files: Iterable[str], gic: int) -> dict[str, Path]:
    """Compiles ``files`` (``.c``, relative to ``src``) with the tree's Makefile
    for GIC version ``gic``; returns file -> object."""
    files = list(files)
    objs = {f: out / "obj" / f"{f}.o" for f in files}
    res = subprocess.run(["make", "-s", "-j2", "-C", str(src), f"O={out}", f"CONFIG_C={CONFIGS[gic]}",
                          f"GIC={gic}", *map(str, objs.values())], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    return objs


def symbols(obj: Path) -> tuple[set[str], set[str]]:
    """(functions ``obj`` defines, symbols it leaves undefined)."""
    out = subprocess.run([NM, str(obj)], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in FUNCTION_TYPES:
            defined.add(parts[2])
    return defined, undefined


def call_graph(objects: Iterable[Mapping[str, Path]]) -> dict[str, set[str]]:
    """File -> the files whose functions it calls, over every build in ``objects``."""
    edges: dict[str, set[str]] = {}
    for objs in objects:
        table = {f: symbols(o) for f, o in objs.items()}
        owner = {s: f for f, (defined, _) in table.items() for s in defined}
        for f, (_, undefined) in table.items():
            edges.setdefault(f, set()).update(owner[s] for s in undefined if s in owner and owner[s] != f)
    return edges


def upward(edges: Mapping[str, set[str]]) -> list[str]:
    return sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets if layer(b) > layer(a))


def tree_objects(src: Path, out: Path) -> list[dict[str, Path]]:
    """Every .c file of ``src`` compiled for each GIC version (every driver and
    board directory included, whatever a platform selects)."""
    files = [f for f in sources(src) if f != ASM_ONLY]
    return [build_objects(src, out / f"gic{gic}", files, gic) for gic in sorted(CONFIGS)]


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Path]]:
    # incremental across runs (the Makefile's dependencies)
    return tree_objects(HYP, ROOT / "build" / "c-layers")


def test_every_file_is_in_a_layer() -> None:
    files = sources(HYP, (".c", ".h", ".S"))
    assert [f for f in files if f.split("/")[0] not in LAYERS] == []


def test_includes_go_down_and_have_no_cycle() -> None:
    edges = include_graph(HYP)
    assert sum(map(len, edges.values())) > 200  # the graph was read
    assert upward(edges) == []
    assert cycles(edges) == []


def test_calls_go_down_and_have_no_cycle(objects: list[dict[str, Path]]) -> None:
    edges = call_graph(objects)
    # the graph was read
    assert "core/vcpu/vcpu.c" in edges["main.c"] and "lib/log.c" in edges["core/lifecycle/vm_lifecycle.c"]
    assert upward(edges) == []
    assert cycles(edges) == []


def plant(src: Path, rel: str, text: str) -> None:
    """Appends ``text`` to ``src/rel``."""
    path = src / rel
    path.write_text(path.read_text() + text)


def test_a_planted_cycle_and_upward_call_fail(objects: list[dict[str, Path]], tmp_path: Path) -> None:
    """The checks above on a copy of the tree with a call cycle between two
    core files and a call from lib into core."""
    src = tmp_path / "hypervisor"
    shutil.copytree(HYP, src)
    plant(src, "core/trap/fault.c", "\nvoid planted_b(void);\nvoid planted_a(void)\n{\n\tplanted_b();\n}\n")
    plant(src, "core/trap/dabt.c", "\nvoid planted_a(void);\nvoid planted_b(void)\n{\n\tplanted_a();\n}\n")
    plant(src, "lib/string.c", '\n#include "core/lifecycle/vm_lifecycle.h"\nvoid planted_up(void)\n{\n\tvm_init_all();\n}\n')
    changed = ["core/trap/fault.c", "core/trap/dabt.c", "lib/string.c"]
    planted = [{**objs, **build_objects(src, tmp_path / f"gic{gic}", changed, gic)}
               for gic, objs in zip(sorted(CONFIGS), objects, strict=True)]
    edges = call_graph(planted)
    assert ["core/trap/dabt.c", "core/trap/fault.c"] in cycles(edges)
    assert "lib/string.c -> core/lifecycle/vm_lifecycle.c" in upward(edges)
    assert "lib/string.c -> core/lifecycle/vm_lifecycle.h" in upward(include_graph(src))

