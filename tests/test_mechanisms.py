# SPDX-License-Identifier: Apache-2.0
"""Every toolchain mechanism has the same shape (#38 item 5,
docs/ARCHITECTURE.md "Mechanisms"): one module of ``bulkhead/config/`` whose
``MECHANISM`` descriptor states every hook (parse, check, emit C, feature;
None when it has none) and its docs section, listed once in
``bulkhead.config.mechanisms``; and the pipeline's stages run whatever is
registered, so that a new mechanism is a new module and one line. Each
check is shown to fail on a toy mechanism that breaks it.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

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


def declared(config: Path) -> list[str]:
    """Modules (and packages) of the config package that define
    ``MECHANISM`` at top level."""
    out = []
    for path in sorted([*config.glob("*.py"), *config.glob("*/__init__.py")]):
        for node in ast.parse(path.read_text(), str(path)).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == "MECHANISM" for t in targets):
                out.append(path.parent.name if path.name == "__init__.py" else path.stem)
    return sorted(out)


def test_every_mechanism_states_every_hook_and_its_docs_section() -> None:
    # a descriptor cannot leave a hook out: the dataclass has no defaults
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
               for f in dataclasses.fields(Mechanism))
    assert set(HOOKS) <= {f.name for f in dataclasses.fields(Mechanism)}
    assert [p for m in mechanisms.MECHANISMS for p in problems(m)] == []
    names = [m.name for m in mechanisms.MECHANISMS]
    assert len(names) == len(set(names)) >= 8
    for m in mechanisms.MECHANISMS:  # each is its module's
        module = __import__(f"bulkhead.config.{m.name}", fromlist=["MECHANISM"])
        assert module.MECHANISM is m


def test_the_registry_lists_every_mechanism_module(tmp_path: Path) -> None:
    assert sorted(m.name for m in mechanisms.MECHANISMS) == declared(PKG / "config")
    (tmp_path / "good.py").write_text("MECHANISM = Mechanism(...)\n")
    (tmp_path / "typed.py").write_text("MECHANISM: Mechanism = Mechanism(...)\n")
    (tmp_path / "other.py").write_text("def f() -> None:\n    MECHANISM = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("MECHANISM = Mechanism(...)\n")
    assert declared(tmp_path) == ["good", "pkg", "typed"]


def test_the_shape_checks_find_a_broken_mechanism(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "toy.md").write_text("# Toy\n\n## Way groups (DSU)\n")
    good = dataclasses.replace(mechanisms.MECHANISMS[0], name="toy", docs="docs/toy.md#way-groups-dsu")
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
    assert len(decided) == len(set(decided))
    assert sorted(decided) == sorted(features.MECHANISMS)
    names = re.search(r"^FEATURE_NAMES := (.+)$", (ROOT / "hypervisor" / "Makefile").read_text(), re.M)
    assert names is not None and tuple(names[1].split()) == features.MECHANISMS
    for part, core in (("platform", schema.CORE_PLATFORM_KEYS), ("system", schema.CORE_SYSTEM_KEYS),
                       ("vm", schema.CORE_VM_KEYS)):
        owned = [k for m in mechanisms.MECHANISMS
                 for k in (m.platform_keys if part == "platform" else m.system_keys if part == "system" else m.vm_keys)]
        assert len(owned) == len(set(owned)), part
        assert not set(owned) & set(core), part
        assert schema.keys(part) == (*core, *owned)  # type: ignore[arg-type]


CONFIG = """platform: qemu-virt
vms:
  - {name: a, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], guest: hello, toy: 3}
"""


def test_a_new_mechanism_is_a_module_and_a_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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

    toy = Mechanism(name="toy", docs="docs/ARCHITECTURE.md", features=("TOY",), platform_keys=(), system_keys=(),
                    vm_keys=("toy",), parse_platform=None, parse_system=None, parse_vm=parse_vm,
                    check_platform=None, check=check, ipa_items=None, reserved_ram=None,
                    guest_params=guest_params,
                    emit_tables=emit_tables, emit_vm=emit_vm,
                    emit_system=emit_system, needs=needs)
    monkeypatch.setattr(mechanisms, "MECHANISMS", (*mechanisms.MECHANISMS, toy))
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
    monkeypatch.setattr(mechanisms, "MECHANISMS", (*mechanisms.MECHANISMS[:-1], clash))
    with pytest.raises(ConfigError, match=r"the toy window at IPA .* collides with memory\[0\]"):
        load.load_system(path, guest_sources=None)
