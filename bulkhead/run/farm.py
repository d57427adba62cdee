# SPDX-License-Identifier: Apache-2.0
"""labgrid as the execution backend beyond one local QEMU (docs/farm.md).

The only module that talks to labgrid (untyped; this is its typed adapter):

- :class:`Coordinator`: a client session with labgrid's coordinator (gRPC),
  its event loop in a thread of its own; lists places, acquires and releases
  them, and tells whether an acquired place is still whole (every resource
  it holds still exported and available);
- :class:`FarmEnv`: a labgrid environment file (``labgrid.Environment``,
  labgrid's own loader) whose ``main`` target names a ``RemotePlace``; one
  target is made per place (the place's name patched in);
- :func:`run_on_place`: builds a config like ``bulkhead run`` does, boots it
  on an acquired place and judges it with :func:`bulkhead.run.runner.judge`,
  so the result, the console lines and the exit codes are a local run's.
  A QEMU place runs the command line :func:`bulkhead.run.runner.prepare`
  composes through labgrid's ``QEMUDriver`` (the console through its serial
  socket); a board is powered, its U-Boot interrupted and given the FIT
  (TFTP or SD mux) and the ``bootm`` that :func:`bulkhead.generate.fit.uboot_commands`
  prints. A place that goes away during a run raises :class:`PlaceLost`.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import copy
import os
import shlex
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, Self, TextIO, TypeVar

from bulkhead.base.errors import RunError
from bulkhead.generate import fit, qemu
from bulkhead.layout.load import PLATFORMS_DIR, load_system
from bulkhead.run import runner
from bulkhead.run.backend import RunOptions
from bulkhead.run.result import ALL_OFF_RE, PANIC_RE, RunResult, judge

DEFAULT_COORDINATOR = "127.0.0.1:20408"
ROLE = "main"
START_TIMEOUT = 30.0  # QEMU connecting to the QEMUDriver's serial socket, a board's U-Boot prompt
HEALTH_INTERVAL = 0.5  # seconds between checks that the place is still whole
SD_PARTITION = 1  # the FAT partition the FIT is copied to (U-Boot: load mmc <dev>:1)

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
def _labgrid_calls() -> Iterator[None]:
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
        with _labgrid_calls():  # one manager per process, shared by every place's thread
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


# --- one run on a place ---------------------------------------------------------


@dataclass
class _Console:
    """Collects a console's text (decoded, ``\\r`` dropped later) and copies it to ``stream``."""

    stream: TextIO | None
    chunks: list[str] = field(default_factory=list)
    decoder: Any = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace"))

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self.decoder.decode(data, final=final)
        if not text:
            return
        self.chunks.append(text)
        if self.stream is not None:
            self.stream.write(text.replace("\r", ""))
            self.stream.flush()

    def text(self) -> str:
        return "".join(self.chunks).replace("\r", "")

    def tail(self) -> str:
        return "".join(self.chunks[-64:])


def _read(console: Any, timeout: float) -> bytes | None:
    """Up to 4 KiB from a labgrid console; b"" if nothing came in ``timeout``;
    None if the console is gone (its process exited)."""
    from labgrid.driver.exception import ExecutionError
    from labgrid.driver.qemudriver import (
        TIMEOUT,  # pexpect's: what labgrid's consoles raise
    )

    try:
        data = console._read(size=4096, timeout=timeout)  # not read(): no labgrid step (see _labgrid_lock)
    except TIMEOUT:
        return b""
    except (ExecutionError, OSError):
        return None
    return bytes(data)


def _machine_type(machine: str) -> str:
    return machine.split(",", 1)[0]


def _split_argv(argv: Sequence[str]) -> tuple[str, str, str, str, list[str]]:
    """(binary, machine, cpu, memory, the rest) of a QEMU command line, its
    console options (-serial, -nographic) dropped: the QEMUDriver puts the
    first serial port on its own socket and adds -machine/-cpu/-m itself."""
    binary, rest = argv[0], list(argv[1:])
    machine = cpu = memory = ""
    out: list[str] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        value = rest[i + 1] if i + 1 < len(rest) else ""
        if arg in ("-M", "-machine"):
            machine = value
        elif arg == "-cpu":
            cpu = value
        elif arg == "-m":
            memory = value
        elif arg == "-serial":
            pass
        elif arg == "-nographic":
            i += 1
            continue
        else:
            out.append(arg)
            i += 1
            continue
        i += 2
    if not (machine and cpu and memory):
        raise RunError(f"QEMU command line without -M, -cpu or -m: {shlex.join(argv)}")
    return binary, machine, cpu, memory, out


