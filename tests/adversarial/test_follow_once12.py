"""`jobs logs --follow` after `scheduler run --once`, as the quickstart's README runs it: the
job printed its output and exited, but no scheduler was running to record its end, so the
store still said `running` and `--follow` waited for ever. Now it ends once the job's process
here has exited with a status that ends the job (its output is whole); the store is left to
the next scheduler."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, listed
from tests.scenario.installed import poolform
from tests.scheduler.scenario import ok


def test_follow_ends_when_the_job_ended_with_no_scheduler_running(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo a; sleep 1; echo b\n")
    ok("jobs", "submit", job, "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)

    followed = poolform("jobs", "logs", "1", "--follow", "--chdir", directory, timeout=60)

    assert (followed.returncode, followed.stdout, followed.stderr) == (0, "a\nb\n", "")
    assert [job["status"] for job in listed(directory)] == ["running"]  # nothing recorded
    ok("scheduler", "run", "--once", "--chdir", directory)
    assert [job["status"] for job in listed(directory)] == ["succeeded"]
