# SPDX-License-Identifier: Apache-2.0
"""bench/hotpaths.py --check (issue #26 item 4, #38 item 2, #43 item 5): the hot paths'
recorded ceilings (bench/budgets.toml [hotpaths]) hold at the default samples, and the
check exits non-zero, naming the row, when a ceiling is below the
measurement. Virtual time under -icount shift=0: deterministic."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the groups whose rows have ceilings (test_every_ceiling_holds_at_the_default_samples);
# tests/qemu/test_bench_smoke.py::test_hotpaths runs the others: together, all
CEILING_GROUPS = ("irqlat", "doorbell", "vSGI", "hcall")
OTHER_GROUPS = ("direct", "fiq", "sgisend", "doorbelltfa", "period")


def _hotpaths():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_hotpaths", ROOT / "bench" / "hotpaths.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_hypercall_ceilings_hold_and_the_check_fails_below_them(capsys: pytest.CaptureFixture[str]) -> None:
    hp = _hotpaths()
    limits = hp.ceilings()
    assert {"irqlat wfi", "irqlat busy +regulator", "hcall vendor", "hcall psci"} <= set(limits)
    assert hp.main(["--check", "--only", "hcall", "--samples", "20", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "above its ceiling" not in err
    import json
    rows = {r["path"]: r for r in json.loads(out)}
    vendor = rows["hcall vendor"]["mean_ns"]
    assert 0 < vendor <= limits["hcall vendor"]
    # a ceiling one below the measurement: exit 1, the row and both figures named
    assert hp.main(["--check", "--only", "hcall", "--samples", "20", "--json",
                    "--ceiling", f"hcall vendor={vendor - 1:g}"]) == 1
    err = capsys.readouterr().err
    assert f"hcall vendor: mean {vendor:.1f} ns is above its ceiling of {vendor - 1:g} ns" in err


def test_check_logic_on_rows() -> None:
    hp = _hotpaths()
    assert sorted(CEILING_GROUPS + OTHER_GROUPS) == sorted(hp.GROUPS)  # the two runs print the whole table
    table = [{"path": "irqlat wfi", "mean_ns": 160.0}, {"path": "hcall vendor", "mean_ns": 67.0},
             {"path": "unlisted", "mean_ns": 1e9}]
    assert hp.check(table, {"irqlat wfi": 165.0, "hcall vendor": 70.0}) == []
    assert hp.check(table, {"irqlat wfi": 159.0}) == ["irqlat wfi: mean 160.0 ns is above its ceiling of 159 ns"]


CEILING_ROWS = ["irqlat wfi", "irqlat busy", "irqlat wfi +regulator", "irqlat busy +regulator", "doorbell wfi",
                "doorbell wfi rtt", "doorbell busy", "vSGI wfi", "vSGI busy", "hcall vendor", "hcall psci"]


def table_rows(lines: list[str]) -> dict[str, list[str]]:
    """bench/hotpaths.py's printed table (title, header, rows): path -> its 8 columns."""
    assert lines[0].startswith("Hot paths, virtual time") and lines[1].split()[0] == "path", lines
    return {" ".join(line.split()[:-8]): line.split()[-8:] for line in lines[2:]}


def test_every_ceiling_holds_at_the_default_samples(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #43 item 5 (#38 item 2 for the doorbell): `bench/hotpaths.py
    --check` at its default sample counts (1,000 interrupts, rings and
    SGIs, 10,000 calls: the documented figures' settings, where a rare slow
    sample weighs what it does in them) passes, every row with a ceiling
    measured and its mean at or below it. Virtual time: deterministic.
    The run prints the table (no --json): these groups' rows of
    tests/qemu/test_bench_smoke.py::test_hotpaths are checked here, from the
    same run, instead of a second one at 20 samples."""
    hp = _hotpaths()
    limits = hp.ceilings()
    status = hp.main(["--check", "--only", ",".join(CEILING_GROUPS)])
    out, err = capsys.readouterr()
    rows = table_rows(out.splitlines())
    assert sorted(rows) == sorted(CEILING_ROWS), out
    # the "period" group's ceilings: tests/qemu/test_direct_fiq.py and test_bandwidth.py measure them
    elsewhere = {"regulator period direct fiq", "regulator period"}
    assert set(limits) - elsewhere <= set(rows), sorted(set(limits) - elsewhere - set(rows))
    for path, limit in ((p, v) for p, v in limits.items() if p not in elsewhere):
        # the printed mean (0.1 ns); the exit status is the exact comparison
        assert 0 < float(rows[path][1]) <= limit, (path, rows[path], err)
    assert status == 0, err
    # the table's form (test_bench_smoke.py::test_hotpaths checks the other rows)
    for path, cols in rows.items():
        assert len(cols) == 8 and float(cols[1]) > 0, (path, cols)
    for path in ("doorbell wfi", "vSGI busy"):
        assert rows[path][3:] == ["-", "-", "-", "-", "-"], rows[path]  # no hyp insns, exits, before, prev, Bao
    assert rows["hcall vendor"][6] == "160" and rows["hcall vendor"][7] == "147"  # prev and Bao columns
