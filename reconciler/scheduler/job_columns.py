"""The columns of a job's row as both scheduler stores read them (SQLite's and PostgreSQL's
tables have the same), and the checks that a row holds what poolform writes there."""

from __future__ import annotations

from typing import Any

from reconciler.errors import PoolformError
from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.model import HOLDING

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
UNREADABLE = (ValueError, TypeError, KeyError, AttributeError)


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
LARGEST = 2**63 - 1  # what either store's integer holds, and a JSON number read back


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
    if kind == "time" and not (-LARGEST <= number <= LARGEST):  # NaN and Infinity too
        return f"{value!r} is not a finite number of seconds"
    if kind in ("int", "count") and not (-LARGEST - 1 <= number <= LARGEST):
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
        and all(row[i] is None or -LARGEST <= row[i] <= LARGEST for i in _TIMES)
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


# The columns a queued or held job's row changes in from cycle to cycle (its reason, a claim,
# a stop request), in two runs of COLUMNS' order: (first, last) of each.
MOVING = (
    (COLUMN_INDEX["reason_code"], COLUMN_INDEX["reason_detail"]),
    (COLUMN_INDEX["stop"], COLUMN_INDEX["claim_until"]),
)
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
    return all(row[i] is None or -LARGEST <= row[i] <= LARGEST for i in _MOVING_TIMES)
