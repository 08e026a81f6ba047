"""A cycle's changes are written set-wise (a read of the rows a kind of change may touch, then
one batched statement), on SQLite and PostgreSQL alike. Batching must not change what is
written: each change lands once, where one statement per change would have put it (a job named
twice in one kind of change, a job that an earlier change of the same commit moved), the
history gets exactly one event per change, in the order the changes were made; and a commit
that fails half-way leaves the store as it was."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from reconciler.errors import PoolformError
from reconciler.scheduler.model import Admit, Decisions, Preempt, Reject, Status
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.store import Ended, Ending, SchedulerStore, Started
from tests.scheduler.conftest import Opener
from tests.scheduler.test_postgres_store import GRACE, NOW, admit, admitted, new_jobs

SHORT = reason(ReasonCode.WAITING_FOR_CAPACITY, pool="dc", deficit={"gpu": 1000})
LIMIT = reason(ReasonCode.POLICY_LIMIT_REACHED, policy="dc/ml", deficit={"gpu": 1000})
NEVER = reason(ReasonCode.INFEASIBLE, when="", closest="dc")


@pytest.fixture
def store(opener: Opener) -> SchedulerStore:
    return opener()


def history(store: SchedulerStore, job: int) -> list[tuple[float, str, str]]:
    return [(e.time, e.status.value, e.code) for e in store.events(job)]


def everything(store: SchedulerStore) -> tuple[Any, ...]:
    """All the store holds, as the protocol reads it: every job (with its allocations), every
    job's history, the last cycle."""
    jobs = store.jobs()
    return tuple(jobs), tuple(tuple(store.events(j.id)) for j in jobs), store.last_cycle()


def test_a_commit_of_many_changes_writes_each_once_where_one_at_a_time_would(
    store: SchedulerStore,
) -> None:
    jobs = [j.id for j in store.submit(new_jobs(60), NOW - 10)]
    held, fresh, preemptors, doomed, waiting = (
        jobs[:20], jobs[20:22], jobs[22:24], jobs[24], jobs[25:]
    )  # fmt: skip
    admitted(store, *held)
    store.started([Started(job, 1, 100 + job) for job in held], NOW + 1)
    decisions = Decisions(
        7,
        1,
        admits=(admit(fresh[0]), admit(fresh[1], gpu=3_000), admit(fresh[0], gpu=9_000)),
        preempts=(
            Preempt(preemptors[0], tuple(held[:5]), "dc", "priority"),
            Preempt(preemptors[1], (held[4], held[5], waiting[0]), "dc", "reclaim"),
        ),
        rejects=(Reject(doomed, NEVER), Reject(fresh[0], NEVER), Reject(doomed, LIMIT)),
        claims={preemptors[0]: NOW + 92, preemptors[1]: NOW + 93, held[6]: NOW + 94},
    )
    reasons: dict[int, Reason] = {job: SHORT for job in waiting}
    reasons.update({fresh[1]: LIMIT, preemptors[0]: LIMIT, doomed: LIMIT})
    done = store.commit(decisions, reasons, NOW + 2, GRACE)

    # Admitted once each, the first admission of a job named twice winning.
    assert [(j.id, j.amounts) for j in done.admitted] == [
        (fresh[0], (("gpu", 2_000),)), (fresh[1], (("gpu", 3_000),))
    ]  # fmt: skip
    # A victim named by two preemptors is asked once, by the first; a queued one not at all.
    assert [j.id for j in done.preempting] == held[:6]
    assert [store.get(v).preempted_for for v in held[:6]] == (  # type: ignore[union-attr]
        [preemptors[0]] * 5 + [preemptors[1]]
    )
    assert [j.stop for j in done.preempting] == ["preempt"] * 6
    assert store.get(waiting[0]).stop is None  # type: ignore[union-attr]
    # Rejected once, with the first reason given; an admitted job is not rejected.
    rejected = store.get(doomed)
    assert rejected is not None and (rejected.status, rejected.reason) == (Status.REJECTED, NEVER)
    # Claims and reasons land on queued jobs only.
    claims = {j: store.get(j).claim_until for j in (*preemptors, held[6])}  # type: ignore[union-attr]
    assert claims == {preemptors[0]: NOW + 92, preemptors[1]: NOW + 93, held[6]: None}
    assert all(store.get(j).reason == SHORT for j in waiting)  # type: ignore[union-attr]
    assert store.get(preemptors[0]).reason == LIMIT  # type: ignore[union-attr]
    assert store.get(fresh[1]).reason is None  # type: ignore[union-attr]
    assert store.last_cycle() == 7
    # One event per change, each job's history in the order its changes were made.
    at = NOW + 2
    assert history(store, fresh[0])[1:] == [(at, "admitted", "admitted")]
    assert history(store, held[4])[1:] == [
        (NOW, "admitted", "admitted"), (NOW + 1, "running", "started"),
        (at, "running", "preempting"),
    ]  # fmt: skip
    assert history(store, doomed)[1:] == [(at, "rejected", "infeasible")]
    assert history(store, preemptors[0])[1:] == [(at, "queued", "policy_limit_reached")]
    assert all(history(store, j)[1:] == [(at, "queued", "waiting_for_capacity")] for j in waiting)
    assert history(store, held[6])[-1] == (NOW + 1, "running", "started")

    # The same reasons again write no event; a changed code writes one.
    again = {job: SHORT for job in waiting}
    again[waiting[1]] = LIMIT
    store.commit(Decisions(8, 1), again, NOW + 3, GRACE)
    assert history(store, waiting[0])[-1][0] == at
    assert history(store, waiting[1])[-1] == (NOW + 3, "queued", "policy_limit_reached")


