# SPDX-License-Identifier: Apache-2.0
"""A board names its drivers; drivers live in hypervisor/drivers/ (#27 item 4).

The toolchain's valid ``uart.driver`` and ``gic.version`` values are those
of the drivers' descriptors (bulkhead/drivers/<kind>/, one per file of
``hypervisor/drivers/<kind>/``: tests/test_drivers.py); ``qemu:`` is optional in a
platform file: such a board checks and builds, and ``run`` refuses it (exit 2).
"""

from __future__ import annotations

import io
import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base import tree
from bulkhead.base.errors import ConfigError, NoQemuModelError
from bulkhead.config.model import GIC_VERSIONS, UART_DRIVERS
from bulkhead.generate import build as build_mod
from bulkhead.generate import gen_c
from bulkhead.layout.load import PLATFORMS_DIR, load_spec, load_system
from bulkhead.run import runner
from bulkhead.run.backend import RunOptions

ROOT = Path(__file__).resolve().parents[1]
DRIVERS = ROOT / "hypervisor" / "drivers"

CONFIG = """\
platform: {platform}
vms:
  - {{name: bm, cpus: [0], memory: [{{ipa: 0x40000000, size: 4M}}], image: img.bin}}
"""

FAKE_HYP_MAKEFILE = """\
all:
\tmkdir -p $(O)
\tcp $(CONFIG_C) $(O)/bulkhead.elf
\tcp $(CONFIG_C) $(O)/bulkhead.bin
"""


def test_the_driver_lists_are_the_driver_files() -> None:
    uarts = sorted(p.stem for p in (DRIVERS / "uart").glob("*.c") if p.stem != "uart")
    gics = sorted(int(p.stem[4:]) for p in (DRIVERS / "gic").glob("gicv*.c") if "_" not in p.stem)  # not gicv3_its.c
    assert list(UART_DRIVERS) == uarts and {"pl011", "cadence"} <= set(uarts)
    assert list(GIC_VERSIONS) == gics and {2, 3} <= set(gics)
    assert not list((ROOT / "hypervisor" / "arch").rglob("uart*")) + list((ROOT / "hypervisor" / "arch").rglob("gic*"))


def test_a_new_driver_is_a_new_file(tmp_path: Path) -> None:
    """What tree.drivers reads: a file added to drivers/uart/ is a driver."""
    (tmp_path / "uart").mkdir()
    for name in ("uart.c", "pl011.c", "uart.h", "ns16550.c"):
        (tmp_path / "uart" / name).write_text("")
    assert tree.uart_drivers(tmp_path) == ("ns16550", "pl011")
    assert tree.gic_versions(tmp_path) == ()


def test_make_names_the_drivers_it_has(tmp_path: Path) -> None:
    """The Makefile's error for an unknown driver lists the ones in the tree."""
    for var, value, message in (
        ("UART", "xr16c850", f"UART=xr16c850: no UART driver drivers/uart/xr16c850.c (drivers: {' '.join(UART_DRIVERS)})"),
        ("GIC", "4", "GIC=4: the GIC architecture is 2 or 3"),
        ("GIC_DRIVER", "gic600", f"GIC_DRIVER=gic600: no GIC driver drivers/gic/gic600.c (drivers: "
                                 f"{' '.join(f'gicv{v}' for v in GIC_VERSIONS)})"),
        # the platform quirk gic.virq (core/vgic/vgic_v3_virq.c): GICv3 only
        ("GIC_VIRQ", "maybe", "GIC_VIRQ=maybe: wired or software"),
        ("GIC_VIRQ", "software GIC=2", "GIC_VIRQ=software: a GICv3 quirk (GIC=2)"),
    ):
        res = subprocess.run(["make", "-s", "-C", str(ROOT / "hypervisor"), f"O={tmp_path}", "CONFIG_C=x.c",
                              *f"{var}={value}".split()], capture_output=True, text=True)
        assert res.returncode != 0 and message in res.stderr, res.stderr


def test_unknown_uart_driver_lists_the_tree(tmp_path: Path, sandbox: Path) -> None:
    text = (PLATFORMS_DIR / "qemu-virt.yaml").read_text()
    plat = tmp_path / "platforms"
    plat.mkdir()
    (plat / "p.yaml").write_text(text.replace("name: qemu-virt", "name: p\nboard: qemu-virt")
                                 .replace("uart: {base: 0x09000000, irq: 33}",
                                          "uart: {base: 0x09000000, irq: 33, driver: xr16c850}"))
    (sandbox / "c.yaml").write_text(CONFIG.format(platform="p"))
    with pytest.raises(ConfigError) as exc:
        load_spec("c.yaml", platforms_dir=plat)
    assert re.search(r"p\.yaml:\d+:\d+: uart\.driver: expected one of " + ", ".join(UART_DRIVERS)
                     + ", got 'xr16c850'", str(exc.value)), str(exc.value)


