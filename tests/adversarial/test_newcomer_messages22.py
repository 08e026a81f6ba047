"""What left a newcomer stuck: jobs submitted with no scheduler running stay queued, and the
reason they read said `submitted; the scheduler's next cycle will place it`, as if some
scheduler were about to. Someone who knows Kueue or SkyPilot expects a controller that is always
there; here one runs only when `poolform scheduler run` is started, and the reason says so."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, listed
from tests.scheduler.scenario import ok


def test_a_job_no_cycle_has_seen_names_the_command_that_runs_the_scheduler(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo\n")
    ok("jobs", "submit", job, "--chdir", directory)

    (found,) = listed(directory)
    assert found["status"] == "queued"
    assert found["reason"]["code"] == "pending_evaluation"
    assert "no scheduler cycle has run since" in found["reason"]["message"]
    assert "`poolform scheduler run`" in found["reason"]["message"]
    assert "`poolform scheduler run`" in ok("jobs", "list", "--chdir", directory)
