"""The mapping between a job's row (job_columns.COLUMNS) and its record, and of its history's
rows to events, for both scheduler stores."""

from __future__ import annotations

import dataclasses
import json
import operator
from collections.abc import Callable
from typing import Any, TypeVar

from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.executor import Place
from reconciler.scheduler.job_columns import (
    COLUMN_INDEX,
    LARGEST,
    UNREADABLE,
    DamagedRow,
    check_row,
)
from reconciler.scheduler.model import JobRequest, Status
from reconciler.scheduler.reasons import Reason, ReasonCode
from reconciler.scheduler.store import Event, JobRecord


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


# Where moving_fields reads the MOVING columns (job_columns) of a row.
_CODE, _DETAIL, _STOP, _DEADLINE, _KILLED, _FOR, _CLAIM = (
    COLUMN_INDEX[name]
    for name in (
        "reason_code", "reason_detail", "stop", "stop_deadline", "killed", "preempted_for",
        "claim_until",
    )
)  # fmt: skip


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
    except UNREADABLE as error:
        raise DamagedRow(job_id, "request", error) from None
    try:
        job_envs = _envs(envs)
    except UNREADABLE as error:
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
        if not isinstance(time, int | float) or not -LARGEST <= time <= LARGEST:
            raise ValueError(f"{str(time)[:40]!r} is not a finite number of seconds")
        if not isinstance(code, str) or not isinstance(message, str):
            raise ValueError("its code or message is not text")
        return Event(job, time, Status(status), code, message)
    except ValueError as error:
        raise DamagedRow(job, "history (events)", error) from None
