"""Every reason the scheduler gives, in one table: a code (stable, machine-readable) and the
human sentence it renders to. Decisions, queued jobs, rejections and history events all draw
from here, so a reason shown anywhere can be looked up, grepped and tested by its code."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reconciler.scheduler.amounts import show_all


class ReasonCode(enum.StrEnum):
    # Why a queued job is not running (fresh every cycle).
    PENDING_EVALUATION = "pending_evaluation"
    WAITING_FOR_CAPACITY = "waiting_for_capacity"
    NO_WORKER_FREE = "no_worker_free"
    STEP_RUN_EXHAUSTED = "step_run_exhausted"
    PROCESS_LIMIT = "process_limit"
    POLICY_LIMIT_REACHED = "policy_limit_reached"
    RESERVATION_FULL = "reservation_full"
    BLOCKED_BY_HIGHER_PRIORITY = "blocked_by_higher_priority"
    RESERVED_FOR_PREEMPTOR = "reserved_for_preemptor"
    RESERVED_FOR_HEAD = "reserved_for_head"
    WAITING_FOR_VICTIMS = "waiting_for_victims"
    OVERCOMMITTED = "overcommitted"
    # Why a job went back to the queue.
    PREEMPTED = "preempted"
    LOST = "lost"
    WORKER_REMOVED = "worker_removed"
    # Why a job can never run (rejected, at submit or after an apply).
    UNKNOWN_POOL = "unknown_pool"
    UNKNOWN_SUBJECT = "unknown_subject"
    AMBIGUOUS_POLICY = "ambiguous_policy"
    NO_DEFAULT_POOL = "no_default_pool"
    INFEASIBLE = "infeasible"
    # Lifecycle events in a job's history.
    SUBMITTED = "submitted"
    ADMITTED = "admitted"
    STARTED = "started"
    SUCCEEDED = "succeeded"
    EXITED = "exited"
    PREEMPTING = "preempting"
    CANCEL_REQUESTED = "cancel_requested"
    CANCELLED = "cancelled"
    KILLED = "killed"
    START_FAILED = "start_failed"
    START_INTERRUPTED = "start_interrupted"
    START_DEFERRED = "start_deferred"
    ADOPTED = "adopted"
    GONE = "gone"
    WORKER_GONE = "worker_gone"
    ROUTE_MOVED = "route_moved"
    PRIORITY_CHANGED = "priority_changed"


# The one place a reason's words live. `{name}` fields come from the reason's detail.
TEXT: dict[ReasonCode, str] = {
    ReasonCode.PENDING_EVALUATION: (
        "submitted; no scheduler cycle has run since: `poolform scheduler run` places it"
    ),
    ReasonCode.WAITING_FOR_CAPACITY: "pool {pool}{shared} is short of {deficit}",
    ReasonCode.NO_WORKER_FREE: "all {workers} worker(s) of pool {pool} are busy",
    ReasonCode.STEP_RUN_EXHAUSTED: "pool {pool} runs at most {limit} job(s) at once (step_run)",
    ReasonCode.PROCESS_LIMIT: (
        "the scheduler runs at most {limit} job(s) at once (scheduler run --max-running)"
    ),
    ReasonCode.POLICY_LIMIT_REACHED: "policy {policy} would pass its limit by {deficit}",
    ReasonCode.RESERVATION_FULL: (
        "non-preemptible work of policy {policy} may use only its reservation, "
        "which is short of {deficit}"
    ),
    ReasonCode.BLOCKED_BY_HIGHER_PRIORITY: (
        "capacity in pool {pool} went to higher-priority job(s) {jobs} this cycle "
        "(now short of {deficit})"
    ),
    ReasonCode.RESERVED_FOR_PREEMPTOR: (
        "capacity in pool {pool} is held for job {preemptor}, which preempted others to get it "
        "(short of {deficit})"
    ),
    ReasonCode.RESERVED_FOR_HEAD: (
        "capacity in pool {pool} is held for job {head}, which later jobs have passed "
        "too often (short of {deficit})"
    ),
    ReasonCode.WAITING_FOR_VICTIMS: (
        "preempting job(s) {victims} in pool {pool}; admitted as soon as they exit"
    ),
    ReasonCode.OVERCOMMITTED: (
        "pool {pool} holds more than its capacity since the last apply ({excess} over); "
        "no job asking for those keys starts there until running jobs drain below it"
    ),
    ReasonCode.PREEMPTED: "preempted by job {preemptor} ({why}); {retries} retr(ies) left",
    ReasonCode.LOST: "its process vanished without an exit status; {retries} retr(ies) left",
    ReasonCode.WORKER_REMOVED: (
        "its worker {worker} of pool {pool} was removed by the apply of state serial {serial}; "
        "stopped and queued again (no retry used)"
    ),
    ReasonCode.UNKNOWN_POOL: "no pool named {pool} is applied{when}{suggestion}",
    ReasonCode.UNKNOWN_SUBJECT: (
        "no policy for subject {subject}{where} is applied{when}{suggestion}"
    ),
    ReasonCode.AMBIGUOUS_POLICY: (
        "pool {pool} has several policies ({policies}){when}; name the subject with --subject"
    ),
    ReasonCode.NO_DEFAULT_POOL: (
        "the job names no pool or subject and the Cluster has no {which}{when}; name one with "
        "--pool"
    ),
    ReasonCode.INFEASIBLE: "no pool could ever run it{when}; closest: {closest}",
    ReasonCode.SUBMITTED: "submitted",
    ReasonCode.ADMITTED: "admitted to pool {pool}{via}{on}",
    ReasonCode.STARTED: "started (pid {pid}, attempt {attempt})",
    ReasonCode.SUCCEEDED: "exited 0",
    ReasonCode.EXITED: "exited with status {code}",
    ReasonCode.PREEMPTING: "preempted by job {preemptor} ({why}); stopping",
    ReasonCode.CANCEL_REQUESTED: "cancel requested; stopping",
    ReasonCode.CANCELLED: "cancelled",
    ReasonCode.KILLED: "killed after the {grace} grace period",
    ReasonCode.START_FAILED: "could not start: {error}",
    ReasonCode.START_INTERRUPTED: "the scheduler stopped before starting it; queued again",
    ReasonCode.START_DEFERRED: (
        "could not start: {error} (this machine's shortage, not the job's); queued again, no "
        "retry used"
    ),
    ReasonCode.ADOPTED: "found running after a scheduler restart (pid {pid})",
    ReasonCode.GONE: (
        "cancelled: an operator said its attempt on {place} is gone (jobs cancel --gone); "
        "nothing was signalled there"
    ),
    ReasonCode.WORKER_GONE: (
        "its worker {worker} of pool {pool} was removed by the apply of state serial {serial}; "
        "stopping"
    ),
    ReasonCode.ROUTE_MOVED: (
        "the apply of state serial {serial} moved its route from pool {was} to pool {pool}"
    ),
    ReasonCode.PRIORITY_CHANGED: (
        "the apply of state serial {serial} changed its priority from {was} to {priority}"
    ),
}


# `no_worker_free` when the pool has no worker at all: none is running (a local cloud's
# terminated instances, which the next apply launches again), or it declares none.
NO_WORKER_RUNS = "pool {pool} has no running worker"

# The detail key under which a queued job's reason carries how many admissions have passed it
# (the anti-starvation count); no sentence shows it.
BYPASSED = "bypassed"


def _render(value: Any) -> str:
    if type(value) is str:  # most values: said as they are (a loop renders thousands a cycle)
        return value
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    if isinstance(value, Mapping):  # amounts per key, in units (a deficit, an excess)
        return show_all(value)
    return str(value)


@dataclass(frozen=True)
class Reason:
    """A code from the table and the values its sentence needs."""

    code: ReasonCode
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def message(self) -> str:
        values = {key: _render(value) for key, value in self.detail.items()}
        text = TEXT[self.code]
        if self.code is ReasonCode.NO_WORKER_FREE and self.detail.get("workers") == 0:
            text = NO_WORKER_RUNS  # not "all 0 worker(s) ... are busy"
        return text.format_map(_Missing(values))

    def to_json(self) -> dict[str, str]:
        return {"code": self.code.value, "message": self.message}

    def detail_json(self) -> str:
        return _DETAIL_JSON(dict(self.detail))


# json.dumps(detail, sort_keys=True, default=str), without making an encoder at every call
_DETAIL_JSON = json.JSONEncoder(sort_keys=True, default=str).encode


def reason(reason_code: ReasonCode, /, **detail: Any) -> Reason:
    # Not named `code`: a detail is (an exit's `code=`), and mypyc, which can compile this
    # module (bench/README.md, Scheduler), lets a keyword clash with a positional-only one.
    return Reason(reason_code, detail)


class _Missing(dict[str, str]):
    """A field the detail does not carry renders empty rather than failing."""

    def __missing__(self, key: str) -> str:
        return ""
