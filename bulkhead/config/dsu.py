# SPDX-License-Identifier: Apache-2.0
"""DSU L3 way partitioning: the platform's ``dsu:`` section, the VMs'
``l3_ways``/``l3_groups``, their checks, the plan and the ``check`` report.

The DynamIQ Shared Unit splits its L3 ways into way groups (CLUSTERPARTCR_EL1:
four bits per scheme ID 0-7, bit g = way group g) and tags each core's
accesses with a scheme ID, which EL2 pins with CLUSTERTHREADSIDOVR_EL1 (the
hypervisor's hypervisor/isolation/dsu.c encodes the same plan). Each
partitioned VM gets its own scheme ID (1-7, in config order) and its groups
to itself; every other CPU keeps scheme ID 0, which gets the groups no VM
claims. Way partitioning combines with page coloring (colors split the sets,
ways split each set). docs/coloring.md "DSU L3 way partitioning".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from bulkhead.base.csource import CSource, Field, hexa
from bulkhead.base.errors import Diagnostic
from bulkhead.config.mechanism import Keys, Mechanism, Need, SystemView, VmView
from bulkhead.config.model import DsuSpec, Platform, SystemSpec, VmSpec
from bulkhead.config.reader import Reader, join
from bulkhead.config.yamlpos import YNode

MAX_GROUPS = 4  # CLUSTERPARTCR_EL1: four bits per scheme ID
SCHEMES = 8  # scheme IDs 0-7; 0 is the unpartitioned CPUs'
PLATFORM_KEYS = ("l3_ways", "groups")


def _parse_section(r: Reader, node: YNode, path: str = "dsu") -> DsuSpec:
    m = r.mapping(node, path, PLATFORM_KEYS, PLATFORM_KEYS, "a mapping {l3_ways, groups}")
    return DsuSpec(
        l3_ways=r.integer(m["l3_ways"], f"{path}.l3_ways", "a number of L3 ways (integer 1-64)", 1, 64),
        groups=r.integer(m["groups"], f"{path}.groups", f"a number of way groups (integer 1-{MAX_GROUPS})",
                         1, MAX_GROUPS),
        path=path,
    )


def parse_groups(r: Reader, node: YNode, path: str) -> tuple[int, ...]:
    return r.each(node, path, lambda n, q: r.integer(n, q, f"a way group (integer 0-{MAX_GROUPS - 1})", 0,
                                                     MAX_GROUPS - 1), "a list of way groups")


def check_platform(p: Platform) -> list[Diagnostic]:
    d = p.dsu
    if d is None:
        return []
    errors = []
    if d.l3_ways % d.groups:
        errors.append(p.locs.diag(f"{d.path}.groups", f"{d.l3_ways} L3 ways do not split into {d.groups} "
                                                      "equal way groups"))
    if p.coloring is not None and p.coloring.llc_ways is not None and p.coloring.llc_ways != d.l3_ways:
        errors.append(p.locs.diag(f"{d.path}.l3_ways", f"{d.l3_ways} ways, but coloring.llc has "
                                                       f"{p.coloring.llc_ways}"))
    return errors


@dataclass(frozen=True)
class Partition:
    vm: str
    scheme: int
    groups: int  # bitmask of way groups
    ways: tuple[int, ...]  # the L3 ways those groups hold


@dataclass(frozen=True)
class Plan:
    partitions: tuple[Partition, ...]
    rest: int  # scheme 0's groups (the unpartitioned CPUs')
    partcr: int  # CLUSTERPARTCR_EL1

    def of(self, vm: str) -> Partition | None:
        return next((pt for pt in self.partitions if pt.vm == vm), None)


def _ways(d: DsuSpec, mask: int) -> tuple[int, ...]:
    per = d.l3_ways // d.groups
    return tuple(w for g in range(d.groups) if mask >> g & 1 for w in range(g * per, (g + 1) * per))


def partcr(schemes: dict[int, int]) -> int:
    """CLUSTERPARTCR_EL1 for {scheme ID: group mask} (mirrors dsu_partcr in dsu.c)."""
    value = 0
    for scheme, mask in schemes.items():
        value |= (mask & 0xF) << (4 * scheme)
    return value


def _wanted(vm: VmSpec) -> bool:
    return vm.l3_ways is not None or vm.l3_groups is not None


def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) about the VMs' L3 partitions (no warnings)."""
    return _errors(s), []


