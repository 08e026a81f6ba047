"""The scheduler store's contract (reconciler/scheduler/store.py), one suite run over SQLite and
PostgreSQL: the same tests, not two copies. Without POOLFORM_TEST_PG_URL the PostgreSQL runs
are skipped locally with a message (and fail under CI=true).

The stateful properties of test_properties.py also run here over PostgreSQL (a subclass that
swaps the store), so the loop's invariants hold on either store.
"""

from __future__ import annotations

import threading

import pytest
from hypothesis import settings

from reconciler.errors import PoolformError
from reconciler.scheduler.model import Admit, Decisions, Preempt, Reject, Status
from reconciler.scheduler.postgres_store import LAYOUT_VERSION, PostgresStore
from reconciler.scheduler.reasons import ReasonCode, reason
from reconciler.scheduler.store import (
    Ended,
    Ending,
    NewJob,
    Removal,
    SchedulerStore,
    Started,
)
from tests.scheduler.builders import request
from tests.scheduler.conftest import Opener
from tests.scheduler.test_properties import RANDOM_SEARCH, Scheduling
from tests.state.services import drop_schema, new_schema, pg_url

NOW = 1_000.0
GRACE = 30.0


@pytest.fixture
def store(opener: Opener) -> SchedulerStore:
    return opener()


def new_jobs(count: int = 1, name: str = "train", **fields: object) -> list[NewJob]:
    asked = request(pool="dc", gpu=1)
    return [
        NewJob(name, rank, count, asked, "echo hi", {"RANK": str(rank)}, 1, pool="dc", **fields)  # type: ignore[arg-type]
        for rank in range(count)
    ]


def admit(job: int, gpu: int = 2_000, worker: str | None = None) -> Admit:
    return Admit(job, "dc", "dc/ml", (("gpu", gpu),), 5, worker)


def admitted(store: SchedulerStore, *jobs: int, cycle: int = 1) -> None:
    store.commit(Decisions(cycle, 1, admits=tuple(admit(j) for j in jobs)), {}, NOW, GRACE)


def codes(store: SchedulerStore, job: int) -> list[str]:
    return [event.code for event in store.events(job)]


# -- submit and read ---------------------------------------------------------------------------


def test_a_submission_is_one_batch_of_increasing_ids_with_its_fields_kept(
    store: SchedulerStore,
) -> None:
    envs = {"NOTE": "naïve ✓ \U0001d518\U0001d52b \u202e \U0001f600", "EMPTY": ""}
    first = store.submit(new_jobs(3), NOW)
    second = store.submit([NewJob("ü-job", 0, 1, request(pool="dc", gpu=2), "run\n'x'", envs,
                                  2, pool="dc", subject="team-ml", priority=7)], NOW + 1)  # fmt: skip

    assert [j.id for j in first] == sorted(j.id for j in first)
    assert {j.batch for j in first} == {first[0].id}
    assert second[0].id > first[-1].id and second[0].batch == second[0].id
    assert [(j.rank, j.num_jobs, j.status, j.envs) for j in first] == [
        (rank, 3, Status.QUEUED, {"RANK": str(rank)}) for rank in range(3)
    ]
    kept = store.get(second[0].id)
    assert kept == second[0]
    assert kept is not None
    assert (kept.name, kept.run, kept.envs, kept.retries_left) == ("ü-job", "run\n'x'", envs, 2)
    assert (kept.subject, kept.priority, kept.request) == ("team-ml", 7, request(pool="dc", gpu=2))
    assert kept.reason is not None and kept.reason.code is ReasonCode.PENDING_EVALUATION
    assert codes(store, kept.id) == ["submitted"]
    assert store.get(kept.id + 1000) is None


def test_a_job_that_can_never_run_is_recorded_rejected_with_its_reason(
    store: SchedulerStore,
) -> None:
    why = reason(ReasonCode.UNKNOWN_POOL, pool="nowhere", suggestion="")
    [job] = store.submit(new_jobs(status=Status.REJECTED, reason=why), NOW)

    assert job.status is Status.REJECTED and job.reason == why
    assert [(e.status, e.code) for e in store.events(job.id)] == [
        (Status.QUEUED, "submitted"),
        (Status.REJECTED, "unknown_pool"),
    ]


