# SPDX-License-Identifier: Apache-2.0
"""Loading entry points: file -> platform -> checked spec -> resolved system."""

from __future__ import annotations

import os
from pathlib import Path

from bulkhead.config import schema, validate, yamlpos
from bulkhead.config.model import Platform, SystemSpec
from bulkhead.layout import placement as layout

REPO_ROOT = Path(__file__).resolve().parents[2]
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
    node, data = yamlpos.load(file, display)
    platform = schema.parse_platform(node, file, display, data)
    validate.check_platform(platform)
    return platform


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
