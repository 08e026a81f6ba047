"""The shortcuts that keep a deep cycle cheap change no decision: on random snapshots (pools
sharing capacity, policies that borrow, claimants, jobs passed too often, batches of alike
ranks), the cycle decides exactly what it decides without them:

- a victim search over the tree's kept candidates (views pruned as the cycle goes) finds what
  a search over a fresh list of the jobs still running finds;
- a run of alike jobs decided as one entry gets what each job, decided alone, gets;
- and a cycle leaves no reference cycle behind for the cyclic collector to walk.
"""

from __future__ import annotations

import gc
import importlib
import random
from typing import Any

import pytest

from reconciler.scheduler import victim_search as victim_search_module
from reconciler.scheduler.admission import Admission, Waiting
from reconciler.scheduler.amounts import SCALE
from reconciler.scheduler.candidates import Candidates
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import AppliedConfig, Holding, JobRequest, Queued, Route, Snapshot
from reconciler.scheduler.preemption import Victims, victims_among
from reconciler.scheduler.schedule import schedule
from tests.scheduler.builders import config, policy

SEEDS = range(60)
# The module (the package exports the function of the same name).
schedule_module = importlib.import_module("reconciler.scheduler.schedule")


def random_config(rng: random.Random) -> AppliedConfig:
    pools: dict[str, dict[str, float]] = {}
    parents: dict[str, str] = {}
    policies: dict[str, dict[str, Any]] = {}
    subjects = [f"s{i}" for i in range(rng.randint(1, 3))]
    for p in range(rng.randint(1, 3)):
        capacity: dict[str, float] = {"gpu": rng.randint(4, 12), "cpu": rng.randint(16, 48)}
        if rng.random() < 0.4:
            capacity["step_run"] = rng.randint(3, 8)
        pools[f"p{p}"] = capacity
        if p and rng.random() < 0.5:
            parents[f"p{p}"] = f"p{rng.randrange(p)}"
        owners = rng.sample(subjects, rng.randint(1, len(subjects)))
        for subject in owners:
            reserved = {k: rng.randint(0, int(v) // len(owners)) for k, v in capacity.items()}
            limit = None
            if rng.random() < 0.7:
                limit = {k: rng.randint(reserved[k], int(v)) for k, v in capacity.items()}
            policies[f"p{p}-{subject}"] = policy(
                f"p{p}",
                subject,
                priority=rng.randint(0, 3),
                reserved=reserved,
                limit=limit,
                preemption="Never" if rng.random() < 0.15 else "LowerPriority",
            )
    return config(resource_pools=pools, policies=policies, parents=parents)


def random_snapshot(seed: int) -> Snapshot:
    """Pools filled past capacity by running jobs (some stopping), and a queue of batches whose
    ranks share a request, a submission time and a bypass count."""
    rng = random.Random(seed)
    cfg = random_config(rng)
    owners = sorted(cfg.policies.values(), key=lambda p: p.name)
    holding: list[Holding] = []
    for index in range(rng.randint(5, 40)):
        owner = rng.choice(owners)
        gpus = rng.choice((1, 1, 2))
        holding.append(
            Holding(
                1000 + index,
                owner.pool,
                owner.name,
                (("cpu", 2 * gpus * SCALE), ("gpu", gpus * SCALE)),
                rng.randint(0, 4),
                rng.random() < 0.85,
                float(rng.randint(0, 50)),
                batch=rng.choice((0, 1000 + index, 7)),
                stopping=rng.random() < 0.1,
            )
        )
    queued: list[Queued] = []
    request: JobRequest | None = None
    while len(queued) < rng.randint(20, 120):
        if request is None or rng.random() < 0.7:  # else the same request again
            owner = rng.choice(owners)
            gpus = rng.choice((1, 1, 2, 3))
            request = JobRequest(
                subject=owner.subject,
                resources=(("cpu", 2 * gpus * SCALE), ("gpu", gpus * SCALE)),
                priority=rng.choice((None, None, 1, 2, 4)),
                preemptible=rng.random() < 0.85,
            )
        at = float(rng.randint(0, 100))
        batch = 7 if rng.random() < 0.2 else len(queued) + 1  # 7: a running job's batch too
        bypassed = rng.choice((0, 0, 0, 1, 6, 7, 9))
        claim = 200.0 if rng.random() < 0.05 else None
        for _ in range(rng.randint(1, 8)):
            queued.append(Queued(len(queued) + 1, request, at, batch, claim, None, bypassed))
    if rng.random() < 0.3:
        rng.shuffle(queued)  # runs of alike jobs no longer in id order
    return Snapshot(cfg, tuple(queued), tuple(holding), 1, 60.0, rng.choice((2, 8)))


@pytest.mark.parametrize("seed", SEEDS)
def test_the_kept_victim_search_finds_what_a_fresh_search_finds(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[Victims | None] = []

    def both(
        ledger: Ledger, route: Route, np: bool, batch: int, kept: Candidates
    ) -> Victims | None:
        fresh = Candidates(ledger, list(kept.jobs), kept.tree)
        expected = victims_among(ledger, route, np, batch, fresh)
        found = victims_among(ledger, route, np, batch, kept)
        assert _ids(found) == _ids(expected)
        compared.append(found)
        return found

    monkeypatch.setattr(victim_search_module, "victims_among", both)
    decisions = schedule(random_snapshot(seed), 100.0)
    assert len(decisions.preempts) <= len([v for v in compared if v is not None])
    victims = [victim for preempt in decisions.preempts for victim in preempt.victims]
    assert len(victims) == len(set(victims))  # no job is taken twice


def test_the_searches_compared_above_include_ones_that_find_victims() -> None:
    preempts = sum(len(schedule(random_snapshot(seed), 100.0).preempts) for seed in SEEDS)
    assert preempts > 20


@pytest.mark.parametrize("seed", SEEDS)
def test_a_run_of_alike_jobs_is_decided_as_each_job_alone(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = random_snapshot(seed)
    together = schedule(snapshot, 100.0)

    def one_by_one(self: Admission, waiting: list[Waiting]) -> None:
        for *_, job, lanes, shape, claimant, run in waiting:
            for member in (job, *run):
                self._step(member, lanes, shape, claimant)

    monkeypatch.setattr(Admission, "_decide", one_by_one)
    monkeypatch.setattr(schedule_module, "_in_order", schedule_module._one_by_one)
    alone = schedule(snapshot, 100.0)
    assert together == alone


def test_runs_of_alike_jobs_occur_in_these_snapshots() -> None:
    snapshot = random_snapshot(3)
    alike = sum(
        1
        for before, after in zip(snapshot.queued, snapshot.queued[1:], strict=False)
        if before.request is after.request
    )
    assert alike > 10


def test_a_cycle_leaves_no_reference_cycle_behind() -> None:
    snapshot = random_snapshot(5)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        schedule(snapshot, 100.0)
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()


def test_a_cycle_collects_only_its_young_generation_and_leaves_the_collector_on() -> None:
    """With the older generation due (threshold 0, one young collection since it was last
    collected), the collector set off at the cycle's end would pass over it inside the cycle; the cycle collects only the
    young generation and leaves the rest to the caller's next automatic collection."""
    snapshot = random_snapshot(5)
    collected: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collected.append(info["generation"])

    thresholds = gc.get_threshold()
    was_enabled = gc.isenabled()
    gc.collect()
    gc.collect(0)  # the older generation counts one young collection: due at threshold 0
    gc.enable()
    gc.set_threshold(100, 0, 0)
    gc.callbacks.append(note)
    try:
        decisions = schedule(snapshot, 100.0)
        still_enabled = gc.isenabled()
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*thresholds)
        if not was_enabled:
            gc.disable()
    assert decisions.admits or decisions.reasons  # the cycle did allocate
    assert collected == [0]
    assert still_enabled


@pytest.mark.parametrize("seed", range(10))
def test_a_cycle_decides_the_same_with_the_collector_on_or_off(seed: int) -> None:
    snapshot = random_snapshot(seed)
    was_enabled = gc.isenabled()
    try:
        gc.enable()
        with_collector = schedule(snapshot, 100.0)
        gc.disable()
        without = schedule(snapshot, 100.0)
    finally:
        if was_enabled:
            gc.enable()
        else:
            gc.disable()
    assert with_collector == without


def test_a_cycle_leaves_a_disabled_collector_disabled() -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        schedule(random_snapshot(5), 100.0)
        assert not gc.isenabled()
    finally:
        if was_enabled:
            gc.enable()


def _ids(found: Victims | None) -> tuple[tuple[int, ...], str] | None:
    return None if found is None else (tuple(job.id for job in found.jobs), found.why)


def test_alike_jobs_with_different_bypass_counts_are_counted_apart() -> None:
    """Three jobs share one request; the third has been passed six times before this cycle.
    The two small jobs after them pass all three: the third reaches the bound (8), as it would
    decided alone, not the count of the two before it."""
    cfg = config(resource_pools={"p": {"gpu": 4}})
    big = JobRequest(pool="p", resources=(("gpu", 3 * SCALE),))
    small = JobRequest(pool="p", resources=(("gpu", SCALE),))
    queue = (
        Queued(1, big, 1.0, 1),
        Queued(2, big, 1.0, 1),
        Queued(3, big, 1.0, 3, bypassed=6),
        Queued(4, small, 2.0, 4),
        Queued(5, small, 3.0, 5),
    )
    running = (Holding(9, "p", "p/*", (("gpu", 2 * SCALE),), 0, False, 0.0, 9),)
    decisions = schedule(Snapshot(cfg, queue, running, 1, 60.0, 8), 100.0)
    assert [admit.job for admit in decisions.admits] == [4, 5]
    assert decisions.bypassed == {1: 2, 2: 2, 3: 8}
