"""The local cloud's own housekeeping. It has no daemon, so it does its work when poolform calls:

- A group heals, as an Auto Scaling group or managed instance group does: a machine type's group
  with fewer instances running than it wants launches the missing ones on every call that reads
  or changes it (launching one needs nothing but its template). A worker pool's group heals on
  the calls that change it (`apply`): its workers run `setup` with the pool's secrets, which the
  local cloud never keeps. Until a group has healed, drift lists the shortfall as a note and
  `apply` restores it.
- Failed launches are swept: a worker directory no running instance owns (left by a process
  killed while it booted workers) is removed, and the `setup` processes still running for it are
  ended, at the first call of a process that changes the cloud.

Both must know that no launch is in flight anywhere. Every call that launches holds a shared
lock (flock on `local-cloud.lock`) from before it decides how many to launch until its instances
are recorded; housekeeping takes the lock exclusively without waiting and skips its turn while a
launch holds it. The kernel drops the lock of a process that dies, so kill -9 never blocks it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from .workers import PID_NAME, WORKER_ENV

LOCK_NAME = "local-cloud.lock"


class LaunchLock:
    """Shared while launching, exclusive (never waited for) for housekeeping."""

    def __init__(self, state_dir: Path):
        self.path = Path(state_dir) / LOCK_NAME

    def _open(self) -> int:
        return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    @contextlib.contextmanager
    def launching(self) -> Iterator[None]:
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def housekeeping(self) -> Iterator[bool]:
        """True when no launch is in flight (and none starts until the block ends)."""
        fd = self._open()
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)


def stray_directories(workers_dir: Path, owned: set[str]) -> list[Path]:
    """Worker directories no running instance owns."""
    try:
        entries = list(os.scandir(workers_dir))
    except FileNotFoundError:
        return []
    return sorted(Path(e.path) for e in entries if e.is_dir() and e.name not in owned)


# How long `end_setups` waits for the processes it killed to be gone (SIGKILL is delivered
# when the process next runs: on a loaded machine, not at once).
GONE_WITHIN_S = 5.0


def end_setups(directory: Path) -> list[int]:
    """SIGKILL every process still running for the worker in `directory`: found by the worker
    id in its environment (which its children inherit), or by the process group `setup` led.
    Returns once none is left (or after `GONE_WITHIN_S`): the caller removes the directory
    next, which a process still dying could otherwise write into, and a process forked just
    before the kill is found and killed on the next look."""
    worker_id = directory.name
    pids = processes_of(worker_id)
    killed = set(pids)
    deadline = time.monotonic() + GONE_WITHIN_S
    alive = pids
    while alive:
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() >= deadline:
            break
        time.sleep(0.01)
        alive = processes_of(worker_id)
        killed.update(alive)
    pids = sorted(killed)
    if not Path("/proc").is_dir():  # no way to check a pid is ours: the group setup led
        leader = _pid_file(directory)
        if leader is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(leader, signal.SIGKILL)
    return pids


def processes_of(worker_id: str) -> list[int]:
    """Processes whose environment names this worker (Linux /proc; [] elsewhere)."""
    marker = f"{WORKER_ENV}={worker_id}".encode()
    found = []
    try:
        entries = os.listdir("/proc")
    except FileNotFoundError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environment = handle.read().split(b"\0")
        except OSError:
            continue
        if marker in environment:
            found.append(int(entry))
    return sorted(found)


def _pid_file(directory: Path) -> int | None:
    try:
        return int((directory / PID_NAME).read_text().strip())
    except (OSError, ValueError):
        return None


def sweep(workers_dir: Path, owned: set[str]) -> list[str]:
    """End and remove what failed launches left; returns the worker ids swept."""
    swept = []
    for directory in stray_directories(workers_dir, owned):
        end_setups(directory)
        shutil.rmtree(directory, ignore_errors=True)
        swept.append(directory.name)
    return swept
