"""`jobs submit --json` refused before it queues anything (a job file that does not exist or
does not validate) printed nothing on stdout, unlike `jobs list/show` and `pools status`: a
script parsing its output crashed on empty input. It now prints the error document
(reconciler/cli/error.schema.json). `jobs cancel` has no --json.

`jobs cancel 1 2 --pool P` cancelled jobs 1 and 2 and every other job of P. Read as "jobs 1
and 2, of pool P" (kubectl's -n, a filter) that cancels work nobody named; the synopsis says
`ID... | --pool NAME`: both together is now a usage error and cancels nothing."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, listed, queue_digest
from tests.adversarial.test_json_errors8 import error_document
from tests.scenario.installed import poolform

JOB = "kind: Job\nname: j\npool: seats\nresources: {custom: {seat: 1}}\nrun: 'sleep 60'\n"


def test_submit_json_of_a_job_file_that_does_not_exist_prints_the_error_document(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    before = queue_digest(directory)
    result = poolform("jobs", "submit", tmp_path / "nope.yaml", "--json", "--chdir", directory)
    document = error_document(result, "jobs submit")
    assert "no such file" in document["error"]["message"]
    assert queue_digest(directory) == before


def test_submit_json_of_an_invalid_job_file_prints_its_diagnostics(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    before = queue_digest(directory)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nbogus: 1\n")
    result = poolform("jobs", "submit", job, "--json", "--chdir", directory)
    document = error_document(result, "jobs submit")
    rules = {d["rule"] for d in document["error"]["diagnostics"]}
    assert {"missing-field", "unknown-field"} <= rules
    assert all(d["file"] == str(job) for d in document["error"]["diagnostics"])
    assert queue_digest(directory) == before


def test_submit_json_of_a_rejected_job_still_prints_its_jobs_not_an_error_document(
    tmp_path: Path,
) -> None:
    import json

    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nresources: {gpu: 9}\nrun: 'true'\n")
    result = poolform("jobs", "submit", job, "--json", "--chdir", directory)
    assert result.returncode == 1
    assert json.loads(result.stdout) == {"jobs": [{"id": 1, "rank": 0, "status": "rejected"}]}
    assert "job rejected (infeasible)" in result.stderr


def test_cancel_of_ids_and_a_pool_together_is_a_usage_error_and_cancels_nothing(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, JOB)
    submitted = poolform("jobs", "submit", job, "--num-jobs", "3", "--chdir", directory)
    assert submitted.returncode == 0, submitted.stderr
    before = queue_digest(directory)
    result = poolform("jobs", "cancel", "1", "--pool", "seats", "--chdir", directory)
    assert result.returncode == 1, result.stdout
    assert "not both" in result.stderr and "nothing was cancelled" in result.stderr
    assert "Traceback" not in result.stderr
    assert queue_digest(directory) == before
    assert [j["status"] for j in listed(directory)] == ["queued"] * 3
    # each alone still works
    assert poolform("jobs", "cancel", "1", "--chdir", directory).returncode == 0
    assert poolform("jobs", "cancel", "--pool", "seats", "--chdir", directory).returncode == 0
    assert [j["status"] for j in listed(directory)] == ["cancelled"] * 3
