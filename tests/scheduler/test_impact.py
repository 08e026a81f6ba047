"""What a plan says its apply would do to the jobs (`reconciler/scheduler/impact.py`): one
case per way an apply stops, strands or rejects jobs, and the changes that leave them be."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from reconciler.scheduler.amounts import SCALE
from reconciler.scheduler.impact import ObjectChange, jobs_affected
from reconciler.scheduler.model import JobRequest, Status
from reconciler.scheduler.store import JobRecord
from state import ResourceRecord, StateSnapshot

WORKERS = {"pool": {"workers": 3}, "resources": {"instance_type": "c5.xlarge"}}
SEATS = {"capacity": {"gpu": 8, "step_run": 4}}
TEAM = {
    "subject": "team-a",
    "pool": "seats",
    "priority": 5,
    "reserved": {"gpu": 4, "step_run": 2},
    "limit": {"gpu": 8},
}
H100 = {"launch_templates": [{"instance_type": "p5.48xlarge"}], "max_size": 2}  # 8 GPUs each
STATE = StateSnapshot.from_records(
    "lineage",
    4,
    [
        ResourceRecord("worker_pool.w", "worker_pool", WORKERS),
        ResourceRecord("resource_pool.seats", "resource_pool", SEATS),
        ResourceRecord("subject_policy.team-a", "subject_policy", TEAM),
        ResourceRecord("machine_pool.m.machine_type.h100", "machine_type", H100),
    ],
)


def job(
    id: int, status: Status, where: str, *, worker: str | None = None, gpus: int = 0, **request: Any
) -> JobRecord:
    """A job on (or queued for) pool `where`; `request`: what it asked for (pool, subject)."""
    holding = status is not Status.QUEUED
    return JobRecord(
        id=id,
        batch=id,
        name=f"job-{id}",
        rank=0,
        num_jobs=1,
        request=JobRequest(resources=(("gpu", gpus * SCALE),) if gpus else (), **request),
        run="true",
        envs={},
        retries=0,
        retries_left=0,
        status=status,
        reason=None,
        submitted_at=float(id),
        pool=where,
        policy=("team-a" if where == "seats" else f"{where}/*") if holding else None,
        priority=TEAM["priority"] if where == "seats" else None,
        worker=worker,
        amounts=(("gpu", gpus * SCALE), ("step_run", SCALE)) if holding else (),
    )


RUNNING_ON_WORKERS = [
    job(1, Status.RUNNING, "w", worker="i-1", pool="w"),
    job(2, Status.RUNNING, "w", worker="i-2", pool="w"),
]
QUEUED_FOR_WORKERS = [job(3, Status.QUEUED, "w", pool="w")]
ON_SEATS = [
    job(10, Status.RUNNING, "seats", gpus=4, subject="team-a", preemptible=False),
    job(11, Status.ADMITTED, "seats", gpus=2, subject="team-a"),
]
QUEUED_FOR_SEATS = [job(12, Status.QUEUED, "seats", gpus=2, subject="team-a")]
ON_MACHINES = [job(20, Status.RUNNING, "m", gpus=12, pool="m")]
ALL = [*RUNNING_ON_WORKERS, *QUEUED_FOR_WORKERS, *ON_SEATS, *QUEUED_FOR_SEATS, *ON_MACHINES]


def change(address: str, action: str, after: dict[str, Any] | None = None) -> ObjectChange:
    """As a plan states it: a machine pool's changes are to its machine types."""
    kind = address.split(".")[-2] if address.startswith("machine_pool.") else address.split(".")[0]
    return ObjectChange(address, kind, action, after)


