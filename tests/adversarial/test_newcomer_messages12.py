"""What a newcomer read that was not so: a queued job on a worker pool with no running worker
said `all 0 worker(s) of pool w are busy`; `jobs cancel --pool P` of a pool where nothing was
queued or running said the jobs `had already ended`; and `pools status` after an apply that
left no pool said `No pools are applied yet (poolform apply first)`, though apply had run
(and `pools status P`: `pools: none applied yet`)."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, listed, refused
from tests.scenario.installed import poolform
from tests.scheduler.scenario import ok


def test_a_worker_pool_with_no_running_worker_says_so(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    (worker,) = sorted((directory / ".poolform" / "workers").iterdir())
    ok("local", "terminate", worker.name, "--chdir", directory)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: w\nrun: echo\n")
    ok("jobs", "submit", job, "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)

    (found,) = listed(directory)
    assert found["status"] == "queued"
    assert found["reason"] == {"code": "no_worker_free", "message": "pool w has no running worker"}


def test_cancelling_a_pool_with_nothing_queued_or_running_says_so(tmp_path: Path) -> None:
    directory = applied(tmp_path)

    said = ok("jobs", "cancel", "--pool", "seats", "--chdir", directory)

    assert said == "Nothing to cancel: pool seats has no queued or running job.\n"


def test_pools_status_after_an_apply_that_left_no_pool(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    (directory / "config.yaml").write_text("kind: Cluster\nname: attack\nprovider: local\n")
    ok("apply", directory, "--auto-approve")

    said = ok("pools", "status", "--chdir", directory)
    assert said == "No pools are applied: the applied configuration declares none.\n"
    error = refused(poolform("pools", "status", "seats", "--chdir", directory),
                    "no pool named seats is applied (pools: none)")  # fmt: skip
    assert "yet" not in error


def test_a_submit_from_elsewhere_names_the_queue_it_used(tmp_path: Path) -> None:
    """A job command finds its configuration from the job file's directory first; from another
    working directory, the submit line says which queue took the job (it did not)."""
    directory = applied(tmp_path)
    job = job_file(directory, "kind: Job\nname: j\npool: seats\nrun: echo\n")
    elsewhere = poolform("jobs", "submit", job)  # run from the test's working directory
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert (
        elsewhere.stdout == f"Submitted j to pool seats (the queue of {directory}): job id(s) 1\n"
    )
    here = poolform("jobs", "submit", job.name, "--chdir", directory)
    assert here.stdout == "Submitted j to pool seats: job id(s) 2\n"
