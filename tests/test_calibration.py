# SPDX-License-Identifier: Apache-2.0
"""The timing model's fitted parameters (docs/model.md "Calibration", issue
#37 item 5): the fitting step of bench/validate.py, fed the measurements it
recorded (bench/calibration.json: each fit step's parameter and modelled
figure), yields the values the platform files hold, and the doc's tables
state those values and the recorded figures."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from bulkhead.layout.load import load_platform

ROOT = Path(__file__).resolve().parent.parent
RECORD = json.loads((ROOT / "bench" / "calibration.json").read_text())
A53 = ("qemu-virt", "zcu102", "zcu104")
sys.path.insert(0, str(ROOT / "bench"))
V: ModuleType = importlib.import_module("validate")


def test_secant_meets_target_on_a_line() -> None:
    assert V.secant([(10.0, 5.0), (20.0, 3.0)], 4.0) == pytest.approx(15.0)
    assert V.secant([(10.0, 5.0), (20.0, 5.0)], 4.0) == 20.0  # flat: stays


def test_recorded_fit_yields_the_platform_values() -> None:
    """Replaying each fit with the recorded figures visits the recorded
    parameters in order and ends at the value the A53 platforms hold."""
    steps = RECORD["fit_steps"]
    assert steps, RECORD
    for name in dict.fromkeys(s["parameter"] for s in steps):
        mine = [s for s in steps if s["parameter"] == name]
        figures = {s["value"]: s["figure"] for s in mine}
        visited: list[float] = []

        def measure(x: float, figures: dict[float, float] = figures, visited: list[float] = visited) -> float:
            visited.append(x)
            return figures[x]

        fitted = V.fit(name, measure, mine[0]["value"], mine[0]["target"], [])
        assert visited == [s["value"] for s in mine], (name, visited)
        assert fitted == RECORD["params"][name], (name, fitted)
    want = V.Params(**RECORD["params"])
    for board in A53:
        t = load_platform(board).cachemodel
        assert t is not None and t.timing is not None, board
        assert t.timing.llc_hit_ns == want.llc_hit_ns, board
        assert (t.timing.row_hit_ns, t.timing.row_empty_ns, t.timing.row_conflict_ns) == tuple(
            want.dram_base_ns + v for v in V.JEDEC_NS.values()), board
    assert V.Params.of_platform() == want


def test_doc_states_the_fitted_values_and_recorded_rows() -> None:
    """docs/model.md "Calibration" gives each fitted value and each recorded
    row's published and modelled figure."""
    text = (ROOT / "docs" / "model.md").read_text()
    section = text[text.index("## Calibration"):text.index("\n## ", text.index("## Calibration") + 5)]
    p = RECORD["params"]
    assert f"LLC hit **{V._num(p['llc_hit_ns'])} ns**" in section, section[:600]
    assert f"DRAM base **{V._num(p['dram_base_ns'])} ns**" in section, section[:600]
    for row in RECORD["rows"]:
        line = next((ln for ln in section.splitlines() if f"`{row['row']}`" in ln), None)
        assert line is not None, row["row"]
        modelled = f"{row['modelled']:,.3f}" if row["unit"] == "x" else f"{row['modelled']:,.0f}"
        assert modelled in line, (row["row"], modelled, line)
        assert re.search(rf"{row['miss_pct']:+.1f} %".replace("+", r"\+"), line), (row["row"], line)
