"""A job whose shell has job control on (`set -m`, as an interactive habit or a script that
wants `fg`/`kill %1` puts it) runs each background job in a process group of its own, in the
job's session. The wrapper killed only its own group when the job ended, and cancel and
preemption signalled only that group: the background job ran on for ever after the job was
recorded succeeded or cancelled and its capacity given to the next job (found with the
installed poolform: `sleep` alive in its own group after `cancelled (exit 143)`, `pools
status` showing the seat free). Now the wrapper kills every group of its session when the
job ends, and a stop signals every group of it. (A process that starts a session of its own,
`setsid`, is reached too since the wrapper became its subreaper: test_escaped_processes33r.)"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, job_group
from tests.scheduler.scenario import cycle_until, ok, statuses, wait_until

LEAVES = """kind: Job
name: leaves
pool: seats
run: |
  set -m
  (trap '' TERM; exec sleep 3201) &
  until [ -e "$POOLFORM_WORKDIR/../go" ]; do sleep 0.02; done
  echo done
"""

STOPPED = """kind: Job
name: stopped
pool: seats
run: |
  set -m
  (trap '' TERM; exec sleep 3202) &
  sleep 3203
"""


def _session(sid: int) -> list[tuple[int, int]]:
    """(pid, process group) of every process of the session that runs (zombies do not)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append((int(stat.parent.name), int(fields[2])))
    return found


def _kill_session(sid: int) -> None:
    for _, group in _session(sid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


def _started(directory: Path) -> int:
    """The job's session (its wrapper's pid), once a process of it runs in another group."""
    wait_until("it runs", lambda: (directory / ".poolform/jobs/1/attempt-1/claim/pid").exists())
    session = job_group(directory, 1)
    wait_until(
        "a background job in a group of its own",
        lambda: any(group != session for _, group in _session(session)),
    )
    return session


def test_a_background_job_in_a_group_of_its_own_ends_with_the_job(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    ok("jobs", "submit", job_file(tmp_path, LEAVES), "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    session = _started(directory)
    try:
        (directory / ".poolform/jobs/1/go").touch()  # the job may end now
        cycle_until(directory, "it succeeds", lambda: statuses(directory)[1] == "succeeded")
        wait_until("nothing of its session runs", lambda: not _session(session), deadline=20)
    finally:
        _kill_session(session)


def test_a_cancel_reaches_every_process_group_of_the_job(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    ok("jobs", "submit", job_file(tmp_path, STOPPED), "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    session = _started(directory)
    try:
        # A grace of an hour: nothing is killed for being late; the job's shell ends on TERM,
        # its background job ignores TERM in a group of its own.
        ok("jobs", "cancel", "1", "--grace", "1h", "--chdir", directory)
        cycle_until(directory, "it is cancelled", lambda: statuses(directory)[1] == "cancelled")
        wait_until("nothing of its session runs", lambda: not _session(session), deadline=20)
    finally:
        _kill_session(session)
