"""A cancelled (or preempted) job whose main process ended on SIGTERM was recorded cancelled
and its capacity given away, while what it had started in its process group and that
ignores SIGTERM (a data loader, a daemon holding the GPU) ran on for ever: SIGKILL "after
--grace" went to jobs whose wrapper still ran, never to the rest of an ended one's group.
Now, when a job asked to stop has ended, the rest of its process group is killed then."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.adversarial.scheduler_setup import applied, group_alive, job_file, job_group
from tests.scheduler.scenario import cycle_until, ok, statuses, wait_until

JOB = """kind: Job
name: leftover
pool: seats
run: |
  (trap '' TERM; exec sleep 1007) &
  sleep 1008
"""


def test_a_stopped_jobs_group_is_killed_once_its_main_process_ended(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    ok("jobs", "submit", job_file(tmp_path, JOB), "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    wait_until("it runs", lambda: (directory / ".poolform/jobs/1/attempt-1/claim/pid").exists())
    group = job_group(directory, 1)
    try:
        # A grace of an hour: nothing is killed for being late; the job's shell ends on TERM.
        ok("jobs", "cancel", "1", "--grace", "1h", "--chdir", directory)
        cycle_until(directory, "it is cancelled", lambda: statuses(directory)[1] == "cancelled")
        wait_until("nothing of it runs", lambda: not group_alive(group), deadline=20)
    finally:
        if group_alive(group):
            os.killpg(group, signal.SIGKILL)


BACKGROUND = """kind: Job
name: daemon
pool: seats
run: |
  (trap '' TERM; exec sleep 1009) &
  echo started
"""


def test_what_a_job_leaves_running_ends_with_it(tmp_path: Path) -> None:
    """A job that starts a background process and exits 0: the job succeeds, and its process
    group (the background process included) is gone, as a Slurm job's or a pod's would be,
    rather than holding what the job's end frees."""
    directory = applied(tmp_path)
    ok("jobs", "submit", job_file(tmp_path, BACKGROUND), "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    wait_until("it runs", lambda: (directory / ".poolform/jobs/1/attempt-1/claim/pid").exists())
    group = job_group(directory, 1)
    try:
        cycle_until(directory, "it succeeds", lambda: statuses(directory)[1] == "succeeded")
        wait_until("nothing of it runs", lambda: not group_alive(group), deadline=20)
    finally:
        if group_alive(group):
            os.killpg(group, signal.SIGKILL)
