"""Workloads for bench_scheduler.py: a large mixed snapshot, a naive priority-FIFO baseline,
and Kueue's baseline scenario replayed on a virtual clock through `schedule`."""

from __future__ import annotations

import heapq
import random
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace

from reconciler.scheduler.amounts import SCALE
from reconciler.scheduler.applied import applied_config
from reconciler.scheduler.model import AppliedConfig, Holding, JobRequest, Queued, Snapshot
from reconciler.scheduler.schedule import schedule
from state import ResourceRecord, StateSnapshot

# -- (a) one big cycle ---------------------------------------------------------------------------

SIZES = (1, 1, 1, 2, 2, 4, 8)  # GPUs per job: mostly small


def big_config(pools: int = 100, policies_per_pool: int = 10, seed: int = 1) -> AppliedConfig:
    rng = random.Random(seed)
    records = []
    for p in range(pools):
        capacity = {"gpu": 64, "cpu": 512, "step_run": 64}
        records.append(
            ResourceRecord(f"resource_pool.p{p}", "resource_pool", {"capacity": capacity})
        )
        for s in range(policies_per_pool):
            attributes = {
                "subject": f"team-{p}-{s}",
                "pool": f"p{p}",
                "priority": rng.randint(0, 100),
                "reserved": {"gpu": 4, "cpu": 32, "step_run": 4},
                "limit": {"gpu": 32, "cpu": 256, "step_run": 32},
                "preemption": "LowerPriority",
            }
            records.append(
                ResourceRecord(f"subject_policy.p{p}-s{s}", "subject_policy", attributes)
            )
    return applied_config(StateSnapshot.from_records("bench", 1, records))


def big_snapshot(
    config: AppliedConfig, queued: int, busy: bool, seed: int, batch: int = 20
) -> Snapshot:
    """`queued` jobs over every policy, mixed sizes and priorities, submitted in batches of 1
    to `batch` ranks (as --num-jobs does; `batch=1`: every job its own submission); with
    `busy`, every pool already ~90% full of running jobs, so most of the queue cannot fit."""
    rng = random.Random(seed)
    policies = sorted(config.policies.values(), key=lambda p: p.name)
    queue: list[Queued] = []
    while len(queue) < queued:
        policy = rng.choice(policies)
        gpus = rng.choice(SIZES)
        request = JobRequest(
            subject=policy.subject,
            resources=(("cpu", gpus * 4 * SCALE), ("gpu", gpus * SCALE)),
            priority=rng.choice([None, None, 10, 50, 100]),
            preemptible=rng.random() < 0.9,
        )
        first = len(queue) + 1
        for _ in range(min(rng.randint(1, batch), queued - len(queue))):
            job_id = len(queue) + 1
            queue.append(Queued(job_id, request, float(first), first))
    holding: list[Holding] = []
    if busy:
        next_id = queued + 1
        by_pool = defaultdict(list)
        for policy in policies:
            by_pool[policy.pool].append(policy)
        for pool, owners in sorted(by_pool.items()):
            used = 0
            while used + 2 <= 58:
                owner = rng.choice(owners)
                gpus = rng.choice((1, 2))
                amounts = (("cpu", gpus * 4 * SCALE), ("gpu", gpus * SCALE), ("step_run", SCALE))
                holding.append(
                    Holding(
                        next_id,
                        pool,
                        owner.name,
                        amounts,
                        owner.priority,
                        rng.random() < 0.8,
                        float(next_id),
                    )
                )
                next_id += 1
                used += gpus
    return Snapshot(config, tuple(queue), tuple(holding), cycle=1, claim_ttl=90.0)


def settled(snapshot: Snapshot, queued: int, seed: int, batch: int = 20) -> Snapshot:
    """The same pools after the scheduler has had its way: cycles on the burst snapshot until
    nothing changes (victims leave at once and queue again), then the queue topped up to
    `queued` jobs. This is the state a running scheduler decides over, cycle after cycle."""
    holding = {h.id: h for h in snapshot.holding}
    waiting = {q.id: q for q in snapshot.queued}
    for round_ in range(50):
        current = Snapshot(
            snapshot.config, tuple(waiting.values()), tuple(holding.values()), round_ + 1, 0.0
        )
        decisions = schedule(current, 1_000.0)
        for admit in decisions.admits:
            job = waiting.pop(admit.job)
            holding[job.id] = Holding(
                job.id,
                admit.pool,
                admit.policy,
                admit.amounts,
                admit.priority,
                job.request.preemptible,
                1_000.0,
                job.id,
            )
        for preempt in decisions.preempts:
            for victim in preempt.victims:
                holding.pop(victim)
        for job_id in decisions.rejects:
            waiting.pop(job_id.job)
        if not decisions.admits and not decisions.preempts:
            break
    extra = big_snapshot(
        snapshot.config, queued - len(waiting), busy=False, seed=seed + 1000, batch=batch
    )
    top_up = [replace(q, id=q.id + 10**6, batch=q.batch + 10**6) for q in extra.queued]
    return Snapshot(snapshot.config, (*waiting.values(), *top_up), tuple(holding.values()), 1, 90.0)


