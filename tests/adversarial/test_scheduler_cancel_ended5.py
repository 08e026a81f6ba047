"""`jobs cancel` of a job whose process has already ended, before any scheduler recorded it
(the scheduler was stopped with Ctrl-C, as the README allows, or has not looked since): the
job ran to its end, so its end is recorded as it was, succeeded or failed with its own code.
A cancel used to win and record work that had run whole as `cancelled`, which invites running
it a second time. A job still running when the cancel comes is stopped and cancelled."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file
from tests.scheduler.scenario import jobs, ok, statuses, wait_until

# Rank 0 (job 1) succeeds, rank 1 (job 2) fails with 3, rank 2 (job 3) runs until stopped.
RUN = "case $POOLFORM_JOB_RANK in 0) echo done;; 1) exit 3;; *) exec sleep 60;; esac"


def test_a_cancel_after_the_job_ended_records_its_own_end(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, f'kind: Job\nname: j\npool: seats\nrun: "{RUN}"\n')
    ok("jobs", "submit", job, "--num-jobs", "3", "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)  # starts all three, and stops
    attempts = directory / ".poolform" / "jobs"
    wait_until(
        "jobs 1 and 2 ended and job 3 runs",
        lambda: (
            (attempts / "1/attempt-1/exit").exists()
            and (attempts / "2/attempt-1/exit").exists()
            and (attempts / "3/attempt-1/claim/pid").exists()
        ),
    )
    assert statuses(directory) == {1: "running", 2: "running", 3: "running"}  # nobody looked

    result = pf("jobs", "cancel", "1", "2", "3", "--grace", "0s", "--chdir", directory)
    assert result.returncode == 0, result.stderr
    assert "Stopping 1 running job(s): 3 " in result.stdout, result.stdout

    def cycled() -> bool:
        ok("scheduler", "run", "--once", "--chdir", directory)
        return statuses(directory)[3] == "cancelled"

    wait_until("the stopped job is recorded", cycled)
    shown = {job_id: (job["status"], job["exit_code"]) for job_id, job in jobs(directory).items()}
    assert shown[1] == ("succeeded", 0) and shown[2] == ("failed", 3)
    assert shown[3][0] == "cancelled"
