"""What a plan may delete on its own: only what an interrupted apply provably made (its token
matches a recorded intent) and parts a recorded resource no longer uses. Anything else tagged
with the state is reported with the import that takes it back."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from providers.protocol import TAG_ADDRESS, TAG_LINEAGE, TAG_TOKEN, Observed
from reconciler.checks import load_configuration
from reconciler.plan import PlanOptions, make_plan
from reconciler.plan.expand import expand
from reconciler.plan.inputs import RefreshedSnapshot
from reconciler.plan.model import Action, Plan
from reconciler.plan.refresh import match_observed
from state import CreateIntent, ResourceRecord, StateSnapshot

LINEAGE = "lineage-1"
SALT = "salt"
ADDRESS = "machine_pool.p.machine_type.cpu"
POOL = """kind: MachinePool
name: p
machine_types:
  - machine_type: cpu
    launch_templates: [{instance_type: m5.large}]
    partitions: [{name: any, size: 2}]
"""


@pytest.fixture
def desired(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "pool.yaml").write_text(POOL)
    attributes: dict[str, Any] = expand(load_configuration(tmp_path), SALT, environment={})[
        ADDRESS
    ].attributes
    return attributes


def group(ids: dict[str, str], token: str, running: int = 1) -> Observed:
    tags = {TAG_LINEAGE: LINEAGE, TAG_ADDRESS: ADDRESS, TAG_TOKEN: token}
    attributes = {"running": running, "desired": running, "min_size": 0, "max_size": 2}
    return Observed(ADDRESS, "machine_type", ids, attributes, tags)


OLD = {"group": "ig-old", "template": "lt-old"}
COPY = {"group": "ig-copy", "template": "lt-copy"}


def plan_of(
    tmp_path: Path,
    record: dict[str, Any] | None,
    observed: list[Observed],
    intent: str | None,
    options: PlanOptions | None = None,
) -> Plan:
    records = [ResourceRecord(ADDRESS, "machine_type", record, dict(OLD))] if record else []
    intents = {ADDRESS: CreateIntent(ADDRESS, intent, "now")} if intent else {}
    snapshot = StateSnapshot.from_records(LINEAGE, 3, records, intents)
    refreshed = RefreshedSnapshot(snapshot, match_observed(snapshot, observed))
    return make_plan(
        load_configuration(tmp_path),
        refreshed,
        options or PlanOptions(),
        salt=SALT,
        environment={},
    )


def actions(plan: Plan) -> dict[str, Action]:
    return {str(c.key): c.action for c in plan.changes}


def with_instance_type(attributes: dict[str, Any], instance_type: str) -> dict[str, Any]:
    changed = copy.deepcopy(attributes)
    changed["launch_templates"][0]["instance_type"] = instance_type
    return changed


def test_an_interrupted_create_is_adopted_not_deleted(tmp_path: Path, desired: Any) -> None:
    plan = plan_of(tmp_path, None, [group(COPY, "t-1")], intent="t-1")
    assert actions(plan) == {ADDRESS: Action.CREATE}
    assert "adopted" in plan.changes[0].reason
    assert plan.warnings == ()


def test_a_half_made_replacement_is_adopted_by_the_resumed_replace(
    tmp_path: Path, desired: Any
) -> None:
    recorded = with_instance_type(desired, "c5.xlarge")
    observed = [group(OLD, "t-0"), group(COPY, "t-1")]
    plan = plan_of(tmp_path, recorded, observed, intent="t-1")
    assert actions(plan) == {ADDRESS: Action.REPLACE}
    assert plan.warnings == ()


@pytest.mark.parametrize("change", ["reverted", "resized", "removed", "destroyed"])
def test_a_half_made_copy_nothing_adopts_is_deleted_before_its_address_changes(
    tmp_path: Path, desired: Any, change: str
) -> None:
    recorded = copy.deepcopy(desired)
    if change == "resized":
        recorded["partitions"][0]["size"] = 3
        recorded["max_size"] = 3
    if change == "removed":
        (tmp_path / "pool.yaml").write_text("kind: ResourcePool\nname: r\ncapacity: {gpu: 1}\n")
    options = PlanOptions(destroy=True) if change == "destroyed" else None
    observed = [group(OLD, "t-0"), group(COPY, "t-1")]
    plan = plan_of(tmp_path, recorded, observed, intent="t-1", options=options)
    cleanup = f"{ADDRESS}#ig-copy/lt-copy"
    assert actions(plan)[cleanup] is Action.DELETE
    assert "interrupted apply" in next(c.reason for c in plan.changes if str(c.key) == cleanup)
    if ADDRESS in actions(plan):  # the change that clears the intent waits for the delete
        assert (cleanup, ADDRESS) in {(str(a), str(b)) for a, b in plan.edges}
        assert [str(c.key) for c in plan.changes].index(cleanup) == 0


def test_a_copy_whose_intent_is_gone_is_reported_never_deleted(
    tmp_path: Path, desired: Any
) -> None:
    # The create finished and was recorded (which clears the intent), then `state rm` or a
    # pushed state dropped the record: nothing proves an interrupted apply made it.
    plan = plan_of(tmp_path, None, [group(COPY, "t-1")], intent=None)
    assert actions(plan) == {ADDRESS: Action.CREATE}  # declared: created again, not deleted
    [warning] = plan.warnings
    assert "poolform import machine_pool.p.machine_type.cpu ig-copy" in warning

    other_token = plan_of(tmp_path, desired, [group(OLD, "t-0"), group(COPY, "t-9")], "t-1")
    assert actions(other_token) == {}
    assert len(other_token.warnings) == 1


def test_a_targeted_plan_leaves_other_addresses_copies_alone(tmp_path: Path, desired: Any) -> None:
    (tmp_path / "other.yaml").write_text(POOL.replace("name: p", "name: q"))
    options = PlanOptions(targets=("machine_pool.q.machine_type.cpu",))
    observed = [group(OLD, "t-0"), group(COPY, "t-1"), group({"group": "ig-x"}, "t-x")]
    plan = plan_of(tmp_path, desired, observed, intent="t-1", options=options)
    assert actions(plan) == {"machine_pool.q.machine_type.cpu": Action.CREATE}
    assert plan.warnings == ()


def test_a_template_left_of_a_recorded_group_is_still_cleaned(tmp_path: Path, desired: Any) -> None:
    loose = Observed(ADDRESS, "machine_type", {"template": "lt-old"}, {}, {TAG_LINEAGE: LINEAGE})
    plan = plan_of(tmp_path, desired, [loose], intent=None)
    assert actions(plan) == {ADDRESS: Action.CREATE, f"{ADDRESS}#lt-old": Action.DELETE}
