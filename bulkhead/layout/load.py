# SPDX-License-Identifier: Apache-2.0
"""Loading entry points: file -> platform -> checked spec -> resolved system."""

from __future__ import annotations

import os
from pathlib import Path

from bulkhead.base.errors import ConfigError, Diagnostic
from bulkhead.base.tree import REPO_ROOT
from bulkhead.config import schema, validate, yamlpos
from bulkhead.config.model import Platform, SystemSpec
from bulkhead.layout import placement as layout

PLATFORMS_DIR = REPO_ROOT / "platforms"
GUESTS_DIR = REPO_ROOT / "guests"


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when below it, else absolute."""
    absolute = path.absolute()
    try:
        rel = os.path.relpath(absolute)
    except ValueError:
        return str(absolute)
    return str(absolute) if rel.startswith("..") else rel


def available_platforms(platforms_dir: Path = PLATFORMS_DIR) -> list[str]:
    try:
        return sorted(p.stem for p in platforms_dir.glob("*.yaml"))
    except OSError:
        return []


def load_platform(name: str, platforms_dir: Path = PLATFORMS_DIR) -> Platform:
    """Load and check ``platforms/<name>.yaml``."""
    file = platforms_dir / f"{name}.yaml"
    if not file.is_file():
        raise schema.unknown_platform(name, available_platforms(platforms_dir))
    display = display_path(file)
    node, data = _extends(yamlpos.load(file, display), platforms_dir, (name,))
    platform = schema.parse_platform(node, file, display, data)
    validate.check_platform(platform)
    return platform


def _extends(loaded: tuple[yamlpos.YNode, bytes], platforms_dir: Path,
             chain: tuple[str, ...]) -> tuple[yamlpos.YNode, bytes]:
    """``extends: <platform>`` at the top of a platform file: the named
    platform's keys, each top-level key the file gives replacing the
    base's (e.g. a QEMU variant with other ``qos_regulators``)."""
    node, data = loaded
    if not isinstance(node, yamlpos.YMap):
        return node, data
    ext = next((v for k, v in node.items if k.raw == "extends"), None)
    if ext is None:
        return node, data
    base = ext.value if isinstance(ext, yamlpos.YScalar) else None
    if not isinstance(base, str) or base in chain or not (platforms_dir / f"{base}.yaml").is_file():
        message = (f"platform '{base}' extends itself" if base in chain else
                   f"unknown platform '{base}'; available: {', '.join(available_platforms(platforms_dir))}")
        raise ConfigError([Diagnostic.at(ext.mark, "extends", message)])
    file = platforms_dir / f"{base}.yaml"
    base_node, base_data = _extends(yamlpos.load(file, display_path(file)), platforms_dir, (*chain, base))
    assert isinstance(base_node, yamlpos.YMap)
    own = {k.raw: (k, v) for k, v in node.items if k.raw != "extends"}
    items = [own.pop(k.raw) if k.raw in own else (k, v) for k, v in base_node.items]
    return yamlpos.YMap(tuple(items) + tuple(own.values()), node.mark), base_data + data


def load_spec(
    path: Path | str, *, guest_sources: Path | None = GUESTS_DIR, platforms_dir: Path = PLATFORMS_DIR
) -> SystemSpec:
    """Parse and semantically check a system config (files must exist)."""
    file = Path(path)
    display = str(path)
    node, data = yamlpos.load(file, display)
    spec = schema.parse_system(
        node, file.absolute(), display, data, lambda name: load_platform(name, platforms_dir)
    )
    validate.check_system(spec, guest_sources)
    return spec


def load_system(
    path: Path | str, *, guest_sources: Path | None = GUESTS_DIR, platforms_dir: Path = PLATFORMS_DIR
) -> layout.System:
    """Parse, check and lay out a system config.

    Raises :class:`~bulkhead.base.errors.ConfigError` for any invalid input.
    """
    return layout.resolve(load_spec(path, guest_sources=guest_sources, platforms_dir=platforms_dir))
