# SPDX-License-Identifier: Apache-2.0
"""scripts/kernelset.py: choosing a Debian kernel whose image, headers and kbuild tools resolve together.

The stub indexes reproduce the archive of 2026-11-28, when the security
archive had linux-headers-6.1.0-56-arm64:arm64 at 6.1.192-2 but
linux-kbuild-6.1 for amd64 only at 6.1.192-3 (and 6.1.176-1 in the main
archive), and setup asked for all three at 6.1.192-2.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "kernelset.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kernelset", SCRIPT)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kernelset"] = mod
    spec.loader.exec_module(mod)
    return mod


ks = _load()


def stanza(pkg: str, version: str, arch: str, depends: str = "") -> str:
    return f"Package: {pkg}\nVersion: {version}\nArchitecture: {arch}\n" + (f"Depends: {depends}\n" if depends else "")


def kernel(abi_n: int, version: str, x_y: str = "6.1", kbuild_min: str | None = None) -> list[str]:
    """The arm64 image, headers and common headers of one kernel build (no kbuild)."""
    abi = f"6.1.0-{abi_n}"
    return [
        stanza("linux-image-arm64", version, "arm64", f"linux-image-{abi}-arm64 (= {version})"),
        stanza(f"linux-image-{abi}-arm64", version, "arm64", "kmod, linux-base (>= 4.3~)"),
        stanza(f"linux-headers-{abi}-arm64", version, "arm64",
               f"linux-headers-{abi}-common (= {version}), linux-kbuild-{x_y} (>= {kbuild_min or version}), gcc-12"),
        stanza(f"linux-headers-{abi}-common", version, "all"),
    ]


def kbuild(version: str, arch: str = "amd64", x_y: str = "6.1") -> list[str]:
    return [stanza(f"linux-kbuild-{x_y}", version, arch, "libc6 (>= 2.34), libelf1 (>= 0.142)")]


# the archive as it was: 6.1.192-2 for arm64 (security), kbuild for amd64 at -3 only
SKEW = kernel(56, "6.1.192-2") + kernel(50, "6.1.176-1") + kbuild("6.1.192-3") + kbuild("6.1.176-1") \
    + kbuild("6.1.192-2", arch="arm64")
# bookworm-backports' kernel: newer than apt's candidate
BACKPORTS = [stanza("linux-image-arm64", "6.12.95-1~bpo12+1", "arm64", "linux-image-6.12.95+deb12-arm64 "
                    "(= 6.12.95-1~bpo12+1)")]


def index(tmp_path: Path, stanzas: list[str]) -> Path:
    p = tmp_path / "Packages"
    p.write_text("\n".join(stanzas))
    return p


def look(stanzas: list[str]) -> ks.Lookup:  # type: ignore[name-defined]
    return ks.index_lookup("\n".join(stanzas))


def test_the_skew_of_2026_11_28_resolves_with_the_same_upstream_kbuild() -> None:
    got = ks.resolve(look(SKEW + BACKPORTS), "amd64", candidate="6.1.192-2")
    assert (got.abi, got.version) == ("6.1.0-56-arm64", "6.1.192-2")
    assert (got.headers, got.common, got.common_version) == (
        "linux-headers-6.1.0-56-arm64", "linux-headers-6.1.0-56-common", "6.1.192-2")
    assert (got.kbuild, got.kbuild_version) == ("linux-kbuild-6.1", "6.1.192-3")
    assert "6.1.192-3" in got.note and "no linux-kbuild-6.1:amd64 at 6.1.192-2" in got.note


def test_the_cli_prints_what_setup_sources(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, str(SCRIPT), "--index", str(index(tmp_path, SKEW + BACKPORTS)),
                          "--host-arch", "amd64", "--candidate", "6.1.192-2"],
                         capture_output=True, text=True, check=True)
    out = subprocess.run(["bash", "-c", f"{res.stdout}\necho $KS_IMAGE=$KS_VERSION $KS_KBUILD=$KS_KBUILD_VERSION"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["linux-image-6.1.0-56-arm64=6.1.192-2", "linux-kbuild-6.1=6.1.192-3"]
    assert "took the same upstream's 6.1.192-3" in res.stderr


def test_an_exact_kbuild_is_preferred_to_a_later_revision() -> None:
    got = ks.resolve(look(SKEW + kbuild("6.1.192-2")), "amd64")
    assert got.kbuild_version == "6.1.192-2"
    assert "took the same upstream" not in got.note


def test_no_kbuild_of_the_same_upstream_falls_back_to_an_older_whole_kernel() -> None:
    # the security kernel's kbuild for amd64 is not built at all yet
    stanzas = kernel(56, "6.1.192-2") + kernel(50, "6.1.176-1") + kbuild("6.1.176-1")
    got = ks.resolve(look(stanzas), "amd64")
    assert (got.abi, got.version, got.kbuild_version) == ("6.1.0-50-arm64", "6.1.176-1", "6.1.176-1")
    assert "passed over: 6.1.0-56-arm64 6.1.192-2" in got.note


def test_a_kbuild_below_the_headers_dependency_is_not_taken() -> None:
    # same upstream, but older than the headers require: apt would refuse it
    stanzas = kernel(56, "6.1.192-3", kbuild_min="6.1.192-3") + kbuild("6.1.192-2") + kernel(50, "6.1.176-1") \
        + kbuild("6.1.176-1")
    assert ks.resolve(look(stanzas), "amd64").version == "6.1.176-1"


def test_missing_arm64_headers_fall_back() -> None:
    stanzas = [s for s in SKEW if not s.startswith("Package: linux-headers-6.1.0-56-arm64")]
    got = ks.resolve(look(stanzas), "amd64")
    assert got.version == "6.1.176-1"
    assert "linux-headers-6.1.0-56-arm64:arm64 6.1.192-2 is not in the archive" in got.note


def test_the_candidate_keeps_out_backports() -> None:
    bpo = BACKPORTS + [
        stanza("linux-image-6.12.95+deb12-arm64", "6.12.95-1~bpo12+1", "arm64"),
        stanza("linux-headers-6.12.95+deb12-arm64", "6.12.95-1~bpo12+1", "arm64",
               "linux-headers-6.12.95+deb12-common (= 6.12.95-1~bpo12+1), linux-kbuild-6.12.95+deb12 "
               "(= 6.12.95-1~bpo12+1)"),
        stanza("linux-headers-6.12.95+deb12-common", "6.12.95-1~bpo12+1", "all"),
        stanza("linux-kbuild-6.12.95+deb12", "6.12.95-1~bpo12+1", "amd64"),
    ]
    assert ks.resolve(look(SKEW + bpo), "amd64").version == "6.12.95-1~bpo12+1"
    assert ks.resolve(look(SKEW + bpo), "amd64", candidate="6.1.192-2").version == "6.1.192-2"


def test_abi_keeps_the_kernel_already_fetched() -> None:
    got = ks.resolve(look(SKEW), "amd64", abi="6.1.0-50-arm64")
    assert (got.abi, got.version) == ("6.1.0-50-arm64", "6.1.176-1")


def test_an_arm64_host_takes_arm64_kbuild() -> None:
    got = ks.resolve(look(SKEW), "arm64")
    assert (got.version, got.kbuild_version) == ("6.1.192-2", "6.1.192-2")


def test_nothing_resolves_is_an_error_naming_each_kernel(tmp_path: Path) -> None:
    stanzas = kernel(56, "6.1.192-2") + kernel(50, "6.1.176-1")
    res = subprocess.run([sys.executable, str(SCRIPT), "--index", str(index(tmp_path, stanzas)),
                          "--host-arch", "amd64"], capture_output=True, text=True)
    assert res.returncode == 1 and res.stdout == ""
    assert "6.1.0-56-arm64 6.1.192-2: no linux-kbuild-6.1:amd64" in res.stderr
    assert "6.1.0-50-arm64 6.1.176-1: no linux-kbuild-6.1:amd64" in res.stderr


@pytest.mark.parametrize("a,b", [
    ("6.1.192-2", "6.1.192-3"), ("6.1.176-1", "6.1.192-2"), ("6.12.95-1~bpo12+1", "6.12.95-1"),
    ("1.0~rc1", "1.0"), ("2.0", "1:0.9"), ("6.1.9-1", "6.1.10-1"), ("1.0a", "1.0b"), ("1.0", "1.0+deb12u1"),
])
def test_version_order_is_debians(a: str, b: str) -> None:
    assert ks.version_cmp(a, b) < 0 < ks.version_cmp(b, a)
    assert ks.version_cmp(a, a) == 0
    if shutil.which("dpkg"):
        assert subprocess.run(["dpkg", "--compare-versions", a, "lt", b]).returncode == 0


def test_setup_resolves_through_apt_cache(tmp_path: Path) -> None:
    """The apt-cache path: a stand-in apt-cache serves the skewed index to setup's own lookup."""
    idx = index(tmp_path, SKEW + BACKPORTS)
    fake = tmp_path / "bin" / "apt-cache"
    fake.parent.mkdir()
    fake.write_text(f"""#!{sys.executable}
import sys
sys.path.insert(0, {str(SCRIPT.parent)!r})
import kernelset
pkgs = list(kernelset.parse_stanzas(open({str(idx)!r}).read()))
cmd, name = sys.argv[1], sys.argv[2]
if cmd == "policy":
    print(name + ":\\n  Installed: (none)\\n  Candidate: 6.1.192-2")
    sys.exit(0)
base, _, arch = name.partition(":")
hits = [p for p in pkgs if p.name == base and (not arch or p.arch == arch)]
for p in hits:
    print(f"Package: {{p.name}}\\nVersion: {{p.version}}\\nArchitecture: {{p.arch}}")
    deps = ", ".join(d.name + (f" ({{d.op}} {{d.version}})" if d.op else "") for d in p.depends)
    print(f"Depends: {{deps}}\\n" if deps else "")
sys.exit(0 if hits else 100)
""")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    res = subprocess.run([sys.executable, str(SCRIPT), "--host-arch", "amd64"], capture_output=True, text=True,
                         env=env, check=True)
    assert "KS_KBUILD_VERSION=6.1.192-3" in res.stdout and "KS_VERSION=6.1.192-2" in res.stdout
