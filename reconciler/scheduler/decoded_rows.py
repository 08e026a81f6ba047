"""Job rows decoded once: the loop reads every active job each cycle, and on a deep queue
most of them are as they were the cycle before. A row read again with the same content (every
column, and the capacity it holds) gets the record decoded from it before, instead of being
checked and decoded again (some 10-25 us a row). A row whose only changes are in the columns
that move from cycle to cycle (`MOVING`: a waiting job's reason, its bypass count and what it
waits for, moves every cycle; claims and stop requests come and go) gets the record decoded
before with the fields read from those columns again, as `record_of` reads them
(`moving_fields`), once their values pass what `check_row` checks of them (`moving_checked`;
one that does not is decoded afresh, and refused as it always was).

What is kept is exactly the rows of the last whole read of the active jobs (the loop's read,
each cycle), by job id, as other reads find them since (the loop reads back the rows it just
wrote): so it never holds more than the queue, and a job that ended is gone after the next
whole read.

The typed-column checks still hold for every row read: a row is looked up only after its
columns' types pass (`sound_types`: a REAL where an INTEGER belongs never matches the row it
equals), and what remains of the checks (ranges, NaN, known statuses, parsable JSON) depends
on the values alone, which a row found has exactly as the row it was decoded from (NaN equals
nothing, so a row holding one is always checked, and refused, again)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.sqlite_rows import (
    MOVING,
    moving_checked,
    moving_fields,
    record_of,
    replaced,
    sound_types,
)
from reconciler.scheduler.store import JobRecord

Held = Mapping[int, Sequence[tuple[str, int]]]  # job id -> the (key, amount) it holds

(_REASON, _REASON_END), (_STOP, _STOP_END) = MOVING


def _only_moved(before: tuple[Any, ...], row: tuple[Any, ...]) -> bool:
    """Whether the two rows differ in MOVING columns only."""
    return (
        before[:_REASON] == row[:_REASON]
        and before[_REASON_END + 1 : _STOP] == row[_REASON_END + 1 : _STOP]
        and before[_STOP_END + 1 :] == row[_STOP_END + 1 :]
    )


class DecodedRows:
    def __init__(self) -> None:
        # job id -> its row as last read whole, the capacity it held, and their record
        self._kept: dict[int, tuple[tuple[Any, ...], Amounts, JobRecord]] = {}

    def records(
        self, rows: Sequence[tuple[Any, ...]], held: Held, *, whole: bool = False
    ) -> list[JobRecord]:
        """The rows' records, in order; `whole`: these are every active job's rows, and what
        is kept from now on."""
        kept = self._kept
        keep: dict[int, tuple[tuple[Any, ...], Amounts, JobRecord]] = {}
        records: list[JobRecord] = []
        for row in rows:
            holds = held.get(row[0])
            amounts = tuple(sorted(holds)) if holds else ()
            if not sound_types(row, amounts):
                records.append(record_of(row, amounts))  # refused, naming the column
                continue
            record = None
            found = kept.get(row[0])
            if found is not None and found[1] == amounts:
                before, _, decoded = found
                if before == row:
                    record = decoded
                elif _only_moved(before, row) and moving_checked(row):
                    record = replaced(decoded, **moving_fields(row))
            if record is None:
                record = record_of(row, amounts)
            if whole:
                keep[row[0]] = (row, amounts, record)
            elif found is not None:  # a row read back after a write: the newest is kept
                kept[row[0]] = (row, amounts, record)
            records.append(record)
        if whole:
            self._kept = keep
        return records