def naive_priority_fifo(snapshot: Snapshot) -> int:
    """The baseline: one priority-FIFO queue per pool, head-of-line blocking (stop at the first
    job that does not fit), usage recomputed from every holding job for each check, no
    preemption, no reasons. Returns how many it admits."""
    config = snapshot.config
    holding = list(snapshot.holding)
    queues: dict[str, list[Queued]] = defaultdict(list)
    for job in snapshot.queued:
        policies = config.policies_of_subject(job.request.subject or "")
        if policies:
            queues[policies[0].pool].append(job)
    admitted = 0
    for pool_name, queue in sorted(queues.items()):
        pool = config.pools[pool_name]
        queue.sort(key=lambda j: (-(j.request.priority or 0), j.submitted_at, j.id))
        for job in queue:
            used: dict[str, int] = defaultdict(int)
            for held in holding:
                if held.pool == pool_name:
                    for key, value in held.amounts:
                        used[key] += value
            demand = dict(job.request.resources)
            demand["step_run"] = SCALE
            if any(used[k] + v > pool.capacity.get(k, 0) for k, v in demand.items()):
                break
            holding.append(Holding(job.id, pool_name, "", tuple(demand.items()), 0, True, 0.0))
            admitted += 1
    return admitted


# -- (b) Kueue's baseline, replayed --------------------------------------------------------------

CLASSES = {  # name: (count per policy, units, runtime s, priority, arrival interval s)
    "small": (350, 1, 0.2, 50, 0.1),
    "medium": (100, 5, 0.5, 100, 0.5),
    "large": (50, 20, 1.0, 200, 1.2),
}
KUEUE = {"total_s": 351.1, "large_s": 16.5, "medium_s": 76.8, "small_s": 215.5}


def kueue_config() -> AppliedConfig:
    records = []
    for c in range(5):
        records.append(
            ResourceRecord(f"resource_pool.cohort-{c}", "resource_pool", {"capacity": {"cpu": 120}})
        )
        for q in range(6):
            attributes = {
                "subject": f"cq-{c}-{q}",
                "pool": f"cohort-{c}",
                "priority": 0,
                "reserved": {"cpu": 20},
                "limit": {"cpu": 120},
            }
            records.append(
                ResourceRecord(f"subject_policy.cq-{c}-{q}", "subject_policy", attributes)
            )
    return applied_config(StateSnapshot.from_records("kueue", 1, records))


@dataclass(frozen=True)
class TraceJob:
    id: int
    kind: str
    subject: str
    units: int
    runtime: float
    priority: int
    arrival: float


def kueue_trace() -> list[TraceJob]:
    jobs: list[TraceJob] = []
    for c in range(5):
        for q in range(6):
            for kind, (count, units, runtime, priority, every) in CLASSES.items():
                for i in range(count):
                    jobs.append(
                        TraceJob(0, kind, f"cq-{c}-{q}", units, runtime, priority, i * every)
                    )
    jobs.sort(key=lambda j: (j.arrival, j.subject, j.kind))
    return [replace(j, id=i + 1) for i, j in enumerate(jobs)]


def lower_bound(trace: list[TraceJob], capacity: int = 120) -> float:
    """Per pool: no schedule ends before max over t of t + (work arriving at or after t) /
    capacity, nor before any job's arrival + runtime."""
    bound = 0.0
    pools: dict[str, list[TraceJob]] = defaultdict(list)
    for job in trace:
        pools[job.subject.rsplit("-", 1)[0]].append(job)
    for jobs in pools.values():
        jobs.sort(key=lambda j: j.arrival)
        remaining = sum(j.units * j.runtime for j in jobs)
        for job in jobs:
            bound = max(bound, job.arrival + remaining / capacity, job.arrival + job.runtime)
            remaining -= job.units * job.runtime
    return bound


