"""A standby on another host takes over and never runs a job twice: the installed `poolform`,
real `scheduler run` processes, a real PostgreSQL (POOLFORM_TEST_PG_URL; skipped locally
without it, failing under CI=true) and SQLite. "Another host" is another POOLFORM_HOST_ID,
with its own configuration directory (PostgreSQL: two checkouts sharing the database) or the
same one (SQLite: a directory shared by two hosts).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from reconciler.scheduler.model import Status
from reconciler.scheduler.postgres_store import PostgresStore
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import JobRecord, SchedulerStore
from tests.scenario.installed import poolform, poolform_command
from tests.scheduler.scenario import SCHEMA, attempt_ended, ok, wait_until
from tests.scheduler.test_leader import leader_pid
from tests.state.services import drop_schema, new_schema, pg_url

POOL = """---
kind: ResourcePool
name: w
capacity:
  gpu: 1
"""  # room for one job at a time, wherever the scheduler runs
PG_CONFIG = (
    """kind: Cluster
name: team
provider: local
state: {{backend: postgres, dsn: '${{env:POOLFORM_TEST_PG_URL}}', key: {schema}}}
"""
    + POOL
)
SQLITE_CONFIG = "kind: Cluster\nname: shared\nprovider: local\n" + POOL
JOB = """kind: Job
name: hold
pool: w
resources:
  gpu: 1
run: |
  while [ ! -e '{go}' ]; do sleep 0.05; done
  echo done
