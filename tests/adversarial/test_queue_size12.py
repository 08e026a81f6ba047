"""Every rank of a submit keeps its own copy of `run` and `envs` in the queue, and every job
command and scheduler cycle reads the queued jobs whole. Each limit held on its own (a run of
131,071 bytes, 100,000 ranks) while their product did not: 10,000 ranks of a 128 KiB script
made a 1.3 GB `scheduler.db`, and `jobs list`, `pools status` and each cycle held 1.3 GB of
memory (at 100,000 ranks, 13 GB). Now such a submit is refused up front, naming the file
(exit 1, nothing written), with the way out."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, listed, queue_digest, refused
from tests.scenario.installed import poolform

SCRIPT = "echo " + "x" * 130_995 + "\n"  # 131,001 bytes, under one exec argument's limit


def test_a_submit_whose_ranks_would_keep_gigabytes_in_the_queue_is_refused(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, f"kind: Job\nname: big\npool: seats\nrun: |\n  {SCRIPT}")
    in_file = job_file(tmp_path, f"kind: Job\nname: big\npool: seats\nnum_jobs: 2100\n"
                                 f"run: |\n  {SCRIPT}", "ranks.yaml")  # fmt: skip
    before = queue_digest(directory)

    for path, extra in ((job, ("--num-jobs", "2100")), (in_file, ())):
        refused(poolform("jobs", "submit", path, *extra, "--chdir", directory),
                f"{path}: error: 2,100 jobs of 131,001 bytes of run and envs each",
                "one submit keeps at most 256 MiB",
                "put the script in a file the job runs")  # fmt: skip
    result = poolform("jobs", "submit", job, "--num-jobs", "2100", "--json", "--chdir", directory)
    assert result.returncode == 1
    assert "256 MiB" in json.loads(result.stdout)["error"]["message"]
    assert queue_digest(directory) == before and listed(directory) == []
