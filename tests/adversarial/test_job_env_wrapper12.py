"""A job's `envs` reached poolform's own wrapper (the bash that claims the attempt, waits for
the job and records its exit status), not only the job. A job that set `PATH` to its own
tools (`/opt/conda/bin`) failed before it ran: `could not start: [Errno 2] No such file or
directory: 'bash'`; one that set `BASH_ENV` had the wrapper source that file before claiming
the attempt, so every attempt "vanished without an exit status" and its retries were spent.
Now the wrapper runs with the scheduler's environment and the envs are the job's own."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, listed
from tests.scheduler.scenario import TERMINAL, cycle_until, ok


def _run_to_end(directory: Path, text: str, tmp_path: Path) -> dict[str, object]:
    ok("jobs", "submit", job_file(tmp_path, text), "--chdir", directory)
    cycle_until(directory, "the job ended",
                lambda: all(job["status"] in TERMINAL for job in listed(directory)))  # fmt: skip
    (job,) = listed(directory)
    return job


def test_a_job_whose_path_has_no_bash_runs_with_that_path(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job = _run_to_end(directory, (
        "kind: Job\nname: conda\npool: seats\nenvs:\n  PATH: /opt/conda/bin\n"
        'run: echo "path=$PATH"; /bin/ls -d / && echo "workdir=$POOLFORM_WORKDIR"\n'
    ), tmp_path)  # fmt: skip

    assert (job["status"], job["exit_code"]) == ("succeeded", 0), job
    workdir = directory / ".poolform" / "jobs" / "1" / "work"
    assert ok("jobs", "logs", "1", "--chdir", directory) == (
        f"path=/opt/conda/bin\n/\nworkdir={workdir}\n"
    )


def test_a_jobs_bash_env_is_read_by_the_job_not_by_poolforms_wrapper(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    startup = tmp_path / "startup.sh"
    startup.write_text("echo read-by-the-job; exit 7\n")
    job = _run_to_end(directory, (
        f"kind: Job\nname: b\npool: seats\nretries: 2\nenvs:\n  BASH_ENV: {startup}\n"
        "run: echo never\n"
    ), tmp_path)  # fmt: skip

    assert (job["status"], job["exit_code"]) == ("failed", 7), job
    assert job["reason"]["code"] == "exited", job  # not "lost", retries not spent
    assert ok("jobs", "logs", "1", "--chdir", directory) == "read-by-the-job\n"
