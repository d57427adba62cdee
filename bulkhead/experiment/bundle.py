# SPDX-License-Identifier: Apache-2.0
"""An experiment's output as a self-contained, citable bundle
(docs/experiments.md "Bundle and --reproduce").

Beside ``results.csv`` the runner writes

- ``bundle/spec.yaml``: the spec made self-contained (its base system inline,
  file paths absolute), what ``--reproduce`` runs; ``bundle/original/``: the
  spec and base config as given; ``bundle/platforms/``: every platform file
  the runs used (and those they extend); the generated configs are
  ``configs/``;
- ``bundle.json``: the toolchain's version, commit and dirty state (tracked
  and untracked files), the command's options, the SHA-256 of the spec, the
  platform files and configs, and of what each config booted (hypervisor
  image, guest images: kernels and initramfs among them), of the QEMU binary
  (with its version) and of the model plugin; the unit of every column (also
  ``results-units.csv``).

:func:`compare` reads two bundles' ``results.csv`` and lists where they differ
beyond the spec's ``tolerance``, and where their inputs differ.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import json
import math
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from bulkhead.base.errors import BuildError
from bulkhead.base.version import Revision
from bulkhead.experiment.results import METRIC_COLUMNS
from bulkhead.experiment.spec import ExperimentSpec
from bulkhead.layout.load import PLATFORMS_DIR

FORMAT = 1
BUNDLE_JSON = "bundle.json"
BUNDLE_DIR = "bundle"
SPEC_FILE = f"{BUNDLE_DIR}/spec.yaml"
UNITS_CSV = "results-units.csv"  # column, unit: one row per column of results.csv
# results.csv columns that identify a run, and those that are not its results
KEY = ("scenario", "variant", "benchmark", "repetition")
NOT_COMPARED = frozenset({"run", "wall_s", "config", "config_hash", "platform", "icount", "bulkhead_version",
                          "git_rev", "qemu_version", "host", "place", "error", "guest", "metric", "unit"})
# units of results.csv's columns beyond the metric columns (bundle.json "columns")
FIXED_UNITS = {"repetition": "", "wall_s": "s (host time)", "icount": "shift (2^N ns per instruction)",
               "value": "see the row's unit column"}
# units of sweep labels by their suffix
SUFFIX_UNITS = {"_us": "µs", "_ms": "ms", "_ns": "ns", "_events": "events per period", "_mbps": "MB/s",
                "_pct": "%"}

_hashes: dict[tuple[str, int, int], str] = {}


def sha256(path: Path | str) -> str:
    """The file's SHA-256 (cached by path, size and modification time)."""
    st = os.stat(path)
    key = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    if key not in _hashes:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _hashes[key] = h.hexdigest()
    return _hashes[key]


def _file(path: Path | str | None) -> dict[str, str] | None:
    if not path or not Path(path).is_file():
        return None
    return {"file": str(path), "sha256": sha256(path)}


