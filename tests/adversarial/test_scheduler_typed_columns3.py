"""A typed column of a job's row edited by hand: text in an integer column, an integer too large
for 64 bits (SQLite keeps it as a REAL), Infinity or NaN in a time, a negative count, a number
in a text column. SQLite keeps whatever an UPDATE puts in a typed column; PostgreSQL keeps NaN
and Infinity in DOUBLE PRECISION. The decision cycle (and `jobs list/show`) used to fail with
"internal error" on them; now, as for a request that is not JSON, the job and the column are
named, exit 1, and nothing is written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from reconciler.scheduler.model import JobRequest
from reconciler.scheduler.sqlite_rows import (
    _KINDS,
    _NAMES,
    DamagedRow,
    check_row,
    record_of,
    request_json,
)
from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import refused
from tests.adversarial.test_scheduler_damaged_rows2 import Damage, queue

__all__ = ["queue"]  # the fixture, shared with the test of damaged JSON columns

# One value of the wrong kind for each kind of column, as SQL (a text column turns a number
# into text by itself: bytes are what it keeps as they are).
WRONG = {"int": "'abc'", "count": "-1", "time": "'yesterday'", "text": "x'ff00'"}
# Through the installed poolform, one column of each kind (every column, by kind, goes through
# the one row check the decoder test below drives over all of them: each command reads its rows
# through it), and the values past what a column holds.
SQLITE = {name: WRONG[_KINDS[name][0]] for name in ("batch", "rank", "started_at", "pool")}
SQLITE |= {
    "priority=huge": "99999999999999999999",  # past 64 bits: stored as a REAL
    "retries=huge": "99999999999999999999",
    "claim_until=inf": "9e999",
}
POSTGRES = {
    "submitted_at=nan": "'NaN'",
    "admitted_at=inf": "'Infinity'",
    "claim_until=-inf": "'-Infinity'",
    "attempt=-1": "-1",
    "retries_left=-3": "-3",
    "pid=-7": "-7",
}

COMMANDS = (("jobs", "list"), ("jobs", "show", "1"), ("scheduler", "run", "--once"))


def _written(directory: Path) -> tuple[int, int]:
    """History events and decision cycles recorded: what a refused command leaves as it was."""
    with sqlite3.connect(directory / ".poolform" / "scheduler.db") as db:
        events = db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        cycle = db.execute("SELECT COUNT(*) FROM meta WHERE key = 'cycle'").fetchone()[0]
    return events, cycle


def _refused_everywhere(pf: Pf, directory: Path, column: str) -> None:
    for command in COMMANDS:
        refused(
            pf(*command, "--chdir", directory),
            "the scheduler's queue is damaged",
            f"job 1's {column} is not what poolform writes",
        )
    assert not (directory / ".poolform" / "jobs").exists()  # nothing was started


@pytest.mark.parametrize("queue", ["sqlite"], indirect=True)
@pytest.mark.parametrize("case", sorted(SQLITE))
def test_a_wrong_value_in_any_typed_sqlite_column_is_named(
    pf: Pf, queue: tuple[Path, Damage], case: str
) -> None:
    directory, damage = queue
    column = case.split("=")[0]
    damage(column, SQLITE[case])
    before = _written(directory)
    _refused_everywhere(pf, directory, column)
    assert _written(directory) == before


@pytest.mark.parametrize("queue", ["postgres"], indirect=True)
@pytest.mark.parametrize("case", sorted(POSTGRES))
def test_nan_infinity_and_negative_counts_in_postgres_columns_are_named(
    pf: Pf, queue: tuple[Path, Damage], case: str
) -> None:
    directory, damage = queue
    column = case.split("=")[0]
    damage(column, POSTGRES[case])
    _refused_everywhere(pf, directory, column)


SOUND = {
    "id": 1, "batch": 1, "name": "j", "rank": 0, "num_jobs": 1, "request": "{}", "run": "true",
    "envs": "{}", "retries": 0, "retries_left": 0, "status": "queued", "submitted_at": 1.5,
    "attempt": 0, "killed": 0,
}  # fmt: skip
# Every wrong value a hand edit can leave, by kind of column.
WRONG_VALUES: dict[str, list[object]] = {
    "int": ["abc", 1e20, 2.5, b"\x00"],
    "count": ["abc", 1e20, -1, b"\x00"],
    "time": ["yesterday", float("nan"), float("inf"), -float("inf"), b"\x00"],
    "text": [42, 4.5, b"bytes"],
}


def _row(**values: object) -> tuple[object, ...]:
    return tuple(values.get(name, SOUND.get(name)) for name in _NAMES)


def test_the_rows_decoder_names_every_column_that_holds_a_wrong_value() -> None:
    """Table-driven over every column the decoder reads: each wrong value of its kind, and
    NULL where poolform always writes a value."""
    check_row(_row())  # the sound row passes
    cases = [
        (name, value)
        for name in _NAMES
        for value in WRONG_VALUES[_KINDS[name][0]] + ([] if _KINDS[name][1] else [None])
        if name != "id"
    ]
    assert len({name for name, _ in cases}) == len(_NAMES) - 1
    for name, value in cases:
        with pytest.raises(DamagedRow, match=f"job 1's {name} is not what poolform writes"):
            check_row(_row(**{name: value}))


@pytest.mark.parametrize("queue", ["sqlite"], indirect=True)
def test_a_cycle_number_edited_by_hand_is_named(pf: Pf, queue: tuple[Path, Damage]) -> None:
    directory, _ = queue
    with sqlite3.connect(directory / ".poolform" / "scheduler.db") as db:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('cycle', 'many')")
    result = pf("scheduler", "run", "--once", "--chdir", directory)
    refused(result, "the scheduler's queue is damaged: its last cycle number is 'many'")
    assert not (directory / ".poolform" / "jobs").exists()


def test_a_bad_status_is_named_as_the_status_whatever_the_stop_request() -> None:
    """A status no poolform writes, beside a sound stop request, is named as the status (it
    used to be named as the stop whenever a stop request was there)."""
    amounts = (("gpu", 1000),)
    request = request_json(JobRequest(pool="p", resources=amounts))
    record_of(_row(request=request, status="running", stop="cancel"), amounts)  # sound
    with pytest.raises(DamagedRow, match="job 1's status is not what poolform writes"):
        record_of(_row(request=request, status="finished", stop="cancel"), amounts)
    with pytest.raises(DamagedRow, match="job 1's stop is not what poolform writes"):
        record_of(_row(request=request, status="running", stop="pause"), amounts)
