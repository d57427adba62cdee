# SPDX-License-Identifier: Apache-2.0
"""Terminal output through rich (bulkhead/base/term.py): the `check` tables, the
experiment progress bar with its ETA and the live `run --stats` table on a
terminal; plain, parseable text on anything else."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.experiment.execute import Progress
from bulkhead.experiment.record import RunRecord
from bulkhead.experiment.spec import RunPlan
from bulkhead.run import stats

REPO_ROOT = Path(__file__).resolve().parent.parent
BW_BASIC = REPO_ROOT / "tests" / "configs" / "bw-basic.yaml"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Tty(io.StringIO):
    """A terminal, as far as isatty() tells."""

    def isatty(self) -> bool:
        return True


def plain(text: str) -> str:
    return ANSI.sub("", text)


def record(i: int, status: str) -> RunRecord:
    plan = RunPlan(i, "solo", (), "bw", 1, False)
    return RunRecord(plan, "bandwidth", "mbps", "MB/s", status, "FAIL (boom)" if status == "fail" else "",
                     wall_s=0.1)


def test_check_tables_rich_on_a_terminal_plain_in_a_pipe(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", str(BW_BASIC)]) == 0
    piped = capsys.readouterr().out
    assert "\x1b[" not in piped and "─" not in piped  # plain text: spaces only
    assert re.search(r"^bw\s+baremetal\s+0\s+0x40000000 -> 0x", piped, re.M), piped
    assert re.search(r"^bw\s+all\s+1000 us\s+read_write\s+300000\s+300\s+100%", piped, re.M), piped

    tty = Tty()
    monkeypatch.setattr(sys, "stdout", tty)
    monkeypatch.setenv("COLUMNS", "200")
    assert cli.main(["check", str(BW_BASIC)]) == 0
    drawn = plain(tty.getvalue())
    assert "─" * 20 in drawn  # rich's rule under the header row
    assert re.search(r"^\s+VM\s+TYPE\s+CPUS\s+MEMORY \(IPA -> PA, size\)", drawn, re.M), drawn
    assert re.search(r"^\s+bw\s+all\s+1000 us\s+read_write\s+300000\s+300\s+100%", drawn, re.M), drawn
    assert "guaranteed total: 300 MB/s of 1000 MB/s sustainable" in drawn


def test_check_table_wraps_on_a_narrow_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    tty = Tty()
    monkeypatch.setattr(sys, "stdout", tty)
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["check", str(BW_BASIC)]) == 0
    drawn = plain(tty.getvalue())
    assert "…" not in drawn and "(input)" in drawn and "0x40000000" in drawn  # wrapped, not cut
    table = [line for line in drawn.splitlines() if line.startswith(" ")]
    assert table and all(len(line) <= 80 for line in table)


def test_progress_bar_with_eta_on_a_terminal() -> None:
    tty = Tty()
    bar = Progress(3, tty)
    bar.begin("bulkhead: experiment t: 3 run(s)")
    for i, status in enumerate(("ok", "fail", "ok"), 1):
        bar.update(record(i, status))
    bar.end()
    drawn = plain(tty.getvalue())
    assert drawn.startswith("bulkhead: experiment t: 3 run(s)\n")
    assert "  solo bw #1: fail: FAIL (boom)" in drawn  # failures stay above the bar
    last = [line for line in drawn.splitlines() if "3/3" in line][-1]
    assert re.search(r"━+ 3/3 elapsed \d+:\d\d:\d\d eta \d+:\d\d:\d\d", last), last
    assert bar.summary() == "2 ok, 1 fail"


def test_progress_lines_in_a_pipe() -> None:
    out = io.StringIO()
    bar = Progress(2, out)
    bar.begin("start")
    bar.update(record(1, "ok"))
    bar.update(record(2, "fail"))
    bar.end()
    assert out.getvalue() == ("start\n[1/2] solo bw #1: ok (0.1 s)\n"
                              "[2/2] solo bw #1: fail: FAIL (boom) (0.1 s)\n")


def test_stats_live_table_on_a_terminal() -> None:
    out, err = Tty(), Tty()
    view = stats.StatsView(out, err, stats.stats_timebase(0))
    view.write("[bw] hello\n[bulkhead] bw vm=bw vcpu=0 last=300421 max=300476 mean=300209 throttled=19 "
               "stalled_us=13284\n")
    view.flush()
    view.write("[bulkhead] bw vm=bw vcpu=0 last=7 max=300476 mean=300000 throttled=20 stalled_us=13300\n"
               "[bw] after\n")
    view.flush()
    view.close()
    drawn = plain(err.getvalue())
    assert "bandwidth (events per period; virtual time, --icount 0), update 2:" in drawn
    assert re.search(r"bw\s+0\s+7\s+300476\s+300000\s+20\s+13300", drawn), drawn
    # console lines for the same terminal print above the live table, not into it
    assert "[bw] hello" in drawn and "[bw] after" in drawn and out.getvalue() == ""


def test_stats_live_tables_with_shared_io() -> None:
    """On a terminal, `run --stats` draws the bandwidth table and the I/O VM's
    per-client table together, updated in place."""
    out, err = Tty(), Tty()
    view = stats.StatsView(out, err, stats.stats_timebase(0))
    view.write("[bulkhead] bw vm=bw vcpu=0 last=1 max=2 mean=1 throttled=0 stalled_us=0\n"
               "[iovm] iovm: stats client=alice tx=50 tx_bytes=11500 rx=49 rx_bytes=11270 rx_drops=0 malformed=0 "
               "runt=0 spoofed=0 alpha_fps=2499 delta_us=211 overruns=0\n")
    view.flush()
    view.close()
    drawn = plain(err.getvalue())
    assert "bandwidth (events per period; virtual time, --icount 0), update 1:" in drawn, drawn
    assert "shared I/O per client (virtual time, --icount 0), update 1:" in drawn, drawn
    assert re.search(r"alice\s+50\s+11500\s+49\s+11270\s+0\s+0\s+2499\s+211", drawn), drawn
    assert "iovm: stats" not in drawn and out.getvalue() == ""
