"""The store keeps the records it decoded, with the rows they were decoded from, so a deep
queue read every cycle is not decoded again row by row. What a read returns must stay what the rows hold:
a row changed since (by poolform or by hand) is read as it is now, and a row damaged by hand
after a read is refused on the next read, naming its job and column, as on the first."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from reconciler.scheduler.decoded_rows import DecodedRows
from reconciler.scheduler.model import Decisions
from reconciler.scheduler.sqlite_rows import COLUMNS, DamagedRow
from reconciler.scheduler.sqlite_store import SqliteStore
from tests.scheduler.test_postgres_store import GRACE, NOW, admit, new_jobs
from tests.scheduler.test_store_batch import SHORT


def _edit(path: Path, sql: str) -> None:
    with sqlite3.connect(path) as db:
        db.execute(sql)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "scheduler.db"


def test_a_row_read_again_unchanged_reads_as_before_and_a_changed_one_as_it_is_now(
    db: Path,
) -> None:
    store = SqliteStore(db)
    jobs = [j.id for j in store.submit(new_jobs(3), NOW)]
    first = store.jobs(active=True)
    store.commit(Decisions(2, 1, admits=(admit(jobs[0]),)), {jobs[1]: SHORT}, NOW + 1, GRACE)
    _edit(db, f"UPDATE jobs SET name = 'renamed' WHERE id = {jobs[2]}")  # by hand, meanwhile
    again = {job.id: job for job in store.jobs(active=True)}

    assert (again[jobs[0]].status.value, again[jobs[0]].amounts) == ("admitted", (("gpu", 2_000),))
    assert again[jobs[1]].reason == SHORT and first[1].reason != SHORT
    assert again[jobs[2]].name == "renamed" and first[2].name == "train"
    assert store.jobs(active=True) == list(again.values())


@pytest.mark.parametrize(
    ("column", "value"),
    [("rank", "'abc'"), ("submitted_at", "'yesterday'"), ("priority", "99999999999999999999")],
)
def test_a_row_damaged_by_hand_after_a_read_is_refused_on_the_next(
    db: Path, column: str, value: str
) -> None:
    store = SqliteStore(db)
    job = store.submit(new_jobs(1), NOW)[0].id
    assert [j.id for j in store.jobs(active=True)] == [job]
    _edit(db, f"UPDATE jobs SET {column} = {value} WHERE id = {job}")

    with pytest.raises(DamagedRow, match=f"job {job}'s {column} "):
        store.jobs(active=True)


@pytest.fixture
def row(db: Path) -> tuple[object, ...]:
    """A queued job's row as the store reads it."""
    store = SqliteStore(db)
    store.submit(new_jobs(1), NOW)
    store.close()
    with sqlite3.connect(db) as conn:
        return tuple(conn.execute(f"SELECT {COLUMNS} FROM jobs").fetchone())


def test_a_nan_equals_nothing_so_a_row_holding_one_is_checked_every_time(
    row: tuple[object, ...],
) -> None:
    decoded = DecodedRows()
    (first,) = decoded.records([row], {}, whole=True)
    assert decoded.records([tuple(row)], {}) == [first] and decoded.records([row], {})[0] is first
    at = COLUMNS.split(", ").index("submitted_at")
    damaged = (*row[:at], float("nan"), *row[at + 1 :])
    for _ in range(2):
        with pytest.raises(DamagedRow, match="submitted_at"):
            decoded.records([damaged], {}, whole=True)


def test_what_is_kept_is_the_last_whole_read_and_the_newest_of_its_rows(
    row: tuple[object, ...],
) -> None:
    """By job id: a partial read (the loop reads back the rows it wrote) replaces the kept row
    of a job the last whole read had, and never adds a job it had not."""
    decoded = DecodedRows()
    at, job = COLUMNS.split(", ").index("name"), row[0]
    assert isinstance(job, int)
    a, b = ((*row[:at], name, *row[at + 1 :]) for name in ("a", "b"))
    other = (job + 1, *row[1:])
    (kept_a,) = decoded.records([a], {}, whole=True)
    (kept_b,) = decoded.records([b], {})  # the same job, changed since: replaces a
    assert decoded.records([b], {})[0] is kept_b
    assert decoded.records([a], {})[0] is not kept_a and decoded.records([a], {})[0] == kept_a
    (read_other,) = decoded.records([other], {})  # not in the last whole read: not kept
    assert decoded.records([other], {}, whole=True)[0] is not read_other
    assert decoded.records([a], {})[0] is not kept_a  # not in the last whole read any more
    assert decoded.records([a], {})[0] == kept_a


def test_the_capacity_a_job_holds_is_part_of_what_is_matched(row: tuple[object, ...]) -> None:
    decoded = DecodedRows()
    job = row[0]
    assert isinstance(job, int)
    (empty,) = decoded.records([row], {}, whole=True)
    (holding,) = decoded.records([row], {job: [("gpu", 1000)]}, whole=True)
    assert (empty.amounts, holding.amounts) == ((), (("gpu", 1000),))
    with pytest.raises(DamagedRow, match="allocations"):
        decoded.records([row], {job: [("gpu", 1000.0)]})  # type: ignore[list-item]
