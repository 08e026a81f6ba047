"""A job inherited the scheduler's whole environment: the team state's `POOLFORM_PG_URL`
and `PGPASSWORD`, cloud keys (`AWS_SECRET_ACCESS_KEY`), whatever the controller held, were
in every job's environment (and in its log after an `env`). Now a job gets a small base
(PATH, HOME, USER, LOGNAME, LANG, LC_*, TZ, TMPDIR, SHELL, TERM), the names the operator
passes on with `scheduler run --pass-env NAME`, its `envs` and poolform's own names; its
poolform wrapper (whose environment the job could read in /proc) holds no more."""

from __future__ import annotations

import os
from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, listed, refused
from tests.scenario.installed import poolform
from tests.scheduler.scenario import TERMINAL, wait_until

SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "aws-secret-15",
    "PGPASSWORD": "pg-secret-15",
    "POOLFORM_PG_URL": "postgresql://u:pg-url-secret-15@db/x",
    "WANDB_API_KEY": "wandb-15",
}
BASE = {"LANG": "C.UTF-8", "LC_TIME": "C", "TZ": "Europe/Oslo", "TERM": "xterm-15"}

JOB = """kind: Job
name: e
pool: seats
envs:
  DECLARED: from-the-job
run: |
  env -0 > "$POOLFORM_WORKDIR/../job.env"
  tr '\\0' '\\n' < /proc/$PPID/environ > "$POOLFORM_WORKDIR/../wrapper.env"
"""


def _environment(path: Path) -> dict[str, str]:
    entries = path.read_bytes().decode().split("\0" if b"\0" in path.read_bytes() else "\n")
    return dict(entry.split("=", 1) for entry in entries if "=" in entry)


def _run(directory: Path, tmp_path: Path, *options: str) -> tuple[dict[str, str], str]:
    poolform("jobs", "submit", job_file(tmp_path, JOB), "--chdir", directory)
    env = {**SECRETS, **BASE}

    def ended() -> bool:
        result = poolform("scheduler", "run", "--once", *options, "--chdir", directory, env=env)
        assert result.returncode == 0, result.stderr
        return all(job["status"] in TERMINAL for job in listed(directory))

    wait_until("the job ended", ended)
    (job,) = listed(directory)
    assert job["status"] == "succeeded", job
    job_dir = directory / ".poolform" / "jobs" / "1"
    return _environment(job_dir / "job.env"), (job_dir / "wrapper.env").read_text()


def test_a_job_sees_its_envs_and_the_base_never_the_schedulers_secrets(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job, wrapper = _run(directory, tmp_path)

    for name, value in SECRETS.items():
        assert name not in job, (name, job)
        assert value not in wrapper, (name, wrapper)
    assert job["DECLARED"] == "from-the-job"
    assert (job["POOLFORM_JOB_ID"], job["SKYPILOT_JOB_RANK"], job["POOLFORM_POOL"]) == (
        "1",
        "0",
        "seats",
    )
    assert {name: job.get(name) for name in BASE} == BASE
    assert job["PATH"] == os.environ["PATH"]
    for name in ("HOME", "USER", "LOGNAME", "SHELL"):
        assert job.get(name), (name, job)


def test_a_name_passed_on_by_the_operator_reaches_the_job(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job, _ = _run(directory, tmp_path, "--pass-env", "WANDB_API_KEY")

    assert job["WANDB_API_KEY"] == "wandb-15"
    assert "PGPASSWORD" not in job


def test_a_pass_env_that_is_no_name_is_refused(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    result = poolform("scheduler", "run", "--once", "--pass-env", "A=B", "--chdir", directory)
    refused(result, "'A=B' is not a variable's name")
