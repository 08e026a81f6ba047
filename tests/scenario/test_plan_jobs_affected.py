"""A plan says what its apply would do to the scheduler's jobs (the installed poolform over an
applied configuration with a real running job): a reviewer sees it in the plan, its JSON and
its pull-request comment, before anyone applies. Reading the queue never changes it, and a
queue that cannot be read never stops the plan."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import (
    CONFIG,
    applied,
    group_alive,
    job_file,
    job_group,
    listed,
    pg_team,
    queue_digest,
)
from tests.scenario.installed import poolform
from tests.scenario.test_messages import answer_on_a_terminal

REPLACED = CONFIG.replace("instance_type: c5.xlarge", "instance_type: m5.large")
NOTE = (
    "worker_pool.w is replaced (new workers) with 1 job (1) running on its workers: the "
    "scheduler stops them and queues them again (worker_removed, no retry used)"
)
REJECTED = "1 queued job (3) would be rejected by the scheduler after this apply"


@pytest.fixture
def busy(tmp_path: Path) -> Iterator[Path]:
    """The shared configuration with job 1 running on its one worker, job 2 queued behind it,
    and job 3 queued for the seats; the worker pool then declared anew (a replacement) and
    the seats pool gone."""
    directory = applied(tmp_path)
    sleeper = job_file(tmp_path, "kind: Job\nname: sleeper\npool: w\nrun: sleep 120\n")
    seated = job_file(tmp_path, "kind: Job\nname: s\npool: seats\nrun: 'true'\n", "s.yaml")
    for path in (sleeper, sleeper):
        assert poolform("jobs", "submit", path, "--chdir", directory).returncode == 0
    assert poolform("scheduler", "run", "--once", "--chdir", directory).returncode == 0
    assert poolform("jobs", "submit", seated, "--chdir", directory).returncode == 0
    group = job_group(directory, 1)
    assert group_alive(group)
    (directory / "config.yaml").write_text(REPLACED.split("---\nkind: ResourcePool")[0])
    try:
        yield directory
    finally:
        os.killpg(group, signal.SIGKILL)


def test_plan_names_the_jobs_its_apply_stops_and_rejects(busy: Path) -> None:
    before = queue_digest(busy)
    text = poolform("plan", "--chdir", busy)
    assert text.returncode == 0, text.stderr
    assert NOTE in text.stdout
    assert REJECTED in text.stdout
    assert "no pool named seats is applied" in text.stdout
    warnings = json.loads(poolform("plan", "--json", "--chdir", busy).stdout)["warnings"]
    assert NOTE in warnings
    assert any(w.startswith(REJECTED) for w in warnings)
    markdown = poolform("plan", "--markdown", "--chdir", busy).stdout
    assert NOTE in markdown.split("#### Warnings", 1)[1]
    assert queue_digest(busy) == before  # read, never written
    assert [job["status"] for job in listed(busy)] == ["running", "queued", "queued"]


def test_apply_shows_them_before_it_asks(busy: Path) -> None:
    answered_no = answer_on_a_terminal(["apply", busy], "no")
    assert answered_no.returncode == 1
    assert "Apply cancelled." in answered_no.stderr
    assert NOTE in answered_no.stdout
    assert [job["status"] for job in listed(busy)] == ["running", "queued", "queued"]


def test_no_queue_no_notes_and_none_made(tmp_path: Path) -> None:
    directory = tmp_path / "fresh"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    assert poolform("apply", "--auto-approve", "--chdir", directory).returncode == 0
    (directory / "config.yaml").write_text(REPLACED)
    plan = poolform("plan", "--chdir", directory)
    assert plan.returncode == 0, plan.stderr
    assert "job" not in plan.stdout
    assert not (directory / ".poolform" / "scheduler.db").exists()


def test_a_damaged_queue_is_named_and_the_plan_goes_on(busy: Path) -> None:
    store = busy / ".poolform" / "scheduler.db"
    for companion in ("scheduler.db-wal", "scheduler.db-shm"):
        (busy / ".poolform" / companion).unlink(missing_ok=True)
    store.write_bytes(b"not a database at all" * 100)
    plan = poolform("plan", "--detailed-exitcode", "--chdir", busy)
    assert plan.returncode == 2, plan.stderr  # changes: the plan is whole
    assert "worker_pool.w must be replaced" in plan.stdout or "-/+" in plan.stdout
    assert "the job queue could not be read" in plan.stdout
    assert "Traceback" not in plan.stderr
    assert store.read_bytes() == b"not a database at all" * 100


def test_the_team_queue_on_postgresql(tmp_path: Path) -> None:
    from tests.adversarial.test_scheduler_postgres2 import tables

    with pg_team(tmp_path) as team:
        team.declare(seats=False)  # the seats pool goes
        before = tables(team.url, team.schema)
        plan = team.run("plan")
        assert plan.returncode == 0, plan.stderr
        assert "job" not in plan.stdout  # no queue yet: nothing to say,
        assert tables(team.url, team.schema) == before  # and none made
        team.declare(seats=True)
        job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: 'true'\n")
        submitted = team.run("jobs", "submit", job)
        assert submitted.returncode == 0, submitted.stderr
        team.declare(seats=False)
        plan = team.run("plan")
        assert plan.returncode == 0, plan.stderr
        assert (
            "1 queued job (1) would be rejected by the scheduler after this apply: no pool "
            "named seats is applied"
        ) in plan.stdout


SHARED = """kind: ResourcePool
name: shared
capacity:
  gpu: 2
