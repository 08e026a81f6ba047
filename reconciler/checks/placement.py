"""Placement: a job's SkyPilot `instance_type` and `use_spot` that its pool's machines are.

The scheduler refuses such a job at submit (reconciler/scheduler/routing.py `placement`); a
Job file in the configuration gets the same refusal from validate, at its field.
"""

from __future__ import annotations

from collections.abc import Iterator

from providers.catalog import choose_instance_type
from providers.protocol import ProviderError
from reconciler.checks.common import error
from reconciler.loading.configuration import Configuration, Finding
from schemas import Job, MachinePool, ResourcePool, WorkerPool
from schemas.base import Document
from schemas.text import case_twin


def _market(spot: bool) -> str:
    return "spot" if spot else "on-demand"


def _offers(pool: Document) -> tuple[str, list[tuple[str | None, bool]]] | None:
    """What the pool's machines are called in a message, and their (instance type, spot);
    None for a pool kind this check does not know."""
    if isinstance(pool, WorkerPool):
        resources = pool.resources.model_dump(mode="json", by_alias=True)
        named = pool.resources.instance_type
        if not named:
            try:  # what apply launches: the smallest catalog type that fits
                named = choose_instance_type(resources, f"worker_pool.{pool.name}").name
            except ProviderError:
                named = None
        return "workers", [(named, bool(pool.resources.use_spot))]
    if isinstance(pool, MachinePool):
        return "machines", [
            (t.instance_type, t.market_type == "SPOT")
            for m in pool.machine_types
            for t in m.launch_templates
        ]
    if isinstance(pool, ResourcePool):
        return "machines", []
    return None


def _shortfall(job: Job, pool: Document) -> tuple[str, str] | None:
    """(the field, what the pool lacks), or None when its machines are what the job names."""
    wanted, spot = job.resources.instance_type, job.resources.use_spot
    found = _offers(pool)
    if found is None or (wanted is None and spot is None):
        return None
    what, offers = found
    owner = f"pool `{pool.name}`"
    if wanted is not None and not any(name == wanted for name, _ in offers):
        names = sorted({name for name, _ in offers if name})
        has = f"the {what} of {owner} are {', '.join(names)}"
        if isinstance(pool, ResourcePool):
            has = f"{owner} has no instance types (it counts quota)"
        elif not names:
            has = f"the type of the {what} of {owner} is not known"
        return "instance_type", f"instance type {wanted}, but {has}"
    if spot is None or (isinstance(pool, ResourcePool) and not spot):  # no spot: none to avoid
        return None
    markets = {s for name, s in offers if wanted is None or name == wanted}
    if spot in markets:
        return None
    has = f"the {what} of {owner} are {_market(not spot)}" if markets else f"{owner} has no {what}"
    return "use_spot", f"{_market(spot)} {what}, but {has}"


def job_placement(config: Configuration, job: Job, pool: Document) -> Iterator[Finding]:
    found = _shortfall(job, pool)
    if found is not None:
        field, lacks = found
        yield error(
            config,
            job,
            "unsatisfiable-request",
            f"the job asks for {lacks}; `jobs submit` would refuse it",
            "resources",
            field,
            hint=_hint(job, pool),
        )


def _hint(job: Job, pool: Document) -> str:
    wanted, offers = job.resources.instance_type, _offers(pool)
    twin = (
        None if wanted is None or offers is None else case_twin(wanted, (n for n, _ in offers[1]))
    )
    if twin is not None:
        return f"instance type names are case-sensitive: write `{twin}`"
    return "name the pool whose machines these are, or drop the field (any machine)"
