"""The SQLite store's tables and the mapping between rows and records."""

from __future__ import annotations

import dataclasses
import json
import operator
import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from reconciler.errors import PoolformError
from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.executor import Place
from reconciler.scheduler.model import HOLDING, JobRequest, Status
from reconciler.scheduler.reasons import Reason, ReasonCode
from reconciler.scheduler.store import Event, JobRecord

STATUSES = ", ".join(f"'{s.value}'" for s in Status)

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    batch INTEGER NOT NULL, name TEXT NOT NULL, rank INTEGER NOT NULL,
    num_jobs INTEGER NOT NULL, request TEXT NOT NULL, run TEXT NOT NULL, envs TEXT NOT NULL,
    retries INTEGER NOT NULL, retries_left INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ({STATUSES})),
    reason_code TEXT, reason_message TEXT, reason_detail TEXT,
    submitted_at REAL NOT NULL, admitted_at REAL, started_at REAL, finished_at REAL,
    pool TEXT, policy TEXT, subject TEXT, priority INTEGER, preemptible INTEGER NOT NULL,
    exit_code INTEGER, worker TEXT, worker_dir TEXT, attempt INTEGER NOT NULL DEFAULT 0,
    pid INTEGER, stop TEXT CHECK (stop IS NULL OR stop IN ('preempt', 'cancel')),
    stop_deadline REAL, killed INTEGER NOT NULL DEFAULT 0, preempted_for INTEGER,
    claim_until REAL, place_host TEXT, place_name TEXT, place_dir TEXT, pid_start INTEGER);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status);
CREATE INDEX IF NOT EXISTS jobs_pool ON jobs (pool);
CREATE TABLE IF NOT EXISTS allocations (
    job INTEGER NOT NULL REFERENCES jobs (id), pool TEXT NOT NULL, policy TEXT NOT NULL,
    key TEXT NOT NULL, amount INTEGER NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (job, key));
CREATE INDEX IF NOT EXISTS allocations_pool ON allocations (pool, key);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job INTEGER NOT NULL, time REAL NOT NULL,
    status TEXT NOT NULL, code TEXT NOT NULL, message TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_job ON events (job);
"""

COLUMNS = (
    "id, batch, name, rank, num_jobs, request, run, envs, retries, retries_left, status,"
    " reason_code, reason_message, reason_detail, submitted_at, pool, subject, policy, priority,"
    " admitted_at, started_at, finished_at, exit_code, worker, worker_dir, attempt, pid, stop,"
    " stop_deadline, killed, preempted_for, claim_until, place_host, place_name, place_dir,"
    " pid_start"
)
_NAMES = tuple(name.strip() for name in COLUMNS.split(","))
COLUMN_INDEX = {name: i for i, name in enumerate(_NAMES)}
STATUS = COLUMN_INDEX["status"]
# The statuses of jobs that hold capacity, as stored: a row's status is text, and comparing
# it with the enum's members costs ten times as much on a deep queue's read.
HELD_VALUES = frozenset(status.value for status in HOLDING)
# Columns added after the first release, with their types: a store made before has none of
# them (its rows read None: an attempt with no recorded place), and gets them when opened.
ADDED_COLUMNS = (
    ("place_host", "TEXT"),
    ("place_name", "TEXT"),
    ("place_dir", "TEXT"),
    ("pid_start", "INTEGER"),
)


# The layout of these tables, kept in the file's header (`PRAGMA user_version`), as the
# PostgreSQL store keeps its own: a store a newer poolform made (a table, a column or a status
# this one does not know) is refused, never read as if it were this one's, nor called another
# program's (whose remedy, moving the file away, would lose the queue). A store made before
# the layout was recorded reads 0 and is this layout once its columns are added.
LAYOUT_VERSION = 1


def checked_layout(conn: sqlite3.Connection, path: object) -> int:
    """The store's recorded layout version; PoolformError when it is newer than this poolform
    understands, or not one a poolform writes (edited by hand)."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version < 0:
        raise PoolformError(
            f"the scheduler store {path} has no readable layout version (its header says "
            f"{version}): it was damaged or edited by hand; nothing was changed",
            hint="restore it from a copy",
        )
    if version > LAYOUT_VERSION:
        raise PoolformError(
            f"the scheduler store {path} has layout version {version}, newer than this "
            f"poolform understands ({LAYOUT_VERSION}): a newer poolform made it; nothing was "
            "changed",
            hint="upgrade poolform to use this queue",
        )
    return int(version)


