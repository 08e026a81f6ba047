"""`poolform plan`, `show` and saved plans, driven through the CLI over real directories."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from reconciler.checks import load_configuration
from reconciler.plan.expand import expand
from state import ResourceRecord
from state.sqlite import SqliteStateBackend, default_state_path
from tests.conftest import ROOT

PLAN_SCHEMA = json.loads((ROOT / "reconciler" / "plan" / "plan.schema.json").read_text())


def record_as_applied(directory: Path) -> None:
    """Write state as if the configuration had been applied (what apply records)."""
    from reconciler.workspace import secret_salt

    configuration = load_configuration(directory)
    backend = SqliteStateBackend(default_state_path(directory))
    lineage = backend.read().lineage
    salt = secret_salt(configuration, lineage)
    for resource in expand(configuration, salt, environment={}).values():
        record = ResourceRecord(
            resource.address,
            resource.resource_type,
            resource.attributes,
            {"id": "x"},
            resource.dependencies,
        )
        backend.write_resource(record, expected_lineage=lineage)
    backend.close()


def test_first_plan_creates_everything_and_json_matches_its_schema(run, quickstart: Path) -> None:
    result = run("plan", quickstart, "--json", "--detailed-exitcode")
    assert result.code == 2, result.err
    document = json.loads(result.out)
    jsonschema.validate(document, PLAN_SCHEMA)
    assert document["summary"]["add"] == 8  # with cluster.quickstart, the scheduling defaults
    assert {c["action"] for c in document["changes"]} == {"create"}
    # providers first: a policy comes after the pool it draws from
    position = {a: i for i, level in enumerate(document["order"]) for a in level}
    assert position["resource_pool.team-quota"] < position["subject_policy.ml-prod"]


def test_plans_are_byte_identical_across_runs(run, quickstart: Path) -> None:
    first = run("plan", quickstart, "--json").out
    second = run("plan", quickstart, "--json").out
    assert first == second and first


def test_no_changes_exits_0_with_detailed_exitcode(run, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    result = run("plan", quickstart, "--detailed-exitcode")
    assert result.code == 0, result.out + result.err
    assert "No changes" in result.out


def test_state_files_are_private(run, quickstart: Path) -> None:
    run("apply", quickstart, "--auto-approve")  # plan alone creates no state
    state_dir = quickstart / ".poolform"
    assert (state_dir.stat().st_mode & 0o777) == 0o700
    for path in state_dir.iterdir():
        expected = 0o700 if path.is_dir() else 0o600
        assert (path.stat().st_mode & 0o777) == expected, path


def test_saved_plan_round_trips_through_show(run, quickstart: Path, tmp_path: Path) -> None:
    planfile = tmp_path / "plan.out"
    direct = run("plan", quickstart, "--json").out
    assert run("plan", quickstart, "-out", planfile).code == 0
    assert (planfile.stat().st_mode & 0o777) == 0o600
    shown = run("show", planfile, "--json")
    assert shown.code == 0
    assert json.loads(shown.out) == json.loads(direct)


def test_tampered_plan_is_refused(run, quickstart: Path, tmp_path: Path) -> None:
    planfile = tmp_path / "plan.out"
    run("plan", quickstart, "-out", planfile)
    envelope = json.loads(planfile.read_text())
    envelope["plan"]["changes"][0]["action"] = "delete"
    planfile.write_text(json.dumps(envelope))
    result = run("show", planfile)
    assert result.code == 1
    assert "modified after it was saved" in result.err


def test_stale_plan_is_refused_when_state_moved_on(quickstart: Path, tmp_path: Path) -> None:
    from reconciler.errors import PoolformError
    from reconciler.plan import PlanOptions, make_plan
    from reconciler.plan.inputs import RefreshedSnapshot
    from reconciler.plan.planfile import check_saved_plan
    from state import StateSnapshot

    def plan_of(snapshot: StateSnapshot):
        return make_plan(
            configuration,
            RefreshedSnapshot.unrefreshed(snapshot),
            PlanOptions(),
            salt=snapshot.lineage,
            environment={},
        )

    configuration = load_configuration(quickstart)
    backend = SqliteStateBackend(default_state_path(quickstart))
    before = backend.read()
    saved = plan_of(before)
    record_as_applied(quickstart)
    after = backend.read()
    with pytest.raises(PoolformError, match="state changed since this plan was made"):
        check_saved_plan(
            saved,
            configuration.digest,
            after.lineage,
            after.serial,
            plan_of(after),
        )
    backend.close()


def test_bad_configuration_changes_no_state(run, quickstart: Path) -> None:
    (quickstart / "broken.yaml").write_text("kind: ResourcePool\nname: x\ncapacity: {gpu: many}\n")
    result = run("plan", quickstart)
    assert result.code == 1
    assert not (quickstart / ".poolform").exists()


def test_target_plans_only_the_target_and_what_it_needs(run, quickstart: Path) -> None:
    result = run("plan", quickstart, "--json", "--target", "subject_policy.ml-prod")
    addresses = [c["address"] for c in json.loads(result.out)["changes"]]
    assert addresses == ["resource_pool.team-quota", "subject_policy.ml-prod"]


def test_unknown_target_is_an_error(run, quickstart: Path) -> None:
    result = run("plan", quickstart, "--target", "resource_pool.nope")
    assert result.code == 1
    assert "matches no resource" in result.err


def test_lock_holder_is_named_when_the_state_is_locked(run, quickstart: Path) -> None:
    run("plan", quickstart)
    backend = SqliteStateBackend(default_state_path(quickstart))
    held = backend.lock("apply", who="alice@ci")
    result = run("plan", quickstart)
    backend.unlock(held.lock_id)
    backend.close()
    assert result.code == 1
    assert "alice@ci" in result.err and held.lock_id in result.err
