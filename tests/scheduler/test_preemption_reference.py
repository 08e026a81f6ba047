"""Victim selection against a brute-force reference on tiny instances: it finds victims
exactly when some legal set would let the waiter in, and the set it finds is minimal (no
proper subset suffices). The reference restates the rules independently of the code."""

from __future__ import annotations

from itertools import combinations

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from reconciler.scheduler.amounts import SCALE
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Holding, Route
from reconciler.scheduler.preemption import find_victims
from tests.scheduler.builders import config, policy

KEYS = ("gpu", "lic")


@st.composite
def instances(draw: st.DrawFn) -> dict[str, object]:
    capacity = {"gpu": draw(st.integers(2, 6)), "lic": draw(st.integers(1, 3))}
    policies = {}
    for name in ("a", "b"):
        reserved = {k: draw(st.integers(0, capacity[k] // 2)) for k in KEYS}
        limit = draw(
            st.none()
            | st.fixed_dictionaries({k: st.integers(reserved[k], capacity[k]) for k in KEYS})
        )
        policies[name] = {
            "reserved": reserved,
            "limit": limit,
            "priority": draw(st.integers(0, 2)),
            "preemption": "Never" if draw(st.integers(0, 4)) == 0 else "LowerPriority",
        }
    jobs: list[dict[str, object]] = []
    free = dict(capacity)
    for i in range(draw(st.integers(2, 8))):
        job = {
            "id": 10 + i,
            "policy": draw(st.sampled_from(["a", "b"])),
            "gpu": draw(st.integers(1, 2)),
            "lic": draw(st.integers(0, 1)),
            "priority": draw(st.integers(0, 2)),
            "preemptible": draw(st.integers(0, 4)) > 0,
            "at": float(i),
        }
        if all(int(job[k]) <= free[k] for k in KEYS):  # type: ignore[call-overload]
            jobs.append(job)
            free = {k: free[k] - int(job[k]) for k in KEYS}  # type: ignore[call-overload]
    waiter = {
        "policy": draw(st.sampled_from(["a", "b"])),
        "gpu": draw(st.integers(1, 4)),
        "lic": draw(st.integers(0, 1)),
        "priority": draw(st.integers(1, 3)),
        "np": draw(st.integers(0, 4)) == 0,
    }
    return {"capacity": capacity, "policies": policies, "jobs": jobs, "waiter": waiter}


def _amount(job: dict[str, object]) -> dict[str, int]:
    return {k: int(job[k]) * SCALE for k in KEYS if job[k]}  # type: ignore[call-overload]


def reference(inst: dict[str, object]) -> tuple[list[int], list[frozenset[int]]]:
    """(legal victims, every legal set that lets the waiter in), by brute force."""
    capacity = {k: v * SCALE for k, v in inst["capacity"].items()}  # type: ignore[attr-defined]
    policies = inst["policies"]
    jobs = inst["jobs"]
    waiter = inst["waiter"]
    demand = _amount(waiter)  # type: ignore[arg-type]
    mine = policies[waiter["policy"]]  # type: ignore[index]

    def used(policy_name: str | None, np_only: bool = False) -> dict[str, int]:
        total = dict.fromkeys(KEYS, 0)
        for job in jobs:  # type: ignore[attr-defined]
            if policy_name is not None and job["policy"] != policy_name:
                continue
            if np_only and job["preemptible"]:
                continue
            for k, v in _amount(job).items():
                total[k] += v
        return total

    pool_used, own = used(None), used(waiter["policy"])  # type: ignore[index]
    reclaim = all(own[k] + d <= mine["reserved"][k] * SCALE for k, d in demand.items())

    def legal(job: dict[str, object]) -> bool:
        if not job["preemptible"]:
            return False
        lower = job["priority"] < waiter["priority"]  # type: ignore[operator, index]
        may = mine["preemption"] != "Never"
        if job["policy"] == waiter["policy"]:  # type: ignore[index]
            return lower and may
        other = policies[job["policy"]]  # type: ignore[index]
        theirs = used(job["policy"])  # type: ignore[arg-type]
        contended = [k for k in KEYS if _amount(job).get(k) and demand.get(k)]
        borrowing = any(theirs[k] > other["reserved"][k] * SCALE for k in contended)
        return borrowing and (reclaim or (lower and may))

    def fits(removed: frozenset[int]) -> bool:
        gone = [j for j in jobs if j["id"] in removed]  # type: ignore[attr-defined]
        for k, d in demand.items():
            freed = sum(_amount(j).get(k, 0) for j in gone)
            if pool_used[k] - freed + d > capacity[k]:
                return False
            limit = mine["limit"]
            freed_own = sum(_amount(j).get(k, 0) for j in gone if j["policy"] == waiter["policy"])  # type: ignore[index]
            if limit is not None and own[k] - freed_own + d > limit[k] * SCALE:
                return False
            if (
                waiter["np"]
                and used(waiter["policy"], np_only=True)[k] + d > mine["reserved"][k] * SCALE
            ):  # type: ignore[index]
                return False
        return True

    candidates = [j["id"] for j in jobs if legal(j)]  # type: ignore[attr-defined]
    sets = [
        frozenset(c)
        for size in range(1, len(candidates) + 1)
        for c in combinations(candidates, size)
        if fits(frozenset(c))
    ]
    return candidates, sets


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(instances())
def test_victims_exist_exactly_when_a_legal_set_exists_and_are_minimal(inst: dict) -> None:
    cfg = config(
        resource_pools={"p": inst["capacity"]},
        policies={
            name: policy("p", name, priority=spec["priority"], reserved=spec["reserved"],
                         limit=spec["limit"], preemption=spec["preemption"])
            for name, spec in inst["policies"].items()
        },
    )  # fmt: skip
    held = [
        Holding(j["id"], "p", j["policy"], tuple(sorted(_amount(j).items())), j["priority"],
                j["preemptible"], j["at"], j["id"])
        for j in inst["jobs"]
    ]  # fmt: skip
    usage = {k: sum(_amount(j).get(k, 0) for j in inst["jobs"]) for k in KEYS}
    assume(all(usage[k] <= inst["capacity"][k] * SCALE for k in KEYS))
    waiter = inst["waiter"]
    ledger = Ledger(cfg, tuple(held))
    route = Route("p", waiter["policy"], tuple(sorted(_amount(waiter).items())), waiter["priority"])
    failure = ledger.check(route, waiter["np"])
    assume(failure is not None and failure.level in ("pool", "limit"))

    found = find_victims(ledger, route, waiter["np"], 0, held)
    legal, feasible = reference(inst)
    event(f"victims: {'none' if found is None else len(found.jobs)}, legal: {len(legal)}")
    if found is None:
        assert feasible == [], f"missed victims {feasible}"
        return
    chosen = frozenset(v.id for v in found.jobs)
    assert chosen <= set(legal)
    assert chosen in feasible
    assert not any(other < chosen for other in feasible), "a proper subset would do"
