# SPDX-License-Identifier: Apache-2.0
"""labgrid as the execution backend beyond one local QEMU (docs/farm.md).

With :mod:`bulkhead.run.farm_session` (coordinator, environment files,
places; re-exported here) the only modules that talk to labgrid (untyped;
they are its typed adapter):

- :class:`PlaceBackend`: the :class:`bulkhead.run.backend.Backend` of a
  place, refusing what only a local run can do (:func:`refused`);
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

import codecs
import contextlib
import copy
import shlex
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, TextIO

from bulkhead.base.errors import RunError
from bulkhead.generate import fit, qemu
from bulkhead.layout.load import PLATFORMS_DIR, load_system
from bulkhead.run import runner
from bulkhead.run.backend import RunOptions
from bulkhead.run.farm_session import ROLE as ROLE
from bulkhead.run.farm_session import Coordinator as Coordinator
from bulkhead.run.farm_session import FarmEnv as FarmEnv
from bulkhead.run.farm_session import PlaceInfo, acquire_waiting, labgrid_calls
from bulkhead.run.farm_session import PlaceLost as PlaceLost
from bulkhead.run.farm_session import PlaceUnsuitable as PlaceUnsuitable
from bulkhead.run.farm_session import choose_places as choose_places
from bulkhead.run.result import ALL_OFF_RE, PANIC_RE, RunResult, judge

START_TIMEOUT = 30.0  # QEMU connecting to the QEMUDriver's serial socket, a board's U-Boot prompt
HEALTH_INTERVAL = 0.5  # seconds between checks that the place is still whole
SD_PARTITION = 1  # the FAT partition the FIT is copied to (U-Boot: load mmc <dev>:1)


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
    next serial port on its own socket (after the rest: the unconnected ports
    before the console's, ``-serial null``, are kept) and adds -machine/-cpu/-m
    itself."""
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
            if value == "null":  # a port before the console's (qemu.serial)
                out += [arg, value]
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

    with labgrid_calls():
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
    with labgrid_calls():
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
            with labgrid_calls():
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
    with labgrid_calls():
        power = target.get_driver("PowerProtocol")
        power.off()
        delivered, sd = _deliver(target, prepared.build.itb)
        console = target.get_driver("ConsoleProtocol")
        uboot = target.get_driver("UBootDriver", activate=False)
    try:
        with labgrid_calls():
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
        with labgrid_calls():
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


