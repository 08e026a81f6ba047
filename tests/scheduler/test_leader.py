"""Schedulers sharing a PostgreSQL store elect one leader: the installed `poolform`, real
processes, a real PostgreSQL (POOLFORM_TEST_PG_URL; skipped locally without it, failing under
CI=true).

The others stand by and say so; kill -9 of the leader at random moments hands the queue to a
standby, and no job is lost or runs twice. Jobs submitted from another checkout that shares only
the database land in the same queue.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from reconciler.scheduler.postgres_store import PostgresStore
from tests.scenario.installed import poolform_command
from tests.scheduler.scenario import TERMINAL, as_json, ok, wait_until
from tests.state.services import drop_schema, new_schema, pg_url

CONFIG = """kind: Cluster
name: team
provider: local
state: {{backend: postgres, dsn: '${{env:POOLFORM_TEST_PG_URL}}', key: {schema}}}
---
kind: WorkerPool
name: w
pool:
  workers: 2
resources:
  instance_type: c5.xlarge
"""
JOB = """kind: Job
name: work
pool: w
run: |
  sleep 0.4
  echo "done $POOLFORM_JOB_RANK"
"""


class Scheduler:
    """`poolform scheduler run` in the background, its stderr in a file to read while it runs."""

    def __init__(self, directory: Path, name: str, *extra: str) -> None:
        self.err = directory.parent / f"{name}.err"
        with open(self.err, "w") as err, open(directory.parent / f"{name}.out", "w") as out:
            self.process = subprocess.Popen(
                [*poolform_command(), "scheduler", "run", "--interval", "0.05", "--grace", "5s",
                 "--chdir", str(directory), *extra],
                stdout=out, stderr=err, text=True,
                env={**os.environ, "CI": "true", "NO_COLOR": "1"},
            )  # fmt: skip

    @property
    def pid(self) -> int:
        return self.process.pid

    def said(self, words: str) -> bool:
        return words in self.err.read_text()


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[Path, PostgresStore]]:
    """An applied configuration whose state (and so its scheduler's store) is on PostgreSQL,
    and a store connection to watch the queue through."""
    url, schema = pg_url(), new_schema()
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG.format(schema=schema))
    (tmp_path / "job.yaml").write_text(JOB)
    ok("apply", directory, "--auto-approve")
    store = PostgresStore(url, schema=schema)
    yield directory, store
    store.close()
    drop_schema(url, schema)


def leader_pid(store: PostgresStore) -> int | None:
    """The pid of the scheduler whose session holds the leader lock now."""
    key = store.leader_key
    with psycopg.connect(pg_url(), autocommit=True) as conn:
        schema = store.location.rsplit("(schema ", 1)[1].rstrip(")")
        row = conn.execute(
            f'SELECT l.pid FROM "{schema}".sched_leader l JOIN pg_locks k ON k.pid = l.session'
            " AND k.locktype = 'advisory' AND k.granted AND k.classid = %s AND k.objid = %s",
            ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF),
        ).fetchone()
    return None if row is None else int(row[0])


def statuses(store: PostgresStore) -> dict[int, str]:
    return {job.id: job.status.value for job in store.jobs()}


def submit(directory: Path, count: int) -> list[dict[str, object]]:
    job = directory.parent / "job.yaml"
    jobs: list[dict[str, object]] = as_json(
        "jobs", "submit", job, "--num-jobs", count, "--chdir", directory
    )["jobs"]
    return jobs


def stop(*schedulers: Scheduler) -> list[int]:
    for scheduler in schedulers:
        if scheduler.process.poll() is None:
            scheduler.process.send_signal(signal.SIGTERM)
    return [scheduler.process.wait(timeout=30) for scheduler in schedulers]


def test_a_standby_takes_over_from_a_killed_leader_losing_and_repeating_nothing(
    team: tuple[Path, PostgresStore],
) -> None:
    directory, store = team
    submitted = submit(directory, 10)
    chance = random.Random(7)
    leader = Scheduler(directory, "s0")
    wait_until("the first scheduler leads", lambda: leader_pid(store) == leader.pid)
    took_over: list[Scheduler] = []
    for round_ in range(1, 4):
        standby = Scheduler(directory, f"s{round_}")
        wait_until("the second one stands by", lambda: standby.said("standing by"))  # noqa: B023
        assert leader_pid(store) == leader.pid
        wait_until("a job runs", lambda: "running" in statuses(store).values()
                   or set(statuses(store).values()) <= TERMINAL)  # fmt: skip
        wait_until("a moment passes", lambda: chance.random() < 0.2, deadline=5)
        leader.process.send_signal(signal.SIGKILL)
        leader.process.wait()
        wait_until("the standby leads", lambda: leader_pid(store) == standby.pid)  # noqa: B023
        took_over.append(standby)
        leader = standby
    try:
        wait_until("all jobs ended", lambda: set(statuses(store).values()) <= TERMINAL)
    finally:
        assert stop(leader) == [0]

    assert all(s.said("the leader stopped; leading now") for s in took_over)
    ids = [int(str(job["id"])) for job in submitted]
    assert statuses(store) == dict.fromkeys(ids, "succeeded")
    jobs_dir = directory / ".poolform" / "jobs"
    for job in submitted:
        log = (jobs_dir / str(job["id"]) / "output.log").read_text()
        assert re.findall(r"^done (\d+)$", log, re.M) == [str(job["rank"])], log
        ran = [a for a in (jobs_dir / str(job["id"])).glob("attempt-*") if (a / "exit").exists()]
        assert len(ran) == 1, f"job {job['id']} ran {len(ran)} times"


def test_a_standby_asked_to_stop_leaves_without_leading(team: tuple[Path, PostgresStore]) -> None:
    directory, store = team
    leader = Scheduler(directory, "leader")
    wait_until("it leads", lambda: leader_pid(store) == leader.pid)
    standby = Scheduler(directory, "standby")
    wait_until("the other stands by", lambda: standby.said("standing by"))

    assert stop(standby) == [0]
    assert not standby.said("leading now")
    assert leader_pid(store) == leader.pid
    once = subprocess.run(
        [*poolform_command(), "scheduler", "run", "--once", "--chdir", str(directory)],
        capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert once.returncode == 1
    assert "another scheduler leads on postgresql://" in once.stderr
    assert f"pid {leader.pid} on " in once.stderr
    assert stop(leader) == [0]


def test_a_leader_whose_session_is_cut_competes_again_and_one_leads(
    team: tuple[Path, PostgresStore],
) -> None:
    directory, store = team
    submitted = submit(directory, 4)
    leader = Scheduler(directory, "leader")
    wait_until("it leads", lambda: leader_pid(store) == leader.pid)
    standby = Scheduler(directory, "standby")
    wait_until("the other stands by", lambda: standby.said("standing by"))
    with psycopg.connect(pg_url(), autocommit=True) as conn:  # as a network partition would
        schema = store.location.rsplit("(schema ", 1)[1].rstrip(")")
        conn.execute(f'SELECT pg_terminate_backend(session::int) FROM "{schema}".sched_leader')

    # Its leadership went with its session: it connects again and competes, never exits.
    wait_until("it connected again", lambda: leader.said("connected again"))
    assert leader.said("lost the connection to the scheduler's store at postgresql://")
    wait_until("one leads", lambda: leader_pid(store) in (leader.pid, standby.pid))
    try:
        wait_until("all jobs ended", lambda: set(statuses(store).values()) <= TERMINAL)
    finally:
        assert stop(leader, standby) == [0, 0]
    assert statuses(store) == {int(str(j["id"])): "succeeded" for j in submitted}


def test_jobs_from_another_checkout_land_in_the_one_queue(
    team: tuple[Path, PostgresStore], tmp_path: Path
) -> None:
    directory, store = team
    clone = tmp_path / "clone"  # shares nothing with `team` but the database
    clone.mkdir()
    (clone / "config.yaml").write_text((directory / "config.yaml").read_text())
    (clone / "job.yaml").write_text(JOB)
    here = submit(directory, 1)
    there = as_json("jobs", "submit", clone / "job.yaml", "--chdir", clone)["jobs"]

    listed = as_json("jobs", "list", "--chdir", clone)["jobs"]
    assert [j["id"] for j in listed] == [here[0]["id"], there[0]["id"]]
    leader = Scheduler(directory, "leader")
    try:
        wait_until("both ran", lambda: set(statuses(store).values()) == {"succeeded"})
    finally:
        assert stop(leader) == [0]
    assert not (clone / ".poolform" / "jobs").exists()  # run where the scheduler runs
