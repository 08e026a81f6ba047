"""Why a job is not running, one line per candidate pool (like kube-scheduler's
"0/15 nodes: 15 Insufficient gpu"), computed from the same ledger `schedule` uses."""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Route, Snapshot, Status
from reconciler.scheduler.reasons import Reason
from reconciler.scheduler.routing import Candidate, candidates, demand_on
from reconciler.scheduler.schedule import explain_failure, where_they_run
from reconciler.scheduler.store import JobRecord


@dataclass(frozen=True)
class CandidateLine:
    pool: str
    policy: str | None
    fits: bool
    text: str


def _label(candidate: Candidate) -> str:
    via = "" if candidate.policy.implicit else f" via policy {candidate.policy.name}"
    return f"{candidate.pool.name}{via}"


def explain(job: JobRecord, snapshot: Snapshot) -> list[CandidateLine] | Reason:
    """For a queued job: each candidate route and what stops it now (or that it fits, and
    the next cycle will admit it). A Reason when the job has no candidate at all."""
    if job.status is not Status.QUEUED:
        return []
    found = candidates(job.request, snapshot.config)
    if isinstance(found, Reason):
        return found
    # Jobs running on in a pool their policy has left hold nothing of the policy there, as
    # the cycle counts them: the lines must agree with the reason the cycle gave.
    ledger = Ledger(snapshot.config, where_they_run(snapshot).holding)
    lines: list[CandidateLine] = []
    for candidate in found:
        policy = None if candidate.policy.implicit else candidate.policy.name
        demand, missing = demand_on(candidate, job.request)
        if missing:
            text = "never: " + "; ".join(s.text() for s in missing)
            lines.append(CandidateLine(candidate.pool.name, policy, False, text))
            continue
        priority = (
            candidate.policy.priority if job.request.priority is None else job.request.priority
        )
        route = Route(candidate.pool.name, candidate.policy.name, demand, priority)
        failure = ledger.check(route, not job.request.preemptible)
        if failure is None:
            text = "fits now; the next cycle admits it unless a job ahead of it takes the room"
            lines.append(CandidateLine(candidate.pool.name, policy, True, text))
        else:
            text = explain_failure(route, failure, ledger).message
            lines.append(CandidateLine(candidate.pool.name, policy, False, text))
    return lines


def label(line: CandidateLine) -> str:
    via = f" via policy {line.policy}" if line.policy else ""
    return f"{line.pool}{via}"
