"""`jobs list --json` is written one job at a time, byte for byte the document
`json.dumps(list_json(jobs), indent=2, sort_keys=True)` would be."""

from __future__ import annotations

import json

import pytest

from reconciler.scheduler.model import Status
from reconciler.scheduler.reasons import ReasonCode, reason
from reconciler.scheduler.store import JobRecord, listed
from reconciler.scheduler.views import list_json, list_json_text
from tests.scheduler.builders import request


def _job(job_id: int, **fields: object) -> JobRecord:
    base: dict[str, object] = {
        "id": job_id, "batch": 1, "name": "train", "rank": 0, "num_jobs": 1,
        "request": request(pool="p", gpu=1), "run": "true", "envs": {}, "retries": 0,
        "retries_left": 0, "status": Status.QUEUED, "reason": None, "submitted_at": 1.5,
        "pool": "p",
    }  # fmt: skip
    base.update(fields)
    return JobRecord(**base)  # type: ignore[arg-type]


CASES = {
    "none": [],
    "one": [_job(1)],
    "several, with odd text": [
        _job(1, reason=reason(ReasonCode.UNKNOWN_POOL, pool="a\nb \u202e\u00e9", when="")),
        _job(2, name='quote " and \\ backslash', exit_code=3, finished_at=1e9),
        _job(3, subject="team/\u0000zero", worker="i-1", started_at=2.0),
    ],
}


@pytest.mark.parametrize("records", CASES.values(), ids=CASES.keys())
def test_the_streamed_document_is_the_whole_one(records: list[JobRecord]) -> None:
    jobs = [listed(record) for record in records]
    whole = json.dumps(list_json(jobs), indent=2, sort_keys=True) + "\n"

    streamed = "".join(list_json_text(jobs))

    assert streamed == whole
    assert json.loads(streamed) == list_json(jobs)
