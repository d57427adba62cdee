# SPDX-License-Identifier: Apache-2.0
"""The hypervisor's C layering (#26 item 1, docs/ARCHITECTURE.md "Layers").

The layers, lowest first: ``lib`` < ``arch`` and ``drivers`` < ``core`` <
``isolation`` < ``platform`` < ``main.c``. Two graphs between the files of
``hypervisor/`` are built and checked, and a third read from the sources:

- includes: every ``#include "..."`` of every ``.c``/``.h`` file;
- calls: every ``.c`` file is compiled with the cross compiler through the
  hypervisor's own Makefile (each GIC version, every driver and board, so
  the flags are the build's), and ``nm`` gives what each object defines and
  what it leaves undefined. An undefined symbol that another object defines
  as a function is a call from one file to the other. (Shared data such as
  ``vms[]`` is not a call, and header inlines are covered by the includes.)
- seams: every registration (a call of a function whose parameter is a
  function pointer or an operations table, with a function or table of the
  tree as argument) and every operations table a file defines: the file
  whose code is installed depends on the interface's header, whoever
  installs it (#38 item 4).

The tests fail on a cycle between ``.c`` files in the call graph, a cycle in
the include graph, and any call or include from a layer into a higher one;
and on a cycle between the core's subsystems (``core/<dir>``) over includes,
calls and seams, or a subsystem header whose "Calls:" line is not exactly
what the subsystem uses. The assembly entry points (``boot.S``, ``vectors.S`` jumping to
``hyp_cpu_main`` and ``trap_*``) are the documented exception and are not
read. A planted cycle, a planted upward call and a planted seam and include
between subsystems in a copy of the tree prove the checks can fail.
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
# the GICv2 build also has the lock-rank check (make DEBUG=1, lib/spinlock.h) built in
DEBUG = {2: 1, 3: 0}
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
                          f"GIC={gic}", f"DEBUG={DEBUG[gic]}", *map(str, objs.values())],
                         capture_output=True, text=True)
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


# --- subsystems and registration seams (#38 item 4) ---------------------------

COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
FN_TYPEDEF_RE = re.compile(r"typedef\s[^;(]*\(\s*\*\s*(\w+)\s*\)\s*\(")
STRUCT_RE = re.compile(r"\bstruct\s+(\w+)\s*\{([^{}]*)\}", re.S)
PROTO_RE = re.compile(r"^[\w \t*]*?\b(\w+)\s*\(([^;{}]*)\)\s*;", re.M)
TYPEDEF_RE = re.compile(r"^\s*typedef[^;]*;", re.M)
TABLE_RE = re.compile(r"^(?:static\s+)?(?:const\s+)?struct\s+(\w+)\s+(\w+)(?:\[\w*\])?\s*=\s*\{", re.M)
CALLS_RE = re.compile(r"\bCalls:\s*(.*?)\.(?:\s|$)", re.S)


def subsystem(rel: str) -> str:
    """``core/<dir>`` for the core's subsystems, the layer for the rest."""
    parts = rel.split("/")
    return "/".join(parts[:2]) if parts[0] == "core" and len(parts) > 2 else parts[0]


def code(path: Path) -> str:
    return COMMENT_RE.sub(" ", path.read_text())


