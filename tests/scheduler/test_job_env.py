"""What the scheduler sets in a job's environment, and what a job file may set itself."""

from __future__ import annotations

from reconciler.scheduler.lifecycle import job_env
from reconciler.scheduler.model import Status
from reconciler.scheduler.store import JobRecord
from schemas.job import RESERVED_ENVS
from tests.scheduler.builders import request


def test_every_name_the_scheduler_sets_is_reserved_and_the_jobs_own_envs_pass() -> None:
    """A job file may not set a reserved name (schemas/job.py refuses it): its value would be
    overwritten. The executor adds POOLFORM_WORKDIR, POOLFORM_ATTEMPT_DIR and PWD at start."""
    job = JobRecord(
        1, 1, "j", 2, 4, request(), "true", {"MINE": "x"}, 0, 0, Status.ADMITTED, None, 0.0,
        pool="p", attempt=1,
    )  # fmt: skip
    env = job_env(job, "w-1")
    assert env["MINE"] == "x" and env["SKYPILOT_JOB_RANK"] == "2"
    assert set(env) - {"MINE"} <= RESERVED_ENVS
    assert {"POOLFORM_WORKDIR", "POOLFORM_ATTEMPT_DIR", "PWD"} <= RESERVED_ENVS
