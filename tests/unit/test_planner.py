"""The planner as a table: configuration + refreshed snapshot -> (address, action, reason).

Each row declares what was applied (the records), what is declared now, what refresh found, and
the options; the plan must hold exactly the listed changes. The golden files (tests/golden)
show how plans read; this table pins down why each change is in a plan at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from providers.protocol import Observed
from reconciler.checks import load_configuration
from reconciler.loading import Configuration
from reconciler.plan import Action, Plan, PlanOptions, make_plan
from reconciler.plan.expand import expand
from reconciler.plan.inputs import RefreshedSnapshot
from reconciler.plan.model import ChangeKey
from reconciler.plan.reasons import CLUSTER_DEFAULTS_GONE, TEXT, Reason
from reconciler.plan.refresh import RefreshResult, Shortfall
from state import ResourceRecord, StateSnapshot
from tests.conftest import ROOT

LINEAGE = "00000000-0000-4000-8000-000000000000"
CPU = "machine_pool.m.machine_type.cpu"
QUOTA = "resource_pool.quota"
TEAM = "subject_policy.team"
WORKERS = "worker_pool.w"

POOL = """kind: MachinePool
name: m
machine_types:
  - machine_type: cpu
    launch_templates: [{instance_type: INSTANCE}]
    partitions: [{name: any, size: SIZE}]
