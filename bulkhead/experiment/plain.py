# SPDX-License-Identifier: Apache-2.0
"""Plain data of experiment specs (docs/experiments.md): YAML trees as dicts
and lists, the deep merge of a scenario's overlays into the base config, and
dotted key paths (a sweep's ``key``).

Deep merge: mappings merge key by key (a ``null`` value deletes the key);
lists whose items are mappings with a ``name`` (or ``vm``) key merge item by
item by that key, new items appended; anything else is replaced.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from bulkhead.config.yamlpos import YList, YMap, YNode

_FILE_KEYS = ("kernel", "initrd", "image")
_MERGE_KEYS = ("name", "vm")


def to_plain(node: YNode) -> Any:
    """A YAML tree as dicts, lists and scalars."""
    if isinstance(node, YMap):
        return {k.raw: to_plain(v) for k, v in node.items}
    if isinstance(node, YList):
        return [to_plain(v) for v in node.items]
    return node.value


def _merge_key(item: Any) -> tuple[str, Any] | None:
    if isinstance(item, dict):
        for key in _MERGE_KEYS:
            if key in item:
                return key, item[key]
    return None


def deep_merge(base: Any, overlay: Any) -> Any:
    """``overlay`` merged into a copy of ``base`` (see the module docstring)."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        out = {k: copy.deepcopy(v) for k, v in base.items()}
        for key, value in overlay.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = deep_merge(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
        return out
    if isinstance(base, list) and isinstance(overlay, list):
        keyed = [_merge_key(x) for x in base]
        if base and all(keyed) and all(_merge_key(x) for x in overlay):
            out_list = [copy.deepcopy(x) for x in base]
            for item in overlay:
                mk = _merge_key(item)
                for i, existing in enumerate(out_list):
                    if _merge_key(existing) == mk:
                        out_list[i] = deep_merge(existing, item)
                        break
                else:
                    out_list.append(copy.deepcopy(item))
            return out_list
    return copy.deepcopy(overlay)


class PathError(Exception):
    """A sweep key does not lead anywhere in the config."""


def set_path(config: dict[str, Any], key: str, value: Any) -> None:
    """Set dotted ``key`` (list items by index, ``name`` or ``vm``) to ``value``."""
    parts = key.split(".")
    node: Any = config
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = ".".join(parts[:i]) or "the config"
        if isinstance(node, dict):
            if last:
                node[part] = copy.deepcopy(value)
                return
            if node.get(part) is None:
                node[part] = {}
            node = node[part]
        elif isinstance(node, list):
            idx = _list_index(node, part)
            if idx is None:
                raise PathError(f"'{key}': {where} has no item '{part}'")
            if last:
                node[idx] = copy.deepcopy(value)
                return
            node = node[idx]
        else:
            raise PathError(f"'{key}': {where} is not a mapping or list")


def _list_index(items: list[Any], part: str) -> int | None:
    if part.isdigit():
        return int(part) if int(part) < len(items) else None
    for i, item in enumerate(items):
        mk = _merge_key(item)
        if mk is not None and str(mk[1]) == part:
            return i
    return None


def absolute_files(vms: Any, base_dir: Path) -> None:
    """Make the file paths of VM entries absolute (relative to base_dir)."""
    if not isinstance(vms, list):
        return
    for vm in vms:
        if not isinstance(vm, dict):
            continue
        for key in _FILE_KEYS:
            value = vm.get(key)
            if isinstance(value, str) and value.strip() and not Path(value).expanduser().is_absolute():
                vm[key] = str((base_dir / Path(value).expanduser()).resolve())