def stamp_layout(conn: sqlite3.Connection) -> None:
    """Records this poolform's layout once the tables and columns are made. A store on a
    read-only file stays unstamped: it is read as it is, and its writes are refused by name."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version != LAYOUT_VERSION:
        try:
            conn.execute(f"PRAGMA user_version={LAYOUT_VERSION}")
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_READONLY:
                raise


def add_columns(conn: sqlite3.Connection) -> None:
    """A store made by an earlier poolform gets the columns added since (its rows keep None
    there); under the write lock, so two processes opening it at once add each once."""

    def missing() -> list[tuple[str, str]]:
        have = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
        return [(name, kind) for name, kind in ADDED_COLUMNS if name not in have]

    if not missing():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for name, kind in missing():
            conn.execute(f"ALTER TABLE jobs ADD COLUMN {name} {kind}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def request_json(request: JobRequest) -> str:
    data = {
        "pool": request.pool,
        "subject": request.subject,
        "resources": dict(request.resources),
        "accelerators": list(request.accelerators),
        "priority": request.priority,
        "preemptible": request.preemptible,
    }
    # Written only when given: a row of a job that names neither reads as before.
    if request.instance_type is not None:
        data["instance_type"] = request.instance_type
    if request.use_spot is not None:
        data["use_spot"] = request.use_spot
    return json.dumps(data, sort_keys=True)


def request_of(text: str) -> JobRequest:
    data = json.loads(text)
    resources: Amounts = tuple(sorted((str(k), int(v)) for k, v in data["resources"].items()))
    return JobRequest(
        pool=data.get("pool"),
        subject=data.get("subject"),
        resources=resources,
        accelerators=tuple(data.get("accelerators") or ()),
        priority=data.get("priority"),
        preemptible=bool(data.get("preemptible", True)),
        instance_type=_text_or_none(data.get("instance_type")),
        use_spot=_flag_or_none(data.get("use_spot")),
    )


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _flag_or_none(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


_REASONS: dict[tuple[str, str | None], Reason | None] = {}
_ENVS: dict[str, dict[str, str]] = {}
_REQUESTS: dict[str, JobRequest] = {}


K = TypeVar("K")
V = TypeVar("V")


def _bounded(cache: dict[K, V], key: K, make: Callable[[], V]) -> V:
    """Rows repeat (a batch's ranks, the same reason): parse each text once, in a bounded cache."""
    if key not in cache:
        if len(cache) > 10_000:
            cache.clear()
        cache[key] = make()
    return cache[key]


def _envs_of(text: str) -> dict[str, str]:
    data = json.loads(text)
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ValueError("not a mapping of names to texts")
    return data


def _envs(text: str) -> dict[str, str]:
    return _bounded(_ENVS, text, lambda: _envs_of(text))


def _reason(code: str, detail: str | None) -> Reason | None:
    try:
        known = ReasonCode(code)
    except ValueError:
        return None
    try:
        data = json.loads(detail) if detail else {}
    except ValueError:
        data = {}  # only shown, and the starvation count: a damaged one is no count
    return Reason(known, data if isinstance(data, dict) else {})


class DamagedRow(PoolformError):
    """A job's row holds what poolform never writes there (edited by hand, or damaged)."""

    def __init__(self, job: object, column: str, error: BaseException) -> None:
        super().__init__(
            f"the scheduler's queue is damaged: job {job}'s {column} is not what poolform "
            f"writes ({type(error).__name__}: {str(error)[:80]})",
            hint="restore the queue (.poolform/scheduler.db, or the sched_jobs table of a "
            "PostgreSQL state) from a backup, or remove that job's row",
        )


# What parsing a damaged row raises (json, int(), a missing key, a list for a mapping).
_UNREADABLE = (ValueError, TypeError, KeyError, AttributeError)


# What each column read holds, in COLUMNS' order: "int" a whole number, "count" one not
# below 0, "time" a finite number of seconds, "text"; and whether it may be NULL. SQLite
# keeps whatever a hand edit puts in a typed column (text in an INTEGER one, a REAL where
# an integer overflowed), PostgreSQL takes NaN and Infinity as DOUBLE PRECISION.
_KINDS: dict[str, tuple[str, bool]] = {
    "id": ("int", False), "batch": ("int", False), "name": ("text", False),
    "rank": ("count", False), "num_jobs": ("count", False), "request": ("text", False),
    "run": ("text", False), "envs": ("text", False), "retries": ("count", False),
    "retries_left": ("count", False), "status": ("text", False), "reason_code": ("text", True),
    "reason_message": ("text", True), "reason_detail": ("text", True),
    "submitted_at": ("time", False), "pool": ("text", True), "subject": ("text", True),
    "policy": ("text", True), "priority": ("int", True), "admitted_at": ("time", True),
    "started_at": ("time", True), "finished_at": ("time", True), "exit_code": ("int", True),
    "worker": ("text", True), "worker_dir": ("text", True), "attempt": ("count", False),
    "pid": ("count", True), "stop": ("text", True), "stop_deadline": ("time", True),
    "killed": ("int", False), "preempted_for": ("int", True), "claim_until": ("time", True),
    "place_host": ("text", True), "place_name": ("text", True), "place_dir": ("text", True),
    "pid_start": ("count", True),
}  # fmt: skip
assert set(_NAMES) == set(_KINDS), "every column read has a kind"
_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,), "count": (int,), "time": (int, float), "text": (str,)
}  # fmt: skip
_ROW_TYPES = tuple(_TYPES[_KINDS[n][0]] + ((type(None),) if _KINDS[n][1] else ()) for n in _NAMES)
_TIMES = tuple(i for i, n in enumerate(_NAMES) if _KINDS[n][0] == "time")
_COUNTS = tuple(i for i, n in enumerate(_NAMES) if _KINDS[n][0] == "count")
_LARGEST = 2**63 - 1  # what either store's integer holds, and a JSON number read back