CASES = [
    pytest.param(
        [change("worker_pool.w", "replace", WORKERS)],
        [
            "worker_pool.w is replaced (new workers) with 2 jobs (1, 2) running on its workers: "
            "the scheduler stops them and queues them again (worker_removed, no retry used)"
        ],
        id="worker pool replaced under running jobs",
    ),
    pytest.param(
        [change("worker_pool.w", "replace", {**WORKERS, "provider": "aws"})],
        [
            "worker_pool.w is replaced (new workers) with 2 jobs (1, 2) running on its workers: "
            "the scheduler knows this cloud's workers by name only and leaves those jobs "
            "running (`jobs cancel` stops them)"
        ],
        id="worker pool on a cloud replaced: workers by name, none seen to go",
    ),
    pytest.param(
        [change("worker_pool.w", "delete")],
        [
            "worker_pool.w is deleted with 2 jobs (1, 2) running on its workers: the scheduler "
            "stops them and queues them again (worker_removed, no retry used), then rejects "
            "them: no pool named w is applied",
            "1 queued job (3) would be rejected by the scheduler after this apply: no pool "
            "named w is applied",
        ],
        id="worker pool deleted: running stopped, queued rejected",
    ),
    pytest.param(
        [change("worker_pool.w", "update", {**WORKERS, "pool": {"workers": 1}})],
        [
            "worker_pool.w shrinks to 1 worker(s) with 2 busy (2 jobs (1, 2) running): 1 busy "
            "worker(s) go, and the scheduler stops their jobs and queues them again"
        ],
        id="worker pool shrunk below its busy workers",
    ),
    pytest.param(
        [change("worker_pool.w", "update", {**WORKERS, "pool": {"workers": 2}})],
        [],
        id="worker pool shrunk to its busy workers: idle ones go first",
    ),
    pytest.param(
        [change("resource_pool.seats", "update", {"capacity": {"gpu": 4, "step_run": 4}})],
        [
            "resource_pool.seats shrinks below what 2 running jobs (10, 11) hold (gpu 6 held, "
            "gpu 4 after): none is stopped, and the pool starts no job that asks for gpu until they "
            "drain "
            "below it"
        ],
        id="resource pool shrunk below what runs",
    ),
    pytest.param(
        [change("resource_pool.seats", "update", {"capacity": {"gpu": 16, "step_run": 4}})],
        [],
        id="resource pool grown",
    ),
    pytest.param(
        [change("subject_policy.team-a", "update", {**TEAM, "limit": {"gpu": 5}})],
        [
            "subject_policy.team-a's limit drops below what 2 running jobs (10, 11) hold under "
            "it (gpu 6 held, gpu 5 after): none is stopped, and it starts no job that asks for gpu "
            "until "
            "they drain below it"
        ],
        id="policy limit below what its jobs hold",
    ),
    pytest.param(
        [change("subject_policy.team-a", "update", {**TEAM, "reserved": {"gpu": 2}})],
        [
            "subject_policy.team-a's reservation drops below what 1 running non-preemptible job "
            "(10) holds under it (gpu 4 held, gpu 2 after; step_run 1 held, step_run 0 after): "
            "none is stopped, and it starts no non-preemptible job that asks for gpu or "
            "step_run until they drain below it"
        ],
        id="policy reservation below what its non-preemptible jobs hold",
    ),
    pytest.param(
        [change("subject_policy.team-a", "update", {**TEAM, "limit": {"gpu": 6}})],
        [],
        id="policy limit down to what its jobs hold",
    ),
    pytest.param(
        [change("resource_pool.seats", "delete"), change("subject_policy.team-a", "delete")],
        [
            "resource_pool.seats is deleted with 2 jobs (10, 11) running on it: they run on to "
            "their end",
            "subject_policy.team-a is deleted with 2 jobs (10, 11) running under it: they run "
            "on to their end, holding what they hold of their pool",
            "1 queued job (12) would be rejected by the scheduler after this apply: no policy "
            "for subject team-a is applied",
        ],
        id="resource pool and its policy deleted",
    ),
    pytest.param(
        [change("resource_pool.other", "create", {"capacity": {"gpu": 1}})],
        [],
        id="a new pool touches nobody",
    ),
    pytest.param(
        [
            change("resource_pool.other", "create", {"capacity": {"gpu": 4, "step_run": 4}}),
            change(
                "subject_policy.team-a",
                "replace",
                {**TEAM, "pool": "other", "reserved": {"gpu": 1}, "limit": {"gpu": 2}},
            ),
        ],
        [
            "subject_policy.team-a moves to pool other with 2 jobs (10, 11) running under it "
            "elsewhere: they run on to their end, holding what they hold of their pool, and "
            "count toward none of its bounds in other"
        ],
        id="policy moved to another pool: its jobs left behind do not count against it there",
    ),
    pytest.param(
        [change("machine_pool.m.machine_type.h100", "update", {**H100, "max_size": 1})],
        [
            "machine_pool.m shrinks below what 1 running job (20) holds (gpu 12 held, gpu 8 "
            "after): none is stopped, and the pool starts no job that asks for gpu until they drain "
            "below it"
        ],
        id="machine pool shrunk below what runs",
    ),
    pytest.param(
        [change("machine_pool.m.machine_type.h100", "delete")],
        ["machine_pool.m is deleted with 1 job (20) running on it: they run on to their end"],
        id="machine pool deleted under a running job",
    ),
    pytest.param(
        [change("resource_pool.seats", "update", {"capacity": {"gpu": 8}})],
        [
            "resource_pool.seats shrinks below what 2 running jobs (10, 11) hold (step_run 2 "
            "held, step_run 0 after): none is stopped, and the pool starts no job that asks for "
            "step_run until "
            "they drain below it"
        ],
        id="a key the pool no longer declares: none of it",
    ),
    pytest.param(
        [ObjectChange("compute_config.c", "compute_config", "delete", None)],
        [],
        id="what the scheduler does not read",
    ),
]


@pytest.mark.parametrize(("changes", "notes"), CASES)
def test_jobs_affected(changes: list[ObjectChange], notes: list[str]) -> None:
    """With and without the foresight of the next cycle: none of these changes gives the
    scheduler cause to preempt."""
    assert list(jobs_affected(STATE, changes, ALL)) == notes
    assert list(jobs_affected(STATE, changes, ALL, now=100.0)) == notes