---
kind: SubjectPolicy
name: a
subject: team-a
pool: shared
priority: 5
reserved:
  gpu: {a}
limit:
  gpu: 2
---
kind: SubjectPolicy
name: b
subject: team-b
pool: shared
priority: 5
reserved:
  gpu: {b}
limit:
  gpu: 2
"""
RECLAIM = (
    "after this apply the scheduler would preempt 1 running job (2) on resource_pool.shared "
    "for 1 queued job (3): the queued jobs' policy takes back capacity it reserves"
)


def test_a_reservation_moved_names_the_job_the_next_cycle_preempts(tmp_path: Path) -> None:
    """Team a runs two jobs on both GPUs it reserves; team b's job waits. Moving one GPU of
    the reservation to team b makes the next cycle take it back: the plan says which job
    goes, and after the apply the scheduler's cycle preempts exactly that one."""
    directory = applied(tmp_path, SHARED.format(a=2, b=0))
    for team in ("a", "a", "b"):
        job = job_file(
            tmp_path,
            f"kind: Job\nname: {team}\nsubject: team-{team}\nresources:\n  gpu: 1\n"
            "run: sleep 120\n",
        )
        submitted = poolform("jobs", "submit", job, "--chdir", directory)
        assert submitted.returncode == 0, submitted.stderr
        if team == "a":
            assert poolform("scheduler", "run", "--once", "--chdir", directory).returncode == 0
    groups = [job_group(directory, 1), job_group(directory, 2)]
    try:
        unchanged = poolform("plan", "--chdir", directory)
        assert "preempt" not in unchanged.stdout  # nothing planned: nothing to say
        (directory / "config.yaml").write_text(SHARED.format(a=1, b=1))
        plan = poolform("plan", "--chdir", directory)
        assert plan.returncode == 0, plan.stderr
        assert RECLAIM in plan.stdout
        assert [job["status"] for job in listed(directory)] == ["running", "running", "queued"]
        assert poolform("apply", "--auto-approve", "--chdir", directory).returncode == 0
        assert poolform("scheduler", "run", "--once", "--chdir", directory).returncode == 0
        shown = json.loads(poolform("jobs", "show", "3", "--json", "--chdir", directory).stdout)
        assert shown["reason"]["code"] == "waiting_for_victims", shown
        assert shown["reason"]["message"].startswith("preempting job(s) 2 in pool shared")
        assert group_alive(groups[0])  # job 1 keeps running
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
