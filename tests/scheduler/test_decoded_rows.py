"""The store's read of a deep queue reuses what it decoded before (reconciler.scheduler
.decoded_rows): rows read again unchanged, and rows changed only in the columns that move
from cycle to cycle (a reason, a claim, a stop request). None of it may change what the loop decides or what is
stored: a loop over a store that decodes every row afresh each time (what the store did
before) and the loop over the store as it is, run side by side through the same cycles
(admissions, preemptions, endings, reasons moving, claims, cancels, new submissions), make the
same decisions and leave the same rows in every table; and what a command reads afterwards
(a store opened afresh, as `jobs list`, `jobs show` and `pools status` open it) is what the
loop's store reads."""

from __future__ import annotations

import collections
import dataclasses
import json
import random
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from reconciler.scheduler.amounts import show_all
from reconciler.scheduler.decoded_rows import DecodedRows, Held
from reconciler.scheduler.loop import CycleReport, LoopSettings, SchedulerLoop
from reconciler.scheduler.postgres_store import PostgresStore
from reconciler.scheduler.reasons import TEXT, Reason, ReasonCode, reason
from reconciler.scheduler.sqlite_rows import COLUMNS, DamagedRow, record_of, replaced
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import JobRecord, NewJob, SchedulerStore
from tests.scheduler.builders import config, policy, request
from tests.scheduler.fakes import Clock, FakeExecutor, World
from tests.state.services import drop_schema, new_schema, pg_url

CYCLES = 14
SUBJECTS = ("a-low", "a-high", "b-low", "b-high", "b-mid")
CONFIG = config(
    resource_pools={"a": {"gpu": 6}, "b": {"gpu": 5}},
    policies={
        "a-low": policy("a", "a-low", priority=0),
        "a-high": policy("a", "a-high", priority=9),
        "b-low": policy("b", "b-low", priority=1, reserved={"gpu": 1}),
        "b-mid": policy("b", "b-mid", priority=4, limit={"gpu": 3}),
        "b-high": policy("b", "b-high", priority=8),
    },
)


class ColdRows(DecodedRows):
    """Every row decoded afresh, every time: the store's reads before it kept anything."""

    def records(self, rows: Any, held: Held, *, whole: bool = False) -> list[JobRecord]:
        return [record_of(row, tuple(sorted(held.get(row[0], ())))) for row in rows]


Dump = Callable[[], tuple[Any, ...]]


@pytest.fixture(params=["sqlite", "postgres"])
def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[str], tuple[SchedulerStore, Callable[[], SchedulerStore], Dump]]]:
    """Makes a named store: the store, an opener of another connection to it, and a dump of
    its tables' rows as they are stored."""
    opened: list[SchedulerStore] = []
    schemas: list[str] = []
    url = pg_url() if request.param == "postgres" else ""

    def make(name: str) -> tuple[SchedulerStore, Callable[[], SchedulerStore], Dump]:
        if request.param == "sqlite":
            path = tmp_path / f"{name}.db"

            def open_sqlite() -> SchedulerStore:
                opened.append(SqliteStore(path))
                return opened[-1]

            def dump_sqlite() -> tuple[Any, ...]:
                with sqlite3.connect(path) as conn:
                    return tuple(
                        tuple(conn.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall())
                        for table, order in TABLES
                    )

            return open_sqlite(), open_sqlite, dump_sqlite
        schema = new_schema()
        schemas.append(schema)

        def open_pg() -> SchedulerStore:
            opened.append(PostgresStore(url, schema=schema))
            return opened[-1]

        def dump_pg() -> tuple[Any, ...]:
            import psycopg

            with psycopg.connect(url) as conn:
                return tuple(
                    tuple(
                        conn.execute(
                            f'SELECT * FROM "{schema}".sched_{table} ORDER BY {order}'
                        ).fetchall()
                    )
                    for table, order in TABLES
                )

        return open_pg(), open_pg, dump_pg

    yield make
    for store in opened:
        store.close()
    for schema in schemas:
        drop_schema(url, schema)


