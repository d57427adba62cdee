# SPDX-License-Identifier: Apache-2.0
"""Typed reading of a YAML tree (:mod:`bulkhead.config.yamlpos`) for the schema
checks: :class:`Reader` checks a node's type and value syntax, records the
position of every key path it reads and raises a positioned
:class:`~bulkhead.base.errors.ConfigError` otherwise. Used by :mod:`bulkhead.config.schema`
and by the section parsers it calls (bandwidth, shared I/O, experiment specs).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from bulkhead.base.errors import ConfigError, Diagnostic
from bulkhead.config.model import Locs, Range
from bulkhead.config.yamlpos import YList, YMap, YNode, YScalar, describe

NAME_RE = re.compile(r"[a-z][a-z0-9_-]{0,15}\Z")
SIZE_RE = re.compile(r"\s*(0[xX][0-9a-fA-F]+|[0-9]+)\s*([KMGkmg])?\s*\Z")
SIZE_UNITS = {"": 0, "k": 10, "m": 20, "g": 30}
U64_MAX = (1 << 64) - 1
# YAML 1.1's booleans other than true/false, as it spells them
YAML11_WORD_BOOLEANS = {w: v for words, v in (("y yes on", True), ("n no off", False))
                        for word in words.split() for w in (word, word.capitalize(), word.upper())}

T = TypeVar("T")


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class Reader:
    """Typed accessors over a YAML tree that record every position read."""

    def __init__(self, locs: Locs) -> None:
        self.locs = locs

    def fail(self, node: YNode | YScalar, path: str, message: str) -> ConfigError:
        return ConfigError([Diagnostic.at(node.mark, path, message)])

    def visit(self, node: YNode, path: str) -> None:
        self.locs.add(path, node.mark)

    def mapping(
        self,
        node: YNode,
        path: str,
        keys: Sequence[str],
        required: Sequence[str] = (),
        what: str = "a mapping",
    ) -> dict[str, YNode]:
        self.visit(node, path)
        if not isinstance(node, YMap):
            raise self.fail(node, path, f"expected {what}, got {describe(node)}")
        found: dict[str, YNode] = {}
        for key, value in node.items:
            if key.raw not in keys:
                expected = ", ".join(keys)
                raise self.fail(
                    key, join(path, key.raw), f"unknown key '{key.raw}'; expected one of: {expected}"
                )
            found[key.raw] = value
            self.visit(value, join(path, key.raw))
        for key_name in required:
            if key_name not in found:
                raise self.fail(node, path, f"missing required key '{key_name}'")
        return found

    def seq(self, node: YNode, path: str, what: str = "a list") -> tuple[YNode, ...]:
        self.visit(node, path)
        if not isinstance(node, YList):
            raise self.fail(node, path, f"expected {what}, got {describe(node)}")
        for i, item in enumerate(node.items):
            self.visit(item, f"{path}[{i}]")
        return node.items

    def each(
        self, node: YNode, path: str, read: Callable[[YNode, str], T], what: str = "a list"
    ) -> tuple[T, ...]:
        return tuple(read(item, f"{path}[{i}]") for i, item in enumerate(self.seq(node, path, what)))

    def integer(
        self, node: YNode, path: str, what: str = "an integer", lo: int | None = None,
        hi: int | None = None,
    ) -> int:
        self.visit(node, path)
        if not (isinstance(node, YScalar) and type(node.value) is int):
            raise self.fail(node, path, f"expected {what}, got {describe(node)}")
        value = node.value
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise self.fail(node, path, f"expected {what}, got {node.raw}")
        return value

    def address(self, node: YNode, path: str, what: str = "an address (integer)") -> int:
        value = self.integer(node, path, what)
        if value < 0:
            raise self.fail(node, path, f"address must not be negative, got {node_text(node)}")
        if value > U64_MAX:
            raise self.fail(node, path, f"address {node_text(node)} does not fit in 64 bits")
        return value

    def irq(self, node: YNode, path: str) -> int:
        return self.integer(node, path, "an interrupt ID (integer 0-1019)", 0, 1019)

    def size(self, node: YNode, path: str) -> int:
        self.visit(node, path)
        what = "a size (integer, or a string like '16M')"
        value: int | None = None
        if isinstance(node, YScalar):
            if type(node.value) is int:
                value = node.value
            elif isinstance(node.value, str):
                m = SIZE_RE.match(node.value)
                if m:
                    value = int(m.group(1), 0) << SIZE_UNITS[(m.group(2) or "").lower()]
        if value is None:
            raise self.fail(node, path, f"expected {what}, got {describe(node)}")
        if value <= 0:
            raise self.fail(node, path, f"size must be greater than 0, got {node_text(node)}")
        if value > U64_MAX:
            raise self.fail(node, path, f"size {node_text(node)} does not fit in 64 bits")
        return value

    def string(self, node: YNode, path: str, what: str = "a string") -> str:
        self.visit(node, path)
        if not (isinstance(node, YScalar) and isinstance(node.value, str)):
            raise self.fail(node, path, f"expected {what}, got {describe(node)}")
        return node.value

    def text(self, node: YNode, path: str, what: str = "a string") -> str:
        """A one-line printable string (no control characters)."""
        value = self.string(node, path, what)
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            raise self.fail(node, path, "must not contain control characters (newline, tab, ...)")
        return value

    def name(self, node: YNode, path: str, what: str = "a name", regex: re.Pattern[str] = NAME_RE) -> str:
        value = self.string(node, path, what)
        if not regex.match(value):
            raise self.fail(
                node, path,
                f"invalid {what.removeprefix('a ').removeprefix('an ')} '{value}': "
                f"use lowercase letters, digits, '_' and '-', starting with a letter"
                + (", at most 16 characters" if regex is NAME_RE else ""),
            )
        return value

    def boolean(self, node: YNode, path: str) -> bool:
        self.visit(node, path)
        if not (isinstance(node, YScalar) and isinstance(node.value, bool)):
            raise self.fail(node, path, f"expected true or false, got {describe(node)}")
        return node.value

    def plain_boolean(self, node: YNode, path: str) -> None:
        """Refuse a plain scalar that YAML 1.1 reads as a boolean but is not
        spelled true or false (y, yes, on, n, no, off in their YAML 1.1
        cases) where a value is passed on as text (a guest's ``params``):
        ``mode: off`` would reach the guest as false (y and n, which this
        loader keeps as text, read as booleans in other YAML 1.1 tools)."""
        if isinstance(node, YScalar) and node.plain and node.raw in YAML11_WORD_BOOLEANS:
            as_bool = "true" if YAML11_WORD_BOOLEANS[node.raw] else "false"
            raise self.fail(node, path, f"{node.raw} is a boolean ({as_bool}) in YAML 1.1, not the text "
                                        f"'{node.raw}': write \"{node.raw}\" (quoted) for the text, or {as_bool} "
                                        "for the boolean")

    def choice(self, node: YNode, path: str, choices: Sequence[str]) -> str:
        value = self.string(node, path, "one of " + ", ".join(choices))
        if value not in choices:
            raise self.fail(node, path, f"expected one of {', '.join(choices)}, got '{value}'")
        return value

    def file(self, node: YNode, path: str, base: Path) -> Path:
        value = self.text(node, path, "a file path (string)")
        if not value.strip():
            raise self.fail(node, path, "file path must not be empty")
        return base / Path(value).expanduser()

    def range(self, node: YNode, path: str, base_key: str = "base") -> Range:
        m = self.mapping(node, path, (base_key, "size"), (base_key, "size"))
        return Range(self.address(m[base_key], join(path, base_key)), self.size(m["size"], join(path, "size")))

    def cache_geometry(self, node: YNode, q: str, what: str) -> tuple[int, int, int]:
        """``{size, ways, line}`` of a cache: a power-of-two line, at least one
        set and a power-of-two number of them."""
        g = self.mapping(node, q, ("size", "ways", "line"), ("size", "ways", "line"), "a mapping {size, ways, line}")
        size = self.size(g["size"], join(q, "size"))
        ways = self.integer(g["ways"], join(q, "ways"), "a number of ways (integer 1-1024)", 1, 1024)
        line = self.integer(g["line"], join(q, "line"), "a line size in bytes (integer 16-1024)", 16, 1024)
        if line & (line - 1):
            raise self.fail(g["line"], join(q, "line"), f"the line size must be a power of two, got {node_text(g['line'])}")
        if size < ways * line or size % (ways * line):
            raise self.fail(g["size"], join(q, "size"), f"an {what} of {node_text(g['size'])} cannot have "
                                                        f"{ways} ways of {line}-byte lines")
        # the ways need not be a power of two (the RK3588's 3 MiB L3 has 12), the sets must
        sets = size // (ways * line)
        if sets & (sets - 1):
            raise self.fail(g["size"], join(q, "size"), f"the {what} size must be a power-of-two number of sets "
                                                        f"({ways} ways of {line}-byte lines), got {node_text(g['size'])}")
        return size, ways, line


def node_text(node: YNode) -> str:
    if isinstance(node, YScalar):
        return node.raw
    return describe(node)
