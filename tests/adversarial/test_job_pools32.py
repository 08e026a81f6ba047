"""A job file naming one pool in `pool` and another in Determined's `resources.resource_pool`
was queued on `pool`'s, the other dropped without a word: the job ran with another pool's
quota and hardware than its author read in the file. It is now refused at submit (and by
validate) at resources.resource_pool, and nothing is queued."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, queue_digest, refused
from tests.scheduler.scenario import statuses

TWO_POOLS = "kind: Job\nname: two\npool: w\nresources:\n  resource_pool: seats\nrun: 'true'\n"


def test_a_job_naming_two_different_pools_is_refused_and_nothing_is_queued(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, TWO_POOLS)
    before = queue_digest(directory)

    stderr = refused(
        pf("jobs", "submit", job, "--chdir", directory),
        f"{job}:5:18: error: the job names two pools, `w` (pool) and `seats` "
        "(resources.resource_pool); it would run on `w` only [conflicting-pools]",
    )
    assert "hint: name one pool" in stderr
    refused(pf("validate", job), "[conflicting-pools]")

    assert statuses(directory) == {}
    assert queue_digest(directory) == before


def test_a_job_naming_its_pool_both_ways_alike_is_queued(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, TWO_POOLS.replace("pool: w\n", "pool: seats\n"))
    submitted = pf("jobs", "submit", job, "--chdir", directory)
    assert submitted.returncode == 0, submitted.stderr
    assert statuses(directory) == {1: "queued"}
