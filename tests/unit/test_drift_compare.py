"""Drift detection as a specification: what counts as drift, what is cosmetic, who owns what."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.protocol import Observed
from reconciler.drift.accept import accept_reality
from reconciler.drift.compare import detect_drift, same_attribute
from reconciler.plan.expand import hash_secret
from state import ResourceRecord, StateSnapshot

SALT = "salt"
ADDRESS = "machine_pool.p.machine_type.gpu"
IDS = {"group": "g-1", "template": "t-1"}


def record(**template: object) -> ResourceRecord:
    launch = {
        "instance_type": "p4d.24xlarge",
        "market_type": "SPOT",
        "zones": ["us-west-2a", "us-west-2b"],
        "advanced_instance_config": {"BlockDeviceMappings": [{"DeviceName": "/dev/sda1"}]},
        "user_data": hash_secret("echo hi", SALT),
        **template,
    }
    attributes = {"launch_templates": [launch], "min_size": 1, "max_size": 4, "provider": "aws"}
    return ResourceRecord(ADDRESS, "machine_type", attributes, dict(IDS))


def reality(**changes: object) -> Observed:
    attributes = {
        "instance_type": "p4d.24xlarge",
        "market_type": "SPOT",
        "zones": ["us-west-2a", "us-west-2b"],
        "advanced_instance_config": {"BlockDeviceMappings": [{"DeviceName": "/dev/sda1"}]},
        "user_data": "echo hi",
        "min_size": 1,
        "max_size": 4,
        "desired": 1,
        "running": 1,
        "template_version": 1,
        **changes,
    }
    return Observed(ADDRESS, "machine_type", dict(IDS), attributes)


def drift_of(observed: Observed, rec: ResourceRecord | None = None):
    snapshot = StateSnapshot.from_records("lineage", 3, [rec or record()])
    return detect_drift(snapshot, [observed], SALT)


@pytest.mark.parametrize(
    ("key", "expected", "actual"),
    [
        ("max_size", 4, "4"),  # GCE returns int64 as strings
        ("max_size", 4, 4.0),
        ("zones", ["a", "b"], ["b", "a"]),
        ("instance_type", "a2-highgpu-8g", "zones/us-central1-a/machineTypes/a2-highgpu-8g"),
        ("market_type", "SPOT", "spot"),
        ("advanced_instance_config", {}, None),
        ("advanced_instance_config", {"A": 1}, {"A": 1, "EbsOptimized": False}),  # cloud default
        ("advanced_instance_config", {"A": {"B": 1}}, {"A": {"B": "1", "C": 2}}),
        ("user_data", hash_secret("x", SALT), "x"),
    ],
)
def test_cosmetic_differences_are_not_drift(key: str, expected: object, actual: object) -> None:
    assert same_attribute(key, expected, actual, SALT)


@pytest.mark.parametrize(
    ("key", "expected", "actual"),
    [
        ("max_size", 4, 5),
        ("zones", ["a", "b"], ["a"]),
        ("instance_type", "p4d.24xlarge", "p4de.24xlarge"),
        ("market_type", "SPOT", "ON_DEMAND"),
        ("advanced_instance_config", {"A": 1}, {"A": 2}),
        ("advanced_instance_config", {"A": 1}, {}),
        ("user_data", hash_secret("x", SALT), "y"),
        ("user_data", hash_secret("x", SALT), None),
        ("setup", "pip install a", "pip install b"),
        ("envs", {"A": "1"}, {"A": "1", "B": "2"}),  # only passed-through template data is a subset
    ],
)
def test_real_differences_are_drift(key: str, expected: object, actual: object) -> None:
    assert not same_attribute(key, expected, actual, SALT)


def test_a_count_inside_the_bounds_is_the_schedulers_and_outside_them_is_drift() -> None:
    inside = drift_of(reality(desired=3, running=3))
    assert not inside.has_drift
    assert [n.code for n in inside.notes] == ["scheduler_moved_count"]
    outside = drift_of(reality(desired=6, running=6))
    assert outside.has_drift
    [change] = outside.drifted[0].attributes
    assert (change.attribute, change.expected, change.actual) == ("desired", "1..4", 6)


def test_each_attribute_changed_by_hand_is_reported_with_expected_and_actual() -> None:
    report = drift_of(reality(instance_type="p5.48xlarge", max_size=8, user_data="curl evil"))
    [item] = report.drifted
    assert item.status == "changed"
    found = {a.attribute: (a.expected, a.actual, a.owner) for a in item.attributes}
    assert found["instance_type"] == ("p4d.24xlarge", "p5.48xlarge", "configuration")
    assert found["max_size"] == (4, 8, "configuration")
    as_json = report.to_json()["drifted"][0]["attributes"]
    user_data = next(a for a in as_json if a["attribute"] == "user_data")
    assert user_data["expected"] == user_data["actual"] == "(sensitive)"
    assert "curl evil" not in str(report.to_json())


def test_what_a_provider_cannot_read_back_is_not_compared() -> None:
    observed = reality()
    silent = Observed(
        observed.address,
        observed.resource_type,
        observed.provider_ids,
        {k: v for k, v in observed.attributes.items() if k != "user_data"},
    )
    assert not drift_of(silent).has_drift


def test_a_group_deleted_by_hand_is_deleted_even_when_its_template_is_left() -> None:
    left = Observed(ADDRESS, "machine_type", {"template": "t-1"}, {"instance_type": "x"})
    report = drift_of(left)
    [item] = report.drifted
    assert item.status == "deleted" and "template t-1 is left" in item.reason
    assert report.unmanaged == ()


def test_accepting_reality_writes_observed_values_where_the_record_keeps_them() -> None:
    report = drift_of(
        reality(
            instance_type="p5.48xlarge",
            max_size=8,
            user_data="curl evil",
            advanced_instance_config={
                "BlockDeviceMappings": [{"DeviceName": "/dev/xvda"}],
                "EbsOptimized": True,  # a cloud default: not written into the record
            },
        )
    )
    snapshot = StateSnapshot.from_records("lineage", 3, [record()])
    accepted = accept_reality(snapshot, report, SALT, forget_deleted=True).resources[ADDRESS]
    launch = accepted.attributes["launch_templates"][0]
    assert launch["instance_type"] == "p5.48xlarge"
    assert launch["user_data"] == hash_secret("curl evil", SALT)
    assert launch["advanced_instance_config"] == {
        "BlockDeviceMappings": [{"DeviceName": "/dev/xvda"}]
    }
    assert accepted.attributes["max_size"] == 8
    again = detect_drift(StateSnapshot.from_records("lineage", 4, [accepted]), [reality(
        instance_type="p5.48xlarge", max_size=8, user_data="curl evil",
        advanced_instance_config={"BlockDeviceMappings": [{"DeviceName": "/dev/xvda"}]},
    )], SALT)  # fmt: skip
    assert not again.has_drift


zones = st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=4)


@settings(max_examples=200, deadline=None)
@given(
    zone_list=zones,
    low=st.integers(0, 10),
    span=st.integers(0, 10),
    moved=st.integers(0, 20),
    stringly=st.booleans(),
    extra=st.dictionaries(st.sampled_from(["EbsOptimized", "Monitoring"]), st.booleans()),
    shuffle=st.randoms(use_true_random=False),
)
def test_reality_that_only_differs_cosmetically_or_by_scheduling_is_never_drift(
    zone_list, low, span, moved, stringly, extra, shuffle
) -> None:
    high = low + span
    rec = record(zones=list(zone_list))
    rec = ResourceRecord(
        rec.address, rec.resource_type, {**rec.attributes, "min_size": low, "max_size": high}, IDS
    )
    shown = list(zone_list)
    shuffle.shuffle(shown)
    desired = low + moved % (span + 1)  # anywhere inside the bounds
    observed = reality(
        zones=shown,
        min_size=str(low) if stringly else low,
        max_size=str(high) if stringly else high,
        desired=desired,
        market_type="spot",
        advanced_instance_config={"BlockDeviceMappings": [{"DeviceName": "/dev/sda1"}], **extra},
    )
    report = drift_of(observed, rec)
    assert not report.has_drift, report.to_json()


@settings(max_examples=100, deadline=None)
@given(instance_type=st.sampled_from(["p5.48xlarge", "g5.xlarge", "m5.large"]))
def test_any_other_instance_type_is_drift(instance_type: str) -> None:
    report = drift_of(reality(instance_type=instance_type))
    assert report.has_drift and report.drifted[0].attributes[0].attribute == "instance_type"