def _errors(s: SystemSpec) -> list[Diagnostic]:
    p = s.platform
    at = s.locs.diag
    wanting = [vm for vm in s.vms if _wanted(vm)]
    if not wanting:
        return []
    d = p.dsu
    if d is None:
        vm = wanting[0]
        key = "l3_ways" if vm.l3_ways is not None else "l3_groups"
        return [at(f"{vm.path}.{key}", f"platform '{p.name}' has no DSU L3 way partitioning (no 'dsu:' "
                                       f"section in {p.display})")]
    errors = []
    per = d.l3_ways // d.groups
    if len(wanting) > SCHEMES - 1:
        errors.append(at(f"{wanting[SCHEMES - 1].path}", f"at most {SCHEMES - 1} VMs can have their own L3 "
                                                          "ways (scheme IDs 1-7)"))
    owner: dict[int, str] = {}
    for vm in wanting:
        if vm.l3_ways is not None and vm.l3_groups is not None:
            errors.append(at(f"{vm.path}.l3_groups", "give l3_ways or l3_groups, not both"))
            continue
        if vm.l3_groups is None:
            continue
        for i, g in enumerate(vm.l3_groups):
            q = f"{vm.path}.l3_groups[{i}]"
            if g >= d.groups:
                errors.append(at(q, f"way group {g} does not exist (the DSU has groups 0-{d.groups - 1})"))
            elif g in owner:
                errors.append(at(q, f"way group {g} (ways {_text(_ways(d, 1 << g))}) overlaps the L3 "
                                    f"partition of {owner[g]}"))
            else:
                owner[g] = f"vm {vm.name}" if g not in vm.l3_groups[:i] else "itself"
    for vm in wanting:
        if vm.l3_ways is None:
            continue
        q = f"{vm.path}.l3_ways"
        if vm.l3_ways % per or not 0 < vm.l3_ways <= d.l3_ways:
            errors.append(at(q, f"{vm.l3_ways} ways: the DSU partitions its {d.l3_ways} L3 ways in "
                                f"{d.groups} groups of {per}; give a multiple of {per} up to {d.l3_ways}"))
            continue
        need = vm.l3_ways // per
        free = [g for g in range(d.groups) if g not in owner]
        if len(free) < need:
            errors.append(at(q, f"{vm.l3_ways} ways ({need} way groups) but only {len(free)} group(s) are "
                                "left by the other VMs' partitions"))
            continue
        for g in free[:need]:
            owner[g] = f"vm {vm.name}"
    rest = [vm.name for vm in s.vms if not _wanted(vm)]
    if not errors and rest and len(owner) == d.groups:
        errors.append(at(wanting[-1].path, f"the VMs' L3 partitions take every way group: "
                                           f"{', '.join(rest)} (scheme ID 0) would have no L3 way left"))
    return errors


def plan(s: SystemSpec) -> Plan | None:
    """The partitions of a checked system; None when no VM asks for L3 ways."""
    d = s.platform.dsu
    wanting = [vm for vm in s.vms if _wanted(vm)]
    if d is None or not wanting:
        return None
    per = d.l3_ways // d.groups
    taken = 0
    masks: dict[str, int] = {}
    for vm in wanting:
        if vm.l3_groups is not None:
            masks[vm.name] = sum(1 << g for g in set(vm.l3_groups))
            taken |= masks[vm.name]
    for vm in wanting:
        if vm.l3_ways is not None:
            mask = 0
            for g in range(d.groups):
                if bin(mask).count("1") == vm.l3_ways // per:
                    break
                if not taken >> g & 1:
                    mask |= 1 << g
            masks[vm.name] = mask
            taken |= mask
    parts = tuple(Partition(vm.name, i + 1, masks[vm.name], _ways(d, masks[vm.name]))
                  for i, vm in enumerate(wanting))
    rest = ((1 << d.groups) - 1) & ~taken
    return Plan(parts, rest, partcr({0: rest, **{pt.scheme: pt.groups for pt in parts}}))