def test_no_jobs_no_notes() -> None:
    assert jobs_affected(STATE, [change("worker_pool.w", "delete")], []) == ()


def test_long_lists_are_counted() -> None:
    many = [job(i, Status.RUNNING, "w", worker=f"i-{i}", pool="w") for i in range(1, 26)]
    (note,) = jobs_affected(STATE, [change("worker_pool.w", "replace", WORKERS)], many)
    assert "25 jobs (1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 15 more)" in note


def test_many_reasons_for_rejection_are_counted_past_five() -> None:
    """Eight queued jobs short of the shrunk pool by seven different amounts: seven messages.
    The five most common get a note each (ties by message), the rest one note together."""
    sizes = (2, 2, 3, 4, 5, 6, 7, 8)
    queued = [
        job(30 + n, Status.QUEUED, "seats", gpus=g, pool="seats") for n, g in enumerate(sizes)
    ]
    notes = jobs_affected(
        STATE, [change("resource_pool.seats", "update", {"capacity": {"gpu": 1}})], queued
    )
    assert len(notes) == 6
    assert notes[0].startswith("2 queued jobs (30, 31) would be rejected")
    assert all(n.startswith("1 queued job (") for n in notes[1:5])
    assert notes[5] == "2 more queued jobs (36, 37) would be rejected too, for 2 other reason(s)"


# -- preemptions an apply causes (foresight.py) ---------------------------------------------------

SHARED = {"capacity": {"gpu": 4}}


def team(subject: str, reserved: int, priority: int = 5) -> dict[str, Any]:
    return {
        "subject": subject,
        "pool": "shared",
        "priority": priority,
        "reserved": {"gpu": reserved},
        "limit": {"gpu": 4},
    }


BORROWED = StateSnapshot.from_records(
    "lineage",
    7,
    [
        ResourceRecord("resource_pool.shared", "resource_pool", SHARED),
        ResourceRecord("subject_policy.a", "subject_policy", team("team-a", 4)),
        ResourceRecord("subject_policy.b", "subject_policy", team("team-b", 0)),
    ],
)


def held(id: int, policy: str, priority: int = 5) -> JobRecord:
    """A preemptible one-GPU job of `policy` running on the shared pool since `id`."""
    return replace(
        job(id, Status.RUNNING, "shared", gpus=1, subject=f"team-{policy}"),
        policy=policy,
        priority=priority,
        admitted_at=float(id),
        amounts=(("gpu", SCALE),),
    )


TEAM_A_FILLS_IT = [held(1, "a"), held(2, "a"), held(3, "a"), held(4, "a")]
TEAM_B_WAITS = [job(5, Status.QUEUED, "shared", gpus=1, subject="team-b")]

PREEMPTING = [
    pytest.param(
        [
            change("subject_policy.a", "update", team("team-a", 2)),
            change("subject_policy.b", "update", team("team-b", 2)),
        ],
        [
            "after this apply the scheduler would preempt 1 running job (4) on "
            "resource_pool.shared for 1 queued job (5): the queued jobs' policy takes back "
            "capacity it reserves"
        ],
        id="a reservation moved to the waiting team: it takes back what the other borrows",
    ),
    pytest.param(
        [
            change("subject_policy.a", "update", team("team-a", 2)),
            change("subject_policy.b", "update", team("team-b", 0, priority=9)),
        ],
        [
            "after this apply the scheduler would preempt 1 running job (4) on "
            "resource_pool.shared for 1 queued job (5): the queued jobs have the higher priority"
        ],
        id="the other team borrows now, and the waiting team's priority is raised past it",
    ),
    pytest.param(
        [change("resource_pool.shared", "update", {"capacity": {"gpu": 5}})],
        [],
        id="the pool grown: the waiting job starts, nobody is preempted",
    ),
]


@pytest.mark.parametrize(("changes", "notes"), PREEMPTING)
def test_preemptions_an_apply_causes(changes: list[ObjectChange], notes: list[str]) -> None:
    jobs = [*TEAM_A_FILLS_IT, *TEAM_B_WAITS]
    assert list(jobs_affected(BORROWED, changes, jobs, now=100.0)) == notes


def test_preemptions_due_anyway_are_not_the_apply_s() -> None:
    """Team b already reserves what it waits for: the next cycle preempts with or without the
    apply (here: a change that moves nothing the decision reads)."""
    state = StateSnapshot.from_records(
        "lineage",
        7,
        [
            ResourceRecord("resource_pool.shared", "resource_pool", SHARED),
            ResourceRecord("subject_policy.a", "subject_policy", team("team-a", 2)),
            ResourceRecord("subject_policy.b", "subject_policy", team("team-b", 2)),
        ],
    )
    changes = [change("resource_pool.shared", "update", {"capacity": {"gpu": 4, "cpu": 64}})]
    jobs = [*TEAM_A_FILLS_IT, *TEAM_B_WAITS]
    assert jobs_affected(state, changes, jobs, now=100.0) == ()