def test_a_batch_of_starts_and_endings_changes_only_current_attempts_once(
    store: SchedulerStore,
) -> None:
    jobs = [j.id for j in store.submit(new_jobs(30), NOW)]
    admitted(store, *jobs[:20])
    starts = [Started(job, 1, 100 + job) for job in jobs[:20]]
    starts += [
        Started(jobs[0], 1, 7, adopted=True),
        Started(jobs[1], 2, 8),
        Started(jobs[25], 1, 9),
    ]
    store.started(starts, NOW + 1)

    first = store.get(jobs[0])
    assert first is not None and (first.status, first.pid) == (Status.RUNNING, 7)
    assert [code for _, _, code in history(store, jobs[0])] == [
        "submitted", "admitted", "started", "adopted"
    ]  # fmt: skip
    assert store.get(jobs[1]).pid == 100 + jobs[1]  # type: ignore[union-attr]
    assert store.get(jobs[25]).status is Status.QUEUED  # type: ignore[union-attr]

    requeue = Ending(Status.QUEUED, reason(ReasonCode.LOST, retries=0), None, 0)
    success = Ending(Status.SUCCEEDED, reason(ReasonCode.SUCCEEDED), 0, 1)
    endings = [Ended(job, 1, success) for job in jobs[:10]]
    endings += [
        Ended(jobs[0], 1, requeue),
        Ended(jobs[10], 2, requeue),
        Ended(jobs[11], 1, requeue),
    ]
    changed = store.ended(endings, NOW + 2)

    assert changed == [*jobs[:10], jobs[11]]
    finished = [store.get(job) for job in jobs[:10]]
    assert all(j is not None and (j.status, j.amounts, j.pid) == (Status.SUCCEEDED, (), None)
               for j in finished)  # fmt: skip
    requeued = store.get(jobs[11])
    assert requeued is not None and (requeued.status, requeued.amounts) == (Status.QUEUED, ())
    assert store.get(jobs[10]).amounts == (("gpu", 2_000),)  # type: ignore[union-attr]
    assert history(store, jobs[0])[-1] == (NOW + 2, "succeeded", "succeeded")
    assert len(history(store, jobs[0])) == 5
    assert [job.id for job in store.jobs(active=True) if job.amounts] == [jobs[10], *jobs[12:20]]


def _fail_after(store: SchedulerStore, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's batched writes raise once `method` has written its part."""
    kind = "sqlite" if type(store).__name__ == "SqliteStore" else "postgres"
    writes = importlib.import_module(f"reconciler.scheduler.{kind}_writes").Writes
    real = getattr(writes, method)

    def failing(self: object, *args: object) -> object:
        real(self, *args)
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(writes, method, failing)


@pytest.mark.parametrize("method", ["preempt", "reasons"])
def test_a_commit_that_fails_half_way_leaves_the_store_as_it_was(
    store: SchedulerStore, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = [j.id for j in store.submit(new_jobs(12), NOW)]
    admitted(store, *jobs[:4])
    before = everything(store)
    decisions = Decisions(
        5,
        1,
        admits=(admit(jobs[4]), admit(jobs[5])),
        preempts=(Preempt(jobs[6], tuple(jobs[:3]), "dc", "priority"),),
        rejects=(Reject(jobs[7], NEVER),),
        claims={jobs[6]: NOW + 90},
    )
    _fail_after(store, method, monkeypatch)

    with pytest.raises(RuntimeError, match="the disk went away"):
        store.commit(decisions, {job: SHORT for job in jobs[8:]}, NOW + 1, GRACE)

    assert everything(store) == before


def test_a_commit_refused_by_the_database_half_way_leaves_the_store_as_it_was(
    store: SchedulerStore,
) -> None:
    jobs = [j.id for j in store.submit(new_jobs(6), NOW)]
    before = everything(store)
    bad = Admit(jobs[1], "dc", "dc/ml", (("gpu", -1),), 5)  # amounts are never negative
    decisions = Decisions(3, 1, admits=(admit(jobs[0]), bad, admit(jobs[2])))

    with pytest.raises(PoolformError):
        store.commit(decisions, {job: SHORT for job in jobs[3:]}, NOW + 1, GRACE)

    assert everything(store) == before
