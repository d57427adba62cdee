# SPDX-License-Identifier: Apache-2.0
"""Every toolchain mechanism has the same shape (#38 item 5,
docs/ARCHITECTURE.md "Mechanisms"): one module of ``bulkhead/config/`` whose
``MECHANISM`` descriptor states every hook (parse, check, emit C, feature;
None when it has none) and its docs section, found by
``bulkhead.config.mechanisms``; and the pipeline's stages run whatever is
registered, so that a new mechanism is a new module and nothing else (the
last test adds one to a copy of the tree). Each check is shown to fail on a
toy mechanism that breaks it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_drivers import _copy_tree

import bulkhead
from bulkhead.base.csource import CSource, Field
from bulkhead.base.errors import ConfigError, Diagnostic
from bulkhead.config import mechanisms, schema
from bulkhead.config.mechanism import HOOKS, Keys, Mechanism, Need, SystemView, VmView
from bulkhead.config.model import PAGE, Platform, Range, SystemSpec, VmSpec
from bulkhead.config.reader import Reader
from bulkhead.generate import features, gen_c
from bulkhead.layout import load

PKG = Path(bulkhead.__file__).resolve().parent
ROOT = PKG.parent
DOCS = ROOT / "docs"


def slug(heading: str) -> str:
    """The anchor a Markdown heading gets (GitHub's rule)."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-")


def problems(m: object, root: Path = ROOT) -> list[str]:
    """How ``m`` differs from the mechanism shape."""
    if not isinstance(m, Mechanism):
        return [f"{m!r}: not a Mechanism"]
    out = []
    for hook in HOOKS:
        value = getattr(m, hook)
        if value is not None and not callable(value):
            out.append(f"{m.name}: {hook} is neither a function nor None")
    page, _, section = m.docs.partition("#")
    path = root / page
    if not page.startswith("docs/") or not path.is_file():
        out.append(f"{m.name}: docs page {page} does not exist")
    elif section and section not in {slug(h) for h in re.findall(r"^#+ (.+)$", path.read_text(), re.M)}:
        out.append(f"{m.name}: {page} has no section #{section}")
    return out


def test_every_mechanism_states_every_hook_and_its_docs_section() -> None:
    # a descriptor cannot leave a hook out: the dataclass has no defaults
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
               for f in dataclasses.fields(Mechanism))
    assert set(HOOKS) <= {f.name for f in dataclasses.fields(Mechanism)}
    assert [p for m in mechanisms.registered() for p in problems(m)] == []
    names = [m.name for m in mechanisms.registered()]
    assert len(names) == len(set(names)) >= 8
    assert names[:4] == ["coloring", "shared_io", "shared_disk", "pci"] and names[-1] == "dsu"  # the rank order
    for m in mechanisms.registered():  # each is its module's
        module = __import__(f"bulkhead.config.{m.name}", fromlist=["MECHANISM"])
        assert module.MECHANISM is m