def qemu_driver_args(argv: Sequence[str]) -> dict[str, str]:
    """The QEMUDriver attributes that make it run ``argv`` (what ``bulkhead
    run`` would): machine, cpu, memory, extra_args (display left to the
    command line)."""
    _, machine, cpu, memory, rest = _split_argv(argv)
    return {"machine": machine, "cpu": cpu, "memory": memory, "extra_args": shlex.join(rest),
            "display": "qemu-default"}


def _place_machine(info: PlaceInfo) -> str | None:
    for cls, params, _ in info.resources:
        if cls == "QEMUMachine":
            return str(params.get("machine", ""))
    return None


def refused(options: RunOptions) -> list[str]:
    """What of ``options`` a labgrid place cannot do (they are for local
    QEMU): the debugger, firmware chains, a -netdev, the timing mode, extra
    QEMU arguments, another platforms directory, a terminal or console pokes."""
    asked = (("a debugger (--gdb)", options.gdb_port is not None),
             (f"--boot {options.boot}", options.boot != "image"),
             ("--netdev", options.netdev is not None),
             ("timing mode (--timing)", options.timing is not None),
             ("extra QEMU arguments", bool(options.extra_qemu_args)),
             ("another platforms directory", options.platforms_dir != PLATFORMS_DIR),
             ("an interactive console", options.interactive),
             ("console pokes (--stats)", options.poke is not None))
    return [what for what, given in asked if given]


def _refuse(place: str, options: RunOptions) -> None:
    not_here = refused(options)
    if not_here:
        raise RunError(f"{not_here[0]} is for local runs, not on labgrid place {place}")


def run_on_place(env: FarmEnv, coordinator: Coordinator, place: str, config_path: Path | str,
                 options: RunOptions) -> RunResult:
    """Build ``config_path`` and boot it on ``place`` (acquired by
    ``coordinator``'s session); judged like a local run. Raises RunError for
    options a place cannot honour (:func:`refused`), PlaceLost when the
    place fails under the run."""
    from labgrid.driver import QEMUDriver  # noqa: F401  # registered with the factory

    _refuse(place, options)
    if env.kind == "board" and options.model:
        raise RunError("--model needs QEMU (the cache model is a QEMU plugin); this place is a board")
    try:
        info = coordinator.place(place)
    except RunError as exc:  # the place was deleted
        raise PlaceLost(place, str(exc)) from None
    if env.kind == "qemu":
        platform = load_system(config_path).platform
        offered, wanted = _place_machine(info), _machine_type(qemu.model(platform).machine)
        if offered is not None and offered != wanted:
            raise PlaceUnsuitable(place, f"place {place} offers QEMU machine '{offered}'; {config_path} needs "
                                  f"'{wanted}' (platform {platform.name})")
    prepared = runner.prepare(config_path, options)
    health = coordinator.health(place)
    if health:
        raise PlaceLost(place, health)
    try:
        target = env.target(place, coordinator)
    except RunError:
        health = coordinator.health(place)  # e.g. an orphaned resource: the exporter went away just now
        if health:
            raise PlaceLost(place, health) from None
        raise
    try:
        if env.kind == "qemu":
            returncode, timed_out, output = _run_qemu(target, prepared, options.timeout, options.stream,
                                                      lambda: coordinator.health(place), place)
        else:
            returncode, timed_out, output = _run_board(target, prepared, options.timeout, options.stream,
                                                       lambda: coordinator.health(place), place)
    finally:
        _cleanup(target)
    clean, reason = judge(returncode, timed_out, output, prepared.nvms, options.timeout, prepared.until)
    return RunResult(returncode, timed_out, output, clean, prepared.nvms, reason, tuple(prepared.argv),
                            prepared.model_report)


def _cleanup(target: Any) -> None:
    """Deactivates the target's drivers and takes its resources off labgrid's
    process-wide RemotePlaceManager, which would otherwise poll them on every
    later activation (and fail on those of a place that has gone)."""
    from labgrid.resource.remote import RemotePlaceManager

    with _labgrid_calls():
        try:
            target.cleanup()
        except Exception:  # noqa: BLE001, S110  # a driver of a vanished place may fail to deactivate
            pass
        manager = RemotePlaceManager.get()
        for resource in list(target.resources):
            for kept in (manager.resources, manager.unmanaged_resources):
                if resource in kept:
                    kept.remove(resource)


