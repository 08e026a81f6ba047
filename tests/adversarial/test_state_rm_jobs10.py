"""`state rm` of a worker pool with a job running on it said "the resource itself was not
touched", and the scheduler's next cycle stopped the job (SIGTERM), queued it again and
rejected it: the scheduler reads the applied state, so a forgotten pool is gone for it, as if
an apply had deleted it ("its worker ... was removed by the apply of state serial N", while no
apply ran). A plan that deletes the pool names those jobs before anyone applies; `state rm`
named nothing and asked nothing. It now refuses, naming what would happen to which jobs
(exit 1, nothing forgotten); once the jobs end (or are cancelled) it forgets as before.
`state push` of a document without that pool did the same, and is refused the same way
unless --force."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, listed, refused

LONG = "kind: Job\nname: long\npool: w\nrun: sleep 300\n"
SEAT = "kind: Job\nname: seat\npool: seats\nresources:\n  custom: {seat: 1}\nrun: 'true'\n"


def test_forgetting_a_pool_a_job_runs_on_is_refused_and_the_job_runs_on(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)
    assert pf("jobs", "submit", job_file(tmp_path, LONG), "--chdir", directory).returncode == 0
    assert pf("scheduler", "run", "--once", "--chdir", directory).returncode == 0
    assert [j["status"] for j in listed(directory)] == ["running"]

    refused(
        pf("state", "rm", "worker_pool.w", "--chdir", directory),
        "forgetting worker_pool.w would change the scheduler's jobs",
        "1 job (1) running on its workers",
        "nothing was changed",
        "poolform jobs cancel",
    )

    assert "worker_pool.w" in pf("state", "list", "--chdir", directory).stdout.split()
    assert pf("scheduler", "run", "--once", "--chdir", directory).returncode == 0
    assert [j["status"] for j in listed(directory)] == ["running"]
    assert pf("jobs", "cancel", "1", "--chdir", directory).returncode == 0


def test_forgetting_the_pool_a_queued_job_waits_for_is_refused(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    submitted = pf("jobs", "submit", job_file(tmp_path, SEAT), "--chdir", directory)
    assert submitted.returncode == 0, submitted.stderr
    refused(
        pf("state", "rm", "resource_pool.seats", "--chdir", directory),
        "forgetting resource_pool.seats",
        "nothing was changed",
    )
    assert [j["status"] for j in listed(directory)] == ["queued"]


def test_a_pool_no_job_uses_is_forgotten_as_before(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    assert pf("jobs", "submit", job_file(tmp_path, SEAT), "--chdir", directory).returncode == 0
    forgot = pf("state", "rm", "worker_pool.w", "--chdir", directory)
    assert forgot.returncode == 0, forgot.stderr
    assert "Removed worker_pool.w from the state" in forgot.stdout


def test_pushing_a_state_without_the_pool_a_job_runs_on_needs_force(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    assert pf("jobs", "submit", job_file(tmp_path, LONG), "--chdir", directory).returncode == 0
    assert pf("scheduler", "run", "--once", "--chdir", directory).returncode == 0
    document = json.loads(pf("state", "pull", "--chdir", directory).stdout)
    document["resources"] = [r for r in document["resources"] if r["address"] != "worker_pool.w"]
    pushed = tmp_path / "pushed.json"
    pushed.write_text(json.dumps(document))
    refused(
        pf("state", "push", pushed, "--chdir", directory),
        f"pushing {pushed} would change the scheduler's jobs",
        "1 job (1) running on its workers",
        "(or pass --force)",
    )
    assert "worker_pool.w" in pf("state", "list", "--chdir", directory).stdout.split()
    assert pf("scheduler", "run", "--once", "--chdir", directory).returncode == 0
    assert [j["status"] for j in listed(directory)] == ["running"]
    assert pf("state", "push", pushed, "--force", "--chdir", directory).returncode == 0
    assert pf("jobs", "cancel", "1", "--chdir", directory).returncode == 0