def test_jobs_are_listed_by_id_and_filtered_by_pool_status_activity_and_ids(
    store: SchedulerStore,
) -> None:
    ids = [j.id for j in store.submit(new_jobs(4), NOW)]
    other = store.submit([NewJob("x", 0, 1, request(pool="cpu"), "true", {}, 0, pool="cpu")], NOW)
    admitted(store, ids[0])
    store.cancel([ids[1]], NOW, GRACE)

    assert [j.id for j in store.jobs()] == [*ids, other[0].id]
    assert [j.id for j in store.jobs(pool="cpu")] == [other[0].id]
    assert [j.id for j in store.jobs(status=Status.CANCELLED)] == [ids[1]]
    assert [j.id for j in store.jobs(active=True, pool="dc")] == [ids[0], *ids[2:]]
    assert [j.id for j in store.jobs(ids={ids[3], ids[1], 10**9})] == [ids[1], ids[3]]
    assert [j.id for j in store.jobs(ids=[ids[1], ids[2]], active=True)] == [ids[2]]
    assert store.jobs(ids=()) == []
    assert len(store.jobs(ids=range(1, 40_000))) == len(store.jobs())  # no limit on how many


# -- one cycle ---------------------------------------------------------------------------------


def test_an_admission_holds_its_capacity_and_a_stale_one_is_dropped(store: SchedulerStore) -> None:
    a, b = (j.id for j in store.submit(new_jobs(2), NOW))
    store.cancel([b], NOW, GRACE)  # cancelled while the cycle ran
    done = store.commit(Decisions(4, 1, admits=(admit(a, worker="w-0"), admit(b))), {}, NOW, GRACE)

    assert [j.id for j in done.admitted] == [a]
    job = done.admitted[0]
    assert (job.status, job.pool, job.policy, job.worker, job.attempt) == (
        Status.ADMITTED, "dc", "dc/ml", "w-0", 1)  # fmt: skip
    assert job.amounts == (("gpu", 2_000),) and job.admitted_at == NOW
    assert store.get(b).status is Status.CANCELLED  # type: ignore[union-attr]
    assert codes(store, b) == ["submitted", "cancelled"]
    assert codes(store, a) == ["submitted", "admitted"]
    assert store.last_cycle() == 4


def test_preemption_asks_held_jobs_to_stop_once_with_a_deadline(store: SchedulerStore) -> None:
    victim, queued, preemptor = (j.id for j in store.submit(new_jobs(3), NOW))
    admitted(store, victim)
    preempt = Preempt(preemptor, (victim, queued), "dc", "priority")
    done = store.commit(Decisions(2, 1, preempts=(preempt,)), {}, NOW, GRACE)
    again = store.commit(Decisions(3, 1, preempts=(preempt,)), {}, NOW + 5, GRACE)

    assert [j.id for j in done.preempting] == [victim] and again.preempting == ()
    job = done.preempting[0]
    assert (job.stop, job.stop_deadline, job.preempted_for) == ("preempt", NOW + GRACE, preemptor)
    assert job.amounts == (("gpu", 2_000),)  # held until its process exits
    assert codes(store, victim) == ["submitted", "admitted", "preempting"]
    assert store.get(queued).stop is None  # type: ignore[union-attr]


def test_a_removed_worker_gives_held_attempts_a_deadline_once_and_no_stop_request(
    store: SchedulerStore,
) -> None:
    held, preempted, queued, other = (j.id for j in store.submit(new_jobs(4), NOW))
    admitted(store, held, preempted, other)
    store.commit(Decisions(2, 1, preempts=(Preempt(queued, (preempted,), "dc", "p"),)), {}, NOW,
                 GRACE)  # fmt: skip
    gone = reason(ReasonCode.WORKER_GONE, worker="w-1", pool="dc", serial=4)
    removals = [Removal(j, 1, gone) for j in (held, preempted, queued)] + [Removal(other, 2, gone)]
    assert store.workers_gone(removals, NOW + 1, GRACE) == [held]  # the current held attempt
    assert store.workers_gone(removals, NOW + 2, GRACE) == []  # once
    job = store.get(held)
    assert job is not None and (job.stop, job.stop_deadline) == (None, NOW + 1 + GRACE)
    assert job.reason == gone and job.amounts == (("gpu", 2_000),)  # held until it exits
    assert codes(store, held)[-1] == "worker_gone"
    assert store.get(preempted).stop == "preempt"  # type: ignore[union-attr]
    assert store.get(other).stop_deadline is None  # type: ignore[union-attr]
    # A cancel still may, with the sooner deadline.
    [cancelled] = store.cancel([held], NOW + 5, GRACE)
    assert (cancelled.stop, cancelled.stop_deadline) == ("cancel", NOW + 1 + GRACE)