def interfaces(src: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The registration interfaces the headers declare: (function taking a
    callback -> its header, struct with function-pointer members -> its
    header). A callback parameter is a function pointer, a typedef'd one, or
    a pointer to such a struct (an operations table)."""
    headers = {h: code(src / h) for h in sources(src, (".h",))}
    fn_types = {t for text in headers.values() for t in FN_TYPEDEF_RE.findall(text)}
    ops = {name: h for h, text in headers.items() for name, body in STRUCT_RE.findall(text)
           if "(*" in body.replace(" ", "")}
    callback = re.compile(r"\(\s*\*|\b(?:%s)\b" % "|".join(
        [*map(re.escape, sorted(fn_types)), *(rf"struct\s+{re.escape(s)}\s*\*" for s in sorted(ops))]))
    decls = {h: STRUCT_RE.sub(" ", TYPEDEF_RE.sub(" ", text)) for h, text in headers.items()}
    registrars = {name: h for h, text in decls.items() for name, params in PROTO_RE.findall(text)
                  if callback.search(params)}
    return registrars, ops


def call_args(text: str, start: int) -> list[str]:
    """The top-level arguments of the call whose '(' is at ``start``."""
    depth, cur = 0, ""
    args: list[str] = []
    for ch in text[start:]:
        if ch == "(":
            depth += 1
            if depth == 1:
                continue
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return [*args, cur.strip()]
        elif ch == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    return []


def seams(src: Path, objects: Iterable[Mapping[str, Path]]) -> set[tuple[str, str, str]]:
    """The registration seams: (file whose function or table is installed,
    the interface's header, the registrar or struct) for every call of a
    registration function with a function or table of the tree as an
    argument, and every operations table (a struct with function pointers)
    a file defines. The installed code calls nothing here, but it is written
    against the interface and runs when the interface's side calls it: its
    file depends on the header, whoever does the installing."""
    registrars, ops = interfaces(src)
    owner: dict[str, str] = {}  # global symbol -> file
    local: dict[str, set[str]] = {}  # file -> its static symbols
    for objs in objects:
        for f, obj in objs.items():
            out = subprocess.run([NM, str(obj)], capture_output=True, text=True, check=True).stdout
            for kind, name in (line.split()[1:] for line in out.splitlines() if len(line.split()) == 3):
                (local.setdefault(f, set()).add(name) if kind.islower() else owner.setdefault(name, f))
    found: set[tuple[str, str, str]] = set()
    call = re.compile(r"\b(%s)\s*\(" % "|".join(map(re.escape, sorted(registrars, key=len, reverse=True))))
    for f in sources(src):
        text = code(src / f)
        for struct, _ in TABLE_RE.findall(text):
            if struct in ops:
                found.add((f, ops[struct], f"struct {struct}"))
        for m in call.finditer(text):
            for arg in call_args(text, m.end() - 1):
                name = arg.lstrip("&").strip()
                where = f if name in local.get(f, ()) else owner.get(name)
                if re.fullmatch(r"\w+", name) and where is not None:
                    found.add((where, registrars[m.group(1)], m.group(1)))
    return found


def subsystem_graph(*file_graphs: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The file graphs merged and lifted to subsystems (no self-loops)."""
    edges: dict[str, set[str]] = {}
    for graph in file_graphs:
        for a, targets in graph.items():
            edges.setdefault(subsystem(a), set())
            for b in targets:
                edges.setdefault(subsystem(b), set())
                if subsystem(a) != subsystem(b):
                    edges[subsystem(a)].add(subsystem(b))
    return edges


def seam_graph(found: Iterable[tuple[str, str, str]]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for f, header, _ in found:
        edges.setdefault(f, set()).add(header)
    return edges


def stated_calls(src: Path) -> dict[str, set[str]]:
    """Each core subsystem's "Calls:" line, in its one header that has one."""
    stated: dict[str, set[str]] = {}
    for h in sources(src, (".h",)):
        text = re.sub(r"\n\s*\*", " ", (src / h).read_text())  # comment lines joined
        if h.startswith("core/") and (m := CALLS_RE.search(text)):
            assert subsystem(h) not in stated, f"{h}: a second Calls: line for {subsystem(h)}"
            stated[subsystem(h)] = {n.strip() for n in m.group(1).split(",") if n.strip()}
    return stated


def core_subsystems(src: Path) -> list[str]:
    return sorted({subsystem(f) for f in sources(src, (".c", ".h", ".S")) if f.startswith("core/")})


def tree_graph(src: Path, objects: list[dict[str, Path]]) -> dict[str, set[str]]:
    """Subsystem -> the subsystems it uses: includes, calls and seams."""
    return subsystem_graph(include_graph(src), call_graph(objects), seam_graph(seams(src, objects)))


@pytest.fixture(scope="module")
def graph(objects: list[dict[str, Path]]) -> dict[str, set[str]]:
    return tree_graph(HYP, objects)


def test_core_is_made_of_subsystems() -> None:
    files = sources(HYP, (".c", ".h", ".S"))
    assert [f for f in files if f.startswith("core/") and f.count("/") != 2] == []  # no loose file
    assert len(core_subsystems(HYP)) >= 10


def test_every_driver_is_built(objects: list[dict[str, Path]]) -> None:
    """Every driver of every kind is compiled, so its calls are in the
    graphs; each SMMU driver is reached through its operations table, a
    seam the driver-neutral layer dispatches through."""
    drivers = {f for f in sources(HYP) if f.startswith("drivers/")}
    assert all(drivers <= set(objs) for objs in objects)
    found = seams(HYP, objects)
    for smmu in ("drivers/smmu/smmuv3.c", "drivers/smmu/smmu500.c"):
        assert (smmu, "drivers/iommu.h", "struct iommu_ops") in found


def test_registration_seams_are_read(objects: list[dict[str, Path]]) -> None:
    found = {(f, what) for f, _, what in seams(HYP, objects)}
    assert len(found) >= 30
    assert ("core/console/vuart.c", "console_set_input_sink") in found  # a registration call
    assert ("core/vcpu/irq_emul.c", "struct vcpu_delivery") in found  # an operations table
    assert ("core/dma/dma.c", "iommu_init") in found  # installed by main.c
    assert ("isolation/bw.c", "vcpu_set_stall_hook") in found


def test_subsystems_have_no_cycle(graph: dict[str, set[str]]) -> None:
    assert {"core/vm", "core/vgic", "core/vcpu"} <= set(graph) and "core/vm" in graph["core/vgic"]
    assert cycles(graph) == []


def test_each_subsystem_states_what_it_calls(graph: dict[str, set[str]]) -> None:
    """Each core subsystem has one header whose "Calls:" line lists exactly
    the subsystems and layers it uses (docs/ARCHITECTURE.md "Core")."""
    stated = stated_calls(HYP)
    assert sorted(stated) == core_subsystems(HYP)
    assert {s: sorted(graph[s] ^ stated[s]) for s in stated if graph[s] != stated[s]} == {}


def test_a_planted_subsystem_cycle_fails(objects: list[dict[str, Path]], tmp_path: Path) -> None:
    """A VM-object function installed as a console command by the lifecycle
    (neither file calls or includes the other's subsystem wrongly: only the
    seam shows that the console would call into the VM objects, which it
    sits on; core/vm's Calls: line no longer says what it uses), and an
    include from the VM objects up into the trap handlers."""
    src = tmp_path / "hypervisor"
    shutil.copytree(HYP, src)
    plant(src, "core/vm/mmio.c", "\nvoid planted_cmd(void);\nvoid planted_cmd(void)\n{\n}\n")
    plant(src, "core/lifecycle/vm_lifecycle.c",
          "\nvoid planted_cmd(void);\nvoid planted_wire(void);\nvoid planted_wire(void)\n{\n"
          "\tconsole_register_command('x', planted_cmd);\n}\n")
    changed = ["core/vm/mmio.c", "core/lifecycle/vm_lifecycle.c"]
    planted = [{**objs, **build_objects(src, tmp_path / f"gic{gic}", changed, gic)}
               for gic, objs in zip(sorted(CONFIGS), objects, strict=True)]
    assert cycles(subsystem_graph(include_graph(src), call_graph(planted))) == []
    graph = tree_graph(src, planted)
    assert any({"core/console", "core/vm"} <= set(c) for c in cycles(graph))
    assert graph["core/vm"] - stated_calls(src)["core/vm"] == {"core/console"}  # its Calls: line is stale
    plant(src, "core/vm/vm.h", '#include "core/trap/hypercall.h"\n')
    assert any({"core/trap", "core/vm"} <= set(c) for c in cycles(subsystem_graph(include_graph(src))))