TABLES = (("jobs", "id"), ("allocations", "job, key"), ("events", "id"), ("meta", "key"))


def _new_jobs(rng: random.Random, count: int) -> list[NewJob]:
    jobs = []
    for _ in range(count):
        subject = rng.choice(SUBJECTS)
        ask = request(subject=subject, gpu=rng.choice((1, 1, 2, 3)), preemptible=rng.random() > 0.2)
        jobs.append(NewJob("j", 0, 1, ask, "run", retries=rng.choice((0, 1))))
    return jobs


def _outcome(report: CycleReport) -> tuple[Any, ...]:
    return (
        report.admitted, report.preempted, report.rejected, report.ended, report.killed,
        report.queued, report.running,
    )  # fmt: skip


def test_a_loop_over_the_store_decides_and_stores_what_one_decoding_every_row_afresh_does(
    stores: Callable[[str], tuple[SchedulerStore, Callable[[], SchedulerStore], Dump]],
) -> None:
    warm, open_warm, dump_warm = stores("warm")
    cold, _, dump_cold = stores("cold")
    cold._decoded = ColdRows()  # type: ignore[attr-defined]
    sides = []
    for store in (warm, cold):
        world, clock = World(), Clock()
        settings = LoopSettings(grace=6.0, max_bypass=2)
        loop = SchedulerLoop(store, FakeExecutor(world), lambda: CONFIG, clock, settings)
        sides.append((store, world, clock, loop))
    rng = random.Random(7)
    for store, *_ in sides:
        store.submit(_new_jobs(random.Random(7), 40), 1_000.0)
    for cycle in range(CYCLES):
        outcomes = [_outcome(loop.cycle()) for *_, loop in sides]
        assert outcomes[0] == outcomes[1], f"cycle {cycle}"
        assert dump_warm() == dump_cold(), f"cycle {cycle}"
        # What a command reads: a store opened afresh reads what the loop's store reads.
        fresh = open_warm()
        assert fresh.jobs() == warm.jobs() == cold.jobs()
        assert fresh.jobs(active=True) == warm.jobs(active=True) == cold.jobs(active=True)
        fresh.close()
        # The same things happen on both sides: processes end, jobs come and go.
        running = sorted(key for key, p in sides[0][1].processes.items() if p.running)
        ending = [(key, rng.choice((0, 0, 1))) for key in running if rng.random() < 0.3]
        arriving = _new_jobs(rng, rng.choice((0, 2, 5)))
        active = [job.id for job in warm.jobs(active=True)]
        cancel = [rng.choice(active)] if active and rng.random() < 0.3 else []
        for store, world, clock, _ in sides:
            for key, code in ending:
                world.processes[key].exit_code = code
            store.submit(arriving, clock())
            store.cancel(cancel, clock(), 6.0)
            clock.advance(2.0)
    events = dump_warm()[2]
    codes = {row[4] for row in events}
    assert {"admitted", "preempting", "waiting_for_capacity", "cancelled"} <= codes, codes
    assert sum(1 for row in events if row[4] == "preempting") >= 3


@pytest.fixture
def row(tmp_path: Path) -> tuple[Any, ...]:
    store = SqliteStore(tmp_path / "scheduler.db")
    store.submit(_new_jobs(random.Random(1), 1), 1_000.0)
    store.close()
    with sqlite3.connect(tmp_path / "scheduler.db") as conn:
        return tuple(conn.execute(f"SELECT {COLUMNS} FROM jobs").fetchone())


def test_a_record_with_fields_replaced_is_what_dataclasses_replace_makes(
    row: tuple[Any, ...],
) -> None:
    record = record_of(row, (("gpu", 1000),))
    why = reason(ReasonCode.WAITING_FOR_CAPACITY, pool="a", deficit={"gpu": 1000})
    changes: dict[str, Any] = {"reason": why, "stop": "preempt", "claim_until": 5.0}
    assert replaced(record, **changes) == dataclasses.replace(record, **changes)
    assert replaced(record) == record and record.reason != why  # left as it was
    with pytest.raises(KeyError):
        replaced(record, no_such_field=1)