def test_rejects_claims_and_reasons_touch_only_queued_jobs(store: SchedulerStore) -> None:
    held, waiting, doomed = (j.id for j in store.submit(new_jobs(3), NOW))
    admitted(store, held)
    short = reason(ReasonCode.WAITING_FOR_CAPACITY, pool="dc", deficit={"gpu": 1000})
    never = reason(ReasonCode.INFEASIBLE, when="", closest="dc")
    decisions = Decisions(
        2, 1, rejects=(Reject(doomed, never), Reject(held, never)),
        claims={waiting: NOW + 90, held: NOW + 90},
    )  # fmt: skip
    store.commit(decisions, {waiting: short, held: short}, NOW, GRACE)
    store.commit(Decisions(3, 1), {waiting: short}, NOW + 1, GRACE)  # same reason: no event

    assert store.get(doomed).status is Status.REJECTED  # type: ignore[union-attr]
    assert store.get(doomed).finished_at == NOW  # type: ignore[union-attr]
    kept = store.get(held)
    assert kept is not None and (kept.status, kept.reason, kept.claim_until) == (
        Status.ADMITTED, None, None)  # fmt: skip
    job = store.get(waiting)
    assert job is not None and (job.reason, job.claim_until) == (short, NOW + 90)
    assert codes(store, waiting) == ["submitted", "waiting_for_capacity"]
    assert codes(store, held) == ["submitted", "admitted"]


def test_a_moved_route_rewrites_the_pool_of_queued_jobs_only_with_a_history_event(
    store: SchedulerStore,
) -> None:
    held, moved, there, admitted_now = (j.id for j in store.submit(new_jobs(4), NOW))
    admitted(store, held)
    store.commit(Decisions(2, 1, moves={there: "dc2"}), {}, NOW, GRACE)  # (there first)
    moves = {held: "dc2", moved: "dc2", there: "dc2", admitted_now: "dc2"}
    admit_there = Admit(admitted_now, "dc2", "dc2/ml", (("gpu", 1_000),), 5)
    store.commit(Decisions(3, 7, admits=(admit_there,), moves=moves), {}, NOW + 1, GRACE)

    assert {j.id: j.pool for j in store.jobs(pool="dc2")} == {
        moved: "dc2", there: "dc2", admitted_now: "dc2"}  # fmt: skip
    assert store.get(held).pool == "dc"  # type: ignore[union-attr]  # held: where it runs
    [event] = [e for e in store.events(moved) if e.code == "route_moved"]
    assert (event.status, event.time) == (Status.QUEUED, NOW + 1)
    assert event.message == "the apply of state serial 7 moved its route from pool dc to pool dc2"
    assert codes(store, there) == ["submitted", "route_moved"]  # moved once, not again
    assert codes(store, admitted_now) == ["submitted", "route_moved", "admitted"]
    assert codes(store, held) == ["submitted", "admitted"]


def test_a_process_start_counts_only_for_the_current_attempt(store: SchedulerStore) -> None:
    job = store.submit(new_jobs(), NOW)[0].id
    admitted(store, job)
    store.started([Started(job, 0, 11), Started(job, 1, 12)], NOW + 1)
    store.started([Started(job, 1, 13, adopted=True)], NOW + 2)

    record = store.get(job)
    assert record is not None
    assert (record.status, record.pid, record.started_at) == (Status.RUNNING, 13, NOW + 1)
    assert codes(store, job) == ["submitted", "admitted", "started", "adopted"]


def test_an_ending_releases_capacity_and_a_stale_attempt_changes_nothing(
    store: SchedulerStore,
) -> None:
    done, again = (j.id for j in store.submit(new_jobs(2), NOW))
    admitted(store, done, again)
    store.started([Started(done, 1, 20), Started(again, 1, 21)], NOW)
    store.killed(again, NOW + 1)
    assert store.get(again).killed  # type: ignore[union-attr]
    # A requeue's attempt status (143: the SIGTERM of a preemption) is the attempt's, not
    # the job's: a job queued, then running again, must not show the last attempt's end.
    requeue = Ending(Status.QUEUED, reason(ReasonCode.LOST, retries=0), 143, 0)
    success = Ending(Status.SUCCEEDED, reason(ReasonCode.SUCCEEDED), 0, 1)
    changed = store.ended([Ended(done, 1, success), Ended(again, 1, requeue),
                           Ended(done, 7, requeue)], NOW + 2)  # fmt: skip

    assert changed == [done, again]
    assert store.ended([Ended(done, 1, requeue)], NOW + 3) == []
    finished, queued = store.get(done), store.get(again)
    assert finished is not None and queued is not None
    assert (finished.status, finished.exit_code, finished.finished_at, finished.amounts) == (
        Status.SUCCEEDED, 0, NOW + 2, ())  # fmt: skip
    assert (queued.status, queued.worker, queued.pid, queued.killed, queued.finished_at) == (
        Status.QUEUED, None, None, False, None)  # fmt: skip
    assert queued.exit_code is None
    assert (queued.retries_left, queued.attempt) == (0, 1)
    assert codes(store, again)[-1] == "lost"
    assert store.events(again)[-1].message.endswith("(attempt 1 exited with status 143)")