def _watch(console: Any, con: _Console, *, deadline: float | None, until: Any, health: Callable[[], str],
           place: str, ended: Callable[[], bool], finish: bool) -> tuple[bool, bool]:
    """Streams ``console`` until ``ended()`` (the console is gone),
    ``until``, the deadline or (``finish``: a board, which does not power
    off) the hypervisor's last line; returns (timed_out, console_gone).
    Raises PlaceLost if ``health()`` reports a problem."""
    next_check = time.monotonic() + HEALTH_INTERVAL
    while True:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return True, False
        wait = 0.2 if deadline is None else max(min(0.2, deadline - now), 0.01)
        data = _read(console, wait)
        if data is None:
            return False, True
        if data:
            con.feed(data)
            tail = con.tail()
            if until is not None and runner.until_matched(until, tail):
                return False, False
            if finish and _finished(tail):
                return False, False
        elif ended():
            return False, True
        if time.monotonic() >= next_check:
            problem = health()
            if problem:
                raise PlaceLost(place, problem)
            next_check = time.monotonic() + HEALTH_INTERVAL


def _finished(tail: str) -> bool:
    """Whether the hypervisor printed its last line (all VMs off, or a panic)."""
    lines = tail.replace("\r", "").split("\n")
    complete = lines[:-1]  # the last one may still be arriving
    return any(ALL_OFF_RE.match(line) or PANIC_RE.match(line) for line in complete[-8:])


def _run_qemu(target: Any, prepared: runner.Prepared, timeout: float | None, stream: TextIO | None,
              health: Callable[[], str], place: str) -> tuple[int, bool, str]:
    driver = target.get_driver("QEMUDriver", activate=False)
    binary, *_ = _split_argv(prepared.argv)
    tool = driver.qemu_bin
    tools = target.env.config.data.setdefault("tools", {}) if target.env is not None else {}
    if tools.get(tool) is None:
        tools[tool] = binary
    for key, value in qemu_driver_args(prepared.argv).items():
        setattr(driver, key, value)
    driver.kernel = driver.disk = driver.rootfs = driver.dtb = driver.flash = driver.bios = None
    driver.nic = driver.boot_args = None
    with _labgrid_calls():
        target.activate(driver)
    driver._socket.settimeout(START_TIMEOUT)
    con = _Console(stream)
    deadline = None if timeout is None else time.monotonic() + timeout
    killed_by_us = False
    if driver._clientsocket is not None:  # the previous run's (labgrid keeps it until deactivation)
        driver._clientsocket.close()
        driver._clientsocket = None
    try:
        starting = _Starting(driver)
        try:
            with _labgrid_calls():
                driver.on()
        except Exception as exc:  # noqa: BLE001  # OSError, socket timeout, labgrid's QMPError
            starting.done()
            if starting.gave_up:
                raise RunError(f"QEMU did not start on place {place}: no answer to QMP 'cont' in "
                               f"{START_TIMEOUT:.0f} s (QEMU killed)") from None
            child = driver._child
            status = child.wait(5) if child is not None else None
            if status is not None and status < 0:
                raise PlaceLost(place, f"QEMU was killed by signal {-status} while starting") from None
            raise RunError(f"QEMU did not start on place {place}: {exc or type(exc).__name__}"
                           + (f" (exit status {status})" if status is not None else "")) from None
        con.feed(starting.done())
        child = driver._child
        timed_out, gone = _watch(driver, con, deadline=deadline, until=prepared.until, health=health,
                                 place=place, ended=lambda: child.poll() is not None, finish=False)
        killed_by_us = timed_out or not gone  # the deadline, or `until` matched: bulkhead stops QEMU
        # what is still buffered in the socket
        while (data := _read(driver, 0.05)):
            con.feed(data)
    finally:
        status = _stop_qemu(driver)
    con.feed(b"", final=True)
    if status < 0 and not killed_by_us and -status in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
        raise PlaceLost(place, f"QEMU was killed by signal {-status} (not by bulkhead)")
    return status, timed_out, con.text()


