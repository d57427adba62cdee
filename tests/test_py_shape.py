# SPDX-License-Identifier: Apache-2.0
"""The toolchain stays in readable pieces (#38 item 5): no Python file of
``bulkhead/`` over 800 lines, no function (or method) over 120 lines (the
mechanisms' shape: tests/test_mechanisms.py).

Read from the source (ast): a function's length runs from its ``def`` (its
decorators aside) to its last line, nested functions included. Each check
is shown to fail on a toy package that breaks it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import bulkhead

PKG = Path(bulkhead.__file__).resolve().parent
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120


def long_files(pkg: Path, limit: int = MAX_FILE_LINES) -> list[str]:
    """``path: n lines`` of every module below ``pkg`` longer than ``limit``."""
    out = []
    for path in sorted(pkg.rglob("*.py")):
        n = len(path.read_text().splitlines())
        if n > limit:
            out.append(f"{path.relative_to(pkg.parent)}: {n} lines")
    return out


def long_functions(pkg: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``path:line name: n lines`` of every function below ``pkg`` longer than ``limit``."""
    out = []
    for path in sorted(pkg.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node in sorted(functions, key=lambda n: n.lineno):
            n = (node.end_lineno or node.lineno) - node.lineno + 1
            if n > limit:
                out.append(f"{path.relative_to(pkg.parent)}:{node.lineno} {node.name}: {n} lines")
    return out


def test_no_file_over_800_lines() -> None:
    assert long_files(PKG) == []


def test_no_function_over_120_lines() -> None:
    assert long_functions(PKG) == []


def test_the_checks_find_long_files_and_functions(tmp_path: Path) -> None:
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    method = "".join(f"        x{i} = {i}\n" for i in range(120))  # 121 lines with its def
    function = "".join(f"    y{i} = {i}\n" for i in range(120))
    (pkg / "sub" / "long.py").write_text(f"class C:\n    def m(self) -> None:\n{method}\n\ndef f() -> None:\n{function}")
    (pkg / "sub" / "short.py").write_text("def g() -> None:\n" + "".join(f"    z{i} = {i}\n" for i in range(119)))
    assert long_files(pkg, 240) == ["toy/sub/long.py: 245 lines"]
    assert long_files(pkg) == []
    assert long_functions(pkg) == ["toy/sub/long.py:2 m: 121 lines", "toy/sub/long.py:125 f: 121 lines"]
    assert long_functions(pkg, 121) == []
    assert len(long_files(PKG, 100)) > 10 and len(long_functions(PKG, 40)) > 20  # the real tree was read
