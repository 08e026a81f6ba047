"""Every use case driven as a library, without click: explicit inputs in, frozen results out,
questions through `confirm`, progress through `on_event`, nothing printed, nothing exited."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from providers.local.admin import change_template
from reconciler.errors import Cancelled, PoolformError
from reconciler.plan import Action, PlanOptions
from reconciler.usecases import (
    accept_drift,
    apply_plan,
    destroy,
    detect_drift,
    import_resource,
    plan_configuration,
    read_saved_plan,
    save_plan,
)
from state.sqlite import SqliteStateBackend, default_state_path
from tests.fakes import FakeClock

CPU = "machine_pool.pool.machine_type.cpu"
CONFIG = {
    "cluster.yaml": "kind: Cluster\nname: c\nprovider: local\n",
    "pool.yaml": """kind: MachinePool
name: pool
machine_types:
  - machine_type: cpu
    launch_templates:
      - instance_type: m5.large
        user_data: ${env:POOL_TOKEN}
    partitions: [{name: any, size: 2}]
""",
    "quota.yaml": "kind: ResourcePool\nname: quota\ncapacity: {gpu: 8}\n",
    "policy.yaml": (
        "kind: SubjectPolicy\nname: team\nsubject: team/a\npool: quota\n"
        "reserved: {gpu: 2}\nlimit: {gpu: 4}\n"
    ),
}
ENVIRON = {"POOL_TOKEN": "s3cret", "UNRELATED": "x"}


class Answers:
    """A `confirm` that records every question and answers `yes`."""

    def __init__(self, yes: bool = True):
        self.yes = yes
        self.asked: list[str] = []

    def __call__(self, question: str) -> bool:
        self.asked.append(question)
        return self.yes


@pytest.fixture
def directory(write) -> Path:
    return write(CONFIG)


@pytest.fixture(autouse=True)
def silent(capsys: pytest.CaptureFixture[str]):
    """Use cases never print: whatever a test did, stdout and stderr stay empty."""
    yield
    out, err = capsys.readouterr()
    assert (out, err) == ("", "")


def recorded(directory: Path) -> list[str]:
    backend = SqliteStateBackend(default_state_path(directory))
    try:
        return backend.read().addresses()
    finally:
        backend.close()


def applied(directory: Path) -> None:
    outcome = apply_plan(directory, confirm=Answers(), environ=ENVIRON, clock=FakeClock())
    assert outcome.ok


def test_plan_configuration_plans_every_declared_resource(directory: Path) -> None:
    planned = plan_configuration(directory, PlanOptions(), environ=ENVIRON)
    assert {c.action for c in planned.plan.changes} == {Action.CREATE}
    assert [c.address for c in planned.plan.changes] == [
        CPU,
        "resource_pool.quota",
        "subject_policy.team",
    ]
    assert planned.rereads is not None  # refreshed: a saved copy re-reads what it touches
    with pytest.raises(dataclasses.FrozenInstanceError):
        planned.plan = planned.plan  # type: ignore[misc]


def test_environment_values_come_only_from_the_mapping_given(directory: Path) -> None:
    with pytest.raises(PoolformError, match="POOL_TOKEN is not set"):
        plan_configuration(directory, PlanOptions(), environ={})


def test_a_saved_plan_round_trips_and_applies_without_a_question(
    directory: Path, tmp_path: Path
) -> None:
    planned = plan_configuration(directory, PlanOptions(), environ=ENVIRON)
    save_plan(planned, tmp_path / "plan.out")
    assert read_saved_plan(tmp_path / "plan.out").plan.to_json() == planned.plan.to_json()
    answers = Answers()
    outcome = apply_plan(tmp_path / "plan.out", confirm=answers, environ=ENVIRON, clock=FakeClock())
    assert outcome.ok and answers.asked == []
    assert recorded(directory) == [CPU, "resource_pool.quota", "subject_policy.team"]


def test_apply_asks_once_shows_the_plan_and_reports_progress(directory: Path) -> None:
    answers = Answers()
    shown: list[int] = []
    events: list[dict[str, object]] = []
    outcome = apply_plan(
        directory,
        confirm=answers,
        on_plan=lambda plan: shown.append(len(plan.changes)),
        on_event=events.append,
        environ=ENVIRON,
        clock=FakeClock(),
    )
    assert answers.asked == ["apply these changes"] and shown == [3]
    assert outcome.result is not None
    assert sorted(map(str, outcome.result.done)) == [
        CPU,
        "resource_pool.quota",
        "subject_policy.team",
    ]
    assert sorted(e["type"] for e in events) == ["done"] * 3 + ["start"] * 3
    again = apply_plan(directory, confirm=answers, environ=ENVIRON, clock=FakeClock())
    assert again.result is None and answers.asked == ["apply these changes"]  # nothing to do


def test_apply_answered_no_changes_nothing(directory: Path) -> None:
    with pytest.raises(Cancelled, match=r"^Apply cancelled$"):
        apply_plan(directory, confirm=Answers(yes=False), environ=ENVIRON, clock=FakeClock())
    assert recorded(directory) == []


def test_destroy_asks_and_deletes_what_state_records(directory: Path) -> None:
    applied(directory)
    answers = Answers()
    outcome = destroy(directory, confirm=answers, environ=ENVIRON, clock=FakeClock())
    assert answers.asked == ["destroy all of this capacity"]
    assert outcome.ok and outcome.plan.summary.destroy == 3
    assert recorded(directory) == []


def test_detect_drift_and_accept_it(directory: Path) -> None:
    applied(directory)
    assert not detect_drift(directory).has_drift
    change_template(directory / ".poolform", CPU, instance_type="m5.2xlarge")
    report = detect_drift(directory, clock=FakeClock())
    assert [d.address for d in report.drifted] == [CPU]
    answers = Answers()
    reports: list[object] = []
    accepted = accept_drift(directory, confirm=answers, on_report=reports.append)
    assert accepted.accepted == 1 and reports == [accepted.report]
    assert answers.asked == ["accept these values into state"]
    assert not detect_drift(directory).has_drift


def test_import_records_an_existing_resource(directory: Path) -> None:
    applied(directory)
    backend = SqliteStateBackend(default_state_path(directory))
    snapshot = backend.read()
    record = snapshot.get("resource_pool.quota")
    assert record is not None
    backend.delete_resource("resource_pool.quota", expected_lineage=snapshot.lineage)
    backend.close()
    [object_id] = record.provider_ids.values()
    imported = import_resource(directory, "resource_pool.quota", object_id, environ=ENVIRON)
    assert dict(imported.provider_ids) == dict(record.provider_ids)
    assert "resource_pool.quota" in recorded(directory)


def test_results_are_plain_data(directory: Path) -> None:
    planned = plan_configuration(directory, PlanOptions(refresh=False), environ=ENVIRON)
    assert planned.rereads is None
    json.dumps(planned.plan.to_json())  # a result serialises without the CLI
