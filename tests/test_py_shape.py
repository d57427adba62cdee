# SPDX-License-Identifier: Apache-2.0
"""The toolchain stays in readable pieces (#38 item 5): no Python file of
``bulkhead/`` over 800 lines, no function (or method) over 120 lines; every
mechanism module of the config stage (one with a system ``check``) is
registered in ``validate.MECHANISMS`` and has the same shape: ``check(s) ->
(errors, warnings)`` and a docs page its docstring names.

Read from the source (ast): a function's length runs from its ``def`` (its
decorators aside) to its last line, nested functions included. Each check
is shown to fail on a toy package that breaks it.
"""

from __future__ import annotations

import ast
import inspect
import re
import types
from pathlib import Path
from typing import cast

import bulkhead
from bulkhead.config import validate

PKG = Path(bulkhead.__file__).resolve().parent
DOCS = PKG.parent / "docs"
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


def mechanism_modules(config: Path) -> list[str]:
    """Modules of the config package with a top-level ``check(s: SystemSpec)``."""
    out = []
    for path in sorted(config.glob("*.py")):
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.FunctionDef) and node.name == "check" and node.args.args \
                    and ast.unparse(node.args.args[0].annotation or ast.Constant("")) == "SystemSpec":
                out.append(path.stem)
    return out


def shape_problems(module: types.ModuleType, docs: Path = DOCS) -> list[str]:
    """How ``module`` differs from the mechanism shape."""
    name = module.__name__.rsplit(".", 1)[-1]
    check = getattr(module, "check", None)
    if check is None:
        return [f"{name}: no check(s)"]
    out = []
    if inspect.signature(check).return_annotation != "tuple[list[Diagnostic], list[Diagnostic]]":
        out.append(f"{name}: check(s) does not return (errors, warnings)")
    pages = re.findall(r"docs/([a-z0-9_/-]+\.md)", module.__doc__ or "")
    if not pages or not all((docs / page).is_file() for page in pages):
        out.append(f"{name}: its docstring names no docs page that exists")
    return out


def test_every_mechanism_is_registered_with_the_same_shape() -> None:
    modules = [cast(types.ModuleType, m) for m in validate.MECHANISMS]
    assert sorted(m.__name__.rsplit(".", 1)[-1] for m in modules) == mechanism_modules(PKG / "config")
    assert [p for m in modules for p in shape_problems(m)] == []


def test_the_shape_checks_find_a_stray_mechanism(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]: ...\n")
    (tmp_path / "helper.py").write_text("def check(x: int) -> None: ...\n")
    assert mechanism_modules(tmp_path) == ["good"]
    stray = types.ModuleType("bulkhead.config.stray", "The stray mechanism (docs/nowhere.md).")
    assert shape_problems(stray) == ["stray: no check(s)"]

    def check(s: object) -> list[object]:
        return []

    stray.check = check  # type: ignore[attr-defined]
    assert shape_problems(stray) == ["stray: check(s) does not return (errors, warnings)",
                                     "stray: its docstring names no docs page that exists"]
    assert len(mechanism_modules(PKG / "config")) >= 8  # the real package was read
