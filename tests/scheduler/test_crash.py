"""kill -9 of the scheduler at random moments, while jobs run and while it starts them: a
restarted scheduler finds every job it started (running, finished while it was down, or never
started) and no job is lost or run twice."""

from __future__ import annotations

import random
import re
import signal
from pathlib import Path

from tests.scheduler.scenario import (
    TERMINAL,
    as_json,
    ok,
    scheduler_loop,
    statuses,
    wait_until,
)

CONFIG = """kind: Cluster
name: crash
provider: local
---
kind: WorkerPool
name: w
pool:
  workers: 2
resources:
  instance_type: c5.xlarge
"""
JOB = """kind: Job
name: work
pool: w
run: |
  sleep 0.3
  echo "done $POOLFORM_JOB_RANK"
"""


def test_kill_9_of_the_scheduler_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "crash"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    ok("apply", directory, "--auto-approve")
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    submitted = as_json("jobs", "submit", job, "--num-jobs", "8", "--chdir", directory)["jobs"]
    ids = [j["id"] for j in submitted]

    chance = random.Random(11)
    for _ in range(4):
        loop = scheduler_loop(directory)
        wait_until("a job runs", lambda: "running" in statuses(directory).values()
                   or set(statuses(directory).values()) <= TERMINAL)  # fmt: skip
        wait_until("a moment passes", lambda: chance.random() < 0.2, deadline=5)
        loop.send_signal(signal.SIGKILL)
        loop.wait()
    # Jobs go on while no scheduler runs: one finishes with nobody watching.
    jobs_dir = directory / ".poolform" / "jobs"
    wait_until("a job ends unwatched", lambda: any(jobs_dir.glob("*/attempt-*/exit")))

    loop = scheduler_loop(directory)
    try:
        wait_until("all jobs ended", lambda: set(statuses(directory).values()) <= TERMINAL)
    finally:
        loop.send_signal(signal.SIGTERM)
        assert loop.wait(timeout=30) == 0

    assert statuses(directory) == dict.fromkeys(ids, "succeeded")
    for job_id, job_record in zip(ids, submitted, strict=True):
        log = (jobs_dir / str(job_id) / "output.log").read_text()
        assert re.findall(r"^done (\d+)$", log, re.M) == [str(job_record["rank"])], log
        ran = [a for a in (jobs_dir / str(job_id)).glob("attempt-*") if (a / "exit").exists()]
        assert len(ran) == 1, f"job {job_id} ran {len(ran)} times"
    history = as_json("jobs", "show", ids[0], "--chdir", directory)["history"]
    assert history[-1]["code"] == "succeeded"


def test_a_launch_whose_process_was_never_recorded_is_found_after_its_claim_is_gone(
    tmp_path: Path,
) -> None:
    """A scheduler killed between starting a job and recording its process, and a job that
    deleted its attempt directory meanwhile: the next scheduler finds the wrapper by its command
    line and adopts it, never fences the attempt and starts it again."""
    import contextlib
    import os
    import time

    from reconciler.scheduler.executor import Launch, Phase
    from reconciler.scheduler.local_executor import LocalExecutor

    jobs_dir, release = tmp_path / "jobs", tmp_path / "release"
    started = LocalExecutor(jobs_dir)
    run = f'rm -rf "$POOLFORM_WORKDIR/../attempt-1"; while [ ! -e {release} ]; do sleep 0.05; done'
    pid = started.start(Launch(1, 1, "j", run, {}, None))
    attempt = started.attempt_dir(1, 1)
    try:
        deadline = time.monotonic() + 60
        while attempt.exists():
            assert time.monotonic() < deadline, "the job never deleted its attempt directory"
            time.sleep(0.05)
        seen = LocalExecutor(jobs_dir).observe(1, 1, fence=True)  # the next scheduler
        assert (seen.phase, seen.pid) == (Phase.RUNNING, pid)
        assert not attempt.exists()  # not fenced
    finally:
        release.touch()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
