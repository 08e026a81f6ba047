"""`jobs submit --num-jobs 3` says `job id(s) 1-3`; `jobs cancel 1-3`, the ids as submit
printed them, answered "Invalid value for '[JOB_IDS]...': '1-3' is not a valid integer range",
as if some other range would do (click calls a bounded integer an "integer range"). Now it
says that is not a job id and how to name those jobs, and nothing is cancelled; no number
option's error speaks of a range any more."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, queue_digest, refused
from tests.scheduler.scenario import statuses


def test_the_ids_as_submit_prints_them_are_refused_saying_how_to_name_each(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: three\nrun: echo three\n")
    submitted = pf(
        "jobs", "submit", job, "--pool", "seats", "--num-jobs", "3", "--chdir", directory
    )
    assert "job id(s) 1-3" in submitted.stdout
    before = queue_digest(directory)

    stderr = refused(
        pf("jobs", "cancel", "1-3", "--chdir", directory),
        "'1-3' is not a job id; name each one: 1 2 3 (in a shell: $(seq 1 3))",
    )
    assert "range" not in stderr
    refused(pf("jobs", "show", "1-3", "--chdir", directory), "'1-3' is not a job id")

    assert statuses(directory) == {1: "queued", 2: "queued", 3: "queued"}
    assert queue_digest(directory) == before


def test_a_number_option_given_no_number_says_so_without_speaking_of_a_range(
    pf: Pf, tmp_path: Path
) -> None:
    job = job_file(tmp_path, "kind: Job\nname: one\nrun: echo one\n")
    stderr = refused(
        pf("jobs", "submit", job, "--num-jobs", "abc"), "'abc' is not a valid integer."
    )
    assert "integer range" not in stderr
