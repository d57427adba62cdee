# SPDX-License-Identifier: Apache-2.0
"""Issue #10 item 6: configs the campaign found rejected without a location
(an internal ZeroDivisionError for `cpus: []` beside `bandwidth:`, and a
character offset instead of line:column for control characters) now name
file, line and column, exit 1 and print nothing on stdout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bulkhead import cli

EMPTY_CPUS_BW = """\
platform: qemu-virt
vms:
  - name: bw
    cpus: []
    memory: [{ipa: 0x40000000, size: 16M}]
    image: img.bin
    bandwidth: {period_us: 1000, budget_events: 300000}
"""

EMPTY_CPUS_WEIGHTS = EMPTY_CPUS_BW.replace("budget_events: 300000}", "budget_events: 300000, weights: [100]}")

GOOD_HEAD = "platform: qemu-virt\nvms:\n  - name: a"


def check_located(capsys: pytest.CaptureFixture[str], path: Path) -> list[tuple[int, int, str]]:
    """Run `bulkhead check`; return every (line, column, message) it reported."""
    code = cli.main(["check", str(path)])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert out == ""
    assert "internal error" not in err
    found = re.findall(rf"^bulkhead: error: {re.escape(str(path))}:(\d+):(\d+): (.+)$", err, flags=re.M)
    assert found, f"no file:line:column in {err!r}"
    assert "position" not in err
    return [(int(line), int(col), msg) for line, col, msg in found]


@pytest.mark.parametrize("text", [EMPTY_CPUS_BW, EMPTY_CPUS_WEIGHTS])
def test_empty_cpus_with_bandwidth(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    (tmp_path / "img.bin").write_bytes(b"\0" * 64)
    found = check_located(capsys, path)
    assert (4, 11, "vms[0].cpus: a VM needs at least one CPU") in found


@pytest.mark.parametrize("char", ["\x01", "\x07", "\x1b", "\x7f", "\x9f", "\ufffe"])
@pytest.mark.parametrize("crlf", [False, True])
def test_control_character(capsys: pytest.CaptureFixture[str], tmp_path: Path, char: str, crlf: bool) -> None:
    text = GOOD_HEAD + char + "b\n    cpus: [0]\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    path = tmp_path / "c.yaml"
    path.write_bytes(text.encode("utf-8"))
    found = check_located(capsys, path)
    assert len(found) == 1
    line, col, message = found[0]
    assert (line, col) == (3, 12)
    assert f"U+{ord(char):04X}" in message
