"""Reclaim takes back only what a policy (or pool) borrows of what the waiter lacks.

A waiter within its reservation may preempt a borrower at any priority (reclaim). Borrowing
is judged on the keys the pool lacks for the waiter (as Kueue reclaims only from queues that
borrow the resources needing preemption): a policy within its reservation of gpu that borrows
cpu, or runs one job more than its `step_run` reservation, keeps its gpus; the gpus are taken
from the policy that borrows gpus. Before, any key both jobs needed counted, so the policy
borrowing only cpu lost a job it held within its reservation, while the real borrower kept
its gpus (and the victim, back in the queue, would then reclaim from that borrower: two
preemptions where one was due)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from reconciler.scheduler.model import AppliedConfig, Holding, Queued
from reconciler.scheduler.schedule import schedule
from tests.scheduler.builders import config, holding, policy, queued, snapshot

# owner reclaims only (preemption Never); keeper and borrower run at the owner's priority.
POLICIES = config(
    resource_pools={"dc": {"gpu": 4, "cpu": 16, "step_run": 8}},
    policies={
        "owner": policy("dc", "owner", reserved={"gpu": 2, "cpu": 4, "step_run": 2},
                        preemption="Never"),
        "keeper": policy("dc", "keeper", reserved={"gpu": 2, "cpu": 4, "step_run": 2}),
        "borrower": policy("dc", "borrower"),
    },
)  # fmt: skip

# root 4 GPUs and 8 CPUs; a and b 2 of each, sharing through root.
TREE = config(
    resource_pools={
        "root": {"gpu": 4, "cpu": 8},
        "a": {"gpu": 2, "cpu": 2},
        "b": {"gpu": 2, "cpu": 2},
    },
    parents={"a": "root", "b": "root"},
)


@dataclass(frozen=True)
class Case:
    cfg: AppliedConfig
    queue: list[Queued]
    held: list[Holding]
    preempted: dict[int, tuple[int, ...]]  # preemptor -> victims
    admitted: list[int] = field(default_factory=list)


CASES = {
    "a policy borrowing only cpu keeps its reserved gpus; the gpu borrower gives them": Case(
        POLICIES,
        [queued(1, subject="owner", gpu=1, cpu=1, step_run=1)],
        [
            holding(11, "dc", "borrower", gpu=2, cpu=1, step_run=1, at=1),
            holding(12, "dc", "keeper", gpu=2, cpu=8, step_run=1, at=2),
        ],
        {1: (11,)},
    ),
    "a policy running a job more than its step_run reservation keeps its reserved gpus": Case(
        POLICIES,
        [queued(1, subject="owner", gpu=1, step_run=1)],
        [
            holding(11, "dc", "borrower", gpu=2, step_run=1, at=1),
            holding(12, "dc", "keeper", gpu=1, step_run=1, at=2),
            holding(13, "dc", "keeper", gpu=1, step_run=1, at=3),
            holding(14, "dc", "keeper", cpu=1, step_run=1, at=4),
        ],
        {1: (11,)},
    ),
    "a policy borrowing gpus gives back its most recent job while it still borrows gpus": Case(
        POLICIES,
        [queued(1, subject="owner", gpu=1, step_run=1)],
        [
            holding(11, "dc", "borrower", gpu=1, step_run=1, at=1),
            holding(12, "dc", "keeper", gpu=1, step_run=1, at=2),
            holding(13, "dc", "keeper", gpu=1, step_run=1, at=3),
            holding(14, "dc", "keeper", gpu=1, step_run=1, at=4),
        ],
        {1: (14,)},
    ),
    "a policy borrowing both cpu and gpus gives its gpus back": Case(
        POLICIES,
        [queued(1, subject="owner", gpu=2, step_run=1)],
        [holding(12, "dc", "keeper", gpu=4, cpu=8, step_run=1, at=2)],
        {1: (12,)},
    ),
    "a waiter that would pass its own reservation of gpus reclaims nothing": Case(
        POLICIES,
        [queued(1, subject="owner", gpu=2, cpu=1, step_run=1)],
        [
            holding(10, "dc", "owner", gpu=1, cpu=1, step_run=1, at=1),
            holding(12, "dc", "keeper", gpu=2, cpu=8, step_run=1, at=2),
            holding(13, "dc", "borrower", gpu=1, step_run=1, at=3),
        ],
        {},
    ),
    "a waiter short of cpu too takes a job of a policy borrowing cpu, gpus and all": Case(
        # Job 1 is admitted: borrower borrows gpus, but what this cycle admits is no victim.
        # Job 2, short of gpus only, finds none: keeper borrows no gpus. Job 3 is short of
        # cpu too, which keeper borrows: it takes keeper's job, though job 2's search found
        # nothing and job 3 asks no less of every key (Kueue: what needs preemption, cpu
        # among it, is what the victim's queue must borrow).
        POLICIES,
        [
            queued(1, subject="borrower", gpu=2, cpu=1, step_run=1, priority=5, at=1),
            queued(2, subject="owner", gpu=1, cpu=1, step_run=1, at=2),
            queued(3, subject="owner", gpu=1, cpu=4, step_run=1, at=3),
        ],
        [holding(12, "dc", "keeper", gpu=2, cpu=12, step_run=1, at=2)],
        {3: (12,)},
        admitted=[1],
    ),
    "a pool borrowing only cpu from its tree keeps its own gpus; the gpu borrower gives": Case(
        TREE,
        [queued(1, pool="b", gpu=1, cpu=1)],
        [
            holding(11, "root", "root/*", gpu=2, at=1),
            holding(12, "root", "root/*", gpu=2, at=1),
            holding(13, "root", "root/*", gpu=2, at=1),
            holding(14, "a", "a/*", gpu=2, cpu=6, at=2),
        ],
        {1: (13,)},
    ),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_reclaim_takes_only_what_is_borrowed_of_the_keys_the_waiter_lacks(case: Case) -> None:
    decisions = schedule(snapshot(case.cfg, case.queue, case.held), now=10.0)
    assert {p.preemptor: p.victims for p in decisions.preempts} == case.preempted
    assert {p.why for p in decisions.preempts} <= {"reclaim"}
    assert [a.job for a in decisions.admits] == case.admitted