"""
QUOTA_DOC = "kind: ResourcePool\nname: quota\ncapacity: {gpu: 8}\n"
TEAM_DOC = (
    "kind: SubjectPolicy\nname: team\nsubject: team/a\npool: quota\npriority: PRIORITY\n"
    "reserved: {gpu: 2}\nlimit: {gpu: 4}\n"
)
WORKERS_DOC = """kind: WorkerPool
name: w
pool: {workers: 2}
resources: {instance_type: c5.xlarge}
setup: SETUP
WORKDIR"""


def config(
    instance: str = "m5.large",
    size: int = 2,
    priority: int = 1,
    setup: str = "echo one",
    *,
    team: bool = True,
    workers: bool = False,
    workdir: str | None = None,
    worker_count: int = 2,
) -> dict[str, str]:
    files = {
        "pool.yaml": POOL.replace("INSTANCE", instance).replace("SIZE", str(size)),
        "quota.yaml": QUOTA_DOC,
    }
    if team:
        files["team.yaml"] = TEAM_DOC.replace("PRIORITY", str(priority))
    if workers:
        files["workers.yaml"] = (
            WORKERS_DOC.replace("SETUP", json.dumps(setup))
            .replace("WORKDIR", f"workdir: {workdir}\n" if workdir else "")
            .replace("workers: 2", f"workers: {worker_count}")
        )
    return files


Records = Callable[[list[ResourceRecord]], list[ResourceRecord]]


@dataclass(frozen=True)
class Case:
    name: str
    declared: dict[str, str]
    expected: list[tuple[str, Action, Reason]]
    applied: dict[str, str] | None = None  # what the records were made from (None: no records)
    options: PlanOptions = field(default_factory=PlanOptions)
    edit_records: Records = lambda records: records  # e.g. taint one
    missing: frozenset[str] = frozenset()
    adoptable: frozenset[str] = frozenset()
    orphans: tuple[Observed, ...] = ()
    half_made: tuple[Observed, ...] = ()
    shortfalls: dict[str, Shortfall] = field(default_factory=dict)
    drifted: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unplaced: dict[str, tuple[str, ...]] = field(default_factory=dict)  # no place in the record


def tainted(address: str) -> Records:
    return lambda records: [replace(r, tainted=r.address == address) for r in records]


def with_ids(address: str, **ids: str) -> Records:
    return lambda records: [
        replace(r, provider_ids=ids) if r.address == address else r for r in records
    ]


CASES = [
    Case(
        "nothing recorded: every declared resource is created",
        config(),
        [
            (CPU, Action.CREATE, Reason.NEW),
            (QUOTA, Action.CREATE, Reason.NEW),
            (TEAM, Action.CREATE, Reason.NEW),
        ],
    ),
    Case("applied as declared: nothing to do", config(), [], applied=config()),
    Case(
        "a partition grows: resize in place",
        config(size=4),
        [(CPU, Action.UPDATE, Reason.RESIZE)],
        applied=config(),
    ),
    Case(
        "a policy's priority changes: update in place",
        config(priority=5),
        [(TEAM, Action.UPDATE, Reason.UPDATE)],
        applied=config(),
    ),
    Case(
        "the instance type changes: replaced, forced by that attribute",
        config(instance="c5.xlarge"),
        [(CPU, Action.REPLACE, Reason.FORCED_BY_ATTRIBUTE)],
        applied=config(),
    ),
    Case(
        "a worker pool's setup changes: replaced",
        config(setup="echo two", workers=True),
        [(WORKERS, Action.REPLACE, Reason.FORCED_BY_ATTRIBUTE)],
        applied=config(workers=True),
    ),
    Case(
        "a worker pool with a workdir is replaced on any change",
        config(workers=True, workdir="./src", worker_count=3),
        [(WORKERS, Action.REPLACE, Reason.ALWAYS_REPLACED)],
        applied=config(workers=True, workdir="./src"),
    ),
    Case(
        "a worker pool without one grows in place",
        config(workers=True, worker_count=3),
        [(WORKERS, Action.UPDATE, Reason.RESIZE)],
        applied=config(workers=True),
    ),
    Case(
        "a declaration is removed: deleted",
        config(team=False),
        [(TEAM, Action.DELETE, Reason.NOT_DECLARED)],
        applied=config(),
    ),
    Case(
        "destroy: everything recorded is deleted, a pool after the policy using it",
        config(),
        [
            (CPU, Action.DELETE, Reason.DESTROY_REQUESTED),
            (TEAM, Action.DELETE, Reason.DESTROY_REQUESTED),
            (QUOTA, Action.DELETE, Reason.DESTROY_REQUESTED),
        ],
        applied=config(),
        options=PlanOptions(destroy=True),
    ),
    Case(
        "--replace: replaced although nothing changed",
        config(),
        [(QUOTA, Action.REPLACE, Reason.REPLACE_REQUESTED)],
        applied=config(),
        options=PlanOptions(replace=(QUOTA,)),
    ),
    Case(
        "--target: the target and what it needs",
        config(),
        [(QUOTA, Action.CREATE, Reason.NEW), (TEAM, Action.CREATE, Reason.NEW)],
        options=PlanOptions(targets=(TEAM,)),
    ),
    Case(
        "recorded but gone from the provider: created again",
        config(),
        [(QUOTA, Action.CREATE, Reason.MISSING)],
        applied=config(),
        missing=frozenset({QUOTA}),
    ),
    Case(
        "undeclared and gone from the provider: only the record goes",
        config(team=False),
        [(TEAM, Action.DELETE, Reason.GONE)],
        applied=config(),
        missing=frozenset({TEAM}),
    ),
    Case(
        "destroy of what is gone from the provider: only the record goes",
        config(),
        [
            (CPU, Action.DELETE, Reason.DESTROY_REQUESTED),
            (TEAM, Action.DELETE, Reason.GONE),
            (QUOTA, Action.DELETE, Reason.DESTROY_REQUESTED),
        ],
        applied=config(),
        options=PlanOptions(destroy=True),
        missing=frozenset({TEAM}),
    ),
    Case(
        "made by an interrupted apply: adopted",
        config(team=False),
        [(QUOTA, Action.CREATE, Reason.ADOPT)],
        applied=config(team=False),
        edit_records=lambda records: [r for r in records if r.address != QUOTA],
        adoptable=frozenset({QUOTA}),
    ),
    Case(
        "tainted by an apply that did not finish: replaced",
        config(),
        [(QUOTA, Action.REPLACE, Reason.TAINTED)],
        applied=config(),
        edit_records=tainted(QUOTA),
    ),
    Case(
        "a count outside its bounds: resized back inside",
        config(),
        [(CPU, Action.UPDATE, Reason.DRIFT_COUNT)],
        applied=config(),
        drifted={CPU: ("desired",)},
    ),
    Case(
        "a template changed by hand (reality in the record): replaced to restore it",
        config(),
        [(CPU, Action.REPLACE, Reason.DRIFT)],
        applied=config(instance="c5.xlarge"),
        drifted={CPU: ("instance_type",)},
    ),
    Case(
        "drift the records cannot show: only a replacement restores it",
        config(),
        [(CPU, Action.REPLACE, Reason.DRIFT_REPLACE)],
        applied=config(),
        drifted={CPU: ("template_data",)},
        unplaced={CPU: ("template_data",)},
    ),
    Case(
        "drift the records show, already what is declared (changed by hand, then in the YAML)",
        config(),
        [],
        applied=config(),
        drifted={CPU: ("instance_type",)},
    ),
    Case(
        "a part a recorded resource no longer uses: deleted",
        config(),
        [(CPU, Action.DELETE, Reason.LEFT_BEHIND)],
        applied=config(),
        edit_records=with_ids(CPU, group="g-1", template="lt-1"),
        orphans=(Observed(CPU, "machine_type", {"template": "lt-1"}),),
    ),
    Case(
        "a tagged copy nothing proves an apply made (a forgotten resource): reported, kept",
        config(),
        [],
        applied=config(),
        orphans=(Observed(QUOTA, "resource_pool", {"object": "obj-9"}),),
    ),
    Case(
        "a copy an interrupted apply made, for an address no longer created: deleted",
        config(),
        [(QUOTA, Action.DELETE, Reason.HALF_MADE)],
        applied=config(),
        half_made=(Observed(QUOTA, "resource_pool", {"object": "obj-9"}),),
    ),
    Case(
        "a group short of instances that its cloud does not heal: resized back",
        config(workers=True),
        [(WORKERS, Action.UPDATE, Reason.SHORTFALL)],
        applied=config(workers=True),
        shortfalls={WORKERS: Shortfall(running=1, desired=2, heals=False)},
    ),
]


def load(write_dir: Path, files: dict[str, str]) -> Configuration:
    write_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (write_dir / name).write_text(text)
    return load_configuration(write_dir)


def records_of(configuration: Configuration) -> list[ResourceRecord]:
    """What apply records for `configuration` (salted with the lineage, as the planner is here)."""
    return [
        ResourceRecord(r.address, r.resource_type, r.attributes, {"id": r.address}, r.dependencies)
        for r in expand(configuration, LINEAGE, environment={}).values()
    ]


def plan_for(case: Case, tmp_path: Path) -> Plan:
    declared = load(tmp_path / "declared", case.declared)
    records = records_of(load(tmp_path / "applied", case.applied)) if case.applied else []
    snapshot = StateSnapshot.from_records(LINEAGE, 1, case.edit_records(records))
    found = RefreshResult(
        case.missing,
        case.adoptable,
        case.orphans,
        half_made=case.half_made,
        shortfalls=case.shortfalls,
    )
    refreshed = RefreshedSnapshot(snapshot, found, case.drifted, case.unplaced)
    return make_plan(declared, refreshed, case.options, salt=LINEAGE, environment={})


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_planner(case: Case, tmp_path: Path) -> None:
    plan = plan_for(case, tmp_path)
    assert [(c.address, c.action, c.reason_code) for c in plan.changes] == case.expected
    for change in plan.changes:
        assert change.reason  # every reason has its words
        assert change.reason_code is not None


def test_a_drift_reason_says_what_drifted_and_what_follows(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.drifted.get(CPU) == ("instance_type",))
    [change] = plan_for(case, tmp_path).changes
    assert change.reason == (
        "changed outside poolform (instance_type); "
        "`launch_templates[0].instance_type` forces replacement"
    )


def test_a_cleanup_is_keyed_by_the_address_and_the_copy_and_reads_back(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.half_made and c.expected[0][2] is Reason.HALF_MADE)
    plan = plan_for(case, tmp_path)
    [change] = plan.changes
    assert change.address == QUOTA and change.key == ChangeKey(QUOTA, ("obj-9",))
    document = plan.to_json()
    assert document["changes"][0]["address"] == f"{QUOTA}#obj-9"  # the JSON as it always was
    assert document["order"] == [[f"{QUOTA}#obj-9"]]
    again = Plan.from_json(json.loads(json.dumps(document)))
    assert again == plan


def test_a_forgotten_resource_is_reported_with_its_import_never_deleted(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.orphans and not c.expected)
    plan = plan_for(case, tmp_path)
    assert plan.changes == ()
    assert any(f"poolform import {QUOTA} obj-9" in warning for warning in plan.warnings)


def test_plans_are_a_function_of_their_inputs(tmp_path: Path, monkeypatch) -> None:
    case = CASES[0]
    first = plan_for(case, tmp_path)
    monkeypatch.setattr("os.environ", {})  # nothing is read from the process environment
    assert plan_for(case, tmp_path).to_json() == first.to_json()


def test_environment_values_are_taken_from_the_mapping_given(tmp_path: Path) -> None:
    files = config()
    files["pool.yaml"] = files["pool.yaml"].replace(
        "{instance_type: m5.large}", "{instance_type: m5.large, user_data: '${env:TOKEN}'}"
    )
    declared = load(tmp_path, files)
    refreshed = RefreshedSnapshot.unrefreshed(StateSnapshot.from_records(LINEAGE, 0, []))
    plans = [
        make_plan(declared, refreshed, PlanOptions(), salt=LINEAGE, environment={"TOKEN": v})
        for v in ("a", "b")
    ]
    hashes = [p.changes[0].after["launch_templates"][0]["user_data"] for p in plans]
    assert hashes[0] != hashes[1] and all(h.startswith("sensitive:sha256:") for h in hashes)


def test_every_reason_has_text_and_is_in_the_plan_schema() -> None:
    schema = json.loads((ROOT / "reconciler" / "plan" / "plan.schema.json").read_text())
    change = schema["$defs"]["change"]
    assert set(TEXT) == set(Reason)
    assert set(change["properties"]["reason_code"]["enum"]) == {*Reason, None}


def test_the_table_covers_every_reason_a_plan_can_give() -> None:
    covered = {reason for case in CASES for _, _, reason in case.expected}
    never_in_a_plan = {Reason.UP_TO_DATE}  # no-ops are counted, not listed
    assert covered | never_in_a_plan == set(Reason)


def test_a_plan_saved_before_reason_codes_still_reads(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.half_made and c.expected[0][2] is Reason.HALF_MADE)
    document = plan_for(case, tmp_path).to_json()
    for change in document["changes"]:
        del change["reason_code"]  # as plans were written before the codes
    [change] = Plan.from_json(document).changes
    assert change.reason_code is None and change.address == QUOTA
    assert change.key == ChangeKey(QUOTA, ("obj-9",))


CLUSTER = "kind: Cluster\nname: c\nprovider: local\n"


@pytest.mark.parametrize(
    ("declared", "options", "reason"),
    [
        (CLUSTER, PlanOptions(), CLUSTER_DEFAULTS_GONE),
        (CLUSTER + "default_aux_pool: quota\n", PlanOptions(destroy=True), "destroy requested"),
    ],
    ids=["defaults removed, the Cluster kept", "destroy"],
)
def test_a_cluster_record_that_goes_says_what_goes(
    declared: str, options: PlanOptions, reason: str, tmp_path: Path
) -> None:
    """A Cluster is recorded only for its scheduling defaults: when they go and the Cluster
    stays, its delete must not say that it is no longer in the configuration."""
    applied = {**config(), "cluster.yaml": CLUSTER + "default_aux_pool: quota\n"}
    case = Case("cluster", {**config(), "cluster.yaml": declared}, [], applied, options)
    (change,) = [c for c in plan_for(case, tmp_path).changes if c.address == "cluster.c"]
    assert change.action is Action.DELETE
    assert change.reason == reason
    assert change.reason_code is (
        Reason.DESTROY_REQUESTED if options.destroy else Reason.NOT_DECLARED
    )