@dataclass
class Replay:
    makespan: float = 0.0
    first_wait: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    final_wait: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    preemptions: int = 0
    violations: int = 0
    cycles: int = 0
    decide_s: float = 0.0


def replay(
    trace: list[TraceJob], config: AppliedConfig, count_decision_time: bool = True
) -> Replay:
    """Discrete events on a virtual clock: arrivals, completions; a cycle after every batch of
    events at one instant. Victims exit at once and restart from zero when admitted again.
    With `count_decision_time`, a cycle's measured duration delays what it starts."""
    result = Replay()
    by_id = {j.id: j for j in trace}
    arrivals = sorted(trace, key=lambda j: (j.arrival, j.id))
    requests: dict[tuple[str, str], JobRequest] = {}  # one per class and queue, as the store has

    def request_of(job: TraceJob) -> JobRequest:
        key = (job.subject, job.kind)
        if key not in requests:
            requests[key] = JobRequest(
                subject=job.subject, resources=(("cpu", job.units * SCALE),), priority=job.priority
            )
        return requests[key]

    queued: dict[int, Queued] = {}
    running: dict[int, Holding] = {}
    ends: list[tuple[float, int, int]] = []  # (time, job, generation)
    generation: dict[int, int] = defaultdict(int)
    admitted_once: set[int] = set()
    last_wait: dict[int, float] = {}
    now, index = 0.0, 0
    while index < len(arrivals) or queued or running:
        upcoming = [
            t
            for t in (
                arrivals[index].arrival if index < len(arrivals) else None,
                ends[0][0] if ends else None,
            )
            if t is not None
        ]
        now = max(now, min(upcoming)) if upcoming else now
        while index < len(arrivals) and arrivals[index].arrival <= now:
            job = arrivals[index]
            queued[job.id] = Queued(job.id, request_of(job), job.arrival, job.id)
            index += 1
        while ends and ends[0][0] <= now:
            _, job_id, gen = heapq.heappop(ends)
            if gen == generation[job_id] and job_id in running:
                del running[job_id]
                result.makespan = max(result.makespan, now)
        while True:  # cycles at this instant until nothing changes
            snapshot = Snapshot(
                config, tuple(queued.values()), tuple(running.values()), result.cycles + 1, 30.0
            )
            started = time.perf_counter()
            decisions = schedule(snapshot, now)
            spent = time.perf_counter() - started
            result.decide_s += spent
            result.cycles += 1
            start_at = now + (spent if count_decision_time else 0.0)
            for admit in decisions.admits:
                job = by_id[admit.job]
                waited = start_at - job.arrival
                if job.id not in admitted_once:
                    admitted_once.add(job.id)
                    result.first_wait[job.kind].append(waited)
                last_wait[job.id] = waited
                queued.pop(job.id)
                running[job.id] = Holding(
                    job.id,
                    admit.pool,
                    admit.policy,
                    admit.amounts,
                    admit.priority,
                    True,
                    start_at,
                    job.id,
                )
                generation[job.id] += 1
                heapq.heappush(ends, (start_at + job.runtime, job.id, generation[job.id]))
            for preempt in decisions.preempts:
                for victim in preempt.victims:  # exits at once, back to the queue
                    del running[victim]
                    generation[victim] += 1
                    result.preemptions += 1
                    job = by_id[victim]
                    queued[victim] = Queued(victim, request_of(job), job.arrival, victim)
            for job_id, until in decisions.claims.items():
                queued[job_id] = replace(queued[job_id], claim_until=until)
            result.violations += _violations(config, running)
            if not decisions.preempts:
                break
    for job_id, waited in last_wait.items():
        result.final_wait[by_id[job_id].kind].append(waited)
    return result


def _violations(config: AppliedConfig, running: dict[int, Holding]) -> int:
    """Pools over capacity and policies over their limit (each counted once per cycle)."""
    pool_used: dict[str, int] = defaultdict(int)
    policy_used: dict[str, int] = defaultdict(int)
    for held in running.values():
        units = dict(held.amounts).get("cpu", 0)
        pool_used[held.pool] += units
        policy_used[held.policy] += units
    bad = sum(1 for p, u in pool_used.items() if u > config.pools[p].capacity["cpu"])
    for name, used in policy_used.items():
        limit = (config.policies[name].limit or {}).get("cpu")
        bad += int(limit is not None and used > limit)
    return bad
