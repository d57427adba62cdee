# SPDX-License-Identifier: Apache-2.0
"""The Raspberry Pi 4 port on QEMU raspi4b (docs/boards/rpi4.md) beyond its
example's boot (tests/qemu/test_examples.py, configs/rpi4b.yaml): a CPU that
never leaves the spin table stops the boot with a message and a power-off
through the PM block, instead of leaving its VM silently unstarted."""

from __future__ import annotations

from pathlib import Path

from bulkhead.layout.load import PLATFORMS_DIR
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import run

ROOT = Path(__file__).resolve().parents[2]
SPIN = "release: [0xd8, 0xe0, 0xe8, 0xf0]"


def test_a_cpu_left_in_the_spin_table_stops_the_boot(tmp_path: Path) -> None:
    """CPU 2's release address is 0x100, which QEMU's parked CPUs never read
    (their table is 0xd8 + 8 n): the hypervisor waits 2 s of counter time for
    it to report in, then panics and powers off (QEMU ends by itself)."""
    platforms = tmp_path / "platforms"
    platforms.mkdir()
    text = (PLATFORMS_DIR / "rpi4b.yaml").read_text()
    assert SPIN in text
    (platforms / "rpi4b.yaml").write_text(text.replace(SPIN, "release: [0xd8, 0xe0, 0x100, 0xf0]", 1))
    config = tmp_path / "two.yaml"
    config.write_text("platform: rpi4b\nvms:\n"
                      "  - {name: a, cpus: [1], memory: [{ipa: 0x40000000, size: 16M}], guest: hello}\n"
                      "  - {name: b, cpus: [2], memory: [{ipa: 0x40000000, size: 16M}], guest: hello}\n")
    res = run(config, RunOptions(timeout=180, icount=None, out=ROOT / "build" / "qemu-tests" / "rpi4-spin-table",
                                 platforms_dir=platforms))
    assert not res.timed_out and res.returncode == 0, res.output[-2000:]
    assert "[bulkhead] PANIC: CPU 2 did not leave the spin table (release address 100) in 2 s" in res.output, \
        res.output[-2000:]
    assert "[a] " in res.output  # CPU 1 left it: its VM ran meanwhile
    assert "[b] " not in res.output
