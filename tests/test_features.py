# SPDX-License-Identifier: Apache-2.0
"""What a build contains (#38 item 3, docs/ARCHITECTURE.md "Build flow"):
``bulkhead build`` writes features.h and features.mk from one decision
(bulkhead/generate/features.py); config.c refuses to compile against a build
that lacks a mechanism the configuration needs, naming the VM; the Makefile
refuses a feature given on the command line beside FEATURES_MK; a plain make
builds every mechanism with a header of its own. The banner's agreement with
these is tests/qemu/test_features.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead.base import tree
from bulkhead.config import mechanisms
from bulkhead.generate import build, features
from bulkhead.layout import placement
from bulkhead.layout.load import load_spec

ROOT = Path(__file__).resolve().parent.parent
HYP = ROOT / "hypervisor"

needs_cross = pytest.mark.skipif(shutil.which("aarch64-linux-gnu-gcc") is None,
                                 reason="needs the AArch64 cross compiler")


def header_features(text: str) -> dict[str, bool]:
    """BULKHEAD_FEATURE_<X> 0|1 of a features.h."""
    return {k: v == "1" for k, v in re.findall(r"^#define BULKHEAD_FEATURE_(\w+) ([01])$", text, re.M)}


def fragment_features(text: str) -> dict[str, bool]:
    """The switches and SMMU drivers of a features.mk, as features.h names them."""
    values = dict(re.findall(r"^(\w+) := (.*)$", text, re.M))
    smmus = values.pop("SMMU").split()
    for name in ("FEATURES_H", "FEATURE_NAMES", "FEATURES_UNUSED"):
        values.pop(name)
    return {**{k: v == "1" for k, v in values.items()}, **{d.upper(): d in smmus for d in tree.smmu_drivers()}}


def make(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-s", "--no-print-directory", "-j2", "-C", str(HYP), *args],
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], tuple[build.BuildResult, Path]]:
    """config -> (its `bulkhead build`, the output directory), built once."""
    done: dict[str, tuple[build.BuildResult, Path]] = {}

    def built(config: str) -> tuple[build.BuildResult, Path]:
        if config not in done:
            out = tmp_path_factory.mktemp("features") / Path(config).stem
            with open("/dev/null", "w") as null:
                done[config] = build.build(ROOT / config, out, log=null), out
        return done[config]

    return built


@pytest.mark.parametrize(("config", "on"), [
    ("configs/dual.yaml", {"SMMUV3"}),
    ("tests/configs/bw-basic.yaml", {"BW", "SMMUV3"}),
    ("tests/configs/direct.yaml", {"DIRECT", "SMMUV3"}),
    ("tests/configs/zcu102-qos.yaml", {"QOS"}),
])
def test_header_and_fragment_say_the_same(config: str, on: set[str]) -> None:
    system = placement.resolve(load_spec(ROOT / config, guest_sources=None))
    got = features.contents(system)
    assert {k for k, v in got.items() if v} == on
    assert header_features(features.header(system, "c.yaml")) == got
    assert fragment_features(features.make_fragment(system, "c.yaml")) == got
    assert f'#define BULKHEAD_FEATURES "{" ".join(sorted(on, key=list(got).index))}"' in features.header(system, "c")


@pytest.mark.parametrize(("config", "switch", "message"), [
    ("tests/configs/bw-basic.yaml", "BW", "vm bw is regulated (bandwidth), and this build leaves it out (BW=0"),
    ("tests/configs/direct.yaml", "DIRECT", "vm direct has interrupts: direct, and this build leaves it out (DIRECT=0"),
])
@needs_cross
def test_a_build_without_a_needed_mechanism_fails_naming_the_vm(config: str, switch: str, message: str,
                                                                 builds: Callable[[str], tuple[build.BuildResult, Path]],
                                                                 tmp_path: Path) -> None:
    """config.c of a configuration that needs ``switch``, built by hand with
    it off (a features.mk saying so): make fails compiling config.c, naming
    the VM, and links nothing (it used to link, and the boot stopped, or ran
    the VM without it)."""
    res, out = builds(config)
    args = [a for a in build.hypervisor_make_args(res.system, out) if not a.startswith(("O=", "FEATURES_MK="))]
    off = tmp_path / "off"
    fragment = build.write_features(tmp_path, {**features.contents(res.system), switch: False}, "off")
    made = make(f"O={off}", f"FEATURES_MK={fragment}", *args)
    assert made.returncode != 0 and message in made.stderr, made.stderr[-3000:]
    assert "config.c" in made.stderr
    assert not (off / "bulkhead.elf").exists()


@needs_cross
def test_another_builds_features_are_refused(builds: Callable[[str], tuple[build.BuildResult, Path]],
                                            tmp_path: Path) -> None:
    """bw-basic.yaml's config.c against dual.yaml's features.mk (no
    regulator): refused at build time naming the regulated VM."""
    bw, bw_out = builds("tests/configs/bw-basic.yaml")
    _, dual_out = builds("configs/dual.yaml")
    args = [a if not a.startswith("FEATURES_MK=") else f"FEATURES_MK={dual_out / 'features.mk'}"
            for a in build.hypervisor_make_args(bw.system, bw_out) if not a.startswith("O=")]
    made = make(f"O={tmp_path / 'mixed'}", *args)
    assert made.returncode != 0 and "vm bw is regulated (bandwidth)" in made.stderr, made.stderr[-3000:]


@needs_cross
def test_features_mk_cannot_be_overridden(builds: Callable[[str], tuple[build.BuildResult, Path]],
                                          tmp_path: Path) -> None:
    """Beside FEATURES_MK a switch on the command line would make the files
    built and the header disagree: refused before anything is built."""
    res, out = builds("configs/dual.yaml")
    args = [a for a in build.hypervisor_make_args(res.system, out) if not a.startswith("O=")]
    for extra in ("BW=1", "SMMU=smmu500", "FEATURES_UNUSED=", "FEATURE_NAMES=BW"):
        made = make(f"O={tmp_path / 'x'}", extra, *args)
        assert made.returncode != 0, made.stderr
        assert (f"{extra} on the command line: the features of this build come from "
                f"{out / 'features.mk'}") in made.stderr
        assert not (tmp_path / "x").exists()
    made = make(f"O={tmp_path / 'y'}", f"FEATURES_MK={tmp_path / 'none.mk'}",
                *(a for a in args if not a.startswith("FEATURES_MK=")))
    assert made.returncode != 0 and f"FEATURES_MK={tmp_path / 'none.mk'}: no such file" in made.stderr, made.stderr


@needs_cross
def test_plain_make_builds_everything(tmp_path: Path) -> None:
    """Without FEATURES_MK every mechanism and SMMU driver is built, and the
    header it generates says so (SMMU= may leave drivers out; a mechanism
    left out takes a features.mk)."""
    config_c = ROOT / "tests" / "golden" / "hello.config.c"
    header = tmp_path / "all" / "include" / "generated" / "features.h"
    made = make(f"O={tmp_path / 'all'}", f"CONFIG_C={config_c}", str(header))
    assert made.returncode == 0, made.stderr
    every = [*sorted(mechanisms.features()), *(d.upper() for d in tree.smmu_drivers())]
    assert header_features(header.read_text()) == dict.fromkeys(every, True)
    assert f'#define BULKHEAD_FEATURES "{" ".join(every)}"' in header.read_text()
    header = tmp_path / "some" / "include" / "generated" / "features.h"
    made = make(f"O={tmp_path / 'some'}", f"CONFIG_C={config_c}", "SMMU=smmuv3", str(header))
    assert made.returncode == 0, made.stderr
    got = header_features(header.read_text())
    assert {k for k, v in got.items() if not v} == {d.upper() for d in tree.smmu_drivers()} - {"SMMUV3"}
    made = make(f"O={tmp_path / 'none'}", f"CONFIG_C={config_c}", "IDA=0")
    assert made.returncode != 0 and "IDA=0: a plain make builds every mechanism" in made.stderr, made.stderr
    assert not (tmp_path / "none").exists()


def test_manifest_records_the_features(tmp_path: Path) -> None:
    """manifest.json's ``features`` is what was decided."""
    doc = build.manifest_doc(placement.resolve(load_spec(ROOT / "tests" / "configs" / "bw-basic.yaml",
                                                         guest_sources=None)),
                             ROOT / "tests" / "configs" / "bw-basic.yaml", tmp_path / "hyp" / "x.elf", [], [])
    feats = doc["features"]
    assert isinstance(feats, dict)
    assert {k for k, v in feats.items() if v} == {"BW", "SMMUV3"}


OLD_IDIOMS = re.compile(r"\bIOMMU_HAVE_\w+|\bBULKHEAD_(?!FEATURE_|FEATURES\b|FEATURES_H\b)(BW|RECOLOR|IDA|PCI|DSU|DIRECT|QOS)\b")


def old_idioms(text: str) -> list[str]:
    return [m[0] for m in OLD_IDIOMS.finditer(text)]


def test_one_idiom_asks_what_a_build_contains() -> None:
    """IS_ENABLED(X) only: a switch spelt the old way (-DBULKHEAD_X,
    IOMMU_HAVE_*) is never defined any more, so code behind it would
    silently drop out of every build."""
    found = [f"{p.relative_to(ROOT)}: {name}" for p in sorted((ROOT / "hypervisor").rglob("*.[chS]"))
             for name in old_idioms(p.read_text())]
    assert not found, found
    assert old_idioms("#if defined(IOMMU_HAVE_SMMUV3)\n#if BULKHEAD_DIRECT") == ["IOMMU_HAVE_SMMUV3", "BULKHEAD_DIRECT"]
    assert old_idioms("#if IS_ENABLED(DIRECT) /* BULKHEAD_FEATURE_DIRECT */") == []
