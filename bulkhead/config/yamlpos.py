# SPDX-License-Identifier: Apache-2.0
"""YAML loading that keeps the position of every node.

PyYAML's composer gives a node graph with start marks; this module turns it
into a small immutable tree (:class:`YScalar`, :class:`YList`, :class:`YMap`)
with 1-based positions, resolving scalars with YAML 1.1 core rules (ints in
hex/octal/binary, booleans, null) but never raising anything other than
:class:`~bulkhead.base.errors.ConfigError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from yaml.constructor import SafeConstructor

from bulkhead.base.errors import ConfigError, Diagnostic, Mark

ScalarValue = str | int | float | bool | None

_CORE = "tag:yaml.org,2002:"


@dataclass(frozen=True)
class YScalar:
    value: ScalarValue
    raw: str  # the scalar's source text (without quotes)
    mark: Mark
    plain: bool = False  # written without quotes (or block style), so YAML resolved its type


@dataclass(frozen=True)
class YList:
    items: tuple[YNode, ...]
    mark: Mark


@dataclass(frozen=True)
class YMap:
    items: tuple[tuple[YScalar, YNode], ...]  # keys are scalars, in file order
    mark: Mark


YNode = YScalar | YList | YMap


def describe(node: YNode) -> str:
    """How a node reads in 'expected X, got <describe>' messages."""
    if isinstance(node, YMap):
        return "a mapping"
    if isinstance(node, YList):
        return "a list"
    if node.value is None:
        return "null"
    if isinstance(node.value, str):
        return repr(node.value) if "'" not in node.value else '"' + node.value + '"'
    return node.raw


def load(path: Path, display: str) -> tuple[YNode, bytes]:
    """Read and parse one YAML document; ``display`` names the file in errors."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError.single(display, "file not found") from None
    except IsADirectoryError:
        raise ConfigError.single(display, "is a directory, not a YAML file") from None
    except OSError as exc:
        raise ConfigError.single(display, f"cannot read: {exc.strerror or exc}") from None
    return parse(data, display), data


def parse(data: bytes, display: str) -> YNode:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError([Diagnostic(display, f"not UTF-8 text (byte {exc.start})", line, col)]) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        raise _yaml_error(display, exc) from None
    except yaml.reader.ReaderError as exc:
        raise _reader_error(display, text, exc) from None
    except yaml.YAMLError as exc:
        raise ConfigError.single(display, f"invalid YAML: {exc}") from None
    if root is None:  # reported where the content would have to be: the end of the file
        line = text.count("\n") + 1
        col = len(text) - (text.rfind("\n") + 1) + 1
        raise ConfigError([Diagnostic(display, "empty document (no YAML content in the file)", line, col)])
    return _Converter(display).convert(root)


def _yaml_error(display: str, exc: yaml.MarkedYAMLError) -> ConfigError:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "invalid YAML"
    message = f"invalid YAML: {problem}"
    if exc.context and exc.problem:
        message = f"invalid YAML: {exc.problem} ({exc.context})"
    if mark is None:
        return ConfigError.single(display, message)
    return ConfigError([Diagnostic(display, message, mark.line + 1, mark.column + 1)])


def _reader_error(display: str, text: str, exc: yaml.reader.ReaderError) -> ConfigError:
    """A character the YAML reader rejects: locate it by line and column, not offset."""
    before = text[:exc.position]
    line = before.count("\n") + 1
    col = exc.position - (before.rfind("\n") + 1) + 1
    what = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
    message = f"invalid YAML: character {what} is not allowed in YAML text"
    return ConfigError([Diagnostic(display, message, line, col)])


class _Converter:
    def __init__(self, display: str) -> None:
        self.display = display
        self.done: dict[int, YNode] = {}
        self.active: set[int] = set()
        self.constructor = SafeConstructor()

    def mark(self, node: yaml.Node) -> Mark:
        m = node.start_mark
        return Mark(self.display, m.line + 1, m.column + 1)

    def fail(self, node: yaml.Node, message: str) -> ConfigError:
        mark = self.mark(node)
        return ConfigError([Diagnostic(mark.file, message, mark.line, mark.col)])

    def convert(self, node: yaml.Node) -> YNode:
        key = id(node)
        if key in self.done:
            return self.done[key]
        if key in self.active:
            raise self.fail(node, "recursive YAML alias")
        self.active.add(key)
        try:
            result = self._convert(node)
        finally:
            self.active.discard(key)
        self.done[key] = result
        return result

    def _convert(self, node: yaml.Node) -> YNode:
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return YList(tuple(self.convert(item) for item in node.value), self.mark(node))
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node)
        raise self.fail(node, "unsupported YAML node")  # pragma: no cover

    def mapping(self, node: yaml.MappingNode) -> YMap:
        try:
            self.constructor.flatten_mapping(node)  # resolves '<<' merge keys
        except yaml.MarkedYAMLError as exc:
            raise _yaml_error(self.display, exc) from None
        items: list[tuple[YScalar, YNode]] = []
        seen: dict[str, YScalar] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail(key_node, "mapping keys must be plain strings")
            key = YScalar(str(key_node.value), str(key_node.value), self.mark(key_node))
            if key.raw in seen:
                first = seen[key.raw].mark
                raise self.fail(key_node, f"duplicate key '{key.raw}' (first at line {first.line})")
            seen[key.raw] = key
            items.append((key, self.convert(value_node)))
        return YMap(tuple(items), self.mark(node))

    def scalar(self, node: yaml.ScalarNode) -> YScalar:
        raw = str(node.value)
        tag = str(node.tag)
        value: ScalarValue
        try:
            if tag == _CORE + "null":
                value = None
            elif tag == _CORE + "bool":
                value = bool(self.constructor.construct_yaml_bool(node))
            elif tag == _CORE + "int":
                value = int(self.constructor.construct_yaml_int(node))
            elif tag == _CORE + "float":
                value = float(self.constructor.construct_yaml_float(node))
            elif tag.startswith(_CORE) or tag == "!":
                value = raw  # str, timestamp, binary, ...: keep the text
            else:
                raise self.fail(node, f"unsupported YAML tag '{tag}'")
        except (ValueError, ArithmeticError):
            value = raw
        return YScalar(value, raw, self.mark(node), node.style is None)
