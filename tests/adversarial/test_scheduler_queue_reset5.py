"""The queue reset by hand: `scheduler.db` deleted (a newcomer's way to start afresh) while
`.poolform/jobs/` keeps what the old queue's jobs left. The new queue gives out job ids from 1
again; the old job 1's attempt directory (its claim, its exit status) used to pass for the new
job 1's: the new job never ran and was recorded as having ended (failed, "vanished", or with
the old job's exit code). The new job runs; what the old one left is kept, under another name."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file
from tests.scheduler.scenario import jobs, ok, statuses, wait_until


def test_a_new_queue_never_takes_an_old_jobs_directory_for_its_own(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    state = directory / ".poolform"
    # What the deleted queue's job 1 left: an attempt that claimed, ran and exited 7.
    attempt = state / "jobs" / "1" / "attempt-1"
    (attempt / "claim").mkdir(mode=0o700, parents=True)
    (attempt / "exit").write_text("7\n")
    (attempt.parent / "output.log").write_text("old\n")

    new = job_file(tmp_path, "kind: Job\nname: new\npool: seats\nrun: echo new\n", "new.yaml")
    ok("jobs", "submit", new, "--chdir", directory)
    assert statuses(directory) == {1: "queued"}  # the old id, given out again

    def cycled() -> bool:
        ok("scheduler", "run", "--once", "--chdir", directory)
        return statuses(directory)[1] not in ("queued", "admitted", "running")

    wait_until("the new job ended", cycled)
    job = jobs(directory)[1]
    assert (job["name"], job["status"], job["exit_code"]) == ("new", "succeeded", 0)
    result = pf("jobs", "logs", "1", "--chdir", directory)
    assert result.stdout == "new\n", result.stdout
    kept = [path for path in state.glob("jobs/1.*/output.log")]
    assert [path.read_text() for path in kept] == ["old\n"]