def test_cancel_ends_queued_jobs_and_asks_held_ones_to_stop(store: SchedulerStore) -> None:
    queued, held, preempted, ended = (j.id for j in store.submit(new_jobs(4), NOW))
    admitted(store, held, preempted, ended)
    store.commit(Decisions(2, 1, preempts=(Preempt(queued, (preempted,), "dc", "priority"),)),
                 {}, NOW, 5.0)  # fmt: skip
    store.ended([Ended(ended, 1, Ending(Status.FAILED, reason(ReasonCode.EXITED, code=3), 3, 0))],
                NOW)  # fmt: skip
    changed = store.cancel([queued, held, preempted, ended, queued, 999_999], NOW + 1, GRACE)

    assert [(j.id, j.status, j.stop) for j in changed] == [
        (queued, Status.CANCELLED, None),
        (held, Status.ADMITTED, "cancel"),
        (preempted, Status.ADMITTED, "cancel"),
    ]
    stop = {j.id: j.stop_deadline for j in changed}
    assert stop[held] == NOW + 1 + GRACE and stop[preempted] == NOW + 5.0  # the sooner stays
    assert store.cancel([queued, held], NOW + 2, GRACE) == []
    assert codes(store, held)[-1] == "cancel_requested"


def test_large_amounts_and_ids_round_trip(store: SchedulerStore) -> None:
    job = store.submit(new_jobs(), NOW)[0].id
    store.commit(Decisions(2**40, 1, admits=(admit(job, gpu=2**62),)), {}, NOW, GRACE)

    assert store.get(job).amounts == (("gpu", 2**62),)  # type: ignore[union-attr]
    assert store.last_cycle() == 2**40


# -- many writers, one queue -------------------------------------------------------------------


