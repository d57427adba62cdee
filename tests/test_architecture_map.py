# SPDX-License-Identifier: Apache-2.0
"""docs/ARCHITECTURE.md stays a true, short map (#38 item 6).

It fails when a toolchain module, a platform, a driver kind or a lock is
missing from the map, or when the map outgrows 1,600 words; each check is
shown to fail on a map without the thing it looks for.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "ARCHITECTURE.md"
MAX_WORDS = 1600
LOCK = re.compile(r"\bspinlock_t\s+(\w+)(\s*\[[^\]]*\])?\s*(=[^;]*)?;")


def modules() -> list[str]:
    """Every toolchain module, as `package/module` (subpackages' __init__ and
    the drivers' descriptors excluded: adding a driver adds files only)."""
    out = []
    for p in sorted((ROOT / "bulkhead").rglob("*.py")):
        rel = p.relative_to(ROOT / "bulkhead")
        if p.name in ("__init__.py", "__main__.py"):
            continue
        if rel.parts[0] == "drivers" and len(rel.parts) == 3:
            continue  # a driver's descriptor: its kind's package is named (docs/boards/porting.md)
        out.append(str(rel.with_suffix("")))
    return out


def platforms() -> list[str]:
    return sorted(p.name for p in (ROOT / "hypervisor" / "platform").iterdir() if p.is_dir())


def platform_files() -> list[str]:
    return sorted(p.stem for p in (ROOT / "platforms").glob("*.yaml"))


def driver_kinds() -> list[str]:
    drivers = ROOT / "hypervisor" / "drivers"
    return sorted({p.name for p in drivers.iterdir() if p.is_dir()} | {p.stem for p in drivers.glob("*.c")})


def locks() -> list[tuple[str, str]]:
    """(file stem, lock name) of every spinlock the hypervisor declares."""
    out = []
    for p in sorted((ROOT / "hypervisor").rglob("*.[ch]")):
        if p.name == "spinlock.h":
            continue
        for m in LOCK.finditer(p.read_text()):
            out.append((p.stem, m[1]))
    return out


def section(text: str, title: str) -> str:
    m = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ |\Z)", text, re.M | re.S)
    assert m, f"docs/ARCHITECTURE.md has no section '{title}'"
    return m[1]


def missing_modules(text: str) -> list[str]:
    # a module is named `module` in its package's row, or by its path
    return [m for m in modules()
            if f"`{m.rsplit('/', 1)[-1]}`" not in text and f"{m}.py" not in text]


def missing_platforms(text: str) -> list[str]:
    return [p for p in platforms() + platform_files() if f"`{p}`" not in text and f"{p}.yaml" not in text]


def missing_driver_kinds(text: str) -> list[str]:
    return [k for k in driver_kinds() if f"drivers/{k}" not in text]


def missing_locks(text: str) -> list[str]:
    """A named lock by its name; a lock member (`lock`) by its file in the lock section."""
    locks_text = section(text, "Lock order")
    out = []
    for stem, name in locks():
        if name == "lock":
            if f"{stem}." not in locks_text and f"`{stem}`" not in locks_text:
                out.append(f"{stem}: lock")
        elif f"`{name}`" not in locks_text:
            out.append(f"{stem}: {name}")
    return out


def words(text: str) -> int:
    return len(re.findall(r"\S+", text))


TEXT = MAP.read_text()


def test_every_toolchain_module_is_on_the_map() -> None:
    assert not missing_modules(TEXT), f"docs/ARCHITECTURE.md does not name: {missing_modules(TEXT)}"


def test_every_platform_is_on_the_map() -> None:
    assert not missing_platforms(TEXT), f"docs/ARCHITECTURE.md does not name: {missing_platforms(TEXT)}"


def test_every_driver_kind_is_on_the_map() -> None:
    assert not missing_driver_kinds(TEXT), f"docs/ARCHITECTURE.md does not name: {missing_driver_kinds(TEXT)}"


def test_every_lock_is_in_the_lock_order() -> None:
    assert not missing_locks(TEXT), f"docs/ARCHITECTURE.md's lock order does not name: {missing_locks(TEXT)}"


def test_the_map_stays_short() -> None:
    assert words(TEXT) <= MAX_WORDS, f"docs/ARCHITECTURE.md has {words(TEXT)} words (at most {MAX_WORDS})"


@pytest.mark.parametrize("check,thing", [
    (missing_modules, "`cachemodel`"),
    (missing_platforms, "`rk3588`"),
    (missing_driver_kinds, "drivers/uart"),
    (missing_locks, "`iommu_lock`"),
])
def test_each_check_fails_on_a_map_without_its_thing(check: object, thing: str) -> None:
    assert thing in TEXT
    assert callable(check)
    assert check(TEXT.replace(thing, "")), f"{check} passes on a map without {thing}"


def test_the_scanners_find_what_they_look_for() -> None:
    assert "run/runner" in modules() and "cli" in modules()
    assert {"qemu-virt", "zynqmp", "rk3588"} <= set(platforms())
    assert {"gic", "uart", "smmu", "iommu"} <= set(driver_kinds())
    assert ("color_recolor", "recolor_lock") in locks() and ("smmuv3", "lock") in locks()
