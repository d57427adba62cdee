# SPDX-License-Identifier: Apache-2.0
"""scripts/check-commits.sh (#26 item 3): every non-merge commit since the
baseline has a subject of at most 72 characters with a conventional-commit
prefix; the script fails, naming the commit, on a planted bad subject."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check-commits.sh"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def check(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=repo, capture_output=True, text=True)


def test_the_history_since_the_baseline_passes() -> None:
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "-q", "9a8083b^{commit}"],
                      capture_output=True).returncode != 0:
        pytest.skip("the baseline commit is not in this clone (shallow?)")
    res = check(ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("check-commits: ") and res.stdout.rstrip().endswith("pass")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


@pytest.mark.parametrize(("subject", "ok"), [
    ("feat(smmu): stream tables for the ZynqMP SMMU", True),
    ("fix!: the console drops no line", True),
    ("refactor(core,arch): one predicate", True),
    ("docs: " + "x" * 66, True),  # 72 characters
    ("docs: " + "x" * 67, False),  # 73
    ("Fix the console", False),
    ("feature(x): not a type", False),
    ("fix(console) no colon", False),
    ("fix:no space", False),
])
def test_a_planted_subject(tmp_path: Path, subject: str, ok: bool) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a").write_text("a")
    git(tmp_path, "add", "a")
    git(tmp_path, "commit", "-q", "-m", "chore: base")
    base = git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "a").write_text("b")
    git(tmp_path, "commit", "-q", "-am", subject, "-m", "a body line that is long " * 10)
    git(tmp_path, "checkout", "-q", "-b", "side", base)
    (tmp_path / "b").write_text("b")
    git(tmp_path, "add", "b")
    git(tmp_path, "commit", "-q", "-m", "test: side")
    git(tmp_path, "checkout", "-q", "-")
    git(tmp_path, "merge", "-q", "--no-ff", "-m", "Merge branch 'side' (merges are not checked)", "side")
    res = check(tmp_path, base)
    if ok:
        assert res.returncode == 0 and "3 commit subject(s)" not in res.stdout, res.stderr
        assert "2 commit subject(s) since" in res.stdout, res.stdout
    else:
        sha = git(tmp_path, "log", "-1", "--format=%h", "HEAD^1")
        assert res.returncode == 1 and f"{sha} {subject}" in res.stderr, res.stderr
        assert "1 of 2 commit subject(s)" in res.stderr


def test_usage_errors(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    assert check(tmp_path, "nope").returncode == 2
    assert check(ROOT, "a", "b", "c").returncode == 2
    assert check(ROOT, "--help").stdout.startswith("Checks the subject")
