"""What the SQLite and PostgreSQL stores' set-wise Writes share: which of a call's items count (a
job's first item wins, as one statement per item would have it), the history events the changes
make, in the order of the items, and writing them out at `flush`.

Each store says only how a guarded change is made set-wise: SQLite reads the rows it may touch
and runs an `executemany` of the guarded statements (sqlite_writes); PostgreSQL runs one
statement over unnest(...) arrays and learns from RETURNING what it changed (postgres_writes).
Either way the store answers which jobs changed (and what they were), and the events follow.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from reconciler.scheduler.executor import Place
from reconciler.scheduler.model import Admit, Preempt, Status
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.store import Started

# A reason as a job's row holds it: (code, message, detail), after the job's id.
Said = tuple[int, str, str, str]
# Where an admitted job's attempts run: (place_host, place_name, place_dir).
Where = tuple[str | None, str | None, str | None]


def said(job: int, why: Reason, message: str) -> Said:
    """`message`: the reason's sentence, rendered once for the row and its event."""
    return job, why.code.value, message, why.detail_json()


def started_reason(start: Started) -> Reason:
    code = ReasonCode.ADOPTED if start.adopted else ReasonCode.STARTED
    return reason(code, pid=start.pid, attempt=start.attempt)


class SqlWrites(ABC):
    """One write transaction's changes; the history events they make are gathered in order and
    written by `flush`, so their ids follow the order the changes were made in."""

    now: float
    events: list[tuple[int, float, str, str, str]]

    @abstractmethod
    def _insert_events(self, rows: Sequence[tuple[int, float, str, str, str]]) -> None:
        """History rows (job, time, status, code, message) written as one batch."""

    @abstractmethod
    def _set_queued(self, column: str, values: Mapping[int, Any]) -> dict[int, Any]:
        """`column` (pool, priority) set to each queued job's value in `values` where it
        differs (a job no longer queued, or already at it, is left as it is); each changed
        job's value before."""

    @abstractmethod
    def _admit(self, admits: Sequence[Admit], where: Where) -> set[int]:
        """Queued jobs among `admits` (one each) admitted; the ids admitted."""

    @abstractmethod
    def _allocate(self, rows: Sequence[tuple[int, str, str, str, int]]) -> None:
        """Allocation rows (job, pool, policy, key, amount) written as one batch."""

    @abstractmethod
    def _preempt(
        self, deadline: float, rows: Sequence[tuple[int, int, str, str, str]]
    ) -> dict[int, str]:
        """Stop requests (victim, preemptor, code, message, detail; one per victim) for held
        jobs not already stopping; each asked job's status."""

    @abstractmethod
    def _end_queued(self, status: Status, ends: Sequence[Said]) -> set[int]:
        """Queued jobs among `ends` (one each) ended with their reasons; the ids ended."""

    @abstractmethod
    def _set_reasons(self, rows: Sequence[Said]) -> set[int]:
        """The queued jobs' reasons among `rows` written; those whose code changed."""

    def event(self, job: int, status: str, why: Reason, message: str | None = None) -> None:
        """`message`: the reason's sentence, when the caller has rendered it already."""
        text = why.message if message is None else message
        self.events.append((job, self.now, status, why.code.value, text))

    def flush(self) -> None:
        if self.events:
            self._insert_events(self.events)
        self.events = []

    def _requeue(
        self, column: str, values: Mapping[int, Any], code: ReasonCode, serial: int
    ) -> None:
        """Queued jobs' `column` set (`_set_queued`), each change a history event whose reason
        names the value before as `was` and the new one by the column's name."""
        if not values:
            return
        was = self._set_queued(column, values)
        for job, value in values.items():  # in the decisions' order, as the other events are
            if job in was:
                detail = {"was": was[job], column: value, "serial": serial}
                self.event(job, Status.QUEUED.value, reason(code, **detail))

    def move(self, moves: Mapping[int, str], serial: int) -> None:
        """Queued jobs whose route an apply moved wait for another pool now: theirs is set to
        it (what `jobs list --pool` and `jobs cancel --pool` go by), and the move is a history
        event; a job no longer queued, or already there, is left as it is."""
        self._requeue("pool", moves, ReasonCode.ROUTE_MOVED, serial)

    def reprioritize(self, priorities: Mapping[int, int], serial: int) -> None:
        """Queued jobs an apply gave another priority (their policy's changed, or they moved
        to another policy) show the one the cycle orders them by, and the change is a history
        event; a job no longer queued, or already at it, is left as it is."""
        self._requeue("priority", priorities, ReasonCode.PRIORITY_CHANGED, serial)

    def admit(self, admits: Sequence[Admit], place: Place | None) -> list[int]:
        """Queued jobs admitted, with the capacity they hold and the place their attempts run;
        the ids admitted (a job's first admission in `admits` wins, as it leaves it queued no
        more)."""
        by_job: dict[int, Admit] = {}
        for one in admits:
            by_job.setdefault(one.job, one)
        if not by_job:
            return []
        where = (
            (None, None, None) if place is None else (place.host, place.host_name, place.jobs_dir)
        )
        done = self._admit(list(by_job.values()), where)
        taken = [admit for job, admit in by_job.items() if job in done]
        self._allocate(
            [(a.job, a.pool, a.policy, key, value) for a in taken for key, value in a.amounts]
        )
        for admit in taken:
            on = f" on worker {admit.worker}" if admit.worker else ""
            via = "" if admit.policy.endswith("/*") else f" via policy {admit.policy}"
            why = reason(ReasonCode.ADMITTED, pool=admit.pool, via=via, on=on)
            self.event(admit.job, Status.ADMITTED.value, why)
        return [admit.job for admit in taken]

    def preempt(self, preempts: Sequence[Preempt], grace: float) -> list[int]:
        """Stop requests with a deadline for held jobs not already stopping; the ids asked (a
        victim named twice is asked once, by the first preemptor that names it)."""
        whys: dict[int, Reason] = {}
        rows: list[tuple[int, int, str, str, str]] = []
        for preempt in preempts:
            why = reason(ReasonCode.PREEMPTING, preemptor=preempt.preemptor, why=preempt.why)
            message, detail = why.message, why.detail_json()
            for victim in preempt.victims:
                if victim not in whys:
                    whys[victim] = why
                    rows.append((victim, preempt.preemptor, why.code.value, message, detail))
        if not rows:
            return []
        stopped = self._preempt(self.now + grace, rows)
        asked = [row for row in rows if row[0] in stopped]
        for victim, _, _, message, _ in asked:
            self.event(victim, stopped[victim], whys[victim], message)
        return [row[0] for row in asked]

    def end_queued(self, ends: Sequence[tuple[int, Reason]], status: Status) -> list[int]:
        """Queued jobs ended (rejected, cancelled) with their reasons; the ids ended (a job's
        first ending in `ends` wins)."""
        firsts: dict[int, Reason] = {}
        for job, why in ends:
            firsts.setdefault(job, why)
        if not firsts:
            return []
        rows = [said(job, why, why.message) for job, why in firsts.items()]
        done = self._end_queued(status, rows)
        ended = [row for row in rows if row[0] in done]
        for job, _, message, _ in ended:
            self.event(job, status.value, firsts[job], message)
        return [row[0] for row in ended]

    def reasons(self, reasons: Mapping[int, Reason]) -> None:
        """Write the queued reasons given (those that changed); a new code is also a history
        event."""
        if not reasons:
            return
        rows = [said(job, why, why.message) for job, why in reasons.items()]
        new_code = self._set_reasons(rows)
        for job, _, message, _ in rows:
            if job in new_code:
                self.event(job, Status.QUEUED.value, reasons[job], message)
