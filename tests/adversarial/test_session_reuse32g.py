"""A job's wrapper leads its session, so the session bears the wrapper's pid. Once the wrapper
and every process of its session are gone, that pid is free: a later, unrelated process given
it may start a session of its own (setsid) and leave it running without itself (a daemon's
fork, setsid, exit). The scheduler then read that session as the job's: a job whose wrapper
was gone stayed "running" for as long as the stranger ran, and a cancel, a preemption or a
timeout sent SIGTERM and SIGKILL to the stranger's processes. Now a session whose leader is
gone is the attempt's only if one of its processes carries the attempt's mark
(POOLFORM_ATTEMPT_DIR in the environment it was started with)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.scheduler.executor import Launch, Phase, Process
from reconciler.scheduler.local_executor import LocalExecutor
from tests.scheduler.scenario import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _survives(pid: int) -> bool:
    """Still running a moment after a signal could have reached it (a SIGKILL lands at once;
    waiting can only hide a wrong kill, never fail a right one)."""
    time.sleep(0.3)
    return _running(pid)


def _running(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return False
    return fields[0] != "Z"


@pytest.fixture
def stranger() -> Iterator[tuple[int, int]]:
    """(session, process): a session whose leader has exited, left with one process in it, as
    an unrelated daemon that was given a gone wrapper's pid would leave it."""
    leader = subprocess.Popen(
        ["bash", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"],
        stdout=subprocess.PIPE,
        start_new_session=True,
        env={"PATH": os.environ["PATH"]},
    )
    out, _ = leader.communicate()  # reaped: its pid now numbers only its session
    child = int(out)
    try:
        yield leader.pid, child
    finally:
        if _running(child):
            os.kill(child, signal.SIGKILL)


def test_a_session_that_took_a_gone_wrappers_pid_is_not_the_job(
    tmp_path: Path, stranger: tuple[int, int]
) -> None:
    session, child = stranger
    executor = LocalExecutor(tmp_path / "jobs")
    executor.attempt_dir(1, 1).mkdir(parents=True)
    wrapper = Process(session, since=1)  # the job's wrapper, started before the stranger

    seen = executor.observe(1, 1, process=wrapper)

    assert seen.phase is Phase.VANISHED, seen
    assert _survives(child)


def test_a_stop_never_signals_a_session_that_took_a_gone_wrappers_pid(
    tmp_path: Path, stranger: tuple[int, int]
) -> None:
    session, child = stranger
    executor = LocalExecutor(tmp_path / "jobs")
    executor.attempt_dir(1, 1).mkdir(parents=True)

    executor.signal(1, 1, session, kill=False)
    executor.signal(1, 1, session, kill=True)

    assert _survives(child)


def test_a_job_that_killed_its_wrapper_still_runs_and_is_still_stopped(tmp_path: Path) -> None:
    """The mark keeps what the session's number gave before: the job's own session, its
    wrapper killed by the job, is running, and a stop reaches it."""
    executor = LocalExecutor(tmp_path / "jobs")
    started = tmp_path / "started"
    run = f"kill -9 $PPID; echo $$ > {started}; exec sleep 300"
    pid = executor.start(Launch(1, 1, "j", run, {}, None))
    wrapper = executor.identify(pid)
    wait_until("the job killed its wrapper", lambda: started.exists() and not _running(pid))
    job = int(started.read_text())
    try:
        assert executor.observe(1, 1, process=wrapper).phase is Phase.RUNNING
        executor.signal(1, 1, pid, kill=True)
        wait_until("the job was killed", lambda: not _running(job))
        assert executor.observe(1, 1, process=wrapper).phase is Phase.VANISHED
    finally:
        if _running(job):
            os.kill(job, signal.SIGKILL)


def test_a_process_that_only_names_the_attempt_directory_is_not_its_wrapper(
    tmp_path: Path,
) -> None:
    """Given the wrapper's pid after the wrapper and its session ended, a process whose command
    line merely holds the attempt's directory (`tail -f .../attempt-1/...`) was taken for the
    wrapper: signalled, its session's groups too."""
    executor = LocalExecutor(tmp_path / "jobs")
    attempt = executor.attempt_dir(1, 1)
    attempt.mkdir(parents=True)
    reader = subprocess.Popen(
        ["bash", "-c", "sleep 300; :", "tail", f"{attempt}/output.log"],
        start_new_session=True,
    )
    try:
        executor.signal(1, 1, reader.pid, kill=True)
        assert _survives(reader.pid)
    finally:
        reader.kill()
        reader.wait()
