"""Plans show quantities and durations as the configuration wrote them and compare the values
they mean (issue 12, item 6): `memory = 256Gi -> 512Gi`, and `256Gi` -> `274877906944` is no
change at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.plan import Plan, PlanOptions, make_plan
from reconciler.plan.inputs import RefreshedSnapshot
from reconciler.render import render_markdown, render_text
from reconciler.render.common import in_unit_of
from state import StateSnapshot
from tests.unit.test_planner import LINEAGE, load, records_of

POOL = """kind: ResourcePool
name: quota
capacity: {{gpu: 8, memory: {memory}, cpu: {cpu}}}
---
kind: MachinePool
name: m
machine_types:
  - machine_type: cpu
    launch_templates: [{{instance_type: m5.large}}]
    partitions: [{{name: any, size: 1}}]
    recycle_policy: {{idle_timeout: {idle}}}
"""


def plan_between(tmp_path: Path, applied: dict[str, str], declared: dict[str, str]) -> Plan:
    before = records_of(load(tmp_path / "applied", {"pool.yaml": POOL.format(**applied)}))
    configuration = load(tmp_path / "declared", {"pool.yaml": POOL.format(**declared)})
    snapshot = RefreshedSnapshot.unrefreshed(StateSnapshot.from_records(LINEAGE, 1, before))
    return make_plan(configuration, snapshot, PlanOptions(), salt=LINEAGE, environment={})


WRITTEN = {"memory": "256Gi", "cpu": "4000m", "idle": "10m"}


def test_a_change_is_shown_in_the_unit_it_was_written_in(tmp_path: Path) -> None:
    plan = plan_between(tmp_path, WRITTEN, {"memory": "512Gi", "cpu": "6000m", "idle": "15m"})
    text = render_text(plan)
    assert "~ memory = 256Gi -> 512Gi" in text
    assert "~ cpu    = 4000m -> 6000m" in text
    assert "~ idle_timeout = 10m -> 15m" in text
    assert "274877906944" not in text and "549755813888" not in text
    markdown = render_markdown(plan)
    assert "- capacity.memory = 256Gi\n+ capacity.memory = 512Gi" in markdown
    # The plan's JSON keeps the numbers: machines read it.
    (pool,) = [c for c in plan.to_json()["changes"] if c["address"] == "resource_pool.quota"]
    memory = next(a for a in pool["attributes"] if a["path"] == "capacity.memory")
    assert (memory["old"], memory["new"]) == (274877906944, 549755813888)
    assert pool["written"]["capacity.memory"] == "512Gi"


def test_the_same_value_spelled_another_way_is_no_change(tmp_path: Path) -> None:
    spelled = {"memory": "274877906944", "cpu": "4", "idle": "600s"}
    assert not plan_between(tmp_path, WRITTEN, spelled).has_changes


def test_a_new_resource_shows_what_was_written(tmp_path: Path) -> None:
    configuration = load(tmp_path, {"pool.yaml": POOL.format(**WRITTEN)})
    snapshot = RefreshedSnapshot.unrefreshed(StateSnapshot.from_records(LINEAGE, 1, []))
    plan = make_plan(configuration, snapshot, PlanOptions(), salt=LINEAGE, environment={})
    text = render_text(plan)
    assert "+ capacity.memory = 256Gi" in text and "+ capacity.cpu    = 4000m" in text
    assert "+ recycle_policy.idle_timeout" in text and "= 10m" in text


@pytest.mark.parametrize(
    ("old", "new", "written", "shown"),
    [
        (274877906944, 549755813888, "512Gi", "256Gi"),
        (600, 900, "15m", "10m"),
        (4, 6, "6000m", "4000m"),
        (1.5 * 2**30, 2**31, "2Gi", "1.5Gi"),
        (1000, 2**30, "1Gi", "1000"),  # not a short number of Gi: as recorded
        (8, 16, None, "8"),
        (8, 16, "16", "8"),  # no unit written
        (8, 0, "0Gi", "8"),
        ("x", 16, "16Gi", '"x"'),
    ],
)
def test_an_old_value_in_the_new_value_s_unit(old: object, new: object, written, shown) -> None:
    assert in_unit_of(old, new, written) == shown
