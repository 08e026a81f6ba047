"""Worker pools on the local provider, end to end with the installed `poolform`: the scheduler
marks the workers that hold a job busy, so an `apply` that shrinks the pool terminates idle
workers and leaves the one running a job alone; when the job ends its worker is idle again.

The pool is SkyPilot's example without `file_mounts`: with them every change recreates the
workers (the plan says so and warns), and a rolling replacement then replaces busy workers
too, last."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from providers.local.admin import list_instances
from providers.local.inventory import mark_busy
from reconciler.scheduler.context import open_context, worker_marker
from reconciler.scheduler.executor import Launch, Phase
from reconciler.scheduler.local_executor import LocalExecutor
from tests.conftest import copy_example
from tests.scheduler.scenario import (
    EXAMPLES,
    applied_copy,
    as_json,
    cycle_until,
    ok,
    statuses,
    wait_until,
)

BLOCKING = "kind: Job\nname: long\npool: gpu-pool\nrun: |\n  while [ ! -e {release} ]; do sleep 0.05; done\n"


def _workers(directory: Path) -> dict[str, bool]:
    """Running workers of the pool -> idle?"""
    rows = list_instances(directory / ".poolform", address="worker_pool.gpu-pool")
    return {row["id"]: row["idle"] for row in rows}


def test_a_shrink_keeps_the_worker_running_a_job_and_frees_it_after(tmp_path: Path) -> None:
    source = tmp_path / "source"
    copy_example(EXAMPLES / "skypilot", source)
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


WHERE = 'pwd; echo "$POOLFORM_WORKDIR"; echo "$PWD"'


@pytest.mark.parametrize("worker", [None, "relative", "absolute"])
def test_a_job_runs_in_an_absolute_directory_whatever_the_scheduler_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker: str | None
) -> None:
    (tmp_path / "state" / "workers" / "w-1").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    given = {None: None, "relative": Path("state/workers/w-1"),
             "absolute": tmp_path / "state" / "workers" / "w-1"}[worker]  # fmt: skip
    executor = LocalExecutor(Path("state/jobs"))  # relative, as a caller might pass it
    executor.start(Launch(1, 1, "where", WHERE, {}, given))
    monkeypatch.chdir("/")  # the scheduler's own directory changes; nothing may depend on it
    wait_until("the job exits", lambda: executor.observe(1, 1).phase is Phase.EXITED)
    expected = (
        (tmp_path / "state" / "workers" / "w-1")
        if worker
        else (tmp_path / "state" / "jobs" / "1" / "work")
    )
    lines = executor.log_path(1).read_text().split()
    assert lines == [str(expected.resolve())] * 3


def test_the_scheduler_context_holds_absolute_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ctx = open_context(Path(".poolform"), lambda: None)
    try:
        assert ctx.state_dir == (tmp_path / ".poolform").resolve()
        assert ctx.state_dir.is_absolute()
    finally:
        ctx.close()


def test_busy_marks_never_make_a_cloud_where_none_was_applied(tmp_path: Path) -> None:
    mark_busy(tmp_path, {"i-1"}, {"i-1"})
    assert list(tmp_path.iterdir()) == []
    assert worker_marker(tmp_path)(frozenset({"i-1"}), frozenset()) is True
