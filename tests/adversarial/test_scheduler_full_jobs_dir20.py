"""The disk of the jobs directory full when the scheduler starts jobs (a job's runaway log
filled it, or another program did). Every admitted job's start met "No space left on device"
and each was recorded as failed, for good: a scheduler that admits whatever fits failed the
whole queue, a cycle at a time, for what is this machine's shortage and no fault of the jobs.
Now such a job goes back to the queue unstarted (reason `start_deferred`, no retry used), the
jobs after it in the cycle are not tried, and once there is room again each runs, once.

The jobs directory is a full tmpfs (no inode left) mounted over `.poolform/jobs` in a mount
namespace of its own (`unshare -m`), where the installed `poolform scheduler run --once` runs:
nothing outside the namespace sees the mount. Skipped where namespaces cannot be made (not
root, no unshare); the loop's pause after a shortage is checked in process, everywhere."""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import applied, job_file, listed
from tests.scenario.installed import poolform_command
from tests.scheduler.scenario import ok, statuses, wait_until

# A tmpfs with one inode, its own root: nothing can be made in it (ENOSPC).
FULL = """set -e
mount -t tmpfs -o size=1m,nr_inodes=1,mode=0700 poolform-full "$1"
shift
exec "$@"
"""


@functools.cache
def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", FULL, "sh", "/mnt", "true"],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


@pytest.fixture
def namespaces() -> None:
    if not _namespaces_work():
        pytest.skip("needs unshare -m and a tmpfs mount (root)")


def with_full_jobs_dir(directory: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """`poolform ARGS` where the configuration's jobs directory is a full disk."""
    jobs = directory / ".poolform" / "jobs"
    jobs.mkdir(mode=0o700, exist_ok=True)
    command = ["unshare", "-m", "--propagation", "private", "sh", "-c", FULL, "sh", str(jobs)]
    environment = {**os.environ, "CI": "true", "NO_COLOR": "1"}
    return subprocess.run(
        [*command, *poolform_command(), *map(str, args)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


@pytest.mark.usefixtures("namespaces")
def test_jobs_admitted_onto_a_full_disk_wait_unstarted_and_run_once_there_is_room(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    runs = tmp_path / "runs"
    job = job_file(
        tmp_path,
        f"kind: Job\nname: j\npool: seats\nretries: 1\nrun: echo $POOLFORM_JOB_RANK >> {runs}\n",
    )
    ok("jobs", "submit", job, "--num-jobs", "3", "--chdir", directory)

    full = with_full_jobs_dir(directory, "scheduler", "run", "--once", "--chdir", directory)

    assert full.returncode == 0, (full.stdout, full.stderr)
    assert "queued again unstarted" in full.stdout, full.stdout
    jobs = listed(directory)
    assert [j["status"] for j in jobs] == ["queued"] * 3
    assert {j["reason"]["code"] for j in jobs} == {"start_deferred"}
    assert "No space left on device" in jobs[0]["reason"]["message"]
    assert json.loads(ok("jobs", "show", "1", "--json", "--chdir", directory))["retries_left"] == 1
    assert not runs.exists()

    # Room again (the namespace, and its full disk, are gone): each job runs, once.
    ok("scheduler", "run", "--once", "--chdir", directory)

    def ended() -> bool:
        ok("scheduler", "run", "--once", "--chdir", directory)
        return set(statuses(directory).values()) == {"succeeded"}

    wait_until("every job ended", ended)
    assert sorted(runs.read_text().split()) == ["0", "1", "2"]
    for job in (1, 2, 3):  # no retry was used
        shown = json.loads(ok("jobs", "show", job, "--json", "--chdir", directory))
        assert shown["retries_left"] == 1


def test_after_a_shortage_the_loop_starts_nothing_for_a_pause_then_starts_again(
    tmp_path: Path,
) -> None:
    """A long-running scheduler meets the shortage once: the job it tried waits, the rest of
    the cycle's admissions wait untried, and for SHORTAGE_PAUSE it decides nothing (it only
    watches), rather than admit and unwind the queue at every cycle of a full disk."""
    from reconciler.cli.scheduler_context import job_context
    from reconciler.scheduler.executor import Launch
    from reconciler.scheduler.loop import SHORTAGE_PAUSE, SchedulerLoop
    from tests.scheduler.fakes import FakeExecutor, World

    class FullDisk(FakeExecutor):
        full, tried = True, 0

        def start(self, launch: Launch) -> int:
            self.tried += 1
            if self.full:
                raise OSError(errno.ENOSPC, "No space left on device", "/jobs/1")
            return super().start(launch)

    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: 'true'\n")
    ok("jobs", "submit", job, "--num-jobs", "3", "--chdir", directory)
    now = [1000.0]
    ctx = job_context(directory)
    executor = FullDisk(World())
    try:
        loop = SchedulerLoop(ctx.store, executor, ctx.read_config, lambda: now[0])

        first = loop.cycle()
        assert (first.deferred, executor.tried) == ([1, 2, 3], 1)

        executor.full = False
        now[0] += SHORTAGE_PAUSE / 2
        paused = loop.cycle()
        assert (paused.admitted, paused.shortage, executor.tried) == ([], first.shortage, 1)

        now[0] += SHORTAGE_PAUSE
        again = loop.cycle()
        assert (again.admitted, again.deferred, again.shortage) == ([1, 2, 3], [], None)
        assert sorted(job for job, _ in executor.world.starts) == [1, 2, 3]
    finally:
        ctx.close()
