"""ResourcePool.parent: pools joined by `parent` share one capacity, as a Kueue cohort does.
A pool lends what it leaves idle and borrows what others leave idle; what a pool declares
itself is what it is sure to get back, by preempting borrowers (reclaim). Non-preemptible work
never borrows. A pool with no parent shares nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from reconciler.scheduler.model import Holding, Queued
from reconciler.scheduler.schedule import schedule
from tests.scheduler.builders import config, holding, queued, snapshot

# root 4 GPUs; a and b 2 each, borrowing through root: 8 shared. c stands alone.
TREE = config(
    resource_pools={"root": {"gpu": 4}, "a": {"gpu": 2}, "b": {"gpu": 2}, "c": {"gpu": 2}},
    parents={"a": "root", "b": "root"},
)


@dataclass(frozen=True)
class Case:
    queue: list[Queued]
    held: list[Holding] = field(default_factory=list)
    admitted: list[tuple[int, str]] = field(default_factory=list)
    preempted: dict[int, tuple[int, ...]] = field(default_factory=dict)  # preemptor -> victims
    why: str | None = None  # "reclaim" or "priority"
    rejected: list[int] = field(default_factory=list)
    waiting: dict[int, str] = field(default_factory=dict)  # job -> reason code


CASES = {
    "a child borrows what its parent leaves idle": Case(
        [queued(1, pool="a", gpu=5)], admitted=[(1, "a")]
    ),
    "the parent borrows what its children leave idle": Case(
        [queued(1, pool="root", gpu=8)], admitted=[(1, "root")]
    ),
    "more than the whole tree holds is rejected at submit": Case(
        [queued(1, pool="a", gpu=9)], rejected=[1]
    ),
    "non-preemptible work never borrows": Case(
        [queued(1, pool="a", gpu=3, preemptible=False)], rejected=[1]
    ),
    "a pool with no parent shares nothing": Case([queued(1, pool="c", gpu=3)], rejected=[1]),
    "the parent takes back what a child borrows (reclaim)": Case(
        [queued(1, pool="root", gpu=4)],
        held=[holding(10, "a", "a/*", gpu=5, priority=9), holding(11, "b", "b/*", gpu=2)],
        preempted={1: (10,)},
        why="reclaim",
    ),
    "a sibling takes back its own share from a borrower, lowest priority first": Case(
        [queued(1, pool="b", gpu=2, priority=0)],
        held=[
            holding(10, "a", "a/*", gpu=2, priority=5, at=1.0),
            holding(11, "a", "a/*", gpu=2, priority=3, at=2.0),
            holding(12, "root", "root/*", gpu=4),
        ],
        preempted={1: (11,)},
        why="reclaim",
    ),
    "a pool within its own capacity lends nothing back": Case(
        [queued(1, pool="b", gpu=2)],
        held=[
            holding(10, "a", "a/*", gpu=2),
            holding(11, "root", "root/*", gpu=4),
            holding(12, "b", "b/*", gpu=2),
        ],
        waiting={1: "waiting_for_capacity"},
    ),
    "a borrower's admission in the same tree counts against its siblings": Case(
        [queued(1, pool="a", gpu=6), queued(2, pool="b", gpu=3)],
        admitted=[(1, "a")],
        waiting={2: "waiting_for_capacity"},
    ),
    "an admission that makes a pool borrow lets a sibling take back at once": Case(
        [queued(1, pool="a", gpu=2, priority=5), queued(2, pool="b", gpu=2, priority=1)],
        held=[holding(10, "a", "a/*", gpu=2, priority=3), holding(12, "root", "root/*", gpu=4)],
        admitted=[(1, "a")],
        preempted={2: (10,)},
        why="reclaim",
    ),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_pools_joined_by_parent_share_capacity(case: Case) -> None:
    decisions = schedule(snapshot(TREE, case.queue, case.held), now=10.0)
    assert [(a.job, a.pool) for a in decisions.admits] == case.admitted
    assert {p.preemptor: p.victims for p in decisions.preempts} == case.preempted
    if case.why is not None:
        assert {p.why for p in decisions.preempts} == {case.why}
    assert [r.job for r in decisions.rejects] == case.rejected
    for job, code in case.waiting.items():
        assert decisions.reasons[job].code.value == code


def test_a_waiting_job_in_a_tree_names_the_pools_it_shares_with() -> None:
    held = [holding(10, "root", "root/*", gpu=8, preemptible=False)]
    decisions = schedule(snapshot(TREE, [queued(1, pool="a", gpu=1)], held), now=1.0)
    message = decisions.reasons[1].message
    assert "b" in message and "root" in message and "shares capacity" in message


def test_a_parent_cycle_in_a_damaged_state_is_cut_at_one_link() -> None:
    # validate refuses cycles; a damaged state might still hold one. The link that would
    # close it is dropped, so x and y are one tree of 2 GPUs and the cycle ends.
    looped = config(resource_pools={"x": {"gpu": 1}, "y": {"gpu": 1}},
                    parents={"x": "y", "y": "x"})  # fmt: skip
    assert sorted(looped.trees.values()) == [("x", "y")]
    decisions = schedule(snapshot(looped, [queued(1, pool="x", gpu=2)]), now=1.0)
    assert [(a.job, a.pool) for a in decisions.admits] == [(1, "x")]
