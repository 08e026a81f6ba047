"""The JSON contract of `jobs` and `pools` (documented by jobs.schema.json beside this file):
stable field names, times in ISO 8601 UTC, amounts in base units (GPUs, cores, bytes)."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from reconciler.scheduler.amounts import plain
from reconciler.scheduler.jobs import JobDetail
from reconciler.scheduler.pools import PoolsStatus
from reconciler.scheduler.store import JobRecord, Listed, listed

SCHEMA_FILE = "jobs.schema.json"


def iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    value = datetime.datetime.fromtimestamp(moment, tz=datetime.UTC)
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def job_json(job: Listed) -> dict[str, Any]:
    return {
        "id": job.id,
        "name": job.name,
        "status": job.status.value,
        "pool": job.pool,
        "subject": job.subject,
        "rank": job.rank,
        "priority": job.priority,
        "preemptible": job.preemptible,
        "reason": job.reason.to_json() if job.reason is not None else None,
        "submitted_at": iso(job.submitted_at),
        "started_at": iso(job.started_at),
        "finished_at": iso(job.finished_at),
        "exit_code": job.exit_code,
        "worker": job.worker,
        "accelerators": list(job.accelerators),
        "instance_type": job.instance_type,
        "use_spot": job.use_spot,
    }


def submitted_json(jobs: list[JobRecord]) -> dict[str, Any]:
    return {"jobs": [{"id": j.id, "rank": j.rank, "status": j.status.value} for j in jobs]}


def list_json(jobs: Sequence[Listed]) -> dict[str, Any]:
    return {"jobs": [job_json(j) for j in jobs]}


def list_json_text(jobs: Sequence[Listed]) -> Iterator[str]:
    """`list_json(jobs)` as `json.dumps(..., indent=2, sort_keys=True)` writes it, one job at
    a time: a queue's whole history as one document of dictionaries took 2.7 GB for 565,000
    jobs. Byte for byte the same text (tests/scheduler/test_views_json.py)."""
    if not jobs:
        yield json.dumps({"jobs": []}, indent=2, sort_keys=True) + "\n"
        return
    yield '{\n  "jobs": [\n'
    last = len(jobs) - 1
    for index, job in enumerate(jobs):
        text = json.dumps(job_json(job), indent=2, sort_keys=True)
        # Every line of the encoded job, one level deeper (JSON text never holds an empty
        # line: a newline in a value is written as \n).
        yield "    " + text.replace("\n", "\n    ") + (",\n" if index < last else "\n")
    yield "  ]\n}\n"


def _amounts(values: Mapping[str, int] | None) -> dict[str, float | int] | None:
    if values is None:
        return None
    return {k: plain(v) for k, v in sorted(values.items())}


def detail_json(detail: JobDetail) -> dict[str, Any]:
    job = detail.job
    return {
        **job_json(listed(job)),
        "num_jobs": job.num_jobs,
        "policy": None if job.policy is None or job.policy.endswith("/*") else job.policy,
        "attempt": job.attempt,
        "retries_left": job.retries_left,
        "admitted_at": iso(job.admitted_at),
        "resources": _amounts(dict(job.request.resources)),
        "run": job.run,
        "place": None
        if job.place is None
        else {
            "host": job.place.host,
            "host_name": job.place.host_name,
            "jobs_dir": job.place.jobs_dir,
            "elsewhere": detail.elsewhere,
        },
        "candidates": [
            {"pool": c.pool, "policy": c.policy, "fits": c.fits, "text": c.text}
            for c in detail.candidates
        ],
        "history": [
            {"time": iso(e.time), "status": e.status.value, "code": e.code, "message": e.message}
            for e in detail.events
        ],
    }


def pools_json(status: PoolsStatus) -> dict[str, Any]:
    pools = status.pools
    return {
        "pools": [
            {
                "name": p.name,
                "kind": p.kind,
                "running": p.running,
                "queued": p.queued,
                "keys": [
                    {
                        "key": k.key,
                        "capacity": plain(k.capacity),
                        "reserved": plain(k.reserved),
                        "used": plain(k.used),
                        "borrowed": plain(k.borrowed),
                        "queued": plain(k.queued),
                    }
                    for k in p.keys
                ],
                "policies": [
                    {
                        "name": s.name,
                        "subject": s.subject,
                        "priority": s.priority,
                        "reserved": _amounts(s.reserved),
                        "limit": _amounts(s.limit),
                        "used": _amounts(s.used),
                    }
                    for s in p.policies
                ],
                "workers": [{"id": w, "job": job} for w, job in p.workers],
            }
            for p in pools
        ],
        "deleted_pools": [
            {"name": d.name, "running": len(d.jobs), "jobs": d.jobs} for d in status.deleted
        ],
    }
