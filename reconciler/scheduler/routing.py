"""Routing: which (pool, policy) pairs could ever run a job, and what it demands on each.

A job names a pool, a subject, or neither (then Determined's rule: the Cluster's default
compute pool if it asks for GPUs, else its default auxiliary pool). A route is kept only if the
job could run there alone on an empty pool; a job with no such route is rejected, with the
closest route and what each key lacks, instead of waiting forever.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.scheduler.amounts import (
    SCALE,
    STEP_RUN,
    UNBOUNDED_WHEN_UNDECLARED,
    WORKER,
    Amounts,
    show,
)
from reconciler.scheduler.model import AppliedConfig, JobRequest, Policy, Pool, Route
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from schemas.text import case_note, did_you_mean


@dataclass(frozen=True)
class Shortfall:
    key: str
    need: int
    most: int
    why: str  # capacity, missing, limit, reserved, accelerator, worker, workers, placement
    models: tuple[str, ...] = ()  # accelerator: the GPU models the pool has
    said: str = ""  # placement: the whole text (an instance type or market, not an amount)

    def text(self) -> str:
        if self.said:
            return self.said
        most = show(self.key, self.most).split(" ", 1)[1]
        words = {
            "capacity": f"the pool holds {most}",
            "shared": f"the pool and those it shares capacity with hold {most}",
            "missing": "the pool has none",
            "limit": f"the policy's limit is {most}",
            "reserved": f"reserved is {most}, all non-preemptible work may use",
            "accelerator": f"its GPUs are {', '.join(self.models) or 'of another model'}",
            "worker": f"one worker has {most}",
            "workers": "the pool has no workers",
        }
        return f"{show(self.key, self.need)} needed, {words.get(self.why, self.why)}"


@dataclass(frozen=True)
class Candidate:
    pool: Pool
    policy: Policy
    shared: Mapping[str, int] | None = None  # the capacity of its tree, when it shares one


def make_candidate(config: AppliedConfig, pool: Pool, policy: Policy) -> Candidate:
    cache = config.routing_cache  # one per (pool, policy) of the configuration
    key = (pool.name, policy.name)
    found = cache.get(key)
    if isinstance(found, Candidate) and found.pool is pool and found.policy is policy:
        return found
    shared = config.tree_capacity(pool.name) if len(config.tree_of(pool.name)) > 1 else None
    made = cache[key] = Candidate(pool, policy, shared)
    return made


def _suggest(word: str, choices: list[str]) -> str:
    hint = did_you_mean(word, choices)
    return f" ({hint})" if hint else ""


def _policy_for(pool: Pool, config: AppliedConfig, subject: str | None) -> Policy | Reason:
    policies = [config.policies[name] for name in pool.policies]
    if subject is not None:
        found = [p for p in policies if p.subject == subject]
        if found:
            return found[0]
        subjects = [p.subject for p in policies if p.subject]
        where = f" on pool {pool.name}" if subjects else f" on pool {pool.name} (it has none)"
        return reason(
            ReasonCode.UNKNOWN_SUBJECT,
            subject=subject,
            where=where,
            suggestion=_suggest(subject, [s for s in subjects if s]),
        )
    if len(policies) == 1:
        return policies[0]
    return reason(
        ReasonCode.AMBIGUOUS_POLICY,
        pool=pool.name,
        policies=sorted(p.name for p in policies),
    )


def candidates(request: JobRequest, config: AppliedConfig) -> list[Candidate] | Reason:
    """The routes a job asks for, before checking that any could ever hold it."""
    pool_name = request.pool
    if pool_name is None and request.subject is not None:
        known = config.routing_cache.get(("subject", request.subject, ""))
        if isinstance(known, list):  # the subject's candidates, worked out once
            return list(known)
        policies = config.policies_of_subject(request.subject)
        if not policies:
            subjects = {p.subject for p in config.policies.values() if p.subject}
            return reason(
                ReasonCode.UNKNOWN_SUBJECT,
                subject=request.subject,
                where="",
                suggestion=_suggest(request.subject, sorted(subjects)),
            )
        found = [
            make_candidate(config, config.pools[p.pool], p)
            for p in policies
            if p.pool in config.pools
        ]
        config.routing_cache[("subject", request.subject, "")] = found
        return list(found)
    if pool_name is None:
        wants_gpu = request.gpus() > 0
        pool_name = config.default_compute_pool if wants_gpu else config.default_aux_pool
        if pool_name is None and len(config.pools) == 1:
            pool_name = next(iter(config.pools))
        if pool_name is None:
            which = "default_compute_pool" if wants_gpu else "default_aux_pool"
            return reason(ReasonCode.NO_DEFAULT_POOL, which=which)
    pool = config.pools.get(pool_name)
    if pool is None:
        return reason(
            ReasonCode.UNKNOWN_POOL,
            pool=pool_name,
            suggestion=_suggest(pool_name, list(config.pools)),
        )
    policy = _policy_for(pool, config, request.subject)
    if isinstance(policy, Reason):
        return policy
    return [make_candidate(config, pool, policy)]


def _check(
    key: str, need: int, policy: Policy, np: bool, capacity: int, shared: bool
) -> Shortfall | None:
    if need > capacity:
        why = "missing" if not capacity else ("shared" if shared else "capacity")
        return Shortfall(key, need, capacity, why)
    limit = None if policy.limit is None else policy.limit.get(key)
    if limit is not None and need > limit:
        return Shortfall(key, need, limit, "limit")
    reserved = policy.reserved.get(key, 0)
    if np and need > reserved:
        return Shortfall(key, need, reserved, "reserved")
    return None


def _worker_demand(request: JobRequest, pool: Pool) -> tuple[Amounts, list[Shortfall]]:
    shape = pool.worker_shape
    missing: list[Shortfall] = []
    workers = max(pool.declared_workers, len(pool.workers))
    if workers == 0:
        missing.append(Shortfall(WORKER, SCALE, 0, "workers"))
    for key, need in request.resources:
        offered: int | None
        if key == "gpu":
            offered = shape.gpus if shape else 0
            if (
                shape is not None
                and need <= offered
                and not _models_match(request, shape.gpu_types)
            ):
                missing.append(Shortfall(key, need, 0, "accelerator", shape.gpu_types))
                continue
        elif key in ("cpu", "memory"):
            offered = getattr(shape, key) if shape else None
        else:
            offered = 0
        if offered is not None and need > offered:
            missing.append(Shortfall(key, need, offered, "worker" if offered else "missing"))
    return ((WORKER, SCALE),), missing


def _models_match(request: JobRequest, models: tuple[str, ...]) -> bool:
    if not request.accelerators or not models:
        return True
    return any(m in request.accelerators for m in models)


def demand_on(candidate: Candidate, request: JobRequest) -> tuple[Amounts, list[Shortfall]]:
    """What the job takes on this route, and every key it could never get there."""
    if request.instance_type is None and request.use_spot is None:
        return _demand(candidate, request)
    demand, missing = _demand(candidate, request)
    placed = placement(request, candidate.pool)
    return demand, missing if placed is None else [placed, *missing]


def _demand(candidate: Candidate, request: JobRequest) -> tuple[Amounts, list[Shortfall]]:
    pool, policy = candidate.pool, candidate.policy
    np = not request.preemptible
    if pool.kind == "worker":
        return _worker_demand(request, pool)
    demand: dict[str, int] = {}
    missing: list[Shortfall] = []
    wanted = dict(request.resources)
    capacities, shared = pool.capacity, candidate.shared
    if STEP_RUN in capacities:
        wanted[STEP_RUN] = SCALE
    limits, reserved = policy.limit, policy.reserved
    for key, need in sorted(wanted.items()):
        if key not in capacities:
            if not (pool.kind == "resource" and key in UNBOUNDED_WHEN_UNDECLARED):
                missing.append(Shortfall(key, need, 0, "missing"))
            continue
        if key == "gpu" and pool.kind == "machine" and not _models_match(request, pool.gpu_types):
            missing.append(Shortfall(key, need, 0, "accelerator", pool.gpu_types))
            continue
        demand[key] = need  # in key order: `demand` stays sorted
        capacity = capacities[key] if shared is None else shared[key]
        limit = None if limits is None else limits.get(key)
        if (
            need <= capacity
            and (limit is None or need <= limit)
            and (not np or need <= reserved.get(key, 0))
        ):
            continue  # what `_check` would find: nothing short
        short = _check(key, need, policy, np, capacity, shared is not None)
        if short is not None:
            missing.append(short)
    return tuple(demand.items()), missing


def _market(spot: bool) -> str:
    return "spot" if spot else "on-demand"


def _placed(text: str, key: str) -> Shortfall:
    return Shortfall(key, 1, 0, "placement", said=text)


def placement(request: JobRequest, pool: Pool) -> Shortfall | None:
    """Whether the pool's machines are the instance type and market (SkyPilot's instance_type
    and use_spot) the job names, as SkyPilot refuses a pool whose workers do not satisfy a
    job's resources. None: they are, or the job names neither."""
    wanted, spot = request.instance_type, request.use_spot
    asked = f"instance type {wanted} asked"
    if pool.kind == "worker":
        shape = pool.worker_shape
        has = None if shape is None else shape.instance_type
        if wanted is not None and wanted != has:
            what = f"its workers are {has}" if has else "its workers' type is not known"
            return _placed(f"{asked}, {what}{case_note(wanted, [has])}", "instance_type")
        pool_spot = shape is not None and shape.spot
        if spot is not None and spot != pool_spot:
            said = f"{_market(spot)} workers asked, the pool's are {_market(pool_spot)}"
            return _placed(said, "use_spot")
        return None
    if pool.kind == "resource":
        if wanted is not None:
            return _placed(
                f"{asked}, the pool has no instance types (it counts quota)", "instance_type"
            )
        if spot:
            return _placed("spot machines asked, the pool has no machines", "use_spot")
        return None
    machines = pool.machines
    types = [name for name, _ in machines if wanted is None or name == wanted]
    if not types:
        names = sorted({name for name, _ in machines})
        what = f"its machines are {', '.join(names)}" if names else "it has no machine types"
        if wanted is None:  # (named use_spot only: only a machine with a type has a market)
            return _placed(f"{_market(bool(spot))} machines asked, {what}", "use_spot")
        return _placed(f"{asked}, {what}{case_note(wanted, names)}", "instance_type")
    if spot is None or any(s == spot for name, s in machines if name in types):
        return None
    of = "" if wanted is None else f" {wanted}"
    said = f"{_market(spot)}{of} machines asked, the pool's{of} are {_market(not spot)}"
    return _placed(said, "use_spot")