def _with(row: tuple[Any, ...], **values: Any) -> tuple[Any, ...]:
    names = COLUMNS.split(", ")
    changed = list(row)
    for name, value in values.items():
        changed[names.index(name)] = value
    return tuple(changed)


@pytest.mark.parametrize(
    "values",
    [
        {"reason_code": "waiting_for_capacity", "reason_message": "pool a is short",
         "reason_detail": '{"pool": "a", "bypassed": 3}'},
        {"reason_code": "no_such_code", "reason_detail": "{}"},  # a later poolform's: None
        {"reason_code": None, "reason_message": None, "reason_detail": None},
        {"reason_code": "waiting_for_capacity", "reason_detail": "{not json"},
        {"claim_until": 1_060.5, "reason_code": "reserved_for_preemptor"},
        {"stop": "preempt", "stop_deadline": 1_030.0, "preempted_for": 9, "killed": 1},
        {"stop": "cancel", "stop_deadline": 7, "killed": 0, "claim_until": None},
    ],
)  # fmt: skip
def test_a_row_changed_in_its_moving_columns_reads_as_a_fresh_decode_of_it(
    row: tuple[Any, ...], values: dict[str, Any]
) -> None:
    decoded = DecodedRows()
    (before,) = decoded.records([row], {}, whole=True)
    changed = _with(row, **values)
    (after,) = decoded.records([changed], {}, whole=True)
    assert after == record_of(changed, ()) and after != before
    assert decoded.records([changed], {})[0] is after  # kept, as read


@pytest.mark.parametrize(
    ("values", "column"),
    [
        ({"stop": "pause"}, "stop"),
        ({"claim_until": float("nan")}, "claim_until"),
        ({"stop_deadline": float("inf"), "stop": "preempt"}, "stop_deadline"),
        ({"preempted_for": 2.5}, "preempted_for"),
        ({"killed": None}, "killed"),
    ],
)
def test_a_row_damaged_in_its_moving_columns_is_refused_as_a_fresh_decode_refuses_it(
    row: tuple[Any, ...], values: dict[str, Any], column: str
) -> None:
    decoded = DecodedRows()
    decoded.records([row], {}, whole=True)
    damaged = _with(row, **values)
    with pytest.raises(DamagedRow, match=f"job {row[0]}'s {column} "):
        record_of(damaged, ())
    for _ in range(2):
        with pytest.raises(DamagedRow, match=f"job {row[0]}'s {column} "):
            decoded.records([damaged], {}, whole=True)
    name = _with(row, name="other")  # any other column: decoded afresh
    assert decoded.records([name], {})[0] == record_of(name, ())


def _reference_message(why: Reason) -> str:
    """How a reason's sentence was rendered before the store's writes were made cheaper."""

    def render(value: Any) -> str:
        if isinstance(value, list | tuple):
            return ", ".join(str(v) for v in value)
        if isinstance(value, Mapping):
            return show_all(value)
        return str(value)

    values = {key: render(value) for key, value in why.detail.items()}
    return TEXT[why.code].format_map(collections.defaultdict(str, values))


@pytest.mark.parametrize(
    "detail",
    [
        {"pool": "a", "deficit": {"gpu": 1000, "memory": 2**34}, "bypassed": 3},
        {"pool": ReasonCode.LOST, "jobs": ["4", "17", "more"], "policy": ("x", 2)},
        {"preemptor": 12, "why": "priority", "when": None, "closest": 1.5},
        {"error": 'it said \u00e9\u2028"no"', "pool": Path("/a/b")},
        {},
    ],
)
def test_what_is_stored_of_a_reason_is_what_was_stored_before(detail: dict[str, Any]) -> None:
    """The reason's sentence and its detail as JSON, written for thousands of queued jobs a
    cycle, are made cheaper (no encoder made per call, text said as it is) but the same."""
    for code in ReasonCode:
        why = Reason(code, detail)
        assert why.message == _reference_message(why)
        assert why.detail_json() == json.dumps(dict(detail), sort_keys=True, default=str)