"""


def host(name: str) -> dict[str, str]:
    return {"POOLFORM_HOST_ID": name}


def on(host_id: str, *args: object) -> str:
    """`poolform ARGS` on a host; it must succeed."""
    result = poolform(*args, env=host(host_id))
    assert result.returncode == 0, f"poolform {args}: {result.stdout}{result.stderr}"
    return result.stdout


class Scheduler:
    """`poolform scheduler run` on a host, in the background; its stderr in a file."""

    def __init__(self, directory: Path, name: str, host_id: str) -> None:
        self.err = directory.parent / f"{name}.err"
        with open(self.err, "w") as err, open(directory.parent / f"{name}.out", "w") as out:
            self.process = subprocess.Popen(
                [*poolform_command(), "scheduler", "run", "--interval", "0.05", "--grace", "5s",
                 "--chdir", str(directory)],
                stdout=out, stderr=err, text=True,
                env={**os.environ, "CI": "true", "NO_COLOR": "1", **host(host_id)},
            )  # fmt: skip

    def said(self, words: str) -> bool:
        return words in self.err.read_text()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


@dataclass
class Team:
    a: Path  # a checkout on host-a
    b: Path  # another on host-b, sharing only the database
    store: SchedulerStore
    go: Path  # the held jobs end once it exists

    def submit(self, directory: Path) -> int:
        out = ok("jobs", "submit", directory.parent / "job.yaml", "--chdir", directory)
        return int(out.rsplit(" ", 1)[1])

    def job(self, job: int) -> JobRecord:
        found = self.store.get(job)
        assert found is not None
        return found

    def cycles(self, count: int) -> None:
        """Wait until the leader has run `count` more whole cycles."""
        start = self.store.last_cycle()
        wait_until(f"{count} cycles", lambda: self.store.last_cycle() >= start + count)


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Team]:
    url, schema = pg_url(), new_schema()
    (tmp_path / "job.yaml").write_text(JOB.format(go=tmp_path / "go"))
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(PG_CONFIG.format(schema=schema))
    ok("apply", tmp_path / "a", "--auto-approve")
    store = PostgresStore(url, schema=schema)
    yield Team(tmp_path / "a", tmp_path / "b", store, tmp_path / "go")
    (tmp_path / "go").touch()  # whatever still holds ends
    store.close()
    drop_schema(url, schema)


def attempt_dir(directory: Path, job: int, attempt: int = 1) -> Path:
    return directory / ".poolform" / "jobs" / str(job) / f"attempt-{attempt}"


def test_a_standby_on_another_host_leaves_the_job_running_there_until_its_host_records_it(
    team: Team,
) -> None:
    job = team.submit(team.a)
    leader = Scheduler(team.a, "a", "host-a")
    wait_until("it runs at a", lambda: team.job(job).status is Status.RUNNING)
    leader.kill()  # its host stays up: the job runs on
    standby = Scheduler(team.b, "b", "host-b")
    try:
        wait_until("b leads", lambda: leader_pid(team.store) == standby.process.pid)
        team.cycles(3)
        held = team.job(job)
        assert (held.status, held.attempt) == (Status.RUNNING, 1)
        assert not (team.b / ".poolform" / "jobs").exists()  # never started (or fenced) at b
        wait_until("it says so", lambda: standby.said(f"job {job} (attempt 1) runs on host "))
        assert standby.said(f"(host-a) under {(team.a / '.poolform' / 'jobs').resolve()}")
        shown = on("host-b", "jobs", "show", job, "--chdir", team.b)
        assert "runs on host " in shown and "(host-a)" in shown
        assert "not this command's place" in shown
        told = json.loads(on("host-b", "jobs", "show", job, "--json", "--chdir", team.b))
        jsonschema.validate(told, SCHEMA)
        assert told["place"] == {
            "host": "host-a",
            "host_name": socket.gethostname(),
            "jobs_dir": str((team.a / ".poolform" / "jobs").resolve()),
            "elsewhere": True,
        }

        logs = poolform("jobs", "logs", job, "--chdir", team.b, env=host("host-b"))
        assert logs.returncode == 0
        assert f"its output is in {team.a.resolve()}/.poolform/jobs/{job}/output.log" in logs.stderr
        team.go.touch()  # it ends on host-a while no scheduler there watches
        wait_until("it has ended", lambda: attempt_ended(attempt_dir(team.a, job)))
        team.cycles(3)
        assert team.job(job).status is Status.RUNNING  # b cannot see it: it still holds
    finally:
        assert standby.stop() == 0
    back = Scheduler(team.a, "a-again", "host-a")  # host-a's scheduler comes back
    try:
        wait_until("it is recorded", lambda: team.job(job).status is Status.SUCCEEDED)
    finally:
        assert back.stop() == 0
    done = team.job(job)
    assert (done.attempt, done.exit_code) == (1, 0)
    log = team.a / ".poolform" / "jobs" / str(job) / "output.log"
    assert log.read_text().count("done") == 1


def test_an_operator_cancels_a_job_whose_host_is_gone_and_its_capacity_goes_to_the_next(
    team: Team,
) -> None:
    first = team.submit(team.a)
    leader = Scheduler(team.a, "a", "host-a")
    wait_until("it runs at a", lambda: team.job(first).status is Status.RUNNING)
    leader.kill()
    standby = Scheduler(team.b, "b", "host-b")
    try:
        wait_until("b leads", lambda: leader_pid(team.store) == standby.process.pid)
        second = team.submit(team.b)
        team.cycles(3)
        assert team.job(second).status is Status.QUEUED  # the one GPU is held at a

        asked = on("host-b", "jobs", "cancel", first, "--chdir", team.b)
        assert "cannot be signalled from here" in asked
        assert f"poolform jobs cancel --gone {first}" in asked
        team.cycles(3)
        assert team.job(first).status is Status.RUNNING  # asked to stop; nobody there yet

        here = poolform("jobs", "cancel", "--gone", first, "--chdir", team.a, env=host("host-a"))
        assert here.returncode == 1
        assert f"job {first} runs here" in here.stderr and "nothing was changed" in here.stderr
        with_pool = poolform("jobs", "cancel", "--gone", "--pool", "w", "--chdir", team.b)
        assert with_pool.returncode == 1
        assert "--gone takes job ids, not --pool" in with_pool.stderr

        gone = on("host-b", "jobs", "cancel", "--gone", first, "--chdir", team.b)
        assert f"Cancelled job {first}, its capacity released" in gone
        assert "was not stopped" in gone
        ended = team.job(first)
        assert ended.status is Status.CANCELLED
        assert ended.reason is not None and ended.reason.code.value == "gone"
        wait_until("the next job runs at b", lambda: team.job(second).status is Status.RUNNING)
        placed = team.job(second).place
        assert placed is not None and placed.host == "host-b"
        again = on("host-b", "jobs", "cancel", "--gone", first, "--chdir", team.b)
        assert "Nothing to cancel" in again
        team.go.touch()
        wait_until("the next job ends", lambda: team.job(second).status is Status.SUCCEEDED)
    finally:
        assert standby.stop() == 0


def test_on_a_directory_shared_by_two_hosts_the_other_host_leaves_the_job_alone(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "shared"
    directory.mkdir()
    (directory / "config.yaml").write_text(SQLITE_CONFIG)
    (tmp_path / "job.yaml").write_text(JOB.format(go=tmp_path / "go"))
    ok("apply", directory, "--auto-approve")
    ok("jobs", "submit", tmp_path / "job.yaml", "--chdir", directory)
    store = SqliteStore(directory / ".poolform" / "scheduler.db")
    try:
        once = ["scheduler", "run", "--once", "--chdir", directory]
        on("host-a", *once)  # started on host-a; its scheduler stops
        wait_until("it runs", lambda: (attempt_dir(directory, 1) / "claim" / "pid").exists())

        other = poolform(*once, env=host("host-b"))

        assert other.returncode == 0, other.stderr
        assert "job 1 (attempt 1) runs on host " in other.stderr
        assert "(host-a) under" in other.stderr
        job = store.get(1)
        assert job is not None and (job.status, job.attempt) == (Status.RUNNING, 1)
        assert [e.code for e in store.events(1)][-1] == "started"  # not adopted at host-b
        (tmp_path / "go").touch()
        wait_until("it ends", lambda: attempt_ended(attempt_dir(directory, 1)))
        on("host-b", *once)
        job = store.get(1)
        assert job is not None and job.status is Status.RUNNING
        on("host-a", *once)
        job = store.get(1)
        assert job is not None and (job.status, job.attempt) == (Status.SUCCEEDED, 1)
    finally:
        (tmp_path / "go").touch()
        store.close()


def test_a_standby_on_the_jobs_own_host_records_and_stops_them_while_another_host_leads(
    team: Team,
) -> None:
    first, second = team.submit(team.a), team.submit(team.a)
    leader = Scheduler(team.a, "a", "host-a")
    wait_until("one runs at a", lambda: team.job(first).status is Status.RUNNING)
    leader.kill()
    elsewhere = Scheduler(team.b, "b", "host-b")
    wait_until("b leads", lambda: leader_pid(team.store) == elsewhere.process.pid)
    home = Scheduler(team.a, "a-again", "host-a")  # back, as a standby: b leads
    try:
        wait_until("it stands by", lambda: home.said("standing by"))
        team.go.touch()  # the job at a ends: its own host's standby records it...

        wait_until("it is recorded", lambda: team.job(first).status is Status.SUCCEEDED)
        # (said on stderr just after the store records it)
        wait_until("it says so", lambda: home.said(f"job {first}, which ran here, succeeded"))
        assert team.job(first).attempt == 1
        wait_until("the next runs at b", lambda: team.job(second).status is Status.SUCCEEDED)
        placed = team.job(second).place
        assert placed is not None and placed.host == "host-b"
    finally:
        assert [elsewhere.stop(), home.stop()] == [0, 0]
    assert leader_pid(team.store) is None


def test_a_cancel_from_anywhere_is_carried_out_by_the_standby_on_the_jobs_host(
    team: Team,
) -> None:
    job = team.submit(team.a)
    leader = Scheduler(team.a, "a", "host-a")
    wait_until("it runs at a", lambda: team.job(job).status is Status.RUNNING)
    leader.kill()
    elsewhere = Scheduler(team.b, "b", "host-b")
    wait_until("b leads", lambda: leader_pid(team.store) == elsewhere.process.pid)
    home = Scheduler(team.a, "a-again", "host-a")
    try:
        wait_until("it stands by", lambda: home.said("standing by"))
        on("host-b", "jobs", "cancel", job, "--chdir", team.b)

        wait_until("it is cancelled", lambda: team.job(job).status is Status.CANCELLED)
        wait_until("it says so", lambda: home.said(f"job {job}, which ran here, cancelled"))
        assert team.job(job).exit_code == 128 + signal.SIGTERM  # stopped there, by signal
    finally:
        assert [elsewhere.stop(), home.stop()] == [0, 0]
