#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Choose a Debian arm64 kernel whose image, headers and kbuild tools resolve together.

scripts/setup.sh builds Bulkhead's Linux modules against Debian's arm64
kernel headers. Those need three packages besides the image:
``linux-headers-<abi>`` (arm64), ``linux-headers-<abi-base>-common`` (all)
and ``linux-kbuild-<x.y>`` for the *host's* architecture. While a kernel
security update is being built, the archive can hold the arm64 headers at
one Debian revision and the host's kbuild at another (6.1.192-2 against
6.1.192-3), so asking for all three at one version fails.

This picks, from the newest kernel that apt would install downwards, the
first whose whole set exists: the image and headers at the kernel's exact
version, the common headers at that version, and kbuild at that version or
else at any Debian revision of the same upstream version that still meets
the headers' dependency (the kbuild tools are built from the same upstream
source). It prints shell assignments (``KS_*``) for setup.sh to source and
says on stderr which versions it took and why.

The package data comes from ``apt-cache show``/``apt-cache policy``, or from
a Packages-format file (``--index``, as the tests use); stdlib only.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

META = "linux-image-arm64"
KARCH = "arm64"


# --- Debian version ordering (deb-version(7), as dpkg compares them) ---------
def _order(c: str) -> int:
    if c == "~":
        return -1
    if c.isdigit():
        return 0
    if c.isalpha():
        return ord(c)
    return ord(c) + 256


def _cmp_part(a: str, b: str) -> int:
    i = j = 0
    while i < len(a) or j < len(b):
        diff = 0
        while (i < len(a) and not a[i].isdigit()) or (j < len(b) and not b[j].isdigit()):
            ac = _order(a[i]) if i < len(a) else 0
            bc = _order(b[j]) if j < len(b) else 0
            if ac != bc:
                return ac - bc
            i += 1
            j += 1
        while i < len(a) and a[i] == "0":
            i += 1
        while j < len(b) and b[j] == "0":
            j += 1
        while i < len(a) and a[i].isdigit() and j < len(b) and b[j].isdigit():
            if not diff:
                diff = ord(a[i]) - ord(b[j])
            i += 1
            j += 1
        if i < len(a) and a[i].isdigit():
            return 1
        if j < len(b) and b[j].isdigit():
            return -1
        if diff:
            return diff
    return 0


def _split(v: str) -> tuple[int, str, str]:
    epoch = 0
    if ":" in v:
        e, v = v.split(":", 1)
        epoch = int(e)
    up, _, rev = v.rpartition("-") if "-" in v else (v, "", "")
    return epoch, up, rev


def version_cmp(a: str, b: str) -> int:
    """<0, 0 or >0 as Debian version a sorts before, with or after b."""
    ea, ua, ra = _split(a)
    eb, ub, rb = _split(b)
    if ea != eb:
        return ea - eb
    return _cmp_part(ua, ub) or _cmp_part(ra, rb)


def upstream(v: str) -> str:
    return _split(v)[1]


def satisfies(v: str, op: str, want: str) -> bool:
    c = version_cmp(v, want)
    return {"=": c == 0, ">=": c >= 0, "<=": c <= 0, ">>": c > 0, "<<": c < 0}[op]


# --- package records ---------------------------------------------------------
@dataclass(frozen=True)
class Dep:
    name: str
    op: str = ""
    version: str = ""


@dataclass
class Pkg:
    name: str
    version: str
    arch: str
    depends: list[Dep] = field(default_factory=list)


_DEP = re.compile(r"^\s*([a-z0-9][a-z0-9+.-]*)(?::[a-z0-9-]+)?\s*(?:\(\s*(>=|<=|>>|<<|=)\s*([^)\s]+)\s*\))?\s*$")


def parse_depends(text: str) -> list[Dep]:
    """The first alternative of each clause of a Depends field."""
    deps = []
    for clause in text.split(","):
        m = _DEP.match(clause.split("|")[0])
        if m:
            deps.append(Dep(m[1], m[2] or "", m[3] or ""))
    return deps


