# SPDX-License-Identifier: Apache-2.0
"""The documentation a newcomer follows stays true: README.md lists every
docs page, relative links resolve, every `bulkhead <command> --option`
written in README.md or docs/ exists, the Python commands docs/io.md shows
(`.venv/bin/python -m MODULE --opt`, `.venv/bin/python bench/x.py --opt`)
run and take the options shown, and the tutorial's config and its error
example behave as the tutorial shows."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.generate import features
from bulkhead.layout.load import load_system

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md"))
READMES = [ROOT / "README.md", ROOT / "guests" / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")
COMMAND = re.compile(r"bulkhead (check|build|run|dt|experiment)\b([^`|\n]*)")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = cli.make_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_readme_lists_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [str(p.relative_to(ROOT)) for p in PAGES if f"({p.relative_to(ROOT)})" not in readme]
    assert not missing, f"README.md does not link: {missing}"


@pytest.mark.parametrize("page", READMES + PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if not (page.parent / path).exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: links to nothing: {broken}"


@pytest.mark.parametrize("page", READMES + PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_commands_and_options_exist(page: Path) -> None:
    commands = _subparsers()
    wrong = []
    for command, rest in COMMAND.findall(page.read_text()):
        options = commands[command]._option_string_actions
        wrong += [f"bulkhead {command} {opt}" for opt in re.findall(r"(?<![\w-])--[a-z][a-z-]*", rest)
                  if opt not in options]
    assert not wrong, f"{page.relative_to(ROOT)}: options that do not exist: {wrong}"


def _tutorial_config() -> str:
    text = (ROOT / "docs" / "tutorial.md").read_text()
    match = re.search(r"```yaml\n(.*?)```", text, re.S)
    assert match, "docs/tutorial.md has no yaml block"
    return match.group(1)


def test_tutorial_config_checks_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "first.yaml"
    config.write_text(_tutorial_config())
    system = load_system(config)
    assert [(vm.name, list(vm.cpus)) for vm in system.vms] == [("hello", [0]), ("ticker", [1])]
    tutorial = (ROOT / "docs" / "tutorial.md").read_text()
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "first.yaml"]) == 0
    headline = capsys.readouterr().out.splitlines()[0]
    assert f"$ .venv/bin/bulkhead check first.yaml\n{headline}\n" in tutorial, headline
    built = features.banner(features.contents(system))
    assert f"config {system.config_hash:016x}, 2 VM(s), features: {built}" in tutorial
    # the mistake the tutorial makes, with the message it shows
    config.write_text(_tutorial_config().replace("cpus: [1]", "cpus: [0]"))
    with pytest.raises(ConfigError) as err:
        load_system(config)
    message = str(err.value).replace(str(config), "first.yaml")
    assert f"bulkhead: error: {message}" in tutorial, message


TOP_DIRS = ("hypervisor/", "guests/", "tests/", "bulkhead/", "scripts/", "configs/", "platforms/",
            "bench/", "tools/", "linux/", "docs/", "farm/")


@pytest.mark.parametrize("page", READMES + PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_repository_files_exist(page: Path) -> None:
    """A file named in backticks from the repository root (`tests/qemu/x.py`,
    `hypervisor/core/console/console.c:42`) exists: renamed files leave no stale
    names behind."""
    stale = [name for name in re.findall(r"`([A-Za-z0-9_./-]+)(?::\d+)?`", page.read_text())
             if name.startswith(TOP_DIRS) and not (ROOT / name).exists()]
    assert not stale, f"{page.relative_to(ROOT)}: names files that do not exist: {stale}"


PYTHON_COMMAND = re.compile(r"^\s*(?:\$ )?\.venv/bin/python3? (-m [\w.]+|[\w/]+\.py)([^#\n]*)", re.M)
COMMAND_PAGES = [ROOT / "docs" / "io.md"]


@pytest.mark.parametrize("page", COMMAND_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_python_commands_run(page: Path) -> None:
    """Every Python command line of the page (a module or a script of the
    repository) exists, answers --help, and knows every --option written
    after it (e.g. docs/io.md's peer: bulkhead/run/netpeer.py, run as
    `python -m bulkhead.run.netpeer`)."""
    found = PYTHON_COMMAND.findall(page.read_text())
    assert found, f"{page.relative_to(ROOT)}: no Python command found"
    for target, rest in found:
        argv = target.split() if target.startswith("-m ") else [str(ROOT / target)]
        if not target.startswith("-m "):
            assert (ROOT / target).is_file(), f"{page.relative_to(ROOT)}: no such script {target}"
        done = subprocess.run([sys.executable, *argv, "--help"], capture_output=True, text=True, timeout=60,
                              cwd=ROOT)
        assert done.returncode == 0, f"{target} --help: {done.stderr[-2000:]}"
        unknown = [opt for opt in re.findall(r"(?<![\w-])--[a-z][a-z-]*", rest) if opt not in done.stdout]
        assert not unknown, f"{page.relative_to(ROOT)}: {target} has no options {unknown}"
