# SPDX-License-Identifier: Apache-2.0
"""How a run is asked for: :class:`RunOptions`, one value for everything a
run of a config can be told, and :class:`Backend`, where it boots.

Every backend takes ``(config, options)`` and returns a
:class:`bulkhead.run.result.RunResult` judged the same way: the local QEMU
(:func:`bulkhead.run.runner.run`, also in timing mode: ``options.timing``),
a labgrid place (:class:`bulkhead.run.farm.PlaceBackend`), and the fakes of
the tests. A backend refuses, with a :class:`RunError` and before booting
anything, an option it cannot honour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TextIO

from bulkhead.base.errors import RunError
from bulkhead.layout.load import PLATFORMS_DIR
from bulkhead.run.result import RunResult

BOOT_MODES = ("image", "uboot", "tfa")


@dataclass(frozen=True)
class RunOptions:
    """One run's options (``bulkhead run``'s flags; docs/usage.md).

    ``timeout`` bounds the QEMU run, not the build (None: unbounded);
    ``icount``: QEMU's -icount shift (None: host time); ``out``: the build
    directory (None: build/<system>); ``boot``: ``image`` (QEMU loads the
    images), ``uboot`` or ``tfa`` (a firmware chain; docs/firmware.md), with
    ``fit_in_ram`` U-Boot boots the FIT from RAM, not over TFTP; ``until``:
    end the run as soon as the console matches (clean unless something went
    wrong before: :func:`bulkhead.run.result.judge`); ``netdev``: the
    -netdev backend of the shared I/O device (docs/io.md); ``model``: under
    the cache model plugin (docs/model.md; -icount 0 unless ``icount`` says
    otherwise); ``timing``: timing mode with this quantum in ns (the cache
    model with its timing model, the vCPUs side by side without -icount;
    implies ``model``); ``platforms_dir``: where the config's platform file
    is looked up; ``extra_qemu_args``: appended to QEMU's command line;
    ``gdb_port``: QEMU waits there for a debugger (``gdb_halt``, the
    default) or runs at once and serves one there; ``interactive``: stdin is
    passed through; ``poke = (data, interval)``: ``data`` is written to
    QEMU's stdin at once and every ``interval`` seconds; ``stream``
    receives the console live (None: captured only), ``build_log`` make's
    and dtc's output (None: stderr).

    Options that contradict each other are refused when the value is made.
    """

    timeout: float | None
    icount: int | None = None
    out: Path | None = None
    boot: str = "image"
    fit_in_ram: bool = False
    until: re.Pattern[str] | None = None
    netdev: str | None = None
    model: bool = False
    timing: int | None = None
    platforms_dir: Path = PLATFORMS_DIR
    extra_qemu_args: tuple[str, ...] = ()
    gdb_port: int | None = None
    gdb_halt: bool = True
    interactive: bool = False
    poke: tuple[bytes, float] | None = None
    stream: TextIO | None = field(default=None, compare=False)
    build_log: TextIO | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.boot not in BOOT_MODES:
            raise RunError(f"unknown boot mode '{self.boot}' ({', '.join(BOOT_MODES)})")
        if self.timing is not None and self.icount is not None:
            raise RunError("timing mode runs the vCPUs side by side without -icount (the model owns time): "
                           "drop --icount or --timing (docs/model.md \"Timing mode\")")
        if self.timing is not None and self.timing <= 0:
            raise RunError(f"the timing mode's quantum must be > 0 ns, not {self.timing}")


class Backend(Protocol):
    """Where runs boot: builds ``config`` (incrementally, into
    ``options.out``), boots it, judges it. Raises ConfigError / BuildError
    when the system cannot be built, RunError for an option the backend
    cannot honour (and :class:`bulkhead.run.farm.PlaceLost` when a place
    fails under the run)."""

    def __call__(self, config: Path | str, options: RunOptions, /) -> RunResult: ...