def parse_stanzas(text: str) -> Iterator[Pkg]:
    for block in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and key:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, _, val = line.partition(":")
                fields[key] = val.strip()
        if "Package" in fields and "Version" in fields:
            yield Pkg(fields["Package"], fields["Version"], fields.get("Architecture", ""),
                      parse_depends(fields.get("Depends", "")) + parse_depends(fields.get("Pre-Depends", "")))


Lookup = Callable[[str, str], list[Pkg]]


def index_lookup(text: str) -> Lookup:
    pkgs = list(parse_stanzas(text))

    def look(name: str, arch: str) -> list[Pkg]:
        return [p for p in pkgs if p.name == name and p.arch in (arch, "all")]
    return look


def apt_lookup(name: str, arch: str) -> list[Pkg]:
    found: list[Pkg] = []
    # an arch-all package is not shown under an architecture qualifier
    for query in (f"{name}:{arch}", name):
        res = subprocess.run(["apt-cache", "show", query], capture_output=True, text=True)
        if res.returncode == 0:
            found = [p for p in parse_stanzas(res.stdout) if p.name == name and p.arch in (arch, "all")]
        if found:
            break
    return found


def apt_candidate(name: str) -> str:
    res = subprocess.run(["apt-cache", "policy", name], capture_output=True, text=True)
    m = re.search(r"^\s*Candidate:\s*(\S+)", res.stdout, re.M)
    return m[1] if m and m[1] != "(none)" else ""


# --- the choice ----------------------------------------------------------------
@dataclass(frozen=True)
class KernelSet:
    abi: str              # the uname release, e.g. 6.1.0-56-arm64
    version: str          # the kernel's Debian version, e.g. 6.1.192-2
    image: str
    headers: str
    common: str
    common_version: str
    kbuild: str
    kbuild_version: str
    note: str

    def shell(self) -> str:
        vals = {"KS_ABI": self.abi, "KS_VERSION": self.version, "KS_IMAGE": self.image,
                "KS_HEADERS": self.headers, "KS_COMMON": self.common, "KS_COMMON_VERSION": self.common_version, "KS_KBUILD": self.kbuild,
                "KS_KBUILD_VERSION": self.kbuild_version, "KS_NOTE": self.note}
        return "".join(f"{k}={shlex.quote(v)}\n" for k, v in vals.items())


class NoSet(Exception):
    pass


def _one(pkgs: list[Pkg], version: str) -> Pkg | None:
    return next((p for p in pkgs if version_cmp(p.version, version) == 0), None)


def _try(look: Lookup, host: str, abi: str, version: str) -> KernelSet:
    image = f"linux-image-{abi}"
    if _one(look(image, KARCH), version) is None:
        raise NoSet(f"{image}:{KARCH} {version} is not in the archive")
    headers = f"linux-headers-{abi}"
    hp = _one(look(headers, KARCH), version)
    if hp is None:
        raise NoSet(f"{headers}:{KARCH} {version} is not in the archive")
    common = next((d for d in hp.depends if d.name.startswith("linux-headers-") and d.name.endswith("-common")), None)
    kdep = next((d for d in hp.depends if d.name.startswith("linux-kbuild-")), None)
    if common is None or kdep is None:
        raise NoSet(f"{headers} {version} names no -common or linux-kbuild- package")
    cp = [p for p in look(common.name, KARCH)
          if p.arch == "all" and (not common.op or satisfies(p.version, common.op, common.version))]
    if not cp:
        raise NoSet(f"{common.name} {common.op} {common.version} is not in the archive".replace("  ", " "))
    cp.sort(key=lambda p: _Key(p.version), reverse=True)
    common_p = _one(cp, version) or cp[0]
    kb = [p for p in look(kdep.name, host)
          if p.arch == host and upstream(p.version) == upstream(version)
          and (not kdep.op or satisfies(p.version, kdep.op, kdep.version))]
    if not kb:
        have = ", ".join(sorted({p.version for p in look(kdep.name, host) if p.arch == host})) or "none"
        raise NoSet(f"no {kdep.name}:{host} of upstream {upstream(version)} meeting {kdep.op} {kdep.version} "
                    f"(archive has: {have})")
    kb.sort(key=lambda p: _Key(p.version), reverse=True)
    kbuild = _one(kb, version) or kb[0]
    note = f"kernel {abi} {version}, {common_p.name} {common_p.version}, {kbuild.name}:{host} {kbuild.version}"
    if kbuild.version != version:
        note += f" (no {kdep.name}:{host} at {version}: took the same upstream's {kbuild.version})"
    if common_p.version != version:
        note += f" (common headers at {common_p.version})"
    return KernelSet(abi, version, image, headers, common_p.name, common_p.version, kbuild.name, kbuild.version, note)


