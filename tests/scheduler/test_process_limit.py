"""The scheduler's own bound on jobs running at once (`scheduler run --max-running`): a pool
that counts nothing a job asks for would otherwise admit a whole queue in one cycle, and each
admitted job is a process on this machine (100,000 of them filled its process table).

Below the bound nothing changes; at it, no job starts, preempts or holds room, and every job
left waiting says why."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from reconciler.scheduler.schedule import schedule
from tests.scenario.installed import poolform_command
from tests.scheduler.builders import config, holding, policy, queued, snapshot
from tests.scheduler.scenario import ok

OPEN = config(resource_pools={"p": {"gpu": 100}})


@pytest.mark.parametrize(
    ("limit", "running", "queue", "admitted"),
    [
        (None, 0, 50, 50),  # no bound: everything that fits
        (10, 0, 50, 10),
        (10, 4, 50, 6),  # running jobs hold their slots
        (10, 10, 50, 0),
        (10, 12, 50, 0),  # more than the bound already (it was lowered): none, and no error
        (100, 0, 50, 50),  # a bound above the queue changes nothing
    ],
)
def test_a_cycle_starts_no_more_than_the_bound(
    limit: int | None, running: int, queue: int, admitted: int
) -> None:
    held = [holding(1000 + i, "p", "p") for i in range(running)]
    jobs = [queued(i, pool="p") for i in range(1, queue + 1)]
    decisions = schedule(replace(snapshot(OPEN, jobs, held), max_running=limit), now=1.0)
    assert [a.job for a in decisions.admits] == list(range(1, admitted + 1))
    waiting = {job: why.code.value for job, why in decisions.reasons.items()}
    assert waiting == {i: "process_limit" for i in range(admitted + 1, queue + 1)}
    if waiting:
        assert decisions.reasons[queue].message == (
            f"the scheduler runs at most {limit} job(s) at once (scheduler run --max-running)"
        )


def test_at_the_bound_a_higher_priority_job_preempts_nobody() -> None:
    cfg = config(
        resource_pools={"p": {"gpu": 2}},
        policies={"t": policy("p", "t", reserved={"gpu": 2}, limit={"gpu": 2})},
    )
    held = [holding(1, "p", "t", priority=0, gpu=1)]
    urgent = queued(2, subject="t", gpu=2, priority=50)
    free = schedule(snapshot(cfg, [urgent], held), now=1.0)
    assert [p.victims for p in free.preempts] == [(1,)]  # without a bound it preempts job 1
    bound = schedule(replace(snapshot(cfg, [urgent], held), max_running=1), now=1.0)
    assert bound.preempts == () and bound.admits == ()
    assert bound.reasons[2].code.value == "process_limit"


def test_scheduler_run_starts_at_most_max_running_jobs(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    directory.mkdir()
    (directory / "config.yaml").write_text(
        "kind: Cluster\nname: c\nprovider: local\n---\n"
        "kind: ResourcePool\nname: open\ncapacity: {gpu: 1}\n"
    )
    ok("apply", directory, "--auto-approve")
    gate = tmp_path / "gate"
    job = tmp_path / "job.yaml"
    job.write_text(
        f"kind: Job\nname: wait\npool: open\nrun: while [ ! -e {gate} ]; do sleep 0.05; done\n"
    )
    ok("jobs", "submit", job, "--num-jobs", "12", "--chdir", directory)
    try:
        run = [*poolform_command(), "scheduler", "run", "--once", "--max-running", "5",
               "--chdir", str(directory)]  # fmt: skip
        assert subprocess.run(run, capture_output=True, text=True, check=False).returncode == 0
        listed = json.loads(ok("jobs", "list", "--json", "--chdir", directory))["jobs"]
        assert sorted(j["status"] for j in listed) == ["queued"] * 7 + ["running"] * 5
        assert {j["reason"]["code"] for j in listed if j["status"] == "queued"} == {"process_limit"}
    finally:
        gate.touch()
        ok("jobs", "cancel", "--pool", "open", "--chdir", directory)


def test_the_cycle_line_names_a_batch_as_a_range() -> None:
    from reconciler.scheduler.loop import CycleReport
    from reconciler.scheduler.model import Status
    from reconciler.scheduler.text import cycle_line

    report = CycleReport(cycle=3, serial=1)
    report.admitted = [*range(1, 257), 300, 302, 303]
    report.ended = [(7, Status.SUCCEEDED), (8, Status.SUCCEEDED), (9, Status.SUCCEEDED),
                    (10, Status.FAILED), (11, Status.SUCCEEDED)]  # fmt: skip
    line = cycle_line(report)
    assert "admitted 1-256, 300, 302, 303;" in line
    assert "ended 7-9 (succeeded), 10 (failed), 11 (succeeded);" in line
