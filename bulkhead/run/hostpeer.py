# SPDX-License-Identifier: Apache-2.0
"""The host side of a Linux workload's network traffic (docs/workloads.md):
an iperf3 server on the host's loopback for a guest command running
``iperf3 -c 10.0.2.2``, for the length of a run. :func:`bulkhead.run.runner.run`
starts one per such command in the Linux VMs' ``bulkhead.run="..."``, so
``bulkhead run`` and ``bulkhead experiment`` both have it."""

from __future__ import annotations

import contextlib
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator

# QEMU's user-mode network (the default -netdev of a shared I/O device and
# of a passed-through NIC): the guest reaches the host's loopback at 10.0.2.2.
USER_NET_HOST = "10.0.2.2"
IPERF3_PORT = 5201


def iperf3_server_port(cmd: str) -> int | None:
    """The port of the host's iperf3 server a workload command connects to
    (``iperf3 -c 10.0.2.2 [-p PORT]``), or None if it runs no such client."""
    try:
        words = shlex.split(cmd.replace(";", " ; ").replace("&&", " && "))
    except ValueError:
        return None
    port: int | None = None
    for i, word in enumerate(words):
        if word.rsplit("/", 1)[-1] != "iperf3":
            continue
        args = words[i + 1:]
        if any(a in ("-c", "--client") and j + 1 < len(args) and args[j + 1] == USER_NET_HOST
               for j, a in enumerate(args)):
            port = IPERF3_PORT
            for j, a in enumerate(args[:-1]):
                if a in ("-p", "--port") and args[j + 1].isdigit():
                    port = int(args[j + 1])
    return port


def _serving(port: int, tries: int = 10) -> bool:
    """Whether something listens on 127.0.0.1:``port`` already. An iperf3
    server closes and reopens its listening socket after each client (a
    probe's connection counts), so a refused connection is tried again
    ``tries`` times 20 ms apart before the port counts as free."""
    for attempt in range(tries):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        if attempt + 1 < tries:
            time.sleep(0.02)
    return False


@contextlib.contextmanager
def host_peer(cmd: str) -> Iterator[subprocess.Popen[bytes] | None]:
    """The host side of a workload, for the length of the run: an iperf3
    server on 127.0.0.1 (what QEMU's user-mode network shows the guest as
    10.0.2.2) at the port the command's ``iperf3 -c 10.0.2.2`` connects to;
    nothing for other commands."""
    port = iperf3_server_port(cmd) if cmd else None
    if port is None:
        yield None
        return
    if _serving(port):
        yield None  # a server the caller started (bulkhead experiment's) already listens there
        return
    binary = shutil.which("iperf3")
    if binary is None:
        print("bulkhead: warning: no iperf3 on the host (scripts/setup.sh packages): the guest's "
              "iperf3 client will find no server", file=sys.stderr)
        yield None
        return
    server = subprocess.Popen([binary, "-s", "-B", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        yield server
    finally:
        server.kill()
        server.wait()


_RUN_RE = re.compile(r'(?:^|\s)bulkhead\.run="([^"]*)"')


@contextlib.contextmanager
def for_bootargs(bootargs: Iterable[str | None]) -> Iterator[list[subprocess.Popen[bytes]]]:
    """:func:`host_peer` for every ``bulkhead.run="..."`` command of these
    kernel command lines (one server per port)."""
    ports: dict[int, str] = {}
    for args in bootargs:
        for cmd in _RUN_RE.findall(args or ""):
            port = iperf3_server_port(cmd)
            if port is not None:
                ports.setdefault(port, cmd)
    with contextlib.ExitStack() as stack:
        yield [server for cmd in ports.values() if (server := stack.enter_context(host_peer(cmd))) is not None]
