# SPDX-License-Identifier: Apache-2.0
"""The start barrier of an experiment's run (docs/experiments.md, *Start
barrier*): the VM under test (the *lead*) measures only once every
interfering VM (a *peer*) signalled that its load runs, and the peers run
until the lead signals its end.

All sides share one page (``bench-sync``) laid out as ``struct bench_sync``
of guests/lib/include/bench.h: a 32-bit ``token`` the lead publishes, ``done``
(= token once the lead finished) and one 32-bit acknowledgement per VM id
(``ack[id]`` = token once that peer's load runs).

- bare-metal guests take part through their ``sync`` parameter (the region's
  index among the VM's shared regions): the benchmarks of
  :data:`LEAD_GUESTS` lead, the guests of :data:`PEER_GUESTS` are peers, and
  those of :data:`NAMED_PEER_GUESTS` when ``sync.peers`` names their VM;
- Linux VMs booting the workload initramfs through the kernel argument
  ``bulkhead.sync=lead:<ipa>:<peer ids>:<timeout s>`` or
  ``bulkhead.sync=peer:<ipa>:<own id>`` that its ``/init`` reads
  (scripts/mkinitrd.sh): the lead runs its ``bulkhead.run`` command after the
  barrier, a peer starts its command at once, acknowledges while it runs and
  stops it (SIGINT) once the lead is done.

The spec's ``sync: {ipa, peers, timeout_s}`` (or ``false``) asks for it;
:func:`add` puts it into a run's generated config.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bulkhead.config.reader import Reader
from bulkhead.config.yamlpos import YNode, YScalar

NAME = "bench-sync"
DEFAULT_IPA = 0xF000_0000
SIZE = 0x1000
DEFAULT_TIMEOUT_S = 60
MAX_VMS = 8  # BENCH_MAX_VMS: acknowledgement slots, one per VM id
ARG = "bulkhead.sync"
LEAD_GUESTS = ("bandwidth", "latency", "stride", "irqlat")
PEER_GUESTS = ("interferer",)  # peers without being named
NAMED_PEER_GUESTS = ("interferer", "dmaint")  # bare-metal guests sync.peers may name
_ARG_RE = re.compile(r"(?:^|\s)bulkhead\.sync=\S*")


@dataclass(frozen=True)
class SyncSpec:
    ipa: int
    size: int
    peers: tuple[str, ...] = ()  # further peers: Linux VMs running a workload (bulkhead.run=)
    timeout_s: int = DEFAULT_TIMEOUT_S  # how long a Linux lead waits for its peers


def read(r: Reader, node: YNode, vm_names: Iterable[str], critical: str) -> SyncSpec | None:
    """The spec's ``sync``: ``false`` (None), or ``{ipa, peers, timeout_s}``.
    A peer must be a VM the base system or a scenario's overlay defines, other
    than the VM under test."""
    if isinstance(node, YScalar) and node.value is False:
        return None
    m = r.mapping(node, "sync", ("ipa", "peers", "timeout_s"), (), "a mapping {ipa, peers, timeout_s} or false")
    ipa = r.address(m["ipa"], "sync.ipa") if "ipa" in m else DEFAULT_IPA
    timeout = r.integer(m["timeout_s"], "sync.timeout_s", "seconds (1-3600)", 1, 3600) \
        if "timeout_s" in m else DEFAULT_TIMEOUT_S
    peers: list[str] = []
    known = set(vm_names)
    for i, item in enumerate(r.seq(m["peers"], "sync.peers", "a list of VM names") if "peers" in m else ()):
        name = r.string(item, f"sync.peers[{i}]", "a VM name")
        if name == critical:
            raise r.fail(item, f"sync.peers[{i}]", f"'{name}' is the VM under test: it leads the barrier, the "
                         "peers are the interfering VMs")
        if name not in known:
            raise r.fail(item, f"sync.peers[{i}]", f"no VM '{name}' in the base system or any scenario's overlay "
                         f"(VMs: {', '.join(sorted(known))}): a barrier peer without a VM")
        if name in peers:
            raise r.fail(item, f"sync.peers[{i}]", f"'{name}' is named twice")
        peers.append(name)
    return SyncSpec(ipa, SIZE, tuple(peers), timeout)


def with_arg(bootargs: str, arg: str) -> str:
    """``bootargs`` with ``bulkhead.sync=<arg>`` (replacing any earlier one)."""
    return f"{_ARG_RE.sub('', bootargs).strip()} {ARG}={arg}".strip()


def _runs_workload(vm: Mapping[str, Any]) -> bool:
    return 'bulkhead.run="' in str(vm.get("bootargs") or "")


def _role_error(vm: Mapping[str, Any], lead: bool) -> str | None:
    """Why ``vm`` cannot take part in the barrier as lead or peer, or None."""
    name = vm.get("name")
    if vm.get("type") == "linux":
        if not _runs_workload(vm):
            return (f"VM '{name}' is a Linux VM without bulkhead.run=\"...\" in its bootargs: it runs no workload "
                    "that could take part in the start barrier")
        return None
    guests = LEAD_GUESTS if lead else NAMED_PEER_GUESTS
    if vm.get("guest") not in guests:
        return (f"VM '{name}' runs guest '{vm.get('guest')}', which cannot "
                + ("lead the start barrier (" if lead else "take part in the start barrier as an interferer (")
                + ", ".join(guests) + " can); set 'sync: false' in the spec"
                + ("" if lead else " or leave it out of 'sync.peers'"))
    return None


def add(config: dict[str, Any], critical: str, sync: SyncSpec) -> None:
    """Put the barrier into a run's generated ``config``: its page shared by
    the VM under test and every peer present (bare-metal ``interferer`` VMs,
    and the VMs ``sync.peers`` names), the ``sync`` parameter for bare-metal
    members and ``bulkhead.sync=`` for Linux ones. Without peers, nothing.
    ValueError when a member cannot take part."""
    vms = [vm for vm in config.get("vms") or [] if isinstance(vm, dict)]
    lead = next(vm for vm in vms if vm.get("name") == critical)
    peers = [vm for vm in vms if vm.get("name") != critical
             and (vm.get("name") in sync.peers or (vm.get("type") != "linux" and vm.get("guest") in PEER_GUESTS))]
    if not peers:
        return
    for vm, is_lead in [(lead, True)] + [(p, False) for p in peers]:
        if why := _role_error(vm, is_lead):
            raise ValueError(why)
    ids = {vm["name"]: i for i, vm in enumerate(config["vms"]) if isinstance(vm, dict)}
    if max(ids[vm["name"]] for vm in [lead, *peers]) >= MAX_VMS:
        raise ValueError(f"the start barrier has {MAX_VMS} slots, one per VM id: a member is VM number "
                         f"{max(ids.values()) + 1}")
    shmem = config.get("shmem")
    if not isinstance(shmem, list):
        shmem = []
    for vm in [lead, *peers]:
        if vm.get("type") == "linux":
            arg = (f"lead:{sync.ipa:#x}:{','.join(str(ids[p['name']]) for p in peers)}:{sync.timeout_s}"
                   if vm is lead else f"peer:{sync.ipa:#x}:{ids[vm['name']]}")
            vm["bootargs"] = with_arg(str(vm.get("bootargs") or ""), arg)
            continue
        index = sum(1 for region in shmem if isinstance(region, dict) and isinstance(region.get("vms"), list)
                    and any(isinstance(m, dict) and m.get("vm") == vm["name"] for m in region["vms"]))
        vm["params"] = {**(vm.get("params") or {}), "sync": index}
    shmem.append({"name": NAME, "size": sync.size, "vms": [{"vm": vm["name"], "ipa": sync.ipa}
                                                             for vm in [lead, *peers]]})
    config["shmem"] = shmem