def _unfit(name: str, value: object) -> str | None:
    """Why `value` cannot be column `name`'s; None when it can."""
    kind, nullable = _KINDS[name]
    if value is None:
        return None if nullable else "NULL where a value is always written"
    if isinstance(value, bool) and kind != "int":
        return f"{value!r} is not {kind}"
    if not isinstance(value, _TYPES[kind]):
        return f"{str(value)[:40]!r} ({type(value).__name__}) is not {_WHAT[kind]}"
    number = value if isinstance(value, int | float) else 0
    if kind == "time" and not (-_LARGEST <= number <= _LARGEST):  # NaN and Infinity too
        return f"{value!r} is not a finite number of seconds"
    if kind in ("int", "count") and not (-_LARGEST - 1 <= number <= _LARGEST):
        return f"{value} is past a 64-bit integer"
    if kind == "count" and number < 0:
        return f"{value} is below 0"
    return None


_WHAT = {"int": "a whole number", "count": "a whole number", "time": "a number", "text": "text"}


def sound_types(row: tuple[Any, ...], amounts: Amounts) -> bool:
    """Every column holds a value of its kind's type (or NULL where one may be), and every
    amount held is a whole number: the part of the checks that equal values can differ in."""
    return all(map(isinstance, row, _ROW_TYPES)) and (
        not amounts or all(type(amount) is int for _, amount in amounts)
    )


def check_row(row: tuple[Any, ...]) -> None:
    """DamagedRow naming the first column of the row that holds what poolform never writes
    there. A sound row (every one, but for hand edits) passes the quick test alone."""
    if (
        all(map(isinstance, row, _ROW_TYPES))
        and all(row[i] is None or -_LARGEST <= row[i] <= _LARGEST for i in _TIMES)
        and all(row[i] is None or row[i] >= 0 for i in _COUNTS)
    ):
        return
    for name, value in zip(_NAMES, row, strict=True):
        why = _unfit(name, value)
        if why is not None:
            raise DamagedRow(row[0], name, ValueError(why))


def cycle_of(value: object) -> int:
    """The last decision cycle's number as stored (meta 'cycle'); PoolformError when a hand
    edit left something else there."""
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise PoolformError(
            f"the scheduler's queue is damaged: its last cycle number is {text[:40]!r}, not "
            "what poolform writes",
            hint="set the 'cycle' row of the meta table (sched_meta on PostgreSQL) to a whole "
            "number, or remove it",
        )
    return int(text)


def reason_of(code: str | None, detail: str | None) -> Reason | None:
    if code is None:
        return None
    return _bounded(_REASONS, (code, detail), lambda: _reason(code, detail))


_STATUSES = {status.value: status for status in Status}  # Status(text), without its cost


def replaced(record: JobRecord, **changes: Any) -> JobRecord:
    """`record` with some fields changed, as `dataclasses.replace` makes it, at half its cost
    (which reads the fields one by one and passes them by name): a loop cycle on a deep queue
    makes thousands."""
    values = list(_FIELDS_OF(record))
    for name, value in changes.items():
        values[_FIELD_AT[name]] = value
    return JobRecord(*values)


_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(JobRecord))
_FIELDS_OF = operator.attrgetter(*_FIELD_NAMES)
_FIELD_AT = {name: i for i, name in enumerate(_FIELD_NAMES)}