def _text(ways: tuple[int, ...]) -> str:
    return f"{ways[0]}-{ways[-1]}" if ways else "none"


def report(s: SystemSpec) -> str:
    pl = plan(s)
    d = s.platform.dsu
    if pl is None or d is None:
        return ""
    lines = ["", f"DSU L3 partitions ({d.l3_ways} ways in {d.groups} groups of {d.l3_ways // d.groups}; "
                 f"CLUSTERPARTCR_EL1 0x{pl.partcr:08x}):"]
    for pt in pl.partitions:
        groups = ",".join(str(g) for g in range(d.groups) if pt.groups >> g & 1)
        lines.append(f"  vm {pt.vm}: scheme ID {pt.scheme}, way groups {groups}, ways {_text(pt.ways)}")
    others = [vm.name for vm in s.vms if not _wanted(vm)]
    groups = ",".join(str(g) for g in range(d.groups) if pl.rest >> g & 1)
    lines.append(f"  scheme ID 0 ({', '.join(others) or 'no VM'}; the hypervisor's idle CPUs): way groups "
                 f"{groups}, ways {_text(_ways(d, pl.rest))}")
    return "\n".join(lines) + "\n"


def document(s: SystemSpec, vm: str) -> dict[str, Any] | None:
    pl = plan(s)
    pt = pl.of(vm) if pl is not None else None
    if pl is None or pt is None:
        return None
    return {"scheme": pt.scheme, "groups": pt.groups, "ways": list(pt.ways), "partcr": pl.partcr}


# --- parse, config.c, features -------------------------------------------


def parse_platform(r: Reader, top: Keys, p: Platform) -> Platform:
    return dataclasses.replace(p, dsu=_parse_section(r, top["dsu"])) if "dsu" in top else p


def parse_vm(r: Reader, m: Keys, vm: VmSpec, p: Platform) -> VmSpec:
    """``l3_ways`` or ``l3_groups``."""
    return dataclasses.replace(
        vm, l3_ways=r.integer(m["l3_ways"], join(vm.path, "l3_ways"), "a number of L3 ways (integer 1-64)", 1, 64)
        if "l3_ways" in m else None,
        l3_groups=parse_groups(r, m["l3_groups"], join(vm.path, "l3_groups")) if "l3_groups" in m else None)


def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
    """A partitioned VM's scheme ID and way groups (struct cfg_vm)."""
    l3 = plan(system.spec)
    part = l3.of(vm.name) if l3 is not None else None
    return [("l3_scheme", str(part.scheme)), ("l3_groups", hexa(part.groups))] if part else []


def emit_system(out: CSource, system: SystemView) -> list[Field]:
    d = system.platform.dsu
    return [("dsu_groups", str(d.groups)), ("dsu_ways", str(d.l3_ways))] \
        if d is not None and plan(system.spec) is not None else []


def needs(system: SystemView) -> list[Need]:
    l3 = plan(system.spec) if system.platform.dsu is not None else None
    return [Need("DSU", f"vm {pt.vm}", "has DSU L3 ways (l3_groups)") for pt in l3.partitions] if l3 else []


MECHANISM = Mechanism(
    name="dsu", rank=80, docs="docs/coloring.md#dsu-l3-way-partitioning",
    features={"DSU": ("isolation/dsu.c", "isolation/dsu_part.c")},
    platform_keys=("dsu",), system_keys=(), vm_keys=("l3_ways", "l3_groups"), region_keys=(), device_keys=(),
    parse_platform=parse_platform, parse_system=None, parse_vm=parse_vm, parse_region=None,
    check_device=None, parse_device=None,
    check_platform=check_platform, check=check, ipa_items=None, reserved_ram=None, guest_params=None,
    limits=(), emit_platform=None,
    emit_tables=None, emit_vm=emit_vm, emit_system=emit_system, needs=needs,
)
