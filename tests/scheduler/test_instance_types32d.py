"""A job's SkyPilot `instance_type` and `use_spot` are matched with the pool's machines, as
its accelerators are: a pool whose workers or machine types are not what the job names is no
route, with the reason said; a job that names neither routes as before."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.scheduler.amounts import SCALE, WORKER
from reconciler.scheduler.applied import applied_config
from reconciler.scheduler.model import AppliedConfig, JobRequest, Route
from reconciler.scheduler.reasons import Reason, ReasonCode
from reconciler.scheduler.routing import resolve
from reconciler.scheduler.sqlite_rows import request_json, request_of
from reconciler.scheduler.store import NewJob
from state import ResourceRecord, StateSnapshot
from tests.scheduler.conftest import Opener

LINEAGE = "00000000-0000-4000-8000-000000000000"


def _worker_pool(name: str, resources: dict[str, Any]) -> ResourceRecord:
    attributes = {
        "pool": {"workers": 2, "min_workers": None, "max_workers": None},
        "provider": "aws",  # no local inventory: workers by name
        "resources": resources,
    }
    return ResourceRecord(f"worker_pool.{name}", "worker_pool", attributes)


def _machine_type(pool: str, machine: str, instance_type: str, market: str) -> ResourceRecord:
    attributes = {
        "launch_templates": [{"instance_type": instance_type, "market_type": market}],
        "min_size": 0,
        "max_size": 2,
    }
    address = f"machine_pool.{pool}.machine_type.{machine}"
    return ResourceRecord(address, "machine_type", attributes)


def _config(*records: ResourceRecord) -> AppliedConfig:
    return applied_config(StateSnapshot.from_records(LINEAGE, 1, list(records)))


CONFIG = _config(
    _worker_pool("cpu-workers", {"instance_type": "c5.xlarge"}),
    _worker_pool("spot-workers", {"cpus": 4, "use_spot": True}),  # the smallest fit: c5.xlarge
    _worker_pool("gpu-workers", {"accelerators": "A10G:1"}),  # the smallest fit: g5.xlarge
    _machine_type("machines", "small", "c5.xlarge", "ON_DEMAND"),
    _machine_type("machines", "big", "p4d.24xlarge", "SPOT"),
    ResourceRecord(
        "resource_pool.quota",
        "resource_pool",
        {"capacity": {"gpu": 8, "cpu": 64}, "description": None, "parent": None},
    ),
)


def _asked(pool: str, instance_type: str | None, use_spot: bool | None) -> JobRequest:
    return JobRequest(pool, instance_type=instance_type, use_spot=use_spot)


# (pool, instance_type, use_spot, the shortfall said, or None: routed)
CASES = [
    ("cpu-workers", None, None, None),
    ("cpu-workers", "c5.xlarge", None, None),
    ("cpu-workers", "c5.xlarge", False, None),
    ("cpu-workers", "nonexistent.huge", None,
     "instance type nonexistent.huge asked, its workers are c5.xlarge"),
    ("cpu-workers", "p4d.24xlarge", None,
     "instance type p4d.24xlarge asked, its workers are c5.xlarge"),
    ("cpu-workers", None, True, "spot workers asked, the pool's are on-demand"),
    ("spot-workers", "c5.xlarge", True, None),
    ("spot-workers", None, False, "on-demand workers asked, the pool's are spot"),
    ("gpu-workers", "g5.xlarge", False, None),
    ("gpu-workers", "c5.xlarge", None,
     "instance type c5.xlarge asked, its workers are g5.xlarge"),
    ("machines", "c5.xlarge", None, None),
    ("machines", "p4d.24xlarge", True, None),
    ("machines", None, True, None),
    ("machines", None, False, None),
    ("machines", "g5.xlarge", None,
     "instance type g5.xlarge asked, its machines are c5.xlarge, p4d.24xlarge"),
    ("machines", "c5.xlarge", True,
     "spot c5.xlarge machines asked, the pool's c5.xlarge are on-demand"),
    ("machines", "p4d.24xlarge", False,
     "on-demand p4d.24xlarge machines asked, the pool's p4d.24xlarge are spot"),
    ("quota", None, None, None),
    ("quota", None, False, None),
    ("quota", "c5.xlarge", None,
     "instance type c5.xlarge asked, the pool has no instance types (it counts quota)"),
    ("quota", None, True, "spot machines asked, the pool has no machines"),
]  # fmt: skip


@pytest.mark.parametrize(("pool", "instance_type", "use_spot", "said"), CASES)
def test_a_route_is_kept_only_where_the_pool_has_the_instance_type_and_market_asked(
    pool: str, instance_type: str | None, use_spot: bool | None, said: str | None
) -> None:
    found = resolve(_asked(pool, instance_type, use_spot), CONFIG)
    if said is None:
        assert isinstance(found, tuple) and [r.pool for r in found] == [pool]
        return
    assert isinstance(found, Reason) and found.code is ReasonCode.INFEASIBLE
    assert f"closest: pool {pool}: {said}" in found.message
    assert found.detail["pool"] == pool


def test_a_pool_that_fits_is_named_as_where_the_job_could_run() -> None:
    found = resolve(_asked("cpu-workers", "g5.xlarge", None), CONFIG)
    assert isinstance(found, Reason)
    assert found.detail["alternatives"] == ["gpu-workers"]
    assert "(could run on: gpu-workers)" in found.message


def test_a_placement_shortfall_is_said_with_the_others_of_the_route() -> None:
    asked = JobRequest("cpu-workers", resources=(("gpu", SCALE),), instance_type="x1.big")
    found = resolve(asked, CONFIG)
    assert isinstance(found, Reason)
    assert "instance type x1.big asked, its workers are c5.xlarge; gpu 1 needed" in found.message


def test_naming_the_pools_own_type_and_market_routes_as_naming_neither() -> None:
    plain = resolve(JobRequest("cpu-workers"), CONFIG)
    named = resolve(_asked("cpu-workers", "c5.xlarge", False), CONFIG)
    assert plain == named == (Route("cpu-workers", "cpu-workers/*", ((WORKER, SCALE),), 0),)


def test_a_worker_pool_of_a_type_the_catalog_does_not_know_still_has_that_type() -> None:
    config = _config(_worker_pool("odd", {"instance_type": "z9.mega", "use_spot": True}))
    assert isinstance(resolve(_asked("odd", "z9.mega", True), config), tuple)
    found = resolve(_asked("odd", "c5.xlarge", None), config)
    assert isinstance(found, Reason) and "its workers are z9.mega" in found.message


def test_requests_differing_only_in_placement_are_different_requests() -> None:
    """The configuration keeps each request's routes by the request: a job asking for spot
    must not be given the routes worked out for one asking for on-demand."""
    spot, on_demand = _asked("cpu-workers", None, True), _asked("cpu-workers", None, False)
    assert spot != on_demand and _asked("p", "a", None) != _asked("p", "b", None)
    assert isinstance(resolve(on_demand, CONFIG), tuple)
    assert isinstance(resolve(spot, CONFIG), Reason)


@pytest.mark.parametrize(
    ("instance_type", "use_spot"), [(None, None), ("p4d.24xlarge", True), ("c5.xlarge", False)]
)
def test_the_stored_request_reads_back_with_its_instance_type_and_market(
    instance_type: str | None, use_spot: bool | None
) -> None:
    asked = JobRequest("p", "team", (("gpu", SCALE),), ("H100",), 3, False, instance_type, use_spot)
    assert request_of(request_json(asked)) == asked


def test_a_row_stored_before_the_fields_existed_reads_as_naming_neither() -> None:
    old = '{"accelerators": [], "pool": "p", "preemptible": true, "priority": null, ' \
        '"resources": {"gpu": 1000}, "subject": null}'  # fmt: skip
    read = request_of(old)
    assert (read.instance_type, read.use_spot) == (None, None)
    assert request_json(read) == old  # a job naming neither is stored as before


def test_both_stores_keep_a_jobs_instance_type_and_market(opener: Opener) -> None:
    """SQLite and PostgreSQL: what a job named comes back from a fresh connection, in the
    record and in the jobs a cycle reads."""
    asked = [
        JobRequest("w", instance_type="c5.xlarge", use_spot=False),
        JobRequest("w", use_spot=True),
        JobRequest("w"),
    ]
    new = [NewJob(f"j{i}", 0, 1, r, "true", {}, 0, pool="w") for i, r in enumerate(asked)]
    made = opener().submit(new, 1_000.0)
    reader = opener()
    assert [reader.get(job.id).request for job in made] == asked  # type: ignore[union-attr]
    assert [job.request for job in reader.jobs()] == asked
