# SPDX-License-Identifier: Apache-2.0
"""labgrid's side of the farm (docs/farm.md): the typed adapter of its
coordinator and environment files, which :mod:`bulkhead.run.farm` boots on.

- :class:`Coordinator`: a client session with labgrid's coordinator (gRPC),
  its event loop in a thread of its own; lists places, acquires and releases
  them, and tells whether an acquired place is still whole (every resource
  it holds still exported and available);
- :class:`FarmEnv`: a labgrid environment file (``labgrid.Environment``,
  labgrid's own loader) whose ``main`` target names a ``RemotePlace``; one
  target is made per place (the place's name patched in);
- which places a run uses (:func:`choose_places`), waiting for one
  (:func:`acquire_waiting`); :class:`PlaceLost` when one goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self, TypeVar

from bulkhead.base.errors import RunError

DEFAULT_COORDINATOR = "127.0.0.1:20408"
ROLE = "main"

T = TypeVar("T")


class PlaceLost(RunError):
    """The place went away during a run (its exporter stopped, a resource
    vanished, QEMU was killed by someone else): the run says nothing about
    the config and belongs on another place."""

    def __init__(self, place: str, reason: str) -> None:
        super().__init__(f"place {place} lost: {reason}")
        self.place = place
        self.reason = reason


class PlaceUnsuitable(PlaceLost):
    """The place cannot run the config (a QEMU place of another machine
    type): like a lost place, an experiment gives the run to another place
    and uses this one no more."""

    def __init__(self, place: str, reason: str) -> None:
        RunError.__init__(self, reason)
        self.place = place
        self.reason = reason


def _need_labgrid() -> None:
    try:
        import labgrid  # noqa: F401
    except ImportError:
        raise RunError("labgrid is not installed: pip install -e '.[farm]' (scripts/setup.sh venv does)") \
            from None
    from bulkhead.run import farm_resources  # noqa: F401  # registers QEMUMachine


# --- the coordinator ----------------------------------------------------------


@dataclass(frozen=True)
class PlaceInfo:
    name: str
    tags: dict[str, str]
    acquired: str  # "host/user" or ""
    resources: list[tuple[str, dict[str, Any], bool]]  # acquired resources: (cls, params, avail)


class Coordinator:
    """A session with labgrid's coordinator at ``address`` (HOST:PORT).
    Thread-safe: every call runs on the session's own event loop."""

    def __init__(self, address: str, timeout: float = 10.0) -> None:
        _need_labgrid()
        from labgrid.remote.client import ClientSession

        self.address = address
        self.timeout = timeout
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="labgrid-coordinator", daemon=True)
        self._thread.start()
        self.session: Any = None

        async def start() -> Any:
            session = ClientSession(address, self.loop)
            await session.start()
            return session

        try:
            self.session = self._call(start(), timeout)
        except Exception as exc:  # noqa: BLE001  # grpc's errors, a refused connection: all mean unreachable
            self.close()
            raise RunError(f"cannot reach the labgrid coordinator at {address}: {exc or type(exc).__name__}") \
                from None
        self.user = f"{self.session.gethostname()}/{self.session.getuser()}"

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout or self.timeout)

    def _sync(self, fn: Callable[[], T]) -> T:
        async def call() -> T:
            return fn()
        return self._call(call())

    def place_names(self) -> list[str]:
        return self._sync(lambda: sorted(self.session.places))

    def place(self, name: str) -> PlaceInfo:
        def read() -> PlaceInfo:
            place = self.session.places.get(name)
            if place is None:
                known = ", ".join(sorted(self.session.places)) or "none"
                raise RunError(f"the coordinator at {self.address} has no place '{name}' (places: {known})")
            resources = []
            for exporter, group, cls, res in place.acquired_resources:
                entry = self.session.resources.get(exporter, {}).get(group, {}).get(res)
                data = entry.data if entry is not None else {}
                resources.append((str(data.get("cls", cls)), dict(data.get("params", {})),
                                  bool(data.get("avail", False))))
            return PlaceInfo(place.name, dict(place.tags), place.acquired or "", resources)
        return self._sync(read)

    def health(self, name: str) -> str:
        """"" while the place is acquired by us and every resource it holds
        is exported and available; otherwise why not."""
        try:
            info = self.place(name)
        except RunError as exc:
            return str(exc)
        if info.acquired != self.user:
            return f"no longer acquired by {self.user} ({info.acquired or 'released'})"
        if not info.resources:
            return "it holds no resources (its exporter is gone?)"
        gone = [cls for cls, _, avail in info.resources if not avail]
        if gone:
            return f"resource(s) no longer available: {', '.join(gone)} (exporter stopped?)"
        return ""

    def acquire(self, name: str) -> bool:
        """Acquires place ``name``; False if it was acquired by this user on
        this host already (``labgrid-client acquire``): then it is used as it
        is and the caller does not release it."""
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        async def acquire() -> None:
            await self.session.stub.AcquirePlace(pb2.AcquirePlaceRequest(placename=name))
            await self.session.sync_with_coordinator()

        info = self.place(name)
        if info.acquired == self.user:
            return False
        if info.acquired:
            raise RunError(f"place {name} is already acquired by {info.acquired}")
        try:
            self._call(acquire())
        except Exception as exc:  # noqa: BLE001  # grpc's AioRpcError: the coordinator refused
            raise RunError(f"cannot acquire place {name}: {_details(exc)}") from None
        return True

    def release(self, name: str) -> None:
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        async def release() -> None:
            await self.session.stub.ReleasePlace(pb2.ReleasePlaceRequest(placename=name))
            await self.session.sync_with_coordinator()

        try:
            self._call(release())
        except Exception as exc:  # noqa: BLE001  # grpc's AioRpcError: the coordinator refused
            raise RunError(f"cannot release place {name}: {_details(exc)}") from None

    def close(self) -> None:
        if self.session is not None:
            try:
                self._call(self.session.stop(), 5)
                self._call(self.session.close(), 5)
            except Exception:  # noqa: BLE001, S110  # the coordinator may be gone already
                pass
            self.session = None
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
        if not self.loop.is_running() and not self.loop.is_closed():
            self.loop.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _details(exc: Exception) -> str:
    details = getattr(exc, "details", None)
    return str(details()) if callable(details) else (str(exc) or type(exc).__name__)


