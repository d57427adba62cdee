# SPDX-License-Identifier: Apache-2.0
"""The toolchain's version, from git tags (docs/experiments.md "Citing").

Releases are tags ``vX.Y.Z`` (CHANGELOG.md). In a git checkout the version is
``git describe``'s: ``X.Y.Z`` on a tagged commit, ``X.Y.Z.postN+g<commit>``
N commits after it, with ``.dirty`` when a tracked or untracked (not
ignored) file differs from the commit; ``RELEASE.dev0+g<commit>`` when no tag
is reachable. Outside a checkout it is the installed package's version.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

RELEASE = "0.1.0"  # the latest release (CHANGELOG.md); the fallback without tags
TAG_RE = re.compile(r"v(\d+\.\d+\.\d+)-(\d+)-g([0-9a-f]+)\Z")
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Revision:
    """The source tree's state: its version, commit and whether it differs."""

    version: str
    commit: str  # full hash, or "unknown" outside a checkout
    dirty: bool
    changed: tuple[str, ...] = ()  # `git status --porcelain` lines (tracked and untracked)

    @property
    def short(self) -> str:
        """The commit (12 digits) with ``-dirty``, as results.csv's git_rev."""
        if self.commit == "unknown":
            return "unknown"
        return self.commit[:12] + ("-dirty" if self.dirty else "")


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def from_describe(describe: str | None, commit: str, dirty: bool) -> str:
    """The version for ``git describe --tags --long`` output ``describe``
    (None: no tag reachable)."""
    local = ".dirty" if dirty else ""
    m = TAG_RE.match(describe.strip()) if describe else None
    if m is None:
        return f"{RELEASE}.dev0+g{commit[:12]}{local}"
    release, distance = m[1], int(m[2])
    if distance == 0:
        return release + (f"+g{commit[:12]}{local}" if dirty else "")
    return f"{release}.post{distance}+g{commit[:12]}{local}"


def revision(root: Path = ROOT) -> Revision:
    """The state of the tree at ``root`` (not cached: it changes as files do)."""
    if shutil.which("git") is None or not (root / ".git").exists():
        return Revision(installed(), "unknown", False)
    commit = (_git(root, "rev-parse", "HEAD") or "").strip()
    if not commit:
        return Revision(installed(), "unknown", False)
    status = _git(root, "status", "--porcelain", "--untracked-files=all")
    changed = tuple(line for line in (status or "").splitlines() if line.strip())
    dirty = status is None or bool(changed)
    describe = _git(root, "describe", "--tags", "--long", "--match", "v[0-9]*", "HEAD")
    return Revision(from_describe(describe, commit, dirty), commit, dirty, changed)


@cache
def installed() -> str:
    """The installed package's version (its metadata), or RELEASE."""
    from importlib import metadata

    try:
        return metadata.version("bulkhead")
    except metadata.PackageNotFoundError:
        return RELEASE


@cache
def version() -> str:
    """The version of this process's toolchain (read once)."""
    return revision().version