class _Starting:
    """Runs beside labgrid's ``QEMUDriver.on()``, which accepts QEMU's
    connection to the serial socket, then sends QMP ``cont`` and waits for
    the answer without reading the console. A guest that prints more than
    the socket holds before that answer blocks QEMU's vCPU thread in the
    UART write while it holds QEMU's big lock, so the main loop never
    answers: both sides wait for ever (a loaded host makes it likely). This
    thread therefore reads the console while ``on()`` runs (``done()``
    returns what it read); connects to the socket if QEMU exits before it
    connected, so that the accept ends; and kills QEMU if ``on()`` has not
    returned after START_TIMEOUT, so that a QEMU that never answers is an
    error, not a hang."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.gave_up = False
        self._stop = threading.Event()
        self._data = bytearray()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def done(self) -> bytes:
        """Stops the thread; the console bytes it read."""
        self._stop.set()
        self._thread.join()
        return bytes(self._data)

    def _run(self) -> None:
        import select
        import socket

        deadline = time.monotonic() + START_TIMEOUT
        while not self._stop.is_set():
            child, sock = self.driver._child, self.driver._clientsocket
            if time.monotonic() >= deadline:
                if child is not None and child.poll() is None:
                    self.gave_up = True
                    child.kill()  # labgrid's QMP read then ends (EOF)
                return
            if sock is None:  # QEMU has not connected yet
                if child is not None and child.poll() is not None:
                    try:
                        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                            s.connect(f"{self.driver._tempdir}/serialrw")
                    except OSError:
                        pass
                    return
                self._stop.wait(0.05)
                continue
            try:
                ready, _, _ = select.select([sock], [], [], 0.05)
                if ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    self._data += data
            except (OSError, ValueError):  # closed under us (on() failed)
                return


def _stop_qemu(driver: Any) -> int:
    """Stops the QEMUDriver's QEMU if it still runs; its exit status."""
    import subprocess

    child = driver._child
    if child is None:
        return 0
    if child.poll() is None:
        child.kill()
    try:
        child.communicate(timeout=10)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass
    status = child.returncode if child.returncode is not None else -signal.SIGKILL
    driver._child = None
    driver.status = 0
    return int(status)


# --- boards ---------------------------------------------------------------------


def board_commands(prepared: runner.Prepared, delivered: str, sd: str | None) -> list[str]:
    """The U-Boot commands that load the FIT (over TFTP as ``delivered``, or
    from the SD card's FAT partition ``sd`` = "<dev>:<part>") and boot it."""
    size = prepared.build.elf.with_suffix(".bin").stat().st_size
    commands = fit.uboot_commands(prepared.build.system.platform, size, itb_name=delivered)
    if sd is not None:
        commands = [f"load mmc {sd} ${{loadaddr}} {delivered}" if c.startswith("tftpboot ") else c
                    for c in commands]
    return commands


def _deliver(target: Any, itb: Path) -> tuple[str, str | None]:
    """Puts the FIT where the board's U-Boot finds it; (the name U-Boot
    loads, the mmc "<dev>:<part>" or None for TFTP)."""
    from labgrid.exceptions import NoDriverFoundError

    try:
        tftp = target.get_driver("TFTPProviderDriver")
    except NoDriverFoundError:
        tftp = None
    if tftp is not None:
        return str(tftp.stage(str(itb))), None
    try:
        mux = target.get_driver("USBSDMuxDriver")
        storage = target.get_driver("USBStorageDriver")
    except NoDriverFoundError:
        raise RunError("the board's environment has no way to deliver the FIT: give it a TFTPProviderDriver "
                       "(TFTP) or a USBSDMuxDriver and a USBStorageDriver (SD mux); docs/farm.md") from None
    mux.set_mode("host")
    storage.write_files([str(itb)], PurePath("/"), SD_PARTITION)
    mux.set_mode("dut")
    device = str(target.env.config.get_option("bulkhead_mmc", "0")) if target.env is not None else "0"
    return itb.name, f"{device}:{SD_PARTITION}"


def _run_board(target: Any, prepared: runner.Prepared, timeout: float | None, stream: TextIO | None,
               health: Callable[[], str], place: str) -> tuple[int, bool, str]:
    """Power off, deliver the FIT, power on, stop U-Boot's autoboot, load
    and ``bootm`` the FIT, stream the console until the hypervisor's last
    line; powered off at the end."""
    con = _Console(stream)
    deadline = None if timeout is None else time.monotonic() + timeout
    with _labgrid_calls():
        power = target.get_driver("PowerProtocol")
        power.off()
        delivered, sd = _deliver(target, prepared.build.itb)
        console = target.get_driver("ConsoleProtocol")
        uboot = target.get_driver("UBootDriver", activate=False)
    try:
        with _labgrid_calls():
            power.on()
            try:
                target.activate(uboot)  # waits for the prompt, interrupting autoboot
            except Exception as exc:  # noqa: BLE001  # labgrid's TIMEOUT, ExecutionError, ...
                problem = health()
                if problem:
                    raise PlaceLost(place, problem) from None
                raise RunError(f"place {place}: no U-Boot prompt: {type(exc).__name__}: {exc}") from None
            *load, boot = board_commands(prepared, delivered, sd)
            for command in load:
                out, _, status = uboot.run(command, timeout=int(START_TIMEOUT))
                con.feed((f"=> {command}\n" + "\n".join(out) + "\n").encode())
                if status != 0:
                    return 1, False, con.text() + f"U-Boot: '{command}' failed (status {status})\n"
            target.deactivate(uboot)
            console.write((boot + "\n").encode())
        timed_out, _ = _watch(console, con, deadline=deadline, until=prepared.until, health=health,
                              place=place, ended=lambda: False, finish=True)
    finally:
        with _labgrid_calls():
            try:
                power.off()
            except Exception:  # noqa: BLE001, S110  # the run's outcome stands; the place's own errors show next time
                pass
    con.feed(b"", final=True)
    return 0, timed_out, con.text()


