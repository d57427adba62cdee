# SPDX-License-Identifier: Apache-2.0
"""Every script in bench/ runs, in its smallest settings, and prints its
whole table or JSON (issue #36 item 2): each row and column it documents,
every figure a number in its sane range. The figures themselves are not
asserted (the benchmarks report them; tests/qemu/test_hotpaths_check.py and
tests/test_budgets.py hold the budgets). A script without a smoke test here
(or one named in ELSEWHERE) fails test_every_bench_script_has_a_smoke_test,
so no benchmark can break unnoticed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
# generous: builds (a hypervisor and its guests each) and boots on a loaded 2-core machine
TIMEOUT = 1200

# bench scripts whose smoke test lives in another file (path, test), and
# the parts of a script that its own smoke test runs
ELSEWHERE = {
    "size.py": ("tests/test_budgets.py", "test_text_within_budget"),
    "color_setup.py": ("tests/qemu/test_bench_smoke.py", "test_coloring_sh"),
    "color_runtime.py": ("tests/qemu/test_bench_smoke.py", "test_coloring_sh"),
}
NUM = r"-?[0-9]+(?:\.[0-9]+)?"


def bench(script: str, *args: str) -> str:
    """Run bench/<script> as documented (python, or bash for .sh); its stdout."""
    cmd = ["bash"] if script.endswith(".sh") else [sys.executable]
    proc = subprocess.run([*cmd, str(BENCH / script), *args], capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=ROOT, check=False)
    assert proc.returncode == 0, f"bench/{script} {' '.join(args)}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.stdout


def table(text: str, header: str) -> list[list[str]]:
    """The Markdown table whose header row starts with ``header``: its
    header's cells, then each row's, until the first line that is not a
    row (the separator row dropped)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(header)), None)
    assert start is not None, f"no table {header!r} in:\n{text}"
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not all(re.fullmatch(r"-*:?-+:?", c) for c in cells):
            rows.append(cells)
    width = len(rows[0])
    assert all(len(r) == width for r in rows), rows
    return rows


def nums(cell: str) -> list[float]:
    """The numbers of a cell (a figure, ``a / b``, ``a (ratio)``...)."""
    return [float(x) for x in re.findall(NUM, cell)]


def test_every_bench_script_has_a_smoke_test() -> None:
    here = Path(__file__).read_text()
    scripts = sorted(p.name for p in BENCH.iterdir() if p.is_file() and p.suffix in (".py", ".sh"))
    assert "shared_io.py" in scripts and "coloring.sh" in scripts, scripts
    missing = []
    for script in scripts:
        path, test = ELSEWHERE.get(script, ("tests/qemu/test_bench_smoke.py", f"test_{Path(script).stem}"
                                            + ("_sh" if script.endswith(".sh") else "")))
        text = here if path.endswith("test_bench_smoke.py") else (ROOT / path).read_text()
        if not re.search(rf"^def {test}\(", text, re.MULTILINE):
            missing.append(f"bench/{script}: no {path}::{test}")
    assert not missing, "bench scripts without a smoke test:\n" + "\n".join(missing)
    assert not set(ELSEWHERE) - set(scripts), set(ELSEWHERE) - set(scripts)


def test_shared_io() -> None:
    """--quick: passthrough, two echo clients, two of which one floods (the
    rows whose device figures it once could not read: its I/O VM lacked
    introspection, then its device line was split by the console)."""
    out = bench("shared_io.py", "--quick", "--no-linux", "--frames", "20")
    rows = table(out, "| scenario | VM |")
    assert rows[0] == ["scenario", "VM", "frames/s (ratio)", "RTT mean / max (us) (ratio)",
                       "alpha meas. / guaranteed (f/s)", "share served", "delta meas. / supply / bound (us)",
                       "overruns", "device stall (us)"]
    body = {(r[0], r[1]): r[2:] for r in rows[1:]}
    assert list(body) == [("direct passthrough", "iovm"), ("2 clients", "alice"), ("2 clients", "bob"),
                          ("2 clients, last floods", "alice"), ("2 clients, last floods", "bob")], rows
    direct = body["direct passthrough", "iovm"]
    assert nums(direct[0])[0] > 0 and all(x > 0 for x in nums(direct[1])) and direct[2:] == ["-"] * 5, direct
    for (scenario, vm), cells in list(body.items())[1:]:
        flooder = scenario.endswith("floods") and vm == "bob"
        if flooder:
            assert cells[:2] == ["flood", "-"], cells
        else:
            fps, ratio = nums(cells[0])
            rtt_mean, rtt_max, rtt_ratio = nums(cells[1])
            assert fps > 0 and ratio > 0 and 0 < rtt_mean <= rtt_max and rtt_ratio > 0, cells
        alpha, guaranteed = nums(cells[2])
        assert alpha > 0 and guaranteed == 2500, cells  # --capacity 5000, two equal weights
        assert re.fullmatch(rf"{NUM}%", cells[3]) and 0 < nums(cells[3])[0] <= 100, cells
        delta, supply, bound = nums(cells[4])
        assert delta >= 0 and supply >= 0 and bound > 0, cells
        assert re.fullmatch(r"[0-9]+", cells[5]) and re.fullmatch(r"[0-9]+", cells[6]), cells