# --- the environment -------------------------------------------------------------


# labgrid keeps one stack of "steps" (its decorated driver calls) per process,
# not per thread: calls into labgrid's drivers from the threads of several
# places are serialised by this lock. Console reads bypass it (the drivers'
# undecorated _read), so places stream in parallel.
_labgrid_lock = threading.RLock()


@contextlib.contextmanager
def labgrid_calls() -> Iterator[None]:
    """Holds ``_labgrid_lock``; first takes off labgrid's process-wide
    RemotePlaceManager the resources the coordinator has deleted (their
    exporter went away): the manager polls every resource of every target on
    each activation and fails on a deleted one, so one lost place would
    break the runs starting on the others. (The run on the lost place finds
    out through :meth:`Coordinator.health`.)"""
    from labgrid.resource.remote import RemotePlaceManager

    with _labgrid_lock:
        manager = RemotePlaceManager.get()
        for kept in (manager.resources, manager.unmanaged_resources):
            kept[:] = [r for r in kept if "params" in getattr(getattr(r, "_remote_entry", None), "data",
                                                             {"params": None})]
        yield


class FarmEnv:
    """A labgrid environment file: target ``main`` with a ``RemotePlace``
    and either a ``QEMUDriver`` (a QEMU place) or the drivers of a board
    (a console, a power driver, ``UBootDriver``, and ``TFTPProviderDriver``
    or ``USBSDMuxDriver`` + ``USBStorageDriver``)."""

    def __init__(self, path: Path | str, coordinator: str | None = None) -> None:
        _need_labgrid()
        from labgrid import Environment
        from labgrid.exceptions import InvalidConfigError, NoConfigFoundError

        self.path = Path(path)
        try:
            self.env: Any = Environment(config_file=str(self.path))
        except (InvalidConfigError, NoConfigFoundError) as exc:
            raise RunError(f"{self.path}: {exc}") from None
        targets = self.env.config.get_targets()
        if ROLE not in targets:
            raise RunError(f"{self.path}: no target '{ROLE}' (targets: {', '.join(targets) or 'none'})")
        self.resources, self.drivers = self._normalized(targets[ROLE])
        self.kind = "qemu" if "QEMUDriver" in self.drivers else "board"
        self.coordinator = (coordinator or self.env.config.get_option("coordinator_address", "")
                            or os.environ.get("LG_COORDINATOR") or DEFAULT_COORDINATOR)

    @staticmethod
    def _normalized(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        from labgrid import target_factory

        resources, drivers = target_factory.normalize_config(config)
        return dict(resources), dict(drivers)

    def place_names(self) -> list[str]:
        """The RemotePlace names the file gives (``!template $LG_PLACE`` resolved)."""
        return sorted(self.resources.get("RemotePlace", {}))

    def target(self, place: str, coordinator: Coordinator) -> Any:
        """A labgrid Target for ``place`` (acquired), its resources those
        the coordinator hands over for it."""
        from labgrid import target_factory
        from labgrid.resource.remote import RemotePlaceManager

        config = copy.deepcopy(self.env.config.get_targets()[ROLE])
        config["resources"] = _with_place(config.get("resources", {}), place)
        with labgrid_calls():  # one manager per process, shared by every place's thread
            manager = RemotePlaceManager.get()
            manager.session = coordinator.session
            manager.loop = coordinator.loop
            try:
                return target_factory.make_target(f"{ROLE}@{place}", config, env=self.env)
            except Exception as exc:  # noqa: BLE001  # labgrid's config, binding and coordinator errors
                raise RunError(f"{self.path}: place {place}: {type(exc).__name__}: {exc}") from None


def _with_place(resources: Any, place: str) -> Any:
    """The target's resource list with its RemotePlace's name set to ``place``."""
    if isinstance(resources, dict):
        out = dict(resources)
        if "RemotePlace" in out:
            out["RemotePlace"] = {**(out["RemotePlace"] or {}), "name": place}
        else:
            out["RemotePlace"] = {"name": place}
        return out
    items = [dict(item) for item in resources]
    for item in items:
        if "RemotePlace" in item:
            item["RemotePlace"] = {**(item["RemotePlace"] or {}), "name": place}
            return items
        if item.get("cls") == "RemotePlace":
            item["name"] = place
            return items
    return [*items, {"RemotePlace": {"name": place}}]



def choose_places(env: FarmEnv, coordinator: Coordinator, places: Sequence[str] | None,
                  all_places: bool) -> list[str]:
    """The places to use: those named, every place of the coordinator whose
    machine fits (``all_places``), or the environment's RemotePlace."""
    known = coordinator.place_names()
    if places:
        unknown = [p for p in places if p not in known]
        if unknown:
            raise RunError(f"the coordinator at {coordinator.address} has no place '{unknown[0]}' "
                           f"(places: {', '.join(known) or 'none'})")
        return list(places)
    if all_places:
        if not known:
            raise RunError(f"the coordinator at {coordinator.address} has no places")
        return known
    from_env = place_from_environment()
    if from_env:
        return [from_env] if from_env in known else choose_places(env, coordinator, [from_env], False)
    named = env.place_names()
    if not named:
        raise RunError(f"{env.path}: target '{ROLE}' names no RemotePlace; give --place")
    return named[:1]


def acquire_waiting(coordinator: Coordinator, place: str, wait: float) -> bool:
    """Acquires ``place``, waiting while another user holds it; PlaceLost if
    it cannot be had (its resources are gone, or ``wait`` passed). False if
    it was this user's already (see :meth:`Coordinator.acquire`)."""
    end = time.monotonic() + wait
    while True:
        try:
            info = coordinator.place(place)
        except RunError as exc:
            raise PlaceLost(place, str(exc)) from None
        if info.acquired and info.acquired != coordinator.user and time.monotonic() < end:
            time.sleep(1.0)
            continue
        try:
            return coordinator.acquire(place)
        except RunError as exc:
            if "already acquired" in str(exc) and time.monotonic() < end:
                continue
            raise PlaceLost(place, str(exc)) from None


def place_from_environment() -> str | None:
    """``LG_PLACE``, labgrid's variable naming the place to use."""
    return os.environ.get("LG_PLACE") or None
