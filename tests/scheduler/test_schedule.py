"""`schedule(snapshot, now)`, phase by phase: what it admits, preempts and rejects, and the
reason code every job left queued carries."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from reconciler.scheduler.model import Decisions
from reconciler.scheduler.reasons import Reason, ReasonCode
from reconciler.scheduler.routing import resolve
from reconciler.scheduler.schedule import schedule
from tests.scheduler.builders import config, holding, policy, queued, request, snapshot

ZENML = config(
    resource_pools={"dc": {"gpu": 10, "step_run": 20}},
    policies={
        "prod": policy("dc", "prod", priority=100, reserved={"gpu": 6, "step_run": 12},
                       limit={"gpu": 10}),
        "dev": policy("dc", "dev", priority=10, reserved={"gpu": 2, "step_run": 4},
                      limit={"gpu": 4}, preemption="Never"),
    },
)  # fmt: skip


def admitted(decisions: Decisions) -> list[int]:
    return [a.job for a in decisions.admits]


def codes(decisions: Decisions) -> dict[int, str]:
    return {job: r.code.value for job, r in decisions.reasons.items()}


def test_a_cycle_admits_everything_that_fits_not_one_head_per_queue() -> None:
    cfg = config(resource_pools={"p": {"gpu": 8}})
    queue = [queued(i, pool="p", gpu=1) for i in range(1, 13)]
    decisions = schedule(snapshot(cfg, queue), now=100.0)
    assert admitted(decisions) == list(range(1, 9))
    assert set(codes(decisions).values()) == {"waiting_for_capacity"}
    assert decisions.reasons[9].message == "pool p is short of gpu 1"


def test_admission_order_is_priority_then_submission_time() -> None:
    cfg = config(resource_pools={"p": {"gpu": 2}})
    queue = [
        queued(1, pool="p", gpu=1, priority=1, at=1),
        queued(2, pool="p", gpu=1, priority=5, at=3),
        queued(3, pool="p", gpu=1, priority=5, at=2),
    ]
    assert admitted(schedule(snapshot(cfg, queue), now=10)) == [3, 2]


@pytest.mark.parametrize(
    ("case", "capacity", "job", "held", "code"),
    [
        ("step_run caps concurrent jobs", {"gpu": 8, "step_run": 1}, {"gpu": 1},
         [dict(gpu=1, step_run=1)], "step_run_exhausted"),
        ("short of gpu", {"gpu": 2}, {"gpu": 2}, [dict(gpu=1)], "waiting_for_capacity"),
        ("capacity shrank under running work", {"gpu": 1}, {"gpu": 1}, [dict(gpu=2)],
         "overcommitted"),
    ],
)  # fmt: skip
def test_reason_for_a_job_that_does_not_fit(
    case: str, capacity: dict[str, int], job: dict[str, int], held: list[dict[str, int]], code: str
) -> None:
    cfg = config(resource_pools={"p": capacity})
    jobs = [holding(100 + i, "p", "p/*", preemptible=False, **h) for i, h in enumerate(held)]
    decisions = schedule(snapshot(cfg, [queued(1, pool="p", **job)], jobs), now=1)
    assert admitted(decisions) == [], case
    assert codes(decisions) == {1: code}, case


def test_non_preemptible_work_is_held_to_its_reservation() -> None:
    held = [holding(50, "dc", "dev", gpu=2, step_run=1, preemptible=False, priority=10)]
    queue = [queued(1, subject="dev", gpu=1, preemptible=False)]
    decisions = schedule(snapshot(ZENML, queue, held), now=1)
    assert admitted(decisions) == []
    assert decisions.reasons[1].code is ReasonCode.RESERVATION_FULL
    assert "gpu 1" in decisions.reasons[1].message


def test_preemptible_work_borrows_up_to_its_policy_limit() -> None:
    queue = [queued(i, subject="dev", gpu=1) for i in range(1, 7)]
    decisions = schedule(snapshot(ZENML, queue), now=1)
    assert admitted(decisions) == [1, 2, 3, 4]  # dev reserves 2, may burst to its limit of 4
    assert codes(decisions) == {5: "policy_limit_reached", 6: "policy_limit_reached"}


def test_owner_reclaims_borrowed_capacity_from_the_most_recent_borrower() -> None:
    # prod borrows: 9 GPUs against a reservation of 6; dev (priority 10, preemption Never)
    # comes back for its reservation and takes it back anyway: reclaim is not priority.
    held = [
        holding(11, "dc", "prod", gpu=3, step_run=1, priority=100, at=1),
        holding(12, "dc", "prod", gpu=3, step_run=1, priority=100, at=2),
        holding(13, "dc", "prod", gpu=3, step_run=1, priority=100, at=3),
        holding(14, "dc", "dev", gpu=1, step_run=1, priority=10, preemptible=False, at=4),
    ]
    queue = [queued(1, subject="dev", gpu=1, preemptible=False)]
    decisions = schedule(snapshot(ZENML, queue, held), now=50)
    assert admitted(decisions) == []
    assert [(p.preemptor, p.victims, p.why) for p in decisions.preempts] == [(1, (13,), "reclaim")]
    assert decisions.reasons[1].code is ReasonCode.WAITING_FOR_VICTIMS
    assert decisions.claims == {1: 50 + 60.0}


def test_an_admission_that_makes_a_policy_borrow_lets_the_owner_reclaim_in_the_same_cycle() -> None:
    # prod uses exactly its reservation (6) when the cycle starts, so it borrows nothing; its
    # job 1 is admitted (9 against 6: now it borrows, and the pool is full). dev comes back
    # for its reservation in the same cycle and takes it back from prod's most recent running
    # job, as the next cycle would: who borrows is judged as the cycle goes.
    held = [
        holding(11, "dc", "prod", gpu=3, step_run=1, priority=100, at=1),
        holding(12, "dc", "prod", gpu=3, step_run=1, priority=100, at=2),
        holding(14, "dc", "dev", gpu=1, step_run=1, priority=10, preemptible=False, at=4),
    ]
    queue = [queued(1, subject="prod", gpu=3), queued(2, subject="dev", gpu=1, preemptible=False)]
    decisions = schedule(snapshot(ZENML, queue, held), now=50)
    assert admitted(decisions) == [1]
    assert [(p.preemptor, p.victims, p.why) for p in decisions.preempts] == [(2, (12,), "reclaim")]


def test_a_running_job_its_policy_could_not_spare_becomes_a_victim_once_the_policy_grows() -> None:
    # q borrows (3 GPUs against 2 reserved), but losing job 10 (2 GPUs) would leave it below
    # its reservation: job 1 (priority 10) cannot take it by priority and waits. Job 2 of q
    # is admitted in the free GPU (q uses 4): now q can spare job 10, and job 3, alike job 1,
    # takes it. Found unsparable once is not unsparable for the rest of the cycle.
    cfg = config(
        resource_pools={"dc": {"gpu": 11}},
        policies={
            "p": policy("dc", "p", priority=10),
            "q": policy("dc", "q", priority=0, reserved={"gpu": 2}),
            "r": policy("dc", "r", priority=20),
        },
    )
    held = [
        holding(10, "dc", "q", gpu=2, priority=0, at=1),
        holding(11, "dc", "q", gpu=1, priority=0, preemptible=False, at=1),
        holding(12, "dc", "r", gpu=7, priority=20, at=1),
    ]
    queue = [
        queued(1, subject="p", gpu=2, at=1),
        queued(2, subject="q", gpu=1, priority=10, at=2),
        queued(3, subject="p", gpu=2, at=3),
    ]
    decisions = schedule(snapshot(cfg, queue, held), now=50)
    assert admitted(decisions) == [2]
    assert [(p.preemptor, p.victims, p.why) for p in decisions.preempts] == [(3, (10,), "priority")]
    assert decisions.reasons[1].code is not ReasonCode.WAITING_FOR_VICTIMS


def test_a_victim_is_taken_once_even_when_its_policy_grows_after_it_was_passed_over() -> None:
    # Job 1 passes over job 10 (q would fall below its reservation of lic, which the pool
    # lacks for job 1 as it lacks gpu); job 2 takes job 10
    # back for r's reservation (reclaim); job 3 of q is admitted, so q uses more; job 4, alike
    # job 1, must not find job 10 again: it is already stopping for job 2.
    cfg = config(
        resource_pools={"dc": {"gpu": 6, "lic": 7, "cpu": 10}},
        policies={
            "p": policy("dc", "p", priority=10),
            "q": policy("dc", "q", priority=0, reserved={"gpu": 2, "lic": 1}),
            "r": policy("dc", "r", priority=9, reserved={"gpu": 1, "lic": 1}),
            "s": policy("dc", "s", priority=100),
        },
    )
    held = [
        holding(10, "dc", "q", gpu=1, lic=1, priority=0, at=1),
        holding(11, "dc", "q", gpu=3, priority=100, at=1),
        holding(12, "dc", "s", gpu=2, lic=3, priority=100, at=1),
    ]
    queue = [
        queued(1, subject="p", gpu=1, lic=4, priority=10, at=1),
        queued(2, subject="r", gpu=1, lic=1, priority=9, at=2),
        queued(3, subject="q", lic=2, cpu=1, priority=8, at=3),
        queued(4, subject="p", gpu=1, lic=4, priority=7, at=4),
    ]
    decisions = schedule(snapshot(cfg, queue, held), now=50)
    assert admitted(decisions) == [3]
    assert [(p.preemptor, p.victims, p.why) for p in decisions.preempts] == [(2, (10,), "reclaim")]
    assert decisions.reasons[4].code is not ReasonCode.WAITING_FOR_VICTIMS


def test_a_job_whose_only_victim_was_admitted_in_the_cycle_takes_room_held_for_lower_priority() -> (
    None
):
    # Job 2 (passed too often, so first) is admitted and makes hi borrow; claimant 3 (lo,
    # priority 1) finds no room and holds what is free; job 4 (lo, priority 2, within lo's
    # reservation) would take job 2 back, but a job admitted in this cycle is never its
    # victim. As the next cycle would (job 2 running then), job 4 takes the room held for
    # the lower-priority claimant instead of waiting behind it.
    cfg = config(
        resource_pools={"dc": {"gpu": 8}},
        policies={
            "hi": policy("dc", "hi", priority=10, reserved={"gpu": 4}),
            "lo": policy("dc", "lo", priority=1, reserved={"gpu": 2}),
            "other": policy("dc", "other", priority=5, reserved={"gpu": 1}),
        },
    )
    held = [
        holding(10, "dc", "hi", gpu=4, priority=10, preemptible=False, at=1),
        holding(11, "dc", "other", gpu=1, priority=5, preemptible=False, at=1),
    ]
    passed_too_often = replace(queued(2, subject="hi", gpu=2, at=2), bypassed=8)
    claimant = queued(3, subject="lo", gpu=4, at=3, claim_until=100.0)
    queue = [passed_too_often, claimant, queued(4, subject="lo", gpu=1, priority=2, at=4)]
    decisions = schedule(snapshot(cfg, queue, held), now=50)
    assert admitted(decisions) == [2, 4]
    assert decisions.preempts == ()
    assert decisions.reasons[3].code is not ReasonCode.WAITING_FOR_VICTIMS


def test_room_held_for_a_job_its_own_policy_now_holds_back_goes_to_those_it_held_out() -> None:
    # Job 2, passed too often, goes first: no room for its 5 GPUs, so the 4 free are held for
    # it. Job 3 (lo may not preempt) waits for that held room. Job 4 of hi would take job 10
    # back (hi's reservation) and takes the room held for lower-priority job 2 instead; now
    # hi's limit holds job 2 back (1 + 5 > 5), so its room is freed, and job 3, already
    # passed, looks again and is admitted: the next cycle would hold nothing for job 2.
    cfg = config(
        resource_pools={"dc": {"gpu": 8}},
        policies={
            "hi": policy("dc", "hi", priority=10, reserved={"gpu": 1}, limit={"gpu": 5}),
            "lo": policy("dc", "lo", priority=1, reserved={"gpu": 2}, preemption="Never"),
        },
    )
    held = [holding(10, "dc", "lo", gpu=4, priority=1, at=1)]
    passed_too_often = replace(queued(2, subject="hi", gpu=5, priority=0, at=2), bypassed=8)
    queue = [
        passed_too_often,
        queued(3, subject="lo", gpu=1, priority=9, at=3),
        queued(4, subject="hi", gpu=1, priority=5, at=4),
    ]
    decisions = schedule(snapshot(cfg, queue, held), now=50)
    assert admitted(decisions) == [4, 3]
    assert decisions.preempts == ()
    assert set(decisions.reasons) == {2}


def test_never_preempts_non_preemptible_work() -> None:
    cfg = config(resource_pools={"p": {"gpu": 2}})
    held = [holding(10, "p", "p/*", gpu=2, preemptible=False, priority=0)]
    decisions = schedule(snapshot(cfg, [queued(1, pool="p", gpu=1, priority=99)], held), now=1)
    assert decisions.preempts == ()
    assert codes(decisions) == {1: "waiting_for_capacity"}


@pytest.mark.parametrize(
    ("waiter", "victim", "preempts"),
    [(5, 1, True), (5, 5, False), (1, 5, False)],
)
def test_priority_preemption_needs_strictly_higher_priority(
    waiter: int, victim: int, preempts: bool
) -> None:
    cfg = config(resource_pools={"p": {"gpu": 2}})
    held = [holding(10, "p", "p/*", gpu=2, priority=victim)]
    decisions = schedule(snapshot(cfg, [queued(1, pool="p", gpu=1, priority=waiter)], held), 1)
    assert bool(decisions.preempts) is preempts


def test_a_policy_that_may_not_preempt_does_not_preempt_by_priority() -> None:
    cfg = config(
        resource_pools={"p": {"gpu": 2}},
        policies={"only": policy("p", "s", priority=5, reserved={"gpu": 2}, preemption="Never")},
    )
    held = [holding(10, "p", "only", gpu=2, priority=1)]
    decisions = schedule(snapshot(cfg, [queued(1, subject="s", gpu=1, priority=9)], held), 1)
    assert decisions.preempts == ()


def test_victims_are_minimal_and_lowest_priority_first() -> None:
    cfg = config(resource_pools={"p": {"gpu": 8}})
    held = [
        holding(10, "p", "p/*", gpu=4, priority=1, at=1),
        holding(11, "p", "p/*", gpu=1, priority=0, at=2),
        holding(12, "p", "p/*", gpu=1, priority=0, at=3),
        holding(13, "p", "p/*", gpu=2, priority=2, at=4),
    ]
    decisions = schedule(snapshot(cfg, [queued(1, pool="p", gpu=4, priority=9)], held), 1)
    # In order 12, 11 (priority 0, newest first), then 10: 12+11+10 frees 6; dropping 11 and
    # 12 again still leaves room: only 10 is needed.
    assert [p.victims for p in decisions.preempts] == [(10,)]


def test_two_waiters_never_claim_the_same_victim() -> None:
    cfg = config(resource_pools={"p": {"gpu": 2}})
    held = [holding(10, "p", "p/*", gpu=1, priority=0), holding(11, "p", "p/*", gpu=1)]
    queue = [queued(1, pool="p", gpu=1, priority=5), queued(2, pool="p", gpu=1, priority=5)]
    decisions = schedule(snapshot(cfg, queue, held), 1)
    victims = [v for p in decisions.preempts for v in p.victims]
    assert sorted(victims) == [10, 11] and len(decisions.preempts) == 2


def test_a_claimant_waits_for_its_victims_and_its_room_is_held_for_it() -> None:
    cfg = config(resource_pools={"p": {"gpu": 4}})
    # Job 1 preempted 10 and 11 for 3 GPUs; 11 has exited, 10 is still stopping.
    held = [
        holding(10, "p", "p/*", gpu=1, stopping=True, preempted_for=1),
        holding(20, "p", "p/*", gpu=2, preemptible=False),
    ]
    queue = [
        queued(1, pool="p", gpu=3, priority=5, claim_until=99.0),
        queued(2, pool="p", gpu=1, priority=9),  # higher priority, but the room is claimed
    ]
    decisions = schedule(snapshot(cfg, queue, held), now=10)
    assert admitted(decisions) == []
    assert codes(decisions) == {1: "waiting_for_victims", 2: "reserved_for_preemptor"}
    # Once the claim has expired, job 2 may take the free room.
    decisions = schedule(snapshot(cfg, queue, held), now=100)
    assert admitted(decisions) == [2]


def test_a_job_that_would_preempt_takes_room_held_for_a_lower_priority_claimant() -> None:
    # Found by the stateful test: job 2 preempted 10 though room held for job 1 would hold it,
    # and the next cycle (job 2 now a claimant, so first) admitted it there anyway.
    cfg = config(resource_pools={"p": {"gpu": 4}})
    held = [holding(10, "p", "p/*", gpu=2, priority=7)]  # job 2 may preempt it, job 1 not
    queue = [
        queued(1, pool="p", gpu=3, priority=5, claim_until=99.0),  # its victims have exited
        queued(2, pool="p", gpu=2, priority=9),
    ]
    decisions = schedule(snapshot(cfg, queue, held), now=10)
    assert admitted(decisions) == [2]
    assert decisions.preempts == ()
    assert codes(decisions) == {1: "waiting_for_capacity"}


def test_blocked_by_jobs_ahead_in_the_same_cycle() -> None:
    cfg = config(resource_pools={"p": {"gpu": 1}})
    queue = [queued(1, pool="p", gpu=1, priority=5), queued(2, pool="p", gpu=1)]
    decisions = schedule(snapshot(cfg, queue), 1)
    assert decisions.reasons[2].code is ReasonCode.BLOCKED_BY_HIGHER_PRIORITY
    assert "1" in decisions.reasons[2].message


def test_worker_pool_jobs_take_one_whole_free_worker_each() -> None:
    cfg = config(worker_pools={"w": 3})
    held = [holding(10, "w", "w/*", worker="w-1", worker_units=0)]
    held = [replace(held[0], amounts=(("worker", 1000),))]
    queue = [queued(i, pool="w") for i in (1, 2, 3)]
    decisions = schedule(snapshot(cfg, queue, held), 1)
    assert [(a.job, a.worker) for a in decisions.admits] == [(1, "w-0"), (2, "w-2")]
    assert codes(decisions) == {3: "no_worker_free"}
    assert decisions.reasons[3].message == "all 3 worker(s) of pool w are busy"


def test_determined_routing_by_gpu_request() -> None:
    cfg = config(
        machine_pools={"gpus": {"v100": ("p3dn.24xlarge", 2)}, "cpus": {"cpu": ("m5.large", 2)}},
        defaults={"default_compute_pool": "gpus", "default_aux_pool": "cpus"},
    )
    decisions = schedule(snapshot(cfg, [queued(1, gpu=8), queued(2, cpu=1)]), 1)
    assert [(a.job, a.pool) for a in decisions.admits] == [(1, "gpus"), (2, "cpus")]


@pytest.mark.parametrize(
    ("job", "code", "words"),
    [
        ({"pool": "dcc", "gpu": 1}, "unknown_pool", "did you mean `dc`?"),
        ({"subject": "qa", "gpu": 1}, "unknown_subject", "no policy for subject qa"),
        ({"pool": "dc", "gpu": 1}, "ambiguous_policy", "dev, prod"),
        ({"subject": "dev", "gpu": 3, "preemptible": False}, "infeasible", "reserved is 2"),
        ({"subject": "prod", "gpu": 11}, "infeasible", "the pool holds 10"),
        ({"subject": "dev", "gpu": 5}, "infeasible", "limit is 4"),
        ({"subject": "prod", "licenses": 1}, "infeasible", "licenses 1 needed, the pool has none"),
        ({"gpu": 1}, "no_default_pool", "default_compute_pool"),
    ],
)
def test_jobs_no_route_could_ever_run_are_rejected_with_the_closest_route(
    job: dict[str, object], code: str, words: str
) -> None:
    queue = [queued(1, **job)]  # type: ignore[arg-type]
    cfg = config(
        resource_pools={"dc": {"gpu": 10, "step_run": 20}, "other": {"cpu": 4}},
        policies={
            "prod": policy("dc", "prod", reserved={"gpu": 6, "step_run": 12}, limit={"gpu": 10}),
            "dev": policy("dc", "dev", reserved={"gpu": 2, "step_run": 4}, limit={"gpu": 4}),
        },
    )
    decisions = schedule(snapshot(cfg, queue), 1)
    assert [(r.job, r.reason.code.value) for r in decisions.rejects] == [(1, code)]
    assert words in decisions.rejects[0].reason.message


def test_a_gpu_job_on_a_cpu_pool_names_the_shortfall_and_where_it_could_run() -> None:
    cfg = config(
        machine_pools={"gpus": {"v100": ("p3dn.24xlarge", 1)}, "cpus": {"c": ("m5.large", 4)}}
    )
    decisions = schedule(snapshot(cfg, [queued(1, pool="cpus", gpu=8)]), 1)
    why = decisions.rejects[0].reason
    assert why.detail["shortfall"] == {"gpu": 8000}
    assert why.detail["alternatives"] == ["gpus"]
    assert "gpu 8 needed, the pool has none" in why.message and "could run on: gpus" in why.message


def test_an_apply_that_makes_a_queued_job_impossible_rejects_it_saying_so() -> None:
    before = config(resource_pools={"p": {"gpu": 8}}, serial=4)
    after = config(resource_pools={"p": {"gpu": 2}}, serial=5)
    queue = [queued(1, pool="p", gpu=4)]
    assert schedule(snapshot(before, queue, [holding(9, "p", "p/*", gpu=8)]), 1).rejects == ()
    decisions = schedule(snapshot(after, queue), 1)
    assert "since the apply of state serial 5" in decisions.rejects[0].reason.message


@pytest.mark.parametrize(
    ("job", "code"),
    [
        ({"pool": "gone"}, "unknown_pool"),
        ({"subject": "team-gone"}, "unknown_subject"),
        ({"pool": "p", "subject": "team-b"}, "unknown_subject"),
    ],
)
def test_an_apply_that_removes_a_queued_jobs_pool_or_policy_rejects_it_saying_since_when(
    job: dict[str, str], code: str
) -> None:
    """Whatever made the job impossible, the rejection in a cycle names the apply (the same
    job at submit, before any apply moved, names none)."""
    policies = {
        "gone": policy("gone", "team-gone"),
        "keep": policy("p", "team"),
        "also": policy("p", "team-b"),
    }
    before = config(resource_pools={"p": {"gpu": 8}, "gone": {"gpu": 8}}, policies=policies,
                    serial=4)  # fmt: skip
    after = config(resource_pools={"p": {"gpu": 8}}, policies={"keep": policies["keep"]}, serial=5)
    queue = [queued(1, gpu=1, **job)]
    assert schedule(snapshot(before, queue), 1).rejects == ()
    why = schedule(snapshot(after, queue), 1).rejects[0].reason
    assert why.code.value == code
    assert "since the apply of state serial 5" in why.message
    at_submit = resolve(request(gpu=1, **job), after)
    assert isinstance(at_submit, Reason) and "serial" not in at_submit.message


def test_the_same_snapshot_gives_the_same_decisions_whatever_the_input_order() -> None:
    rng = random.Random(7)
    queue = [
        queued(i, subject=rng.choice(["prod", "dev"]), gpu=rng.randint(1, 3),
               priority=rng.choice([None, 1, 50]), preemptible=rng.random() < 0.8)
        for i in range(1, 40)
    ]  # fmt: skip
    held = [holding(100, "dc", "prod", gpu=5, step_run=1, priority=100)]
    first = schedule(snapshot(ZENML, queue, held), 5)
    rng.shuffle(queue)
    assert schedule(snapshot(ZENML, queue, held), 5) == first


def test_an_overcommitted_pool_still_starts_a_job_that_asks_for_none_of_what_is_over() -> None:
    """Capacity shrank below what runs on one key: a job on that key waits (its reason says
    which keys hold it back), and a job asking only for another key starts."""
    cfg = config(resource_pools={"p": {"gpu": 1, "seat": 4}})
    held = [holding(100, "p", "p/*", preemptible=False, gpu=2)]
    queue = [queued(1, pool="p", gpu=1), queued(2, pool="p", seat=1)]
    decisions = schedule(snapshot(cfg, queue, held), now=1)
    assert admitted(decisions) == [2]
    assert codes(decisions) == {1: "overcommitted"}
    assert decisions.reasons[1].message == (
        "pool p holds more than its capacity since the last apply (gpu 1 over); no job asking "
        "for those keys starts there until running jobs drain below it"
    )


def test_a_reservation_of_a_key_the_waiter_finds_room_for_does_not_shield_a_borrower() -> None:
    # The quickstart's team-quota: research reserves gpu 4 and step_run 2 and runs two jobs of
    # 4 GPUs (it borrows 4 GPUs; its step_run is at its reservation). ml-prod, of higher
    # priority, needs 12 GPUs; the pool lacks 4 of them and has step_run to spare. Losing one
    # job keeps research at its GPU reservation: it is taken, as Kueue or ZenML would, though
    # research then runs below its step_run reservation (a key nobody lacks).
    cfg = config(
        resource_pools={"tq": {"gpu": 16, "step_run": 8}},
        policies={
            "ml-prod": policy("tq", "team/ml-prod", priority=100,
                              reserved={"gpu": 8, "step_run": 4}, limit={"gpu": 16}),
            "research": policy("tq", "team/research", priority=10,
                               reserved={"gpu": 4, "step_run": 2}, limit={"gpu": 8}),
        },
    )  # fmt: skip
    held = [
        holding(6, "tq", "research", gpu=4, step_run=1, priority=10, at=1),
        holding(7, "tq", "research", gpu=4, step_run=1, priority=10, at=2),
    ]
    queue = [queued(9, subject="team/ml-prod", gpu=12, priority=100, at=3)]
    decisions = schedule(snapshot(cfg, queue, held), now=5)
    assert [(p.preemptor, p.victims, p.why) for p in decisions.preempts] == [(9, (7,), "priority")]
    # Its reservation still shields research on the key the waiter lacks: 16 GPUs would take
    # it below 4, so nothing is preempted for them.
    queue = [queued(9, subject="team/ml-prod", gpu=16, priority=100, at=3)]
    decisions = schedule(snapshot(cfg, queue, held), now=5)
    assert decisions.preempts == ()


def test_jobs_a_moved_policy_left_in_its_old_pool_do_not_count_against_it_in_the_new_one() -> None:
    # An apply moved policy dev from pool old to pool new (limit 2 GPUs there) while 4 of its
    # jobs of 1 GPU run on in old: they hold what they hold of old, under no policy of it, and
    # dev's next job starts in new, which stands idle. Counted under dev, they would keep it
    # "past its limit by gpu 3" in a pool where it uses nothing.
    cfg = config(
        resource_pools={"old": {"gpu": 10}, "new": {"gpu": 2}},
        policies={"dev": policy("new", "dev", priority=10, reserved={"gpu": 1}, limit={"gpu": 2})},
    )
    held = [holding(i, "old", "dev", gpu=1, priority=10, at=i) for i in range(5, 9)]
    decisions = schedule(snapshot(cfg, [queued(9, subject="dev", gpu=1, at=10)], held), now=20)
    assert admitted(decisions) == [9]
    assert [a.pool for a in decisions.admits] == ["new"]


def test_a_second_job_of_a_policy_whose_claim_fills_its_reservation_takes_nothing_back() -> None:
    # lo reserves 1 GPU and uses none; hi borrows 3 of the pool's 5. Job 6 (lo) takes back
    # hi's job 4 (reclaim) and so claims lo's whole reservation; hi still borrows 1. Job 7
    # (lo, same priority) would borrow once job 6 runs: it takes nothing back (else, once both
    # ran, hi's job 3, queued again, would take job 7 back: preemption back and forth), and
    # its priority is below every hi job's: it waits.
    cfg = config(
        resource_pools={"dc": {"gpu": 5}},
        policies={
            "hi": policy("dc", "hi", priority=10, reserved={"gpu": 2}),
            "lo": policy("dc", "lo", priority=1, reserved={"gpu": 1}),
        },
    )
    held = [
        holding(2, "dc", "hi", gpu=1, priority=10, at=1),
        holding(3, "dc", "hi", gpu=1, priority=10, at=2),
        holding(4, "dc", "hi", gpu=2, priority=10, at=3),
        holding(5, "dc", "hi", gpu=1, priority=10, preemptible=False, at=4),
    ]
    queue = [queued(6, subject="lo", gpu=1, at=5), queued(7, subject="lo", gpu=1, at=6)]
    decisions = schedule(snapshot(cfg, queue, held), now=50)
    assert [(p.preemptor, p.victims, p.why) for p in decisions.preempts] == [(6, (4,), "reclaim")]
    assert decisions.reasons[7].code is not ReasonCode.WAITING_FOR_VICTIMS