# The columns a queued or held job's row changes in from cycle to cycle (its reason, a claim,
# a stop request), in two runs of COLUMNS' order: (first, last) of each.
MOVING = (
    (COLUMN_INDEX["reason_code"], COLUMN_INDEX["reason_detail"]),
    (COLUMN_INDEX["stop"], COLUMN_INDEX["claim_until"]),
)
_CODE, _DETAIL, _STOP, _DEADLINE, _KILLED, _FOR, _CLAIM = (
    COLUMN_INDEX[name]
    for name in (
        "reason_code", "reason_detail", "stop", "stop_deadline", "killed", "preempted_for",
        "claim_until",
    )
)  # fmt: skip
assert [_NAMES[first : last + 1] for first, last in MOVING] == [
    ("reason_code", "reason_message", "reason_detail"),
    ("stop", "stop_deadline", "killed", "preempted_for", "claim_until"),
]


# The MOVING columns check_row looks into beyond their types: numbers of seconds (a range).
_MOVING_TIMES = tuple(i for i in _TIMES if any(a <= i <= b for a, b in MOVING))


def moving_checked(row: tuple[Any, ...]) -> bool:
    """Whether the MOVING columns of a row whose types passed (`sound_types`) pass the rest of
    `check_row` too: what is left to check of a row that differs from one that passed it in
    those columns only."""
    return all(row[i] is None or -_LARGEST <= row[i] <= _LARGEST for i in _MOVING_TIMES)


def moving_fields(row: tuple[Any, ...]) -> dict[str, Any]:
    """The record's fields read from the MOVING columns of a row `check_row` passed (the
    reason's message is stored for readers of the table only, and read by nobody here)."""
    stop = row[_STOP]
    if stop not in (None, "preempt", "cancel"):
        raise DamagedRow(row[0], "stop", ValueError(f"{stop!r} is no stop request"))
    return {
        "reason": reason_of(row[_CODE], row[_DETAIL]),
        "stop": stop,
        "stop_deadline": row[_DEADLINE],
        "killed": bool(row[_KILLED]),
        "preempted_for": row[_FOR],
        "claim_until": row[_CLAIM],
    }


def record_of(row: tuple[Any, ...], amounts: Amounts) -> JobRecord:
    check_row(row)
    (
        job_id,
        batch,
        name,
        rank,
        num_jobs,
        request,
        run,
        envs,
        retries,
        retries_left,
        status,
        _code,
        _message,
        _detail,
        submitted_at,
        pool,
        subject,
        policy,
        priority,
        admitted_at,
        started_at,
        finished_at,
        exit_code,
        worker,
        worker_dir,
        attempt,
        pid,
        _stop,
        _stop_deadline,
        _killed,
        _preempted_for,
        _claim_until,
        place_host,
        place_name,
        place_dir,
        pid_start,
    ) = row
    try:
        parsed = _bounded(_REQUESTS, request, lambda: request_of(request))
    except _UNREADABLE as error:
        raise DamagedRow(job_id, "request", error) from None
    try:
        job_envs = _envs(envs)
    except _UNREADABLE as error:
        raise DamagedRow(job_id, "envs", error) from None
    state = _STATUSES.get(status)
    if state is None:
        raise DamagedRow(job_id, "status", ValueError(f"{status!r} is not a valid Status"))
    moved = moving_fields(row)
    for key, amount in amounts:
        if not isinstance(key, str) or isinstance(amount, bool) or not isinstance(amount, int):
            raise DamagedRow(job_id, "allocations", ValueError(f"{key!r}: {amount!r}"))
    return JobRecord(
        id=job_id,
        batch=batch,
        name=name,
        rank=rank,
        num_jobs=num_jobs,
        request=parsed,
        run=run,
        envs=job_envs,
        retries=retries,
        retries_left=retries_left,
        status=state,
        submitted_at=submitted_at,
        pool=pool,
        subject=subject,
        policy=policy,
        priority=priority,
        admitted_at=admitted_at,
        started_at=started_at,
        finished_at=finished_at,
        exit_code=exit_code,
        worker=worker,
        worker_dir=worker_dir,
        attempt=attempt,
        pid=pid,
        amounts=amounts,
        place=None if place_host is None else Place(place_host, place_name or "", place_dir or ""),
        pid_start=pid_start,
        **moved,
    )


def event_of(row: tuple[Any, ...]) -> Event:
    job, time, status, code, message = row
    try:
        if not isinstance(time, int | float) or not -_LARGEST <= time <= _LARGEST:
            raise ValueError(f"{str(time)[:40]!r} is not a finite number of seconds")
        if not isinstance(code, str) or not isinstance(message, str):
            raise ValueError("its code or message is not text")
        return Event(job, time, Status(status), code, message)
    except ValueError as error:
        raise DamagedRow(job, "history (events)", error) from None
