"""A running job whose worker an apply takes away (the worker pool replaced, or shrunk below its
busy workers): the scheduler stops it at its next cycle, as a cloud would have with the
machine, and queues it again without using a retry; `pools status` never counts it against the
new workers. Real processes, the installed `poolform`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.adversarial.scheduler_setup import applied, group_alive, job_file, job_group
from tests.scheduler.scenario import as_json, cycle_until, ok, statuses, wait_until

CONFIG = """kind: Cluster
name: gone
provider: local
---
kind: WorkerPool
name: w
pool:
  workers: {workers}
resources:
  instance_type: c5.xlarge
setup: echo {version}
"""

LONG_JOB = """kind: Job
name: long
pool: w
retries: 1
run: sleep 600
"""


def _config(directory: Path, workers: int, version: str) -> None:
    (directory / "config.yaml").write_text(CONFIG.format(workers=workers, version=version))


def _pool(directory: Path) -> dict[str, Any]:
    pools: list[dict[str, Any]] = as_json("pools", "status", "--chdir", directory)["pools"]
    return next(p for p in pools if p["name"] == "w")


def _used(pool: dict[str, Any]) -> int:
    return int(next(k["used"] for k in pool["keys"] if k["key"] == "worker"))


def _busy(pool: dict[str, Any]) -> dict[str, int]:
    return {w["id"]: w["job"] for w in pool["workers"] if w["job"] is not None}


def _show(directory: Path, job: int) -> dict[str, Any]:
    detail: dict[str, Any] = as_json("jobs", "show", str(job), "--chdir", directory)
    return detail


def _running_on(directory: Path, job: int) -> str:
    """The job's worker, once it runs."""
    detail = _show(directory, job)
    assert detail["status"] == "running", detail
    worker: str = detail["worker"]
    return worker


def _cycle(directory: Path) -> None:
    ok("scheduler", "run", "--once", "--grace", "5s", "--chdir", directory)


def _start(tmp_path: Path, workers: int, jobs: int) -> tuple[Path, dict[int, str]]:
    """`jobs` long jobs running on a pool of `workers`: (the directory, each job's worker)."""
    directory = applied(tmp_path, CONFIG.format(workers=workers, version="one"))
    job = job_file(tmp_path, LONG_JOB)
    ok("jobs", "submit", job, "--num-jobs", str(jobs), "--chdir", directory)
    _cycle(directory)
    assert statuses(directory) == dict.fromkeys(range(1, jobs + 1), "running")
    return directory, {j: _running_on(directory, j) for j in range(1, jobs + 1)}


def test_a_replaced_worker_pool_stops_its_running_job_and_runs_it_again_on_a_new_worker(
    tmp_path: Path,
) -> None:
    directory, on = _start(tmp_path, workers=2, jobs=1)
    old_worker, first = on[1], job_group(directory, 1, attempt=1)
    pool = _pool(directory)
    assert (_used(pool), _busy(pool)) == (1, {old_worker: 1})

    _config(directory, workers=2, version="two")  # a new setup: every worker is replaced
    ok("apply", directory, "--auto-approve")
    pool = _pool(directory)
    assert old_worker not in {w["id"] for w in pool["workers"]} and len(pool["workers"]) == 2
    # Not yet stopped, it still runs, but on no worker of the new pool: none is used.
    assert group_alive(first)
    assert (_used(pool), _busy(pool), pool["running"]) == (0, {}, 1)
    # The local cloud kept the directory the job runs in (its removal would fail the job).
    workdir = directory / ".poolform" / "workers" / old_worker
    assert workdir.is_dir()

    _cycle(directory)  # sees the worker gone: SIGTERM to the job's process group
    wait_until("the old attempt's processes have ended", lambda: not group_alive(first))
    stopping = _show(directory, 1)  # its end not recorded yet: still held, and why it stops
    assert (stopping["status"], stopping["reason"]["code"]) == ("running", "worker_gone")
    # Queued again once its process has ended, then started on a new worker (one run only).
    cycle_until(directory, "job 1 runs again", lambda: _show(directory, 1)["attempt"] == 2)
    detail = _show(directory, 1)
    assert detail["status"] == "running" and detail["worker"] != old_worker
    assert detail["retries_left"] == 1  # the apply took the machine: no retry used
    codes = [e["code"] for e in detail["history"]]
    assert codes.count("worker_gone") == 1 and codes.count("worker_removed") == 1, codes
    removed = [e for e in detail["history"] if e["code"] == "worker_removed"]
    assert removed[0]["status"] == "queued", detail["history"]
    assert old_worker in removed[0]["message"] and "state serial" in removed[0]["message"]
    assert not workdir.exists()  # kept for the job only: removed once its end was recorded
    second = job_group(directory, 1, attempt=2)
    assert second != first and group_alive(second)
    pool = _pool(directory)
    assert (_used(pool), _busy(pool), pool["running"]) == (1, {detail["worker"]: 1}, 1)
    ok("jobs", "cancel", "1", "--grace", "1s", "--chdir", directory)
    cycle_until(directory, "job 1 ends", lambda: statuses(directory) == {1: "cancelled"})


def test_a_pool_shrunk_below_its_busy_workers_stops_only_the_jobs_whose_workers_went(
    tmp_path: Path,
) -> None:
    directory, on = _start(tmp_path, workers=2, jobs=2)
    groups = {job: job_group(directory, job) for job in on}
    _config(directory, workers=1, version="one")  # a new maximum below the two busy workers
    ok("apply", directory, "--auto-approve")
    pool = _pool(directory)
    (kept,) = [w["id"] for w in pool["workers"]]
    (moved,) = [job for job, worker in on.items() if worker != kept]
    (stays,) = [job for job, worker in on.items() if worker == kept]
    assert (_used(pool), _busy(pool), pool["running"]) == (1, {kept: stays}, 2)

    _cycle(directory)
    wait_until("the moved job has ended", lambda: not group_alive(groups[moved]))
    _cycle(directory)  # records its end: queued again, waiting for the one worker
    assert statuses(directory) == {stays: "running", moved: "queued"}
    assert group_alive(groups[stays])
    detail = _show(directory, moved)
    assert detail["reason"]["code"] == "no_worker_free"  # now waits as any queued job does
    assert detail["retries_left"] == 1 and detail["attempt"] == 1
    assert [e["code"] for e in detail["history"]].count("worker_removed") == 1
    pool = _pool(directory)
    assert (_used(pool), _busy(pool), pool["running"], pool["queued"]) == (1, {kept: stays}, 1, 1)
    for job in on:
        ok("jobs", "cancel", str(job), "--grace", "1s", "--chdir", directory)
    ended = {job: "cancelled" for job in on}
    cycle_until(directory, "every job ends", lambda: statuses(directory) == ended)


def test_a_cancel_after_the_stop_but_before_its_end_was_recorded_cancels_not_fails(
    tmp_path: Path,
) -> None:
    directory, _ = _start(tmp_path, workers=1, jobs=1)
    first = job_group(directory, 1)
    _config(directory, workers=1, version="two")
    ok("apply", directory, "--auto-approve")
    _cycle(directory)  # SIGTERM: the job exits with the shell's status for it
    wait_until("the job has ended", lambda: not group_alive(first))
    ok("jobs", "cancel", "1", "--chdir", directory)  # records the end it had: not a failure
    detail = _show(directory, 1)
    assert (detail["status"], detail["retries_left"]) == ("cancelled", 1), detail["history"]
    assert [e["code"] for e in detail["history"]][-2:] == ["worker_removed", "cancelled"]
