"""A policy an apply moves to another pool while its jobs run and wait, through the installed
`poolform` and real processes (a ZenML user moving a stack to a new pool):

- its job left running in the old pool does not count toward its limit in the new one: the
  job waiting for it starts there (it waited "past its limit" in a pool it did not use), and
  `pools status` shows its queued jobs waiting in the new pool."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import job_file
from tests.scheduler.scenario import cycle_until, ok, statuses

POOLS = """kind: Cluster
name: moved
provider: local
---
kind: ResourcePool
name: old
capacity: {gpu: 4}
---
kind: ResourcePool
name: new
capacity: {gpu: 4}
---
kind: SubjectPolicy
name: dev
subject: dev
pool: POOL
reserved: {gpu: 1}
limit: {gpu: 1}
"""
JOB = "kind: Job\nname: j\nsubject: dev\nresources: {gpu: 1}\nrun: exec sleep 120\n"


def test_a_moved_policy_starts_afresh_in_its_new_pool(tmp_path: Path) -> None:
    directory = tmp_path / "moved"
    directory.mkdir()
    config = directory / "config.yaml"
    config.write_text(POOLS.replace("POOL", "old"))
    ok("apply", directory, "--auto-approve")
    job = job_file(tmp_path, JOB)
    ok("jobs", "submit", job, "--num-jobs", "3", "--chdir", directory)  # jobs 1-3 in old
    cycle_until(directory, "job 1 runs", lambda: statuses(directory)[1] == "running")
    assert statuses(directory) == {1: "running", 2: "queued", 3: "queued"}  # limit 1

    config.write_text(POOLS.replace("POOL", "new"))
    ok("apply", directory, "--auto-approve")
    status = ok("pools", "status", "--chdir", directory)
    assert "new (resource pool): 0 running, 2 queued" in status, status

    # Job 1, running on in old, counts toward none of dev's limit in new: job 2 starts there.
    cycle_until(directory, "job 2 runs in new", lambda: statuses(directory)[2] == "running")
    assert statuses(directory) == {1: "running", 2: "running", 3: "queued"}

    ok("jobs", "cancel", "1", "2", "3", "--grace", "0s", "--chdir", directory)
    cycle_until(directory, "all ended", lambda: set(statuses(directory).values()) == {"cancelled"})
