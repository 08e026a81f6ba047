"""Worker pools on the local provider, end to end with the installed `poolform`: the scheduler
marks the workers that hold a job busy, so an `apply` that shrinks the pool terminates idle
workers and leaves the one running a job alone; when the job ends its worker is idle again.

The pool is SkyPilot's example without `file_mounts`: with them every change recreates the
workers (the plan says so and warns), and a rolling replacement then replaces busy workers
too, last."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from providers.local.admin import list_instances
from tests.scheduler.scenario import (
    EXAMPLES,
    applied_copy,
    as_json,
    cycle_until,
    ok,
    statuses,
)

BLOCKING = "kind: Job\nname: long\npool: gpu-pool\nrun: |\n  while [ ! -e {release} ]; do sleep 0.05; done\n"


def _workers(directory: Path) -> dict[str, bool]:
    """Running workers of the pool -> idle?"""
    rows = list_instances(directory / ".poolform", address="worker_pool.gpu-pool")
    return {row["id"]: row["idle"] for row in rows}


def test_a_shrink_keeps_the_worker_running_a_job_and_frees_it_after(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(EXAMPLES / "skypilot", source)
    pool = source / "pool.yaml"
    pool.write_text(re.sub(r"file_mounts:\n(  .*\n)+", "", pool.read_text()))
    directory = applied_copy(source, tmp_path / "skypilot")
    assert len(_workers(directory)) == 3 and all(_workers(directory).values())
    release = tmp_path / "release"
    job_file = tmp_path / "long.yaml"
    job_file.write_text(BLOCKING.format(release=release))
    [job] = [j["id"] for j in as_json("jobs", "submit", job_file, "--chdir", directory)["jobs"]]
    cycle_until(directory, "the job runs", lambda: statuses(directory)[job] == "running")
    worker = as_json("jobs", "show", job, "--chdir", directory)["worker"]
    assert _workers(directory)[worker] is False  # busy
    assert sum(1 for idle in _workers(directory).values() if idle) == 2

    pool = directory / "pool.yaml"
    assert "file_mounts" not in pool.read_text()
    pool.write_text(pool.read_text().replace("workers: 3", "workers: 1"))
    ok("apply", directory, "--auto-approve")
    assert list(_workers(directory)) == [worker]  # the two idle workers went
    ok("scheduler", "run", "--once", "--chdir", directory)
    assert statuses(directory)[job] == "running"

    release.touch()
    cycle_until(directory, "the job ends", lambda: statuses(directory)[job] == "succeeded")
    ok("scheduler", "run", "--once", "--chdir", directory)
    assert _workers(directory) == {worker: True}  # idle again
