# SPDX-License-Identifier: Apache-2.0
"""C source text: the writer ``config.c`` is built with and its literals
(:mod:`bulkhead.generate.gen_c`, and each mechanism's tables,
:mod:`bulkhead.config.mechanism`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Field = tuple[str, str]  # a designated initializer: (member, C expression)


def hexa(value: int) -> str:
    return f"0x{value:x}"


def cstr(value: str) -> str:
    out = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{out}"'


def struct_rows(rows: Iterable[Sequence[Field]]) -> list[str]:
    """One ``{ .member = value, ... },`` line per row of an array of structs."""
    return ["\t{ " + ", ".join(f".{k} = {v}" for k, v in row) + " },\n" for row in rows]


class CSource:
    """Lines of C, and the names of tables emitted earlier that later ones
    refer to (``ref``: e.g. a color selection -> ``&colors[0]``)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.refs: dict[object, str] = {}

    def line(self, text: str = "") -> None:
        self.parts.append(text + "\n")

    def array(self, decl: str, rows: list[str]) -> None:
        self.parts.append(f"{decl}[] = {{\n")
        self.parts.extend(rows)
        self.parts.append("};\n")

    def ref(self, key: object) -> str:
        """The C expression naming the table emitted for ``key``."""
        return self.refs[key]

    def text(self) -> str:
        return "".join(self.parts)