def content_sha256(path: Path) -> str:
    """The SHA-256 of a YAML file's lines that are not comments (a generated
    config's header names the spec it came from, which a reproduction moves)."""
    lines = [line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def binary(name: str) -> str | None:
    """The absolute path of an executable (as the shell would find it)."""
    if os.sep in name:
        return name if os.path.isfile(name) else None
    return shutil.which(name)


def run_artefacts(build_dir: Path, argv: Sequence[str]) -> dict[str, Any]:
    """What one run booted: the hypervisor image (QEMU's ``-kernel``), every
    guest image of the build's ``manifest.json`` (bare-metal guests, Linux
    kernels, initramfs), the model plugin (``-plugin``) and the QEMU binary."""
    found: dict[str, Any] = {}
    args = list(argv)
    if "-kernel" in args[:-1]:
        found["hypervisor"] = _file(args[args.index("-kernel") + 1])
    for i, arg in enumerate(args[:-1]):
        if arg == "-plugin":
            found["plugin"] = _file(args[i + 1].split(",", 1)[0])
    if args:
        path = binary(args[0])
        found["qemu"] = _file(path) if path else None
    manifest = build_dir / "manifest.json"
    if manifest.is_file():
        try:
            doc = json.loads(manifest.read_text())
        except (OSError, ValueError):
            doc = {}
        found["images"] = [{k: img.get(k) for k in ("vm", "name", "file", "sha256")}
                           for img in doc.get("images") or [] if isinstance(img, dict)]
        if "hypervisor" not in found:
            found["hypervisor"] = _file((doc.get("hypervisor") or {}).get("file"))
    return {k: v for k, v in found.items() if v is not None}


def self_contained_spec(spec: ExperimentSpec) -> dict[str, Any]:
    """The spec's YAML with its base system inline (file paths absolute)."""
    doc = yaml.safe_load(spec.file.read_text())
    if not isinstance(doc, dict):
        raise BuildError(f"{spec.display}: not a mapping")
    doc.pop("base", None)
    doc["system"] = spec.base
    return doc


def platform_files(names: Sequence[str], platforms_dir: Path = PLATFORMS_DIR) -> list[Path]:
    """The platform files of ``names`` and those they extend."""
    files: list[Path] = []
    todo = [n for n in names if n]
    while todo:
        path = platforms_dir / f"{todo.pop(0)}.yaml"
        if path in files or not path.is_file():
            continue
        files.append(path)
        doc = yaml.safe_load(path.read_text())
        parent = doc.get("extends") if isinstance(doc, dict) else None
        if isinstance(parent, str):
            todo.append(parent)
    return files


def column_units(columns: Sequence[str]) -> dict[str, str]:
    """The unit of each results.csv column ("" for a count, a name or a text)."""
    units: dict[str, str] = {}
    for c in columns:
        if c in METRIC_COLUMNS:
            units[c] = METRIC_COLUMNS[c].unit
        elif c in FIXED_UNITS:
            units[c] = FIXED_UNITS[c]
        else:
            units[c] = next((u for s, u in SUFFIX_UNITS.items() if c.endswith(s)), "")
    return units


def write(spec: ExperimentSpec, out: Path, rev: Revision, command: Mapping[str, Any],
          qemu: Mapping[str, str], platforms: Sequence[str], artefacts: Mapping[str, Mapping[str, Any]],
          columns: Sequence[str]) -> Path:
    """Write ``out/bundle/`` and ``out/bundle.json``; returns the latter.
    ``artefacts``: :func:`run_artefacts` per config stem."""
    bdir = out / BUNDLE_DIR
    (bdir / "original").mkdir(parents=True, exist_ok=True)
    (bdir / "platforms").mkdir(exist_ok=True)
    spec_path = out / SPEC_FILE
    header = (f"# Self-contained copy of {spec.display} (bulkhead {rev.version}, commit {rev.short}): "
              "the base system inline. bulkhead experiment --reproduce runs it.\n")
    spec_path.write_text(header + yaml.safe_dump(self_contained_spec(spec), sort_keys=False, width=100))
    originals = [spec.file]
    given = yaml.safe_load(spec.file.read_text()).get("base")
    if isinstance(given, str) and (spec.file.parent / given).is_file():
        originals.append(spec.file.parent / given)
    for src in originals:
        shutil.copyfile(src, bdir / "original" / src.name)
    plat = {}
    for src in platform_files(platforms):
        shutil.copyfile(src, bdir / "platforms" / src.name)
        plat[src.stem] = {"file": f"{BUNDLE_DIR}/platforms/{src.name}", "sha256": sha256(src)}
    configs = {p.stem: {"file": f"configs/{p.name}", "sha256": sha256(p), "content_sha256": content_sha256(p)}
               for p in sorted((out / "configs").glob("*.yaml"))}
    units = column_units(columns)
    plugins = {a["plugin"]["sha256"]: a["plugin"] for a in artefacts.values() if a.get("plugin")}
    doc = {
        "format": FORMAT,
        "experiment": spec.name,
        "written": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "toolchain": {"version": rev.version, "commit": rev.commit, "dirty": rev.dirty,
                      "changed": list(rev.changed[:100])},
        "command": dict(command),
        "tolerance": spec.tolerance,
        "spec": {"file": SPEC_FILE, "sha256": sha256(spec_path), "original": f"{BUNDLE_DIR}/original/"
                 f"{spec.file.name}", "original_sha256": sha256(spec.file)},
        "platforms": plat,
        "configs": configs,
        "qemu": dict(qemu),
        "plugin": next(iter(plugins.values()), None),
        "booted": {stem: dict(a) for stem, a in sorted(artefacts.items())},
        "columns": units,
    }
    with open(out / UNITS_CSV, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("column", "unit"))
        w.writerows(units.items())
    path = out / BUNDLE_JSON
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return path


def load(out: Path) -> dict[str, Any]:
    """``out/bundle.json``; BuildError if it is missing or not a bundle."""
    path = out / BUNDLE_JSON
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise BuildError(f"{path}: no bundle here (an experiment run with this version writes one)") from None
    except (OSError, ValueError) as exc:
        raise BuildError(f"{path}: unreadable: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BuildError(f"{path}: not a bundle of format {FORMAT}")
    return doc


def _rows(out: Path) -> tuple[list[str], dict[tuple[str, ...], dict[str, str]]]:
    path = out / "results.csv"
    if not path.is_file():
        raise BuildError(f"{path}: no results")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = {tuple(r[k] for k in KEY): r for r in reader}
        return list(reader.fieldnames or []), rows


def _number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _run(key: tuple[str, ...]) -> str:
    scenario, variant, bench, rep = key
    return f"{scenario}{f'[{variant}]' if variant else ''} {bench} #{rep}"


def compare(old: Path, new: Path, tolerance: float) -> list[str]:
    """Where ``new``'s results differ from ``old``'s beyond ``tolerance``
    (relative, per value): missing or extra runs, another status or flags, a
    value further than ``tolerance`` from the old one."""
    cols_old, rows_old = _rows(old)
    cols_new, rows_new = _rows(new)
    diffs: list[str] = []
    for key in rows_old.keys() - rows_new.keys():
        diffs.append(f"{_run(key)}: in {old} only")
    for key in rows_new.keys() - rows_old.keys():
        diffs.append(f"{_run(key)}: in {new} only")
    columns = [c for c in cols_old if c in cols_new and c not in NOT_COMPARED and c not in KEY]
    for key in sorted(rows_old.keys() & rows_new.keys(), key=lambda k: int(rows_old[k]["run"])):
        a, b = rows_old[key], rows_new[key]
        for c in columns:
            va, vb = a.get(c, ""), b.get(c, "")
            if va == vb:
                continue
            na, nb = _number(va), _number(vb)
            if na is not None and nb is not None:
                if abs(nb - na) <= tolerance * max(abs(na), abs(nb)):
                    continue
                rel = abs(nb - na) / abs(na) if na else math.inf
                diffs.append(f"{_run(key)}: {c} {va} -> {vb} ({rel:.2%} apart, tolerance {tolerance:.2%})")
            else:
                diffs.append(f"{_run(key)}: {c} '{va}' -> '{vb}'")
    return diffs


def input_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Which inputs of two bundles differ: toolchain commit and dirty state,
    QEMU, plugin, spec, platform files, configs, booted images."""
    out: list[str] = []
    ta, tb = old.get("toolchain", {}), new.get("toolchain", {})
    for k in ("version", "commit", "dirty"):
        if ta.get(k) != tb.get(k):
            out.append(f"toolchain {k}: {ta.get(k)} -> {tb.get(k)}")
    for what in ("qemu", "plugin"):
        a, b = old.get(what) or {}, new.get(what) or {}
        if a.get("sha256") != b.get("sha256") or a.get("version") != b.get("version"):
            out.append(f"{what}: {a.get('version', '')} {a.get('sha256', 'none')[:16]} -> "
                       f"{b.get('version', '')} {b.get('sha256', 'none')[:16]}".replace("  ", " "))
    for group, key in (("platforms", "sha256"), ("configs", "content_sha256")):
        a, b = old.get(group) or {}, new.get(group) or {}
        for name in sorted(a.keys() | b.keys()):
            if (a.get(name) or {}).get(key) != (b.get(name) or {}).get(key):
                out.append(f"{group[:-1]} {name}: differs")
    ba, bb = old.get("booted") or {}, new.get("booted") or {}
    for stem in sorted(ba.keys() & bb.keys()):
        ha, hb = (ba[stem].get("hypervisor") or {}), (bb[stem].get("hypervisor") or {})
        if ha.get("sha256") != hb.get("sha256"):
            out.append(f"hypervisor image of {stem}: differs")
        ia = {(i.get("vm"), i.get("name")): i.get("sha256") for i in ba[stem].get("images") or []}
        ib = {(i.get("vm"), i.get("name")): i.get("sha256") for i in bb[stem].get("images") or []}
        for vm, name in sorted(k for k in ia.keys() | ib.keys() if ia.get(k) != ib.get(k)):
            out.append(f"image {name} of VM {vm} in {stem}: differs")
    return out
