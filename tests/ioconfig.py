# SPDX-License-Identifier: Apache-2.0
"""The systems the configuration tests of the I/O VM's sections share
(test_config_io, test_config_virtio, test_config_disk, test_config_vioblk,
test_config_iovmboth): one I/O VM and two clients ``a`` and ``b`` on QEMU
``virt``, with ``io:`` (NET), ``disk:`` (DISK) or both (BOTH) on that one
I/O VM; and how each test writes and checks a variant of one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bulkhead import cli


def head(devices: str) -> str:
    """The VMs: the I/O VM owning ``devices`` (e.g. ``virtio31``), clients a and b."""
    return f"""\
platform: qemu-virt
dma_isolation: none
vms:
  - name: iovm
    cpus: [0]
    memory: [{{ipa: 0x40000000, size: 16M}}]
    guest: iovm
    introspection: true  # host physical addresses (BH_HC_IPA_INFO)
    devices: [{devices}]
  - name: a
    cpus: [1]
    memory: [{{ipa: 0x40000000, size: 16M}}]
    guest: ioclient
  - name: b
    cpus: [2]
    memory: [{{ipa: 0x40000000, size: 16M}}]
    guest: ioclient
"""


IO = """\
io:
  device: virtio31
  vm: iovm
  capacity: 10000
  clients:
    - {vm: a, mac: "02:00:00:00:00:0a", queue: 8, weight: 3}
    - {vm: b, mac: "02:00:00:00:00:0b", queue: 32, weight: 1, rate_cap: 1000}
"""

DISK_SECTION = """\
disk:
  device: virtio30
  vm: iovm
  size: 8M
  iops: 20000
  mbps: 80
  clients:
    - {vm: a, size: 1M, weight: 3, queue: 4}
    - {vm: b, size: 2M, weight: 1}
"""

NET = head("virtio31") + IO
DISK = head("virtio30") + DISK_SECTION
BOTH = head("virtio31, virtio30") + IO + DISK_SECTION


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def assert_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, base: str, old: str, new: str,
                   message: str, *, within: bool = False) -> None:
    """``check`` of ``base`` with ``old`` replaced by ``new`` fails with
    ``message``, located (``within``: anywhere in the message after its place)."""
    assert old in base
    path = write(tmp_path, base.replace(old, new, 1))
    assert cli.main(["check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert re.search(rf"^bulkhead: error: {re.escape(str(path))}:\d+:\d+: {'.*' if within else ''}{re.escape(message)}", err, re.M), err
