# SPDX-License-Identifier: Apache-2.0
"""Every example in configs/ (issue #26 item 6) is checked and booted: the
config validates (`bulkhead check`), the system builds, boots under QEMU and
ends cleanly by itself (every VM powers off, none failed or was stopped),
each VM having printed something. Linux examples report and power off
(the initrd's /init); bare-metal guests finish."""

from __future__ import annotations

from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.run.runner import run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "configs").glob("*.yaml"))
LINUX = ROOT / "artefacts" / "linux" / "Image"


def test_there_are_examples_for_each_platform() -> None:
    text = {p.stem: p.read_text() for p in EXAMPLES}
    platforms = {line.split(":", 1)[1].strip() for t in text.values() for line in t.splitlines()
                 if line.startswith("platform:")}
    assert {"qemu-virt", "zcu102", "zcu104"} <= platforms


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_example_checks_and_boots(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if "type: linux" in config.read_text() and not LINUX.exists():
        pytest.skip("needs the Linux artefacts (scripts/setup.sh linux)")
    assert cli.main(["check", str(config)]) == 0
    capsys.readouterr()
    res = run(config, timeout=240, icount=None, out=ROOT / "build" / "qemu-tests" / f"example-{config.stem}")
    assert res.clean, f"{config.name}: {res.reason}\n{res.output[-3000:]}"
    assert "PANIC" not in res.output
