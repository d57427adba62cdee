# SPDX-License-Identifier: Apache-2.0
"""The toolchain (bulkhead/config/color.py) and the hypervisor (isolation/color.c)
must place every colored page identically: the toolchain only computes span
starts and ends, the hypervisor walks the pages at boot.

tests/host/color_xcheck.c walks pages exactly as core/mem/mem.c does, compiled
natively against the hypervisor's color.c; these tests compare its answers
with Python's for random selections, for Python's minimised pattern sets
against the unminimised ones, and for every colored region of the colored
test configs (span start and end as laid out).
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from bulkhead.config.color import PAGE, Colors
from bulkhead.layout.load import load_system

ROOT = Path(__file__).resolve().parent.parent
HYP = ROOT / "hypervisor"
CONFIGS = [ROOT / "tests" / "configs" / name for name in ("color-walk.yaml", "color-dump.yaml", "color-linux.yaml")]
U64 = (1 << 64) - 1
SUM_LIMIT = 5000  # pages above which Python checks first/last/count only (nth, not a walk)

Query = tuple[int, tuple[int, ...], int, int]  # mask, values, start, pages


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc, "a native C compiler is required"
    exe = tmp_path_factory.mktemp("xcheck") / "color_xcheck"
    build = subprocess.run(
        [cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HYP}",
         str(ROOT / "tests" / "host" / "color_xcheck.c"), str(HYP / "isolation" / "color.c"), "-o", str(exe)],
        capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    return exe


def c_walk(driver: Path, queries: list[Query]) -> list[str]:
    text = "".join(f"{m:x} {len(vs):x} {' '.join(f'{v:x}' for v in vs)} {s:x} {n:x}\n" for m, vs, s, n in queries)
    run = subprocess.run([str(driver)], input=text, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def py_walk(colors: Colors, start: int, pages: int) -> str:
    first = colors.next(start)
    last = colors.nth(start, pages - 1)
    if first is None or last is None:
        return "none"
    if pages > SUM_LIMIT:
        return f"{first:x} {last:x} - {pages:x}"
    total = sum((i + 1) * p for i, p in enumerate(colors.pages(start, pages))) & U64
    return f"{first:x} {last:x} {total:x} {pages:x}"


def same(c_line: str, py_line: str) -> bool:
    if py_line.split()[2:3] == ["-"]:
        c = c_line.split()
        py = py_line.split()
        return c[:2] == py[:2] and c[3:] == py[3:]
    return c_line == py_line


def test_random_selections(driver: Path) -> None:
    rng = random.Random(20240611)
    queries: list[Query] = []
    expected: list[str] = []
    for _ in range(300):
        bits = rng.sample(range(12, 40), rng.randint(1, 8))
        mask = sum(1 << b for b in bits)
        values = tuple(sorted({rng.getrandbits(40) & mask for _ in range(rng.randint(1, 12))}))
        start = rng.getrandbits(rng.choice((20, 32, 40))) & ~(PAGE - 1)
        pages = rng.choice((1, 2, 7, 100, 1000))
        queries.append((mask, values, start, pages))
        expected.append(py_walk(Colors(mask, values), start, pages))
    for q, c_line, py_line in zip(queries, c_walk(driver, queries), expected, strict=True):
        assert same(c_line, py_line), (q, c_line, py_line)


def test_minimised_sets_accept_the_same_pages(driver: Path) -> None:
    """Python drops unconstrained mask bits; C walking the full product of
    LLC x bank patterns must find the same pages as the minimised set."""
    rng = random.Random(7)
    llc_mask, bank_mask = 0xF000, 0x30000
    queries: list[Query] = []
    expected: list[str] = []
    for _ in range(80):
        llc = rng.sample(range(16), rng.randint(1, 16))
        bank = rng.sample(range(4), rng.randint(1, 4))
        full = tuple(sorted((c << 12) | (b << 16) for c in llc for b in bank))
        minimised = Colors.make(llc_mask | bank_mask, full)
        assert minimised is not None and len(minimised.values) <= len(full)
        start = 0x40000000 + rng.randrange(0, 1 << 28, PAGE)
        pages = rng.choice((16, 500, 2000))
        queries.append((llc_mask | bank_mask, full, start, pages))
        expected.append(py_walk(minimised, start, pages))
    for q, c_line, py_line in zip(queries, c_walk(driver, queries), expected, strict=True):
        assert c_line == py_line, (q, c_line, py_line)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_config_spans(driver: Path, config: Path) -> None:
    """Each colored region, table pool and shared region of a config: the C
    walk from its span start ends on the last page of the span."""
    system = load_system(config)
    pieces: list[tuple[str, Colors, int, int, int | None]] = []  # what, colors, start, pages, span end
    for vm in system.vms:
        for j, m in enumerate(vm.memory):
            if m.colors is not None:
                pieces.append((f"{vm.name}.memory[{j}]", m.colors, m.pa, m.size // PAGE, m.end))
        if vm.pt_colors is not None:
            pieces.append((f"{vm.name} tables", vm.pt_colors, vm.pt_pa, vm.pt_pages, None))
    for sh in system.shmems:
        if sh.colors is not None:
            pieces.append((f"shmem {sh.name}", sh.colors, sh.pa, sh.size // PAGE, None))
    assert pieces
    queries = [(c.mask, c.values, start, n) for _, c, start, n, _ in pieces]
    for (what, c, start, n, end), c_line in zip(pieces, c_walk(driver, queries), strict=True):
        assert same(c_line, py_walk(c, start, n)), (what, c_line)
        first, last = (int(x, 16) for x in c_line.split()[:2])
        assert first == start, what  # spans start on their first page
        if end is not None:
            assert last + PAGE == end, what


def test_lookup_benchmark_agrees(tmp_path: Path) -> None:
    """bench/color_lookup.c builds warning-free and both of its methods give
    the same answers (it exits non-zero on a mismatch)."""
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc
    exe = tmp_path / "color_lookup"
    build = subprocess.run(
        [cc, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wconversion", "-Wshadow", f"-I{HYP}",
         str(ROOT / "bench" / "color_lookup.c"), str(HYP / "isolation" / "color.c"), "-o", str(exe)],
        capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert len([line for line in run.stdout.splitlines() if " ratio " in line]) == 6, run.stdout
