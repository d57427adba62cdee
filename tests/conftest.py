# SPDX-License-Identifier: Apache-2.0
"""Shared pytest options and fixtures."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"


def pytest_configure(config: pytest.Config) -> None:
    """The binary fixtures are generated, not committed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make_fixtures()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup` (scripts/test.sh) pytest-xdist keeps the tests of
    one `xdist_group` on one worker by suffixing their node ids; some pytest
    versions ignore the suffix (9.2), and the farm tests then race two labs.
    Refuse to run rather than hang."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            raise pytest.UsageError(
                f"pytest {pytest.__version__} with pytest-xdist does not apply xdist_group "
                f"({item.nodeid}): install the versions in scripts/constraints.txt (bash scripts/setup.sh venv)")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the expected files in tests/golden/ instead of comparing",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch directory that is also the working directory, holding a
    fake arm64 kernel (``Image``), an ``initrd`` and a raw guest ``img.bin``,
    so configs can name files relatively and errors read ``c.yaml:L:C: ...``."""
    shutil.copy(FIXTURES / "linux" / "Image", tmp_path / "Image")
    shutil.copy(FIXTURES / "linux" / "initrd.cpio.gz", tmp_path / "initrd")
    shutil.copy(FIXTURES / "guests" / "hello.bin", tmp_path / "img.bin")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def write_config(sandbox: Path) -> Callable[..., str]:
    """write_config(text, name="c.yaml") -> the relative path written."""

    def write(text: str, name: str = "c.yaml") -> str:
        (sandbox / name).write_text(textwrap.dedent(text).lstrip("\n"))
        return name

    return write