def test_the_registry_finds_every_mechanism_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert sorted(m.name for m in mechanisms.registered()) == mechanisms.declared(PKG / "config")
    ranks = [m.rank for m in mechanisms.registered()]
    assert ranks == sorted(set(ranks))
    monkeypatch.setattr(mechanisms, "declared", lambda: ["coloring", "schema"])  # schema assigns none
    mechanisms.registered.cache_clear()
    try:
        with pytest.raises(TypeError, match="bulkhead/config/schema: MECHANISM must be the Mechanism 'schema'"):
            mechanisms.registered()
    finally:
        monkeypatch.undo()
        mechanisms.registered.cache_clear()
    (tmp_path / "good.py").write_text("MECHANISM = Mechanism(...)\n")
    (tmp_path / "typed.py").write_text("MECHANISM: Mechanism = Mechanism(...)\n")
    (tmp_path / "other.py").write_text("def f() -> None:\n    MECHANISM = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("MECHANISM = Mechanism(...)\n")
    assert mechanisms.declared(tmp_path) == ["good", "pkg", "typed"]


def test_the_shape_checks_find_a_broken_mechanism(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "toy.md").write_text("# Toy\n\n## Way groups (DSU)\n")
    good = dataclasses.replace(mechanisms.registered()[0], name="toy", docs="docs/toy.md#way-groups-dsu")
    assert problems(good, tmp_path) == []
    assert problems(dataclasses.replace(good, docs="docs/toy.md#nowhere"), tmp_path) == \
        ["toy: docs/toy.md has no section #nowhere"]
    assert problems(dataclasses.replace(good, docs="docs/none.md", check="yes"), tmp_path) == [  # type: ignore[arg-type]
        "toy: check is neither a function nor None", "toy: docs page docs/none.md does not exist"]
    assert problems("coloring") == ["'coloring': not a Mechanism"]


def test_features_and_keys_are_each_one_mechanisms() -> None:
    """The features the mechanisms decide are the Makefile's, each decided by
    one; a key belongs to the schema or to one mechanism."""
    decided = mechanisms.features()
    assert len(decided) == len(set(decided)) >= 8
    files = [s for f in decided for s in mechanisms.sources(f)]
    assert len(files) == len(set(files)), "a C file of two features"
    for part, core in (("platform", schema.CORE_PLATFORM_KEYS), ("system", schema.CORE_SYSTEM_KEYS),
                       ("vm", schema.CORE_VM_KEYS)):
        owned = [k for m in mechanisms.registered()
                 for k in (m.platform_keys if part == "platform" else m.system_keys if part == "system" else m.vm_keys)]
        assert len(owned) == len(set(owned)), part
        assert not set(owned) & set(core), part
        assert schema.keys(part) == (*core, *owned)  # type: ignore[arg-type]


def test_the_makefile_names_no_mechanism() -> None:
    """The Makefile's selection of what to build lists no mechanism's
    feature or C file (the descriptors do, features.mk brings them): only
    the ITS, GICv3's, which a GICv2 build leaves out with the GICv3 virtual
    front end. (Which files are built for size, COLD, is another matter.)"""
    makefile = (ROOT / "hypervisor" / "Makefile").read_text()
    makefile = makefile[:makefile.index("\nCOLD := ")]
    code = "\n".join(line for line in makefile.splitlines() if not line.lstrip().startswith("#"))
    named = {f for f in mechanisms.features() if re.search(rf"\b{f}\b", code)}
    assert named == {"ITS"}
    assert [s for f in mechanisms.features() for s in mechanisms.sources(f) if s in code] == ["drivers/gic/gicv3_its.c"]
    with pytest.raises(ValueError, match="NONE: no mechanism decides it"):
        mechanisms.sources("NONE")
    with pytest.raises(ValueError, match=r"BW: isolation/\S+ names no file under .*/nowhere"):
        mechanisms.sources("BW", ROOT / "nowhere")


CONFIG = """platform: qemu-virt
vms:
  - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], guest: hello, toy: 3}
"""


def test_a_mechanism_reaches_every_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A toy mechanism, registered and nothing else: its VM key is read, its
    check's warning reported, its parameter given to the guest, its tables,
    flag and members written to config.c and its feature asked for, with no
    edit to the schema, the checks, the layout or gen_c."""
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG)
    with pytest.raises(ConfigError, match="unknown key 'toy'"):
        load.load_system(path, guest_sources=None)
    seen: dict[str, int] = {}

    def parse_vm(r: Reader, m: Keys, vm: VmSpec, p: Platform) -> VmSpec:
        if "toy" in m:
            seen[vm.name] = r.integer(m["toy"], f"{vm.path}.toy", "a toy number", 0, 9)
        return vm

    def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
        return [], [s.locs.diag(f"{vm.path}.toy", "a toy") for vm in s.vms if vm.name in seen]

    def emit_tables(out: CSource, system: SystemView) -> None:
        out.line("static const u32 toy_table[] = { 7 };")

    def guest_params(p: Platform, vm: VmSpec) -> list[tuple[str, str]]:
        return [("toy", str(seen[vm.name]))] if vm.name in seen else []

    def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
        return [("flags", "CFG_VM_TOY"), ("toy", str(seen[vm.name]))] if vm.name in seen else []

    def emit_system(out: CSource, system: SystemView) -> list[Field]:
        return [("toy_table", "toy_table")]

    def needs(system: SystemView) -> list[Need]:
        return [Need("TOY", f"vm {vm.name}", "plays") for vm in system.vms if vm.name in seen]

    toy = Mechanism(name="toy", rank=90, docs="docs/ARCHITECTURE.md", features={"TOY": ()}, platform_keys=(),
                    system_keys=(), vm_keys=("toy",), region_keys=(), device_keys=(), parse_platform=None,
                    parse_system=None, parse_vm=parse_vm, parse_region=None, check_device=None, parse_device=None,
                    check_platform=None, check=check, ipa_items=None,
                    reserved_ram=None, guest_params=guest_params, limits=(), emit_platform=None,
                    emit_tables=emit_tables, emit_vm=emit_vm, emit_system=emit_system, needs=needs)
    every = mechanisms.registered()
    monkeypatch.setattr(mechanisms, "registered", lambda: (*every, toy))
    system = load.load_system(path, guest_sources=None)
    assert seen == {"a": 3}
    vm = system.vm("a")
    assert vm is not None and vm.params_text == "vm=a\ntoy=3\n"
    assert [str(w).split(": ", 2)[-1] for w in system.warnings] == ["a toy"]
    text = gen_c.generate(system, (), "c.yaml")
    assert "static const u32 toy_table[] = { 7 };" in text
    vms = text[text.index("struct cfg_vm vms[]"):]
    assert "\t\t.flags = CFG_VM_TOY,\n" in vms and "\t\t.toy = 3,\n" in vms
    assert "\t.toy_table = toy_table,\n};" in vms
    assert [n.error() for n in features.needs(system) if n.feature == "TOY"] == [
        "vm a plays, and this build leaves it out (TOY=0 in features.h)"]
    # its IPA ranges are checked with the VM's own
    clash = dataclasses.replace(toy, ipa_items=lambda s, vm: [("the toy window", Range(0x40000000, PAGE), vm.path)])
    monkeypatch.setattr(mechanisms, "registered", lambda: (*every, clash))
    with pytest.raises(ConfigError, match=r"the toy window at IPA .* collides with memory\[0\]"):
        load.load_system(path, guest_sources=None)


TOY_MODULE = """\
# SPDX-License-Identifier: Apache-2.0
\"\"\"A toy mechanism (tests/test_mechanisms.py): a VM key, a region key, a platform member and
its C file, built when a region is tagged (its members are not C's: the build leaves them out).\"\"\"

from __future__ import annotations

from bulkhead.base.csource import CSource, Field
from bulkhead.config.mechanism import AddToVm, Keys, Mechanism, Need, Region, SystemView, VmView
from bulkhead.config.model import Platform, VmSpec
from bulkhead.config.reader import Reader

SEEN: dict[str, int] = {}
TAGGED: list[str] = []
BUSES: list[tuple[str, str, int]] = []


def parse_vm(r: Reader, m: Keys, vm: VmSpec, p: Platform) -> VmSpec:
    if "toy" in m:
        SEEN[vm.name] = r.integer(m["toy"], f"{vm.path}.toy", "a toy number", 0, 9)
    return vm


def parse_region(r: Reader, m: Keys, region: Region) -> Region:
    if "toy_tag" in m:
        TAGGED.append(region.path)
    return region


def parse_device(r: Reader, m: Keys, name: str, path: str) -> AddToVm:
    if "toy_bus" in m:
        BUSES.append((name, path, r.integer(m["toy_bus"], f"{path}.toy_bus", "a bus", 0, 9)))
    return lambda vm: vm


def emit_platform(out: CSource, p: Platform) -> list[Field]:
    if not BUSES:
        return []
    out.line("static const u32 toy_platform[] = { 1 };")
    return [("toy", "toy_platform")]


def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
    return [("toy", str(SEEN[vm.name]))] if vm.name in SEEN else []


def needs(system: SystemView) -> list[Need]:
    return [Need("TOY", "the configuration", "tags a region (toy_tag)")] if TAGGED else []


MECHANISM = Mechanism(
    name="toy", rank=45, docs="docs/ARCHITECTURE.md", features={"TOY": ("isolation/toy*.c",)},
    platform_keys=(), system_keys=(), vm_keys=("toy",), region_keys=("toy_tag",), device_keys=("toy_bus",),
    parse_platform=None, parse_system=None, parse_vm=parse_vm, parse_region=parse_region,
    check_device=None, parse_device=parse_device,
    check_platform=None, check=None, ipa_items=None, reserved_ram=None, guest_params=None,
    limits=(), emit_platform=emit_platform, emit_tables=None, emit_vm=emit_vm, emit_system=None, needs=needs,
)
"""

TOY_C = """\
/* SPDX-License-Identifier: Apache-2.0 */
/* The toy mechanism's C (tests/test_mechanisms.py): built when a region is tagged. */
#include "lib/features.h"
#include "lib/types.h"

u32 toy_plays(u32 turn);

u32 toy_plays(u32 turn)
{
	return IS_ENABLED(TOY) ? turn + 1 : 0;
}
"""

TOY_RUN = """\
import sys
from bulkhead.config import mechanisms
from bulkhead.config import toy
from bulkhead.generate import gen_c
from bulkhead.layout import load
print([m.name for m in mechanisms.registered()])
print(gen_c.generate(load.load_system(sys.argv[1], guest_sources=None), (), "c.yaml"))
print(toy.TAGGED, toy.BUSES)
"""


def test_a_new_mechanism_is_only_a_new_module(tmp_path: Path) -> None:
    """A copy of the tree gains bulkhead/config/toy.py and
    hypervisor/isolation/toy.c and nothing else: its VM, region and device
    keys are read, its platform and VM members written, in its rank's place;
    a build whose configuration tags a region compiles and links toy.c, one
    without TOY leaves it out; and no tracked file changed."""
    copy = tmp_path / "tree"
    _copy_tree(copy)
    (copy / "bulkhead/config/toy.py").write_text(TOY_MODULE)
    (copy / "hypervisor/isolation/toy.c").write_text(TOY_C)
    config = tmp_path / "c.yaml"
    config.write_text("platform: qemu-virt\nvms:\n  - {name: a, cpus: [0], guest: hello, toy: 3, "
                      "memory: [{ipa: 0x40000000, size: 16M, toy_tag: 1}], devices: [{name: rtc, toy_bus: 2}]}\n")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    run = subprocess.run([sys.executable, "-c", TOY_RUN, str(config)], cwd=tmp_path, capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    names, text = run.stdout.split("\n", 1)
    assert names == str([*(m.name for m in mechanisms.registered() if m.rank < 45), "toy",
                         *(m.name for m in mechanisms.registered() if m.rank > 45)])
    assert "static const u32 toy_platform[] = { 1 };" in text and "\t.toy = toy_platform,\n};" in text
    assert "\t\t.toy = 3,\n" in text[text.index("struct cfg_vm vms[]"):]
    assert "#if !IS_ENABLED(TOY)\n#error \"the configuration tags a region (toy_tag), and this build" in text
    assert text.rstrip().endswith("['vms[0].memory[0]'] [('rtc', 'vms[0].devices[0]', 2)]")
    _build_plays_and_not(copy, tmp_path, env)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=copy,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert [line for line in status if "__pycache__" not in line] == [
        "?? bulkhead/config/toy.py", "?? hypervisor/isolation/toy.c"]


# the features of a toy build turned off, and the make that would build it then
TOY_OFF = """\
import json, sys
from pathlib import Path
from bulkhead.generate import build, features, gen_c
from bulkhead.layout import load
out = Path(sys.argv[2])
system = load.load_system(sys.argv[1], guest_sources=None)
fragment = build.write_features(out, {**features.contents(system), "TOY": False}, "toy off")
(out / "config.c").write_text(gen_c.generate(system, (), "c.yaml"))
print(json.dumps([a for a in build.hypervisor_make_args(system, out) if not a.startswith(("O=", "FEATURES_MK=",
                  "PAYLOAD="))] + [f"O={out / 'hyp'}", f"FEATURES_MK={fragment}"]))
"""


def _build_plays_and_not(copy: Path, tmp_path: Path, env: dict[str, str]) -> None:
    """``bulkhead build`` of a configuration that tags a region: toy.c
    compiled and linked (the object directory, the link map); the make of
    the same configuration with TOY off (make -n): neither."""
    (tmp_path / "guest.bin").write_bytes(bytes(4096))
    config = tmp_path / "plays.yaml"
    config.write_text("platform: qemu-virt\nvms:\n  - {name: a, cpus: [0], image: guest.bin, "
                      "memory: [{ipa: 0x40000000, size: 16M, toy_tag: 1}]}\n")
    run = subprocess.run([sys.executable, "-m", "bulkhead", "build", "--json", str(config), "--out",
                          str(tmp_path / "plays")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    objects = Path(json.loads(run.stdout)["objects"])
    assert (objects / "isolation/toy.c.o").is_file() and not (objects / "isolation/bw.c.o").exists()
    assert "isolation/toy.c.o" in (tmp_path / "plays/hyp/bulkhead.map").read_text()
    assert "#define BULKHEAD_FEATURE_TOY 1" in (tmp_path / "plays/features.h").read_text()
    off = subprocess.run([sys.executable, "-c", TOY_OFF, str(config), str(tmp_path / "off")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert off.returncode == 0, off.stderr
    assert "isolation/toy.c" in (tmp_path / "off/features.mk").read_text()  # FEATURES_UNUSED
    dry = subprocess.run(["make", "-n", "-C", str(copy / "hypervisor"), *json.loads(off.stdout)],
                         capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0, dry.stderr
    link = [line for line in dry.stdout.splitlines() if "-Map=" in line]
    assert len(link) == 1 and "isolation/color.c.o" in link[0], dry.stdout[-3000:]
    assert "/isolation/color.c -o" in dry.stdout  # compiled: its object directory is new
    assert "/isolation/toy.c -o" not in dry.stdout and "toy.c.o" not in dry.stdout
