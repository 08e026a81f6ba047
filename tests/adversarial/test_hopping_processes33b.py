"""A job that leaves behind a process that forks and exits at once, again and again (each new
process in a session of its own: a new pid every few hundred microseconds, a "pid hopper")
outlived the job's end and its cancel: the wrapper's kill loop scans /proc and then kills
what it found, and a hopper found by a scan has already been replaced by its child when the
SIGKILL comes; every kill failing, the loop took the job for ended and recorded its exit
status while the hopper ran on (the job `succeeded`, its capacity shown free). Now the
wrapper also reads its own children (one small /proc file) and kills each as soon as it is
read: the hopper's parent gone, each new hop is the wrapper's child (it is their subreaper).

Whether anything of the job still runs is told without timing: the job opens a FIFO for
writing, which every process it starts inherits; the test's read end sees end-of-file only
once no process holding it is left."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.scheduler.executor import Launch, Phase, Process
from reconciler.scheduler.local_executor import LocalExecutor
from tests.adversarial.test_escaped_processes33r import _ended, _escaped
from tests.scheduler.scenario import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# Forks, the parent exits at once, the child starts a session of its own and does the same;
# it counts its hops (so the job ends only once it is hopping) and stops by itself after
# 30 s, or once `stop` exists (a failing test's clean-up), so it never outlives a test run.
HOPPER = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
count, stop, end = sys.argv[1], sys.argv[2], time.monotonic() + 30
hops = 0
while time.monotonic() < end and not os.path.exists(stop):
    if os.fork():
        os._exit(0)
    os.setsid()
    hops += 1
    if hops == 50:
        with open(count, "w") as f:
            f.write("hopping")
"""


@pytest.fixture
def pipe(tmp_path: Path) -> Iterator[int]:
    """The read end of a FIFO the job holds open for writing (non-blocking)."""
    fifo = tmp_path / "held"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    yield fd
    os.close(fd)
    (tmp_path / "stop").touch()
    for pid in _escaped(tmp_path):  # what a failing test left (by pid, only the test's own)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _nothing_holds(fd: int) -> bool:
    """Whether no process holds the FIFO's write end any longer (end-of-file)."""
    try:
        return os.read(fd, 4096) == b""
    except OSError as error:
        if error.errno == errno.EAGAIN:
            return False  # a writer is still there, with nothing written
        raise


def _start(tmp_path: Path, tail: str, before: str = "") -> tuple[LocalExecutor, Process]:
    hopper = tmp_path / "hopper.py"
    hopper.write_text(HOPPER)
    count, stop = tmp_path / "count", tmp_path / "stop"
    run = (
        f"exec 3>{tmp_path / 'held'}\n{before}"
        f"{sys.executable} {hopper} {count} {stop} </dev/null >/dev/null 2>&1 &\n"
        f"until [ -s {count} ]; do sleep 0.02; done\n" + tail
    )
    executor = LocalExecutor(tmp_path / "jobs")
    pid = executor.start(Launch(1, 1, "j", run, {}, None))
    return executor, executor.identify(pid)


def test_a_process_hopping_from_pid_to_pid_ends_before_the_jobs_end_is_recorded(
    tmp_path: Path, pipe: int
) -> None:
    executor, process = _start(tmp_path, "exit 0")

    seen = _ended(executor, process)

    assert seen.phase is Phase.EXITED and seen.exit_code == 0, seen
    assert _nothing_holds(pipe)  # at the first look that frees the job's capacity


def test_a_cancel_ends_a_process_hopping_from_pid_to_pid(tmp_path: Path, pipe: int) -> None:
    """The hopper ignores SIGTERM (a daemon may): the job's shell ends on it, and the wrapper
    ends what is left before it records the status."""
    executor, process = _start(tmp_path, "trap - TERM; sleep 3309 & wait")
    wait_until("the job is waiting", lambda: _sleeping(tmp_path, b"3309"))

    executor.signal(1, 1, process.pid, kill=False)
    seen = _ended(executor, process)

    assert seen.phase is Phase.EXITED and seen.exit_code == 143, seen
    assert _nothing_holds(pipe)


def _sleeping(tmp_path: Path, seconds: bytes) -> bool:
    """Whether the job's `sleep SECONDS` runs (it started waiting)."""
    for entry in os.scandir("/proc"):
        with contextlib.suppress(OSError):
            if (
                entry.name.isdigit()
                and b"sleep\0" + seconds in Path(f"/proc/{entry.name}/cmdline").read_bytes()
            ):
                environ = Path(f"/proc/{entry.name}/environ").read_bytes()
                if os.fsencode(tmp_path) in environ:
                    return True
    return False


def test_a_kill_after_the_grace_ends_a_process_hopping_from_pid_to_pid(
    tmp_path: Path, pipe: int
) -> None:
    """Both ignore SIGTERM: the SIGKILL after the grace stops the wrapper, kills each of its
    children as it reads them, then the rest (a hop left below a wrapper killed before it
    would have been given to init, out of reach)."""
    # Many processes the wrapper was given before the hopper's (their parent gone): a kill
    # that reaches each in turn reaches the hopper's current pid long after it is gone.
    orphans = "trap '' TERM; for n in $(seq 300); do (setsid sleep 3316 &); done; "
    executor, process = _start(tmp_path, "trap '' TERM; sleep 3315", before=orphans)
    wait_until("the job is waiting", lambda: _sleeping(tmp_path, b"3315"))

    executor.signal(1, 1, process.pid, kill=False)
    assert executor.observe(1, 1, process=process).phase is Phase.RUNNING
    executor.signal(1, 1, process.pid, kill=True)
    seen = _ended(executor, process)

    assert seen.phase is Phase.VANISHED, seen
    assert _nothing_holds(pipe)