# --- checking an environment without a lab --------------------------------------------


def offline_target(env_path: Path, exporter_path: Path, place: str | None = None) -> Any:
    """The target the coordinator would give ``env_path``'s ``main`` for
    ``place`` (default: its RemotePlace), built without a coordinator or a
    board: ``exporter_path`` (an exporter configuration) is read by labgrid's
    exporter loader, each resource of the place's group turned into what the
    exporter announces for it (a serial port becomes a NetworkSerialPort, a
    TFTPProvider a RemoteTFTPProvider, ...), and labgrid's factory builds the
    target, binding every driver of the environment to them. Raises RunError
    for what labgrid rejects (unknown class, bad argument, unbound driver)."""
    import contextlib
    import io
    import warnings

    env = FarmEnv(env_path)
    from labgrid import target_factory
    from labgrid.remote.common import ResourceEntry
    from labgrid.remote.config import ResourceConfig
    from labgrid.remote.exporter import ResourceExport, exports

    name = place or (env.place_names() or [""])[0]
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the loader prints what it read
            groups = ResourceConfig(str(exporter_path)).data
    except Exception as exc:  # noqa: BLE001  # jinja2/yaml errors
        raise RunError(f"{exporter_path}: {type(exc).__name__}: {exc}") from None
    if not isinstance(groups, dict) or name not in groups:
        raise RunError(f"{exporter_path}: no resource group '{name}' (the place {env_path} names)")
    resources: list[dict[str, Any]] = []
    for res_name, params in dict(groups[name]).items():
        if res_name == "location" or params is None:
            continue
        params = dict(params)
        cls = params.pop("cls", res_name)
        export_cls = exports.get(cls, ResourceEntry)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. ser2net not installed on this host
                if issubclass(export_cls, ResourceExport):
                    export = export_cls({"avail": False, "cls": cls, "params": dict(params)}, host="exporter",
                                        proxy="exporter", proxy_required=False)
                    cls, params = export.data["cls"], dict(export._get_params())
                    if cls == "NetworkSerialPort" and params.get("port") is None:
                        params["port"] = 0  # chosen by the exporter when the place is acquired
        except Exception as exc:  # noqa: BLE001  # labgrid's attrs validators
            raise RunError(f"{exporter_path}: {name}/{res_name}: {type(exc).__name__}: {exc}") from None
        if cls not in target_factory.resources:
            raise RunError(f"{exporter_path}: {name}/{res_name}: labgrid has no resource class '{cls}'")
        params.pop("extra", None)
        if res_name != cls:
            params["name"] = res_name
        resources.append({cls: params})
    config = copy.deepcopy(env.env.config.get_targets()[ROLE])
    config["resources"] = resources
    try:
        return target_factory.make_target(f"{ROLE}@{name}", config, env=env.env)
    except Exception as exc:  # noqa: BLE001  # labgrid's binding and validation errors
        raise RunError(f"{env_path}: {type(exc).__name__}: {exc}") from None


# --- places for a run or an experiment -----------------------------------------------


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


@dataclass(frozen=True)
class PlaceBackend:
    """The labgrid backend (:class:`bulkhead.run.backend.Backend`) of one
    place, what ``bulkhead experiment`` runs on: acquires the place (waiting
    up to ``wait`` seconds while someone else holds it), boots the config
    there, releases the place. A place that is gone or fails raises
    PlaceLost."""

    env: FarmEnv
    coordinator: Coordinator
    place: str
    wait: float = 3600.0

    def __call__(self, config_path: Path | str, options: RunOptions, /) -> RunResult:
        _refuse(self.place, options)  # before the place is acquired
        acquired = acquire_waiting(self.coordinator, self.place, self.wait)
        try:
            return run_on_place(self.env, self.coordinator, self.place, config_path, options)
        finally:
            if acquired:
                try:
                    self.coordinator.release(self.place)
                except RunError:
                    pass  # a lost place may be released already (or its coordinator gone)


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
