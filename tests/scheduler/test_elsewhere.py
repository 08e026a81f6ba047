"""An attempt runs at a place (a host and the jobs directory its files are under), recorded with
it in the store: a scheduler at another place can neither see nor signal it, so it leaves it
running and holding its capacity until a scheduler at its place records it. Real job processes
(LocalExecutor), over SQLite and PostgreSQL (POOLFORM_TEST_PG_URL; skipped locally without it,
failing under CI=true); "another host" is another POOLFORM_HOST_ID and another directory.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import psycopg
import pytest

from reconciler.errors import PoolformError
from reconciler.scheduler.executor import Place
from reconciler.scheduler.lifecycle import runs_elsewhere, snapshot_of
from reconciler.scheduler.local_executor import HOST_ID_VARIABLE, LocalExecutor, host_identity
from reconciler.scheduler.loop import LoopSettings, SchedulerLoop
from reconciler.scheduler.model import Admit, AppliedConfig, Decisions, Status
from reconciler.scheduler.postgres_store import LAYOUT_VERSION, PostgresStore
from reconciler.scheduler.postgres_tables import COMPONENT, migrations
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import JobRecord, NewJob, SchedulerStore
from state.postgres_schema import quoted_schema
from tests.scheduler.builders import config, policy, request
from tests.scheduler.conftest import Opener
from tests.scheduler.fakes import Clock
from tests.scheduler.scenario import attempt_ended, wait_until

CONFIG = config(resource_pools={"p": {"gpu": 1}})  # room for one job at a time


class Site:
    """A scheduler's place: its host identity and its jobs directory, with a loop there over
    its own connection to the shared store (a new one after each `restart`, as after a crash).
    """

    def __init__(
        self,
        opener: Opener,
        jobs_dir: Path,
        host: str,
        mp: pytest.MonkeyPatch,
        applied: AppliedConfig = CONFIG,
    ):
        self.opener, self.jobs_dir, self.host, self.mp = opener, jobs_dir, host, mp
        self.applied = applied
        self.restart()

    def restart(self) -> None:
        self.mp.setenv(HOST_ID_VARIABLE, self.host)  # read once, when the executor is made
        self.executor = LocalExecutor(self.jobs_dir)
        self.store = self.opener()
        settings = LoopSettings(grace=5.0)
        applied = self.applied
        self.loop = SchedulerLoop(self.store, self.executor, lambda: applied, Clock(), settings)

    def attempt(self, job: int, attempt: int) -> Path:
        return self.executor.attempt_dir(job, attempt)


def hold_until(go: Path) -> str:
    return f"while [ ! -e '{go}' ]; do sleep 0.05; done; echo done"


def submit(store: SchedulerStore, run: str, count: int = 1) -> list[int]:
    new = NewJob("hold", 0, count, request(pool="p", gpu=1), run, pool="p")
    return [job.id for job in store.submit([new] * count, 0.0)]


def record(store: SchedulerStore, job: int) -> JobRecord:
    found = store.get(job)
    assert found is not None
    return found


def test_a_scheduler_elsewhere_neither_requeues_nor_restarts_an_attempt_running_there(
    opener: Opener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    go = tmp_path / "go"
    a = Site(opener, tmp_path / "a" / "jobs", "host-a", monkeypatch)
    first, second = submit(a.store, hold_until(go), count=2)
    assert a.loop.cycle().admitted == [first]
    wait_until("it runs", lambda: (a.attempt(first, 1) / "claim" / "pid").exists())
    # a's scheduler dies here; b, on another host, leads from now on
    b = Site(opener, tmp_path / "b" / "jobs", "host-b", monkeypatch)

    seen = b.loop.cycle()
    again = b.loop.cycle()

    job = record(b.store, first)
    assert (job.status, job.attempt) == (Status.RUNNING, 1)
    assert job.place is not None and job.place.host == "host-a"
    assert job.place.jobs_dir == str(a.jobs_dir.resolve())
    assert not b.executor.job_dir(first).exists()  # nothing fenced or started at b
    assert record(b.store, second).status is Status.QUEUED  # its capacity stays held
    assert [j.id for j in seen.newly_elsewhere] == [first]  # said once...
    assert ([j.id for j in again.elsewhere], again.newly_elsewhere) == ([first], [])
    assert again.running == 1

    go.touch()  # it ends at a while no scheduler there watches
    wait_until("it has ended", lambda: attempt_ended(a.attempt(first, 1)))
    assert record(b.store, first).status is Status.RUNNING
    b.loop.cycle()
    assert record(b.store, first).status is Status.RUNNING  # b cannot see its exit file

    a.restart()  # ...the scheduler at its place records it
    ended = a.loop.cycle()

    assert (first, Status.SUCCEEDED) in ended.ended
    job = record(a.store, first)
    assert (job.status, job.attempt, job.exit_code) == (Status.SUCCEEDED, 1, 0)
    assert a.executor.log_path(first).read_text().count("done") == 1
    assert ended.admitted == [second]  # its capacity is free again


def test_a_leader_elsewhere_never_preempts_a_job_it_cannot_signal(
    opener: Opener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranked = config(
        resource_pools={"p": {"gpu": 1}},
        policies={"low": policy("p", "low", priority=0), "high": policy("p", "high", priority=9)},
    )
    go = tmp_path / "go"
    a = Site(opener, tmp_path / "a" / "jobs", "host-a", monkeypatch, ranked)
    low = a.store.submit([NewJob("low", 0, 1, request(subject="low", gpu=1), hold_until(go))], 0)
    assert a.loop.cycle().admitted == [low[0].id]
    b = Site(opener, tmp_path / "b" / "jobs", "host-b", monkeypatch, ranked)
    high = b.store.submit([NewJob("high", 0, 1, request(subject="high", gpu=1), "true")], 1)

    reports = [b.loop.cycle(), b.loop.cycle()]

    assert [r.preempted for r in reports] == [[], []]
    held = record(b.store, low[0].id)
    assert (held.status, held.stop) == (Status.RUNNING, None)
    assert record(b.store, high[0].id).status is Status.QUEUED
    go.touch()


def test_an_attempt_recorded_without_a_place_keeps_the_behaviour_from_before(
    opener: Opener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A row an earlier poolform wrote: a scheduler anywhere takes it for its own, as before.
    a = Site(opener, tmp_path / "a" / "jobs", "host-a", monkeypatch)
    (job,) = submit(a.store, "echo done")
    a.store.commit(Decisions(1, 1, admits=(Admit(job, "p", "p/*", (("gpu", 1),), 0),)), {}, 0.0, 5)
    assert record(a.store, job).place is None
    b = Site(opener, tmp_path / "b" / "jobs", "host-b", monkeypatch)

    report = b.loop.cycle()  # fenced at b (never started there): queued again, admitted again

    assert report.elsewhere == []
    assert report.admitted == [job]
    started = record(b.store, job)
    assert (started.attempt, started.place) == (2, b.executor.place)


def test_the_place_is_recorded_with_each_admission_and_replaced_by_the_next(
    opener: Opener, tmp_path: Path
) -> None:
    store = opener()
    (job,) = submit(store, "true")
    here = Place("machine-id:" + "ab" * 16, "box", str(tmp_path / "jobs"))
    there = Place("hostname:other", "other", "/srv/poolform/.poolform/jobs")
    admit = Admit(job, "p", "p/*", (("gpu", 1),), 0)

    store.commit(Decisions(1, 1, admits=(admit,)), {}, 0.0, 5.0, place=here)
    assert record(opener(), job).place == here  # as another connection reads it
    store.cancel([job], 1.0, 5.0)
    assert record(store, job).place == here  # a stop request keeps it

    (other,) = submit(store, "true")
    store.commit(Decisions(2, 1, admits=(Admit(other, "p", "p/*", (), 0),)), {}, 2.0, 5.0, there)
    assert record(store, other).place == there
    assert record(store, job).place == here


# -- which place is the same place -------------------------------------------------------------


def test_a_place_is_its_host_identity_and_directory_not_the_host_name() -> None:
    base = Place("machine-id:" + "12" * 16, "gpu-1", "/data/team/.poolform/jobs")
    renamed = Place(base.host, "gpu-1.example.com", base.jobs_dir)
    other_dir = Place(base.host, base.host_name, "/data/clone/.poolform/jobs")
    other_host = Place("machine-id:" + "34" * 16, base.host_name, base.jobs_dir)

    assert base.same(renamed)
    assert not base.same(other_dir)
    assert not base.same(other_host)
    assert "gpu-1" in base.describe() and base.jobs_dir in base.describe()
    assert Place("hostname:gpu-1", "gpu-1", "/j").describe() == "host gpu-1 under /j"


def test_only_a_recorded_place_unlike_this_one_is_elsewhere() -> None:
    here = Place("h", "h", "/j")
    job = JobRecord(1, 1, "j", 0, 1, request(), "true", {}, 0, 0, Status.RUNNING, None, 0.0)

    assert not runs_elsewhere(job, here)  # no place recorded: as before
    assert not runs_elsewhere(_at(job, here), here)
    assert runs_elsewhere(_at(job, Place("h", "h", "/k")), here)
    assert not runs_elsewhere(_at(job, Place("other", "o", "/j")), None)  # no place here


def _at(job: JobRecord, place: Place) -> JobRecord:
    from dataclasses import replace

    return replace(job, place=place)


def test_a_job_held_elsewhere_is_never_chosen_to_be_preempted() -> None:
    job = JobRecord(
        7, 7, "j", 0, 1, request(pool="p", gpu=1), "true", {}, 0, 0, Status.RUNNING, None, 0.0,
        pool="p", policy="p/*", amounts=(("gpu", 1),),
    )  # fmt: skip

    assert snapshot_of(CONFIG, [job], 1, 60.0).holding[0].preemptible
    assert not snapshot_of(CONFIG, [job], 1, 60.0, elsewhere=frozenset({7})).holding[0].preemptible


def test_the_host_identity_is_the_override_else_the_machine_id_else_the_host_name(
    tmp_path: Path,
) -> None:
    machine_id = tmp_path / "machine-id"
    machine_id.write_text("0123456789ABCDEF0123456789abcdef\n")
    empty, bad = tmp_path / "empty", tmp_path / "bad"
    empty.write_text("uninitialized\n")
    bad.write_text("0" * 32)
    files = (str(tmp_path / "absent"), str(empty), str(machine_id))

    assert host_identity({HOST_ID_VARIABLE: " host-a "}, files) == "host-a"
    assert host_identity({HOST_ID_VARIABLE: " "}, files) == (
        "machine-id:0123456789abcdef0123456789abcdef"
    )
    assert host_identity({}, (str(bad), str(empty))).startswith("hostname:")


@pytest.mark.parametrize("bad", ["host\x1b[2Ja", "a\nb", "x" * 256, "h\udcff"])
def test_a_host_identity_that_could_not_be_the_same_text_everywhere_is_refused(bad: str) -> None:
    with pytest.raises(PoolformError, match=f"{HOST_ID_VARIABLE} must be up to 255 printable"):
        host_identity({HOST_ID_VARIABLE: bad}, ())


def test_a_jobs_directory_whose_name_is_not_utf8_is_stored_as_the_same_text_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOST_ID_VARIABLE, "h")
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9/jobs"))
    place = LocalExecutor(odd).place

    assert place.jobs_dir.encode("utf-8").endswith(b"caf\\xe9/jobs")
    assert LocalExecutor(odd).place == place
    store = SqliteStore(tmp_path / "scheduler.db")
    (job,) = submit(store, "true")
    store.commit(Decisions(1, 1, admits=(Admit(job, "p", "p/*", (), 0),)), {}, 0.0, 5.0, place)
    assert record(store, job).place == place
    store.close()


# -- stores written before places were recorded ------------------------------------------------


def test_a_sqlite_store_from_before_gets_the_place_columns_and_keeps_its_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "scheduler.db"
    old = SqliteStore(path)
    (job,) = submit(old, "true")
    old.close()
    with sqlite3.connect(path) as db:
        for column in ("place_host", "place_name", "place_dir"):
            db.execute(f"ALTER TABLE jobs DROP COLUMN {column}")

    first, second = SqliteStore(path), SqliteStore(path)  # both opening it add nothing twice

    assert record(first, job).place is None and record(second, job).place is None
    place = Place("h", "h", "/j")
    first.commit(Decisions(1, 1, admits=(Admit(job, "p", "p/*", (), 0),)), {}, 0.0, 5.0, place)
    assert record(second, job).place == place
    first.close()
    second.close()


def test_postgres_tables_of_layout_1_are_migrated_and_keep_their_rows(
    pg_schema: tuple[str, str],
) -> None:
    url, schema = pg_schema
    s = quoted_schema(schema)
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute(f"CREATE SCHEMA {s}")
        conn.execute(f"CREATE TABLE {s}.layout (component TEXT PRIMARY KEY, version INTEGER)")
        for statement in migrations(s)[1]:
            conn.execute(statement)
        conn.execute(f"INSERT INTO {s}.layout VALUES (%s, 1)", (COMPONENT,))
        conn.execute(
            f"INSERT INTO {s}.sched_jobs (id, batch, name, rank, num_jobs, request, run, envs,"
            " retries, retries_left, status, submitted_at, preemptible, pool, policy, attempt)"
            " VALUES (1, 1, 'old', 0, 1, %s, 'true', '{}', 0, 0, 'running', 0, TRUE, 'p',"
            " 'p/*', 1)",
            ('{"pool": "p", "resources": {}}',),
        )

    store = PostgresStore(url, schema=schema)
    try:
        old = record(store, 1)
        assert (old.status, old.place) == (Status.RUNNING, None)
    finally:
        store.close()
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT version FROM {s}.layout WHERE component = %s", (COMPONENT,))
        assert row.fetchone() == (LAYOUT_VERSION,)
    assert LAYOUT_VERSION == 3


def test_a_standby_looks_at_its_own_place_at_most_every_few_seconds(tmp_path: Path) -> None:
    """A standby polls for the lead twice a second; its look at its own place's attempts reads
    every active job, so it runs at most every WATCH_SECONDS, by the injected clock."""
    from reconciler.scheduler.context import open_context
    from reconciler.scheduler.leader import WATCH_SECONDS, own_watch

    clock = Clock(0.0)
    ctx = open_context(tmp_path / ".poolform", lambda: None, clock=clock)
    reads: list[float] = []
    jobs = ctx.store.jobs

    def counted(**kwargs: object) -> list[JobRecord]:
        reads.append(clock())
        return jobs(**kwargs)  # type: ignore[arg-type]

    ctx.store.jobs = counted  # type: ignore[method-assign]
    watch = own_watch(ctx, LoopSettings(), lambda _: None)
    try:
        for _ in range(int(WATCH_SECONDS * 2 * 4)):  # two polls a second, for 4 periods
            watch()
            clock.advance(0.5)
    finally:
        ctx.close()
    assert reads == [0.0, WATCH_SECONDS, 2 * WATCH_SECONDS, 3 * WATCH_SECONDS]
