"""The scheduler's store: jobs, the capacity they hold, and their history.

A Protocol, so SQLite (the default, beside the state) and PostgreSQL share one contract:

* every method is one transaction; concurrent writers (`jobs submit`, `jobs cancel` and the
  scheduler loop) never see each other half-way;
* state changes are guarded by the status they expect: a decision about a job that changed
  meanwhile (cancelled while the cycle ran) is dropped, never applied over the change;
* capacity held by a job (its allocation) is written and released in the same transaction as
  the status change that takes or frees it, so usage always equals the holding jobs' sum.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from reconciler.errors import PoolformError
from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.executor import Place
from reconciler.scheduler.model import Decisions, JobRequest, Status
from reconciler.scheduler.reasons import Reason


class StoreLost(PoolformError):
    """The connection to a shared store is lost or cannot be made (its server restarted, is
    down or out of reach). Nothing more is written through that connection: what it held
    (leadership) is gone with it, and a new connection must win it again."""


class StoreUnwritable(PoolformError):
    """The store's disk refused a write (full, or failing): nothing of that transaction was
    made. A running scheduler waits for room rather than end (reconciler.scheduler.pools)."""


@dataclass(frozen=True)
class NewJob:
    name: str
    rank: int
    num_jobs: int
    request: JobRequest
    run: str
    envs: Mapping[str, str] = field(default_factory=dict)
    retries: int = 0
    status: Status = Status.QUEUED  # or REJECTED, when it can never run
    reason: Reason | None = None
    # As resolved at submit, for listing: the first route's pool, subject and priority.
    pool: str | None = None
    subject: str | None = None
    priority: int | None = None


@dataclass(frozen=True, slots=True)  # a store can read hundreds of thousands of them
class JobRecord:
    id: int
    batch: int
    name: str
    rank: int
    num_jobs: int
    request: JobRequest
    run: str
    envs: Mapping[str, str]
    retries: int
    retries_left: int
    status: Status
    reason: Reason | None
    submitted_at: float
    pool: str | None = None  # where it runs (or asked to run, while queued)
    subject: str | None = None
    policy: str | None = None
    priority: int | None = None
    admitted_at: float | None = None
    started_at: float | None = None
    finished_at: float | None = None
    exit_code: int | None = None
    worker: str | None = None
    worker_dir: str | None = None
    attempt: int = 0
    pid: int | None = None
    stop: str | None = None  # "preempt" or "cancel": signalled, not yet exited
    stop_deadline: float | None = None
    killed: bool = False
    preempted_for: int | None = None
    claim_until: float | None = None
    amounts: Amounts = ()
    # Where its latest attempt runs (or ran): only an executor there can see or stop it. None
    # for an attempt admitted before places were recorded, or by an executor without one.
    place: Place | None = None
    # When `pid` started (the executor's start time of it): with the pid, what finds the
    # attempt's process whatever the job did to its own files. None: not recorded.
    pid_start: int | None = None


@dataclass(frozen=True, slots=True)
class Listed:
    """What `jobs list` prints of a job, and no more: a queue's whole history is listed, and
    a JobRecord (its `run`, `envs`, request and allocations) for each of 465,000 jobs held
    0.78 GB. Strings that repeat (a batch's name, pool, subject) are shared (`listing`)."""

    id: int
    name: str
    status: Status
    pool: str | None
    subject: str | None
    rank: int
    priority: int | None
    preemptible: bool
    reason: Reason | None
    submitted_at: float
    started_at: float | None
    finished_at: float | None
    exit_code: int | None
    worker: str | None
    # What the job asked for beyond amounts, which `jobs show` also prints (the resources
    # are not listed: a dictionary per job).
    accelerators: tuple[str, ...]
    instance_type: str | None
    use_spot: bool | None


def listed(record: JobRecord, shared: dict[Any, Any] | None = None) -> Listed:
    """The listing of a record; `shared`: strings (and accelerator tuples) seen before,
    reused for equal ones."""

    def one(text: str | None) -> str | None:
        if text is None or shared is None:
            return text
        seen: str = shared.setdefault(text, text)
        return seen

    models = record.request.accelerators
    if models and shared is not None:
        models = shared.setdefault(models, models)

    return Listed(
        record.id,
        one(record.name) or record.name,
        record.status,
        one(record.pool),
        one(record.subject),
        record.rank,
        record.priority,
        record.request.preemptible,
        record.reason,
        record.submitted_at,
        record.started_at,
        record.finished_at,
        record.exit_code,
        one(record.worker),
        models,
        one(record.request.instance_type),
        record.request.use_spot,
    )


@dataclass(frozen=True)
class Event:
    job: int
    time: float
    status: Status
    code: str
    message: str


@dataclass(frozen=True)
class Ending:
    """How a held job's process ended, decided by the loop: its next status and why."""

    status: Status  # QUEUED (requeued), SUCCEEDED, FAILED or CANCELLED
    reason: Reason
    exit_code: int | None
    retries_left: int


def ending_event(item: Ended) -> str:
    """The history's sentence for an attempt's end: the reason's, and for a job queued again
    the status its attempt exited with (the job's row keeps none: it has not ended)."""
    ending = item.ending
    text = ending.reason.message
    if ending.status is Status.QUEUED and ending.exit_code is not None:
        text += f" (attempt {item.attempt} exited with status {ending.exit_code})"
    return text


@dataclass(frozen=True)
class Started:
    job: int
    attempt: int
    pid: int
    adopted: bool = False  # found running by a scheduler that did not start it
    since: int | None = None  # when the pid started (Process.since)


@dataclass(frozen=True)
class Ended:
    job: int
    attempt: int
    ending: Ending


@dataclass(frozen=True)
class Removal:
    """A held job's attempt whose worker an apply removed: stopped as a preempted one is."""

    job: int
    attempt: int
    reason: Reason  # WORKER_GONE, naming the worker and the state serial


@dataclass(frozen=True)
class Committed:
    admitted: tuple[JobRecord, ...]  # to start
    preempting: tuple[JobRecord, ...]  # to signal


class SchedulerStore(Protocol):
    def submit(self, jobs: Sequence[NewJob], now: float) -> list[JobRecord]:
        """Insert one batch of jobs (ranks of one submission); ids are increasing integers."""
        ...

    def get(self, job_id: int) -> JobRecord | None: ...

    def jobs(
        self,
        *,
        pool: str | None = None,
        status: Status | None = None,
        active: bool = False,
        ids: Collection[int] | None = None,
    ) -> list[JobRecord]:
        """Jobs by id; `active`: only queued, admitted and running ones; `ids`: only these."""
        ...

    def listing(self, *, pool: str | None = None, status: Status | None = None) -> list[Listed]:
        """Jobs by id, as `jobs list` prints them: each row is checked as `jobs` checks it
        and read one at a time, so only the listings are held, never every row or record."""
        ...

    def events(self, job_id: int) -> list[Event]:
        """A job's history, oldest first."""
        ...

    def last_cycle(self) -> int: ...

    def commit(
        self,
        decisions: Decisions,
        reasons: Mapping[int, Reason],
        now: float,
        grace: float,
        place: Place | None = None,
    ) -> Committed:
        """Apply one cycle: admissions (with their allocations, and the `place` where their
        attempts will run), preemptions (stop requests with a deadline), rejections, claims,
        and the queued reasons that changed."""
        ...

    def started(self, starts: Sequence[Started], now: float) -> None:
        """Each job's process for its attempt runs as its pid (one transaction)."""
        ...

    def killed(self, job_id: int, now: float) -> None:
        """SIGKILL was sent after the grace period."""
        ...

    def workers_gone(self, removals: Sequence[Removal], now: float, grace: float) -> list[int]:
        """Each attempt, while current, held and not stopping yet, gets a SIGKILL deadline
        (`now + grace`) and the reason, with its history event, but no stop request (`stop`
        stays empty: nobody asked; a cancel still may). Returns the jobs changed."""
        ...

    def ended(self, endings: Sequence[Ended], now: float) -> list[int]:
        """Release each job's capacity and move it on (one transaction); returns the jobs
        changed (an attempt that is no longer current changes nothing)."""
        ...

    def cancel(self, job_ids: Sequence[int], now: float, grace: float) -> list[JobRecord]:
        """Queued jobs end cancelled; held ones get a stop request (one already being
        cancelled, only when this request's deadline, `now + grace`, is sooner: it takes it).
        Returns the jobs changed."""
        ...

    def close(self) -> None: ...


def job_filter(
    pool: str | None,
    status: Status | None,
    active: bool,
    mark: str,
    ids: tuple[str, Any] | None = None,
) -> tuple[str, list[Any]]:
    """The WHERE clause (and its arguments) of ``SchedulerStore.jobs``, for a SQL store whose
    placeholder is ``mark`` (``?`` in SQLite, ``%s`` in psycopg); ``ids``: the store's own
    clause for a set of ids, and its one argument (a whole set in one placeholder)."""
    clauses: list[str] = []
    args: list[Any] = []
    if ids is not None:
        clauses.append(ids[0])
        args.append(ids[1])
    if pool is not None:
        clauses.append(f"pool = {mark}")
        args.append(pool)
    if status is not None:
        clauses.append(f"status = {mark}")
        args.append(status.value)
    if active:
        clauses.append("status IN ('queued', 'admitted', 'running')")
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", args