def _describe(candidate: Candidate, missing: list[Shortfall]) -> str:
    via = "" if candidate.policy.implicit else f" via policy {candidate.policy.name}"
    return f"pool {candidate.pool.name}{via}: " + "; ".join(s.text() for s in missing)


def _closeness(missing: list[Shortfall]) -> tuple[int, float]:
    return len(missing), sum((s.need - s.most) / max(s.need, 1) for s in missing)


def _alternatives(request: JobRequest, config: AppliedConfig, tried: set[str]) -> list[str]:
    """Pools this job could run on if it named them (for the hint of a rejection)."""
    found = []
    named = None if request.subject is None else config.pools_of_subject.get(request.subject)
    for pool in config.pools.values():
        if pool.name in tried:
            continue
        if request.subject is not None and (named is None or pool.name not in named):
            continue  # none of its policies is the subject's
        policies = [config.policies[name] for name in pool.policies]
        if request.subject is not None:
            policies = [p for p in policies if p.subject == request.subject]
        if len(policies) != 1:
            continue
        policy = policies[0]
        _, missing = demand_on(make_candidate(config, pool, policy), request)
        if not missing:
            found.append(pool.name)
    return sorted(found)[:3]


def resolve(
    request: JobRequest, config: AppliedConfig, when: str = ""
) -> tuple[Route, ...] | Reason:
    """Every route that could ever run the job, or the reason none can (`when` says since
    when, e.g. after an apply)."""
    found = candidates(request, config)
    if isinstance(found, Reason):
        return Reason(found.code, {**found.detail, "when": when}) if when else found
    routes: list[Route] = []
    failures: list[tuple[Candidate, list[Shortfall]]] = []
    for candidate in found:
        demand, missing = demand_on(candidate, request)
        if missing:
            failures.append((candidate, missing))
            continue
        priority = candidate.policy.priority if request.priority is None else request.priority
        routes.append(Route(candidate.pool.name, candidate.policy.name, demand, priority))
    if routes:
        return tuple(routes)
    if not failures:  # a subject whose policies name pools that are gone
        return reason(ReasonCode.UNKNOWN_POOL, pool=request.subject or "", suggestion="", when=when)
    closest, missing = min(failures, key=lambda f: _closeness(f[1]))
    others = _alternatives(request, config, {c.pool.name for c, _ in failures})
    hint = f" (could run on: {', '.join(others)})" if others else ""
    return reason(
        ReasonCode.INFEASIBLE,
        when=when,
        closest=_describe(closest, missing) + hint,
        pool=closest.pool.name,
        policy=None if closest.policy.implicit else closest.policy.name,
        shortfall={s.key: s.need - s.most for s in missing},
        alternatives=others,
    )