@pytest.fixture
def board_without_qemu(tmp_path: Path, sandbox: Path) -> Path:
    """A platform directory holding 'board': qemu-virt's facts without 'qemu:'."""
    text = (PLATFORMS_DIR / "qemu-virt.yaml").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("qemu:")]
    assert len(lines) == len(text.splitlines()) - 1
    plat = tmp_path / "platforms"
    plat.mkdir()
    (plat / "board.yaml").write_text("\n".join(lines).replace("name: qemu-virt", "name: board\nboard: qemu-virt")
                                     + "\n")
    (sandbox / "c.yaml").write_text(CONFIG.format(platform="board"))
    return plat


def test_a_board_without_qemu_checks_and_builds(board_without_qemu: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    system = load_system("c.yaml", platforms_dir=board_without_qemu)
    assert system.platform.qemu is None and system.platform.name == "board"
    hyp = tmp_path / "fake-hyp"
    hyp.mkdir()
    (hyp / "Makefile").write_text(FAKE_HYP_MAKEFILE)
    monkeypatch.setattr(build_mod, "HYPERVISOR_DIR", hyp)
    out = tmp_path / "out"
    result = build_mod.build(Path("c.yaml"), out, log=io.StringIO(), platforms_dir=board_without_qemu)
    assert result.elf.is_file() and result.itb.is_file() and result.qemu_argv == ()
    assert json.loads((out / "manifest.json").read_text())["qemu"] == []


def test_run_refuses_a_board_without_qemu(board_without_qemu: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Refused before anything is built; the CLI exits 2 (usage) with the reason."""
    out = tmp_path / "out"
    with pytest.raises(NoQemuModelError, match=r"platform 'board' \(.*board\.yaml\) has no QEMU model"):
        runner.run("c.yaml", RunOptions(timeout=5, out=out, platforms_dir=board_without_qemu))
    assert not out.exists()

    real = runner.run
    monkeypatch.setattr(runner, "run", lambda c, o: real(c, replace(o, platforms_dir=board_without_qemu)))
    code = cli.main(["run", "c.yaml", "--out", str(out), "--timeout", "5"])
    err = capsys.readouterr().err
    assert code == 2 and "bulkhead: error: platform 'board'" in err and "has no QEMU model" in err, err
    assert not out.exists()


@pytest.mark.parametrize(("uart", "expected"), [
    ("", ("pl011", 2, 4)),
    (", driver: ns16550", ("ns16550", 0, 1)),  # a byte-spaced 16550 (the descriptor's defaults)
    (", driver: ns16550, reg_shift: 1", ("ns16550", 1, 1)),
    (", driver: ns16550, reg_shift: 2, reg_io_width: 4", ("ns16550", 2, 4)),
    (", driver: dw8250", ("dw8250", 2, 4)),
])
def test_uart_spacing_reaches_config_c(tmp_path: Path, sandbox: Path, uart: str,
                                       expected: tuple[str, int, int]) -> None:
    """uart.reg_shift and uart.reg_io_width (bulkhead/drivers/uart/<driver>.py's
    defaults unless given) go into config.c's struct uart_dev with the driver's ops."""
    text = (PLATFORMS_DIR / "qemu-virt.yaml").read_text()
    plat = tmp_path / "platforms"
    plat.mkdir()
    (plat / "p.yaml").write_text(text.replace("name: qemu-virt", "name: p\nboard: qemu-virt")
                                 .replace("uart: {base: 0x09000000, irq: 33}",
                                          f"uart: {{base: 0x09000000, irq: 33{uart}}}"))
    (sandbox / "c.yaml").write_text(CONFIG.format(platform="p"))
    (sandbox / "img.bin").write_bytes(bytes(64))
    u = load_spec("c.yaml", platforms_dir=plat).platform.uart
    assert (u.driver, u.reg_shift, u.reg_io_width) == expected
    driver, shift, width = expected
    config_c = gen_c.generate(load_system("c.yaml", platforms_dir=plat), [], "c.yaml")
    assert f"extern const struct uart_ops {driver}_ops;" in config_c
    assert f".uart = {{ .ops = &{driver}_ops, .base = 0x9000000, .reg_shift = {shift}, " \
           f".reg_io_width = {width} }}," in config_c
