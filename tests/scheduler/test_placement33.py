"""A job that names only `use_spot` on a machine pool whose machine types name no instance type
(so no market either) is told what it asked for, not an instance type it never named."""

from __future__ import annotations

import pytest

from reconciler.scheduler.applied import applied_config
from reconciler.scheduler.model import JobRequest
from reconciler.scheduler.reasons import Reason
from reconciler.scheduler.routing import resolve
from state import ResourceRecord, StateSnapshot

LINEAGE = "00000000-0000-4000-8000-000000000000"
UNTYPED = ResourceRecord(
    "machine_pool.m.machine_type.x",
    "machine_type",
    {"launch_templates": [{}], "min_size": 0, "max_size": 2},
)


@pytest.mark.parametrize(("spot", "market"), [(True, "spot"), (False, "on-demand")])
def test_use_spot_alone_on_untyped_machines_names_the_market_asked(spot: bool, market: str) -> None:
    config = applied_config(StateSnapshot.from_records(LINEAGE, 1, [UNTYPED]))

    found = resolve(JobRequest(pool="m", use_spot=spot), config)

    assert isinstance(found, Reason)
    assert found.detail["closest"] == f"pool m: {market} machines asked, it has no machine types"
    assert found.detail["shortfall"] == {"use_spot": 1}
