# SPDX-License-Identifier: Apache-2.0
"""Linux <-> bare-metal shared memory and doorbells through the Linux
driver (linux/bulkhead_shmem: /dev/bhshm-chan, mmap + blocking read +
write to ring) and the bhshm command, both built into the initramfs by
scripts/setup.sh (docs/ipc.md)."""

from __future__ import annotations

from pathlib import Path

from qconsole import Console, build

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"
DEV = "/dev/bhshm-chan"


def _round(text: str, n: int) -> str:
    """Shell line: message into the page (mmap), ring the peer (write),
    block until the peer's n-th doorbell (read), print its reply (mmap)."""
    return (f"bhshm {DEV} put 0 '{text}'; bhshm {DEV} ring; "
            f"bhshm {DEV} wait {n}; bhshm {DEV} get 256\r")


def test_message_and_doorbell_both_ways() -> None:
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    con = Console(build("shmem-linux.yaml"))
    try:
        con.wait_for("[linux] bulkhead-linux: shmem devices: bhshm-chan ", timeout=120)
        con.wait_for("[linux] bulkhead-linux: starting a shell (exit to power off)")
        con.type(f"bhshm {DEV} info\r")
        # 4 KiB region, index 0, a doorbell interrupt, nothing rung yet
        con.wait_for("[linux] size 4096 index 0 doorbell 1 doorbells 0")
        con.type(f"bhshm {DEV} poll 200\r")  # nothing rung yet: poll times out
        con.wait_for("[linux] poll: timeout")
        con.type(_round("hello from linux", 1))
        con.wait_for("[peer] doorbell: reply: got 'hello from linux'")
        con.wait_for("[linux] doorbells 1")
        con.wait_for("[linux] re: hello from linux")
        con.type(f"bhshm {DEV} poll 200\r")  # a fresh open: the peer's ring is pending
        con.wait_for("[linux] poll: ready")
        con.type(_round("second round", 2) + "exit\r")
        con.wait_for("[peer] doorbell: reply: got 'second round'")
        con.wait_for("[linux] re: second round")
        status = con.finish(timeout=60)
    finally:
        con.finish()
    assert status == 0, con.lines
    assert "[linux] doorbells 2" in con.lines, con.lines
    assert "[peer] doorbell: PASS (2 round trips)" in con.lines, con.lines
    assert "[bulkhead] all VMs off: clean=2 stopped=0" in con.lines, con.lines
    # the kernel bound the driver to the generated node
    assert any("bulkhead-shmem" in line and f"{DEV}: 0x0000000050000000 size 0x0000000000001000 "
               "index 0 doorbell yes" in line for line in con.lines), con.lines