class _Key:
    def __init__(self, v: str) -> None:
        self.v = v

    def __lt__(self, other: _Key) -> bool:
        return version_cmp(self.v, other.v) < 0


def resolve(look: Lookup, host: str, candidate: str = "", abi: str = "") -> KernelSet:
    """The newest kernel at or below apt's candidate (or of one ABI) whose set exists."""
    tried: list[str] = []
    kernels: list[tuple[str, str]] = []  # (abi, version), newest first
    for m in sorted(look(META, KARCH), key=lambda p: _Key(p.version), reverse=True):
        if candidate and version_cmp(m.version, candidate) > 0:
            continue  # above what apt would install (backports): not this release's kernel
        dep = next((d for d in m.depends if d.name.startswith("linux-image-")), None)
        if dep is not None:
            kernels.append((dep.name.removeprefix("linux-image-"), dep.version or m.version))
    if abi:
        # the kernel already fetched: every version of its ABI, newest first
        kernels = [(abi, p.version) for p in
                   sorted(look(f"linux-image-{abi}", KARCH), key=lambda p: _Key(p.version), reverse=True)]
    if not kernels:
        raise NoSet(f"no {f'linux-image-{abi}' if abi else META}:{KARCH} in the package index "
                    "(is arm64 enabled: dpkg --add-architecture arm64, apt-get update?)")
    for k_abi, version in kernels:
        try:
            ks = _try(look, host, k_abi, version)
        except NoSet as e:
            tried.append(f"{k_abi} {version}: {e}")
            continue
        if tried:
            ks = KernelSet(**{**ks.__dict__, "note": ks.note + "; passed over: " + "; ".join(tried)})
        return ks
    raise NoSet("no kernel whose image, headers and kbuild tools resolve together:\n  " + "\n  ".join(tried))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--host-arch", help="the architecture the kbuild tools run on (default: dpkg's)")
    ap.add_argument("--index", help="a Packages-format file to read instead of apt-cache")
    ap.add_argument("--candidate", default=None,
                    help=f"the newest {META} version to consider (default: apt's candidate; with --index: all)")
    ap.add_argument("--abi", default="", help="only this kernel ABI (e.g. 6.1.0-56-arm64): the image already fetched")
    a = ap.parse_args(argv)
    host = a.host_arch or subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                                         text=True, check=True).stdout.strip()
    if a.index:
        with open(a.index, encoding="utf-8") as f:
            look = index_lookup(f.read())
        candidate = a.candidate or ""
    else:
        look = apt_lookup
        candidate = a.candidate if a.candidate is not None else apt_candidate(f"{META}:{KARCH}")
    try:
        ks = resolve(look, host, candidate, a.abi)
    except NoSet as e:
        print(f"kernelset: {e}", file=sys.stderr)
        return 1
    print(f"kernelset: {ks.note}", file=sys.stderr)
    sys.stdout.write(ks.shell())
    return 0


if __name__ == "__main__":
    sys.exit(main())
