"""A job's `run` that left its session (`setsid sleep 300 &`, a double fork plus setsid,
`nohup setsid ... &`, a daemon) outlived the job's end, its cancel and its preemption: the
wrapper and the scheduler killed the job's session, which such a process had left. The job was
recorded ended and its capacity shown free while the process ran on (found with the installed
poolform: `sleep` alive with the attempt's POOLFORM_ATTEMPT_DIR after `succeeded`,
`cancelled (exit 143)` and a preemption). Now the wrapper is the child subreaper of all the
job starts: an escaped process stays below it, a stop reaches it, and the wrapper kills it
and waits until it is gone before it records the exit status, so the capacity is freed only
then."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.scheduler.executor import Launch, Observation, Phase, Process
from reconciler.scheduler.local_executor import ATTEMPT_DIR_VARIABLE, LocalExecutor
from reconciler.scheduler.local_processes import Below, _send, started_at, stat_fields
from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file
from tests.scheduler.scenario import cycle_until, ok, statuses, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# Three ways out of the session: setsid in the background, a double fork plus setsid (its
# parent gone at once), nohup setsid; each ignores SIGTERM and SIGHUP, as a daemon may.
ESCAPE = """
setsid bash -c 'trap "" TERM HUP; exec sleep 3301' </dev/null >/dev/null 2>&1 &
(setsid bash -c 'trap "" TERM HUP; exec sleep 3302' </dev/null >/dev/null 2>&1 &)
nohup setsid bash -c 'trap "" TERM HUP; exec sleep 3303' </dev/null >/dev/null 2>&1 &
"""


def _escaped(root: Path) -> list[int]:
    """The running processes started by an attempt under `root` (POOLFORM_ATTEMPT_DIR in
    the environment they were started with), zombies aside."""
    exact = f"{ATTEMPT_DIR_VARIABLE}={root}".encode()
    prefix = exact + b"/"
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry.name}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and any(item == exact or item.startswith(prefix) for item in environ):
            found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def nothing_left(tmp_path: Path) -> Iterator[None]:
    """What a failing test leaves running is killed (by pid, only the test's own)."""
    yield
    for pid in _escaped(tmp_path):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _start(tmp_path: Path, run: str) -> tuple[LocalExecutor, Process]:
    executor = LocalExecutor(tmp_path / "jobs")
    pid = executor.start(Launch(1, 1, "j", run, {}, None))
    return executor, executor.identify(pid)


def _ended(executor: LocalExecutor, process: Process) -> Observation:
    """The first look at the attempt that finds it no longer running."""
    seen: list[Observation] = []

    def ended() -> bool:
        seen.append(executor.observe(1, 1, process=process))
        return seen[-1].phase is not Phase.RUNNING

    wait_until("the attempt ended", ended)
    return seen[-1]


def _escaped_runs(tmp_path: Path) -> None:
    wait_until("three processes left the session", lambda: len(_escaped(tmp_path)) >= 4)


def test_what_left_the_session_is_gone_before_the_jobs_end_is_recorded(tmp_path: Path) -> None:
    go = tmp_path / "go"
    executor, process = _start(tmp_path, ESCAPE + f"until [ -e {go} ]; do sleep 0.02; done")
    _escaped_runs(tmp_path)
    go.touch()

    seen = _ended(executor, process)

    assert seen.phase is Phase.EXITED and seen.exit_code == 0, seen
    assert _escaped(tmp_path) == []  # at the first look that frees its capacity


def test_a_cancel_reaches_what_left_the_session_and_ends_it_with_the_job(
    tmp_path: Path,
) -> None:
    """SIGTERM reaches a process that left the session (a daemon's clean stop), and the job's
    main process ending on it ends the rest: no SIGKILL, no waiting for the grace."""
    said = tmp_path / "said"
    run = (
        f"setsid bash -c 'trap \"echo term > {said}; exit\" TERM; sleep 3304 & wait' &\n"
        + ESCAPE
        + f"trap 'until [ -s {said} ]; do sleep 0.02; done; exit 143' TERM\n"
        + "sleep 3305 & wait"
    )
    executor, process = _start(tmp_path, run)
    _escaped_runs(tmp_path)
    wait_until("five left", lambda: len(_escaped(tmp_path)) >= 6)

    executor.signal(1, 1, process.pid, kill=False)
    seen = _ended(executor, process)

    assert said.read_text() == "term\n"
    assert seen.phase is Phase.EXITED and seen.exit_code == 143, seen
    assert _escaped(tmp_path) == []


def test_a_kill_after_the_grace_reaches_what_left_the_session(tmp_path: Path) -> None:
    """A job that ignores SIGTERM, as what it left does: SIGKILL after the grace (as for a
    preemption or a removed worker) ends them all, the wrapper last."""
    executor, process = _start(tmp_path, "trap '' TERM\n" + ESCAPE + "sleep 3306; sleep 3307")
    _escaped_runs(tmp_path)

    executor.signal(1, 1, process.pid, kill=False)
    assert executor.observe(1, 1, process=process).phase is Phase.RUNNING
    executor.signal(1, 1, process.pid, kill=True)
    seen = _ended(executor, process)

    assert seen.phase is Phase.VANISHED, seen
    wait_until("nothing of it runs", lambda: _escaped(tmp_path) == [])


def test_a_restarted_scheduler_stops_what_left_the_session(tmp_path: Path) -> None:
    """A scheduler killed with kill -9 and started again has no handle on the wrapper: it
    finds it by its command line, and what is below it."""
    _, process = _start(tmp_path, ESCAPE + "exec sleep 3308")
    _escaped_runs(tmp_path)
    again = LocalExecutor(tmp_path / "jobs")

    again.signal(1, 1, process.pid, kill=False)
    seen = _ended(again, process)

    assert seen.phase is Phase.EXITED and seen.exit_code == 143, seen
    assert _escaped(tmp_path) == []


def test_a_well_behaved_job_is_unaffected(tmp_path: Path) -> None:
    executor, process = _start(tmp_path, "sleep 0.1 & wait; echo out; exit 3")

    seen = _ended(executor, process)

    assert seen.phase is Phase.EXITED and seen.exit_code == 3, seen
    assert (executor.log_path(1)).read_text() == "out\n"


def test_a_process_found_below_the_wrapper_is_not_signalled_once_its_pid_is_anothers(
    tmp_path: Path,
) -> None:
    """A pid read from /proc may be given to another process before the signal is sent: the
    signal goes only to a process that started when the one found did."""
    stranger = subprocess.Popen(["sleep", "300"])
    try:
        since = started_at(stranger.pid)
        assert since is not None
        _send(Below(stranger.pid, since - 1, stranger.pid), signal.SIGKILL)
        assert stranger.poll() is None
        _send(Below(stranger.pid, since, stranger.pid), signal.SIGKILL)
        assert stranger.wait(timeout=60) == -signal.SIGKILL
    finally:
        stranger.kill()
        stranger.wait()


SEATED = """kind: Job
name: escapes
pool: seats
run: |
"""


def test_a_cancelled_jobs_capacity_is_freed_only_once_what_left_the_session_is_gone(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    run = ESCAPE + "exec sleep 3309\n"
    text = SEATED + "".join(f"  {line}\n" for line in run.strip().splitlines())
    ok("jobs", "submit", job_file(tmp_path, text), "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    _escaped_runs(tmp_path)

    ok("jobs", "cancel", "1", "--grace", "1h", "--chdir", directory)
    cycle_until(directory, "it is cancelled", lambda: statuses(directory)[1] == "cancelled")

    assert _escaped(tmp_path) == []


def test_a_preempted_jobs_processes_that_left_the_session_end_before_it_is_requeued(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    ok("apply", quick, "--auto-approve")
    run = ESCAPE + "exec sleep 3310\n"
    research = "kind: Job\nname: research\nsubject: team/research\nresources: {gpu: 4}\n"
    research += "run: |\n" + "".join(f"  {line}\n" for line in run.strip().splitlines())
    prod = "kind: Job\nname: prod\nsubject: team/ml-prod\nresources: {gpu: 12}\nrun: echo p\n"
    ok(
        "jobs",
        "submit",
        job_file(tmp_path, research, "r.yaml"),
        "--num-jobs",
        "2",
        "--chdir",
        quick,
    )
    cycle_until(quick, "research runs", lambda: statuses(quick) == {1: "running", 2: "running"})
    wait_until("both left their sessions", lambda: len(_escaped(tmp_path)) >= 8)
    ok("jobs", "submit", job_file(tmp_path, prod, "p.yaml"), "--chdir", quick)
    cycle_until(quick, "one was preempted", lambda: _one_stopped(quick))

    for job in (1, 2):
        if statuses(quick)[job] != "running":  # ended: what it started ended before
            assert _escaped(quick / ".poolform" / "jobs" / str(job) / "attempt-1") == []
    cycle_until(quick, "prod ran", lambda: statuses(quick)[3] == "succeeded")
    ok("jobs", "cancel", "1", "2", "--grace", "0s", "--chdir", quick)


def _one_stopped(directory: Path) -> bool:
    now = statuses(directory)
    return now[1] != "running" or now[2] != "running"


def test_what_left_the_session_of_a_job_that_killed_its_wrapper_is_found_by_its_mark(
    tmp_path: Path,
) -> None:
    """Its wrapper killed by the job, what left the session was given to init: the job runs
    while it does, and a stop reaches it, by the attempt's mark."""
    run = (
        "setsid bash -c 'trap \"\" TERM HUP; exec sleep 3311' </dev/null >/dev/null 2>&1 &\n"
        "kill -9 $PPID; exec sleep 3312"
    )
    executor, process = _start(tmp_path, run)
    wait_until("the wrapper is gone", lambda: (stat_fields(process.pid) or ["Z"])[0] == "Z")
    wait_until("both run", lambda: len(_escaped(tmp_path)) == 2)

    executor.signal(1, 1, process.pid, kill=False)
    wait_until("its main process ended", lambda: len(_escaped(tmp_path)) == 1)
    assert executor.observe(1, 1, process=process).phase is Phase.RUNNING
    executor.signal(1, 1, process.pid, kill=True)
    seen = _ended(executor, process)

    assert seen.phase is Phase.VANISHED, seen
    assert _escaped(tmp_path) == []