def test_submissions_from_many_connections_land_in_one_queue(opener: Opener) -> None:
    stores = [opener() for _ in range(4)]
    batches: list[list[int]] = []
    guard = threading.Lock()

    def submit(store: SchedulerStore) -> None:
        for _ in range(10):
            ids = [j.id for j in store.submit(new_jobs(5), NOW)]
            with guard:
                batches.append(ids)

    threads = [threading.Thread(target=submit, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    everyone = [j.id for j in stores[0].jobs()]
    assert sorted(i for batch in batches for i in batch) == everyone
    assert len(everyone) == len(set(everyone)) == 200
    for batch in batches:  # a submission's ranks are one run of ids
        assert batch == list(range(batch[0], batch[0] + 5))
    assert all([j.id for j in s.jobs()] == everyone for s in stores)


def test_a_cancel_from_another_connection_wins_over_a_cycle_that_missed_it(
    opener: Opener,
) -> None:
    loop, user = opener(), opener()
    job = loop.submit(new_jobs(), NOW)[0].id
    assert [j.id for j in loop.jobs(active=True)] == [job]  # the cycle's snapshot
    user.cancel([job], NOW, GRACE)
    done = loop.commit(Decisions(1, 1, admits=(admit(job),)), {}, NOW, GRACE)

    assert done.admitted == ()
    assert loop.get(job).status is Status.CANCELLED  # type: ignore[union-attr]


# -- the attempt's process ----------------------------------------------------------------------


def test_a_started_attempt_keeps_its_process_until_it_ends_or_is_admitted_again(
    opener: Opener,
) -> None:
    """The pid and its start time find the process whatever the job did to its own files;
    another connection (a restarted scheduler) reads them back."""
    store, other = opener(), opener()
    job = store.submit(new_jobs(), NOW)[0].id
    admitted(store, job)
    store.started([Started(job, 1, 4242, since=987_654)], NOW)
    seen = other.get(job)
    assert seen is not None and (seen.pid, seen.pid_start) == (4242, 987_654)
    lost = Ending(Status.QUEUED, reason(ReasonCode.LOST, retries=0), None, 0)
    store.ended([Ended(job, 1, lost)], NOW)
    seen = other.get(job)
    assert seen is not None and (seen.pid, seen.pid_start) == (None, None)


# -- PostgreSQL only: the layout ----------------------------------------------------------------


def test_tables_newer_than_this_poolform_are_refused(pg_schema: tuple[str, str]) -> None:
    import psycopg

    url, schema = pg_schema
    PostgresStore(url, schema=schema).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f"UPDATE \"{schema}\".layout SET version = %s WHERE component = 'sched'",
            (LAYOUT_VERSION + 1,),
        )
    with pytest.raises(PoolformError, match=f"layout version {LAYOUT_VERSION + 1}, newer"):
        PostgresStore(url, schema=schema)


def test_tables_of_layout_2_get_the_process_start_column_and_keep_their_rows(
    pg_schema: tuple[str, str],
) -> None:
    import psycopg

    from reconciler.scheduler.postgres_tables import COMPONENT, migrations

    url, schema = pg_schema
    s = f'"{schema}"'
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute(f"CREATE SCHEMA {s}")
        conn.execute(f"CREATE TABLE {s}.layout (component TEXT PRIMARY KEY, version INTEGER)")
        for step in (1, 2):
            for statement in migrations(s)[step]:
                conn.execute(statement)
        conn.execute(f"INSERT INTO {s}.layout VALUES (%s, 2)", (COMPONENT,))
        conn.execute(
            f"INSERT INTO {s}.sched_jobs (id, batch, name, rank, num_jobs, request, run, envs,"
            " retries, retries_left, status, submitted_at, preemptible, pool, policy, attempt,"
            " pid) VALUES (1, 1, 'old', 0, 1, %s, 'true', '{}', 0, 0, 'running', 0, TRUE, 'p',"
            " 'p/*', 1, 77)",
            ('{"pool": "p", "resources": {}}',),
        )
    store = PostgresStore(url, schema=schema)
    try:
        old = store.get(1)
        assert old is not None and (old.status, old.pid, old.pid_start) == (
            Status.RUNNING,
            77,
            None,
        )
        store.started([Started(1, 1, 78, adopted=True, since=5)], NOW)
        assert (store.get(1) or old).pid_start == 5
    finally:
        store.close()
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT version FROM {s}.layout WHERE component = %s", (COMPONENT,))
        assert row.fetchone() == (LAYOUT_VERSION,) == (3,)


def test_the_password_never_appears_in_an_error(pg_schema: tuple[str, str]) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    url, schema = pg_schema
    parts = conninfo_to_dict(url)
    wrong = make_conninfo(url, password="s3cret-Wrong-pw", port=1)  # nothing listens on port 1
    with pytest.raises(PoolformError) as error:
        PostgresStore(wrong, schema=schema, connect_timeout=2)
    assert "s3cret-Wrong-pw" not in str(error.value)
    assert str(parts.get("host", "")) in str(error.value)


def test_state_and_scheduler_share_one_schema_without_disturbing_each_other(
    pg_schema: tuple[str, str],
) -> None:
    from state import StateSnapshot
    from state.postgres import PostgresBackend

    url, schema = pg_schema
    store = PostgresStore(url, schema=schema)  # the scheduler's tables first: no state yet
    backend = PostgresBackend(url, schema=schema)
    try:
        assert not backend.exists()
        backend.replace_all(StateSnapshot(backend.read().lineage, 0))
        job = store.submit(new_jobs(), NOW)[0].id
        again = PostgresStore(url, schema=schema)
        assert again.get(job) is not None and backend.exists()
        again.close()
    finally:
        backend.close()
        store.close()


# -- the loop's properties over PostgreSQL -----------------------------------------------------


class SchedulingOnPostgres(Scheduling):
    """test_properties.py's state machine, its store swapped for PostgreSQL."""

    def __init__(self) -> None:
        super().__init__()
        self.store.close()
        self.url, self.schema = pg_url(), new_schema()
        self.store = PostgresStore(self.url, schema=self.schema)  # type: ignore[assignment]
        self.loop = self._new_loop()

    def teardown(self) -> None:
        super().teardown()
        drop_schema(self.url, self.schema)


SchedulingOnPostgres.TestCase.settings = settings(
    max_examples=10, stateful_step_count=40, deadline=None, derandomize=not RANDOM_SEARCH
)
TestSchedulingOnPostgres = SchedulingOnPostgres.TestCase
