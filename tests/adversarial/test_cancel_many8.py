"""`jobs cancel` of a batch of jobs with a gap in their ids (one had ended) printed every id
on one line: ten thousand ids, 60 KB. Runs of consecutive ids are now ranges, as the
scheduler's cycle lines and `jobs submit` print them."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file
from tests.scheduler.scenario import ok


def test_cancelling_a_batch_with_a_gap_prints_ranges(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: 'true'\n")
    assert "job id(s) 1-500" in ok("jobs", "submit", job, "--num-jobs", "500", "--chdir", directory)
    ok("jobs", "cancel", "3", "--chdir", directory)
    ids = [str(i) for i in range(1, 501)]
    out = ok("jobs", "cancel", *ids, "--chdir", directory)
    assert "Cancelled 499 queued job(s): 1, 2, 4-500\n" in out, out
