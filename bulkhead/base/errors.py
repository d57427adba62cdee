# SPDX-License-Identifier: Apache-2.0
"""Errors the toolchain reports to the user (never as a traceback)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Mark:
    """A position in a file: 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    """One problem: where (file position and key path) and what."""

    file: str
    message: str
    line: int | None = None
    col: int | None = None
    path: str = ""

    @classmethod
    def at(cls, mark: Mark, path: str, message: str) -> Diagnostic:
        return cls(file=mark.file, message=message, line=mark.line, col=mark.col, path=path)

    def as_dict(self) -> dict[str, str | int | None]:
        """JSON-ready form: file, line, column, key path and message."""
        return {"file": self.file, "line": self.line, "column": self.col, "path": self.path,
                "message": self.message}

    def sort_key(self) -> tuple[str, int, int]:
        return (self.file, self.line or 0, self.col or 0)

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}:{self.col or 1}"
        if self.path:
            return f"{where}: {self.path}: {self.message}"
        return f"{where}: {self.message}"


class ConfigError(Exception):
    """The configuration (or platform file) is invalid.

    Carries one or more diagnostics; ``str()`` gives one per line, each as
    ``FILE:LINE:COL: key.path: message``.
    """

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        if not self.diagnostics:
            raise ValueError("ConfigError needs at least one diagnostic")
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    @classmethod
    def single(cls, file: str, message: str) -> ConfigError:
        return cls([Diagnostic(file=file, message=message)])


class BuildError(Exception):
    """An external step (make, dtc, a missing tool or file) failed."""


class RunError(BuildError):
    """QEMU could not be started."""


class NoQemuModelError(RunError):
    """The platform has no QEMU model (no ``qemu:``): it builds, but cannot
    run (the CLI exits 2, a usage error)."""
