"""The GCP provider's lifecycle on the real google-cloud-compute client against the local
endpoint: create, idempotent create, resize, rolling replace, list, read, delete."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from providers.gcp import GcpProvider
from providers.protocol import ErrorKind, ProviderError, ResourceRef, RollingSpec
from tests.gcp.conftest import LINEAGE, machine_type
from tests.gcp.fake_cloud import FakeCloud

RESERVATION = {
    "instanceProperties": {
        "reservationAffinity": {
            "consumeReservationType": "SPECIFIC_RESERVATION",
            "key": "compute.googleapis.com/reservation-name",
            "values": ["projects/my-project/reservations/shared-a100"],
        },
        "labels": {"team": "ml"},
        "disks": [{"boot": True, "autoDelete": True, "initializeParams": {"diskSizeGb": 200}}],
    }
}
VOCABULARY = {
    "instance_type",
    "market_type",
    "advanced_instance_config",
    "zones",
    "user_data",
    "min_size",
    "max_size",
    "desired",
    "running",
    "template_version",
}


def test_create_makes_template_group_and_bounds(provider: GcpProvider, cloud: FakeCloud) -> None:
    spec = machine_type(
        zones=["us-central1-a", "us-central1-b"], advanced=RESERVATION, user_data="echo hi"
    )
    observed = provider.create(spec)

    assert set(observed.attributes) == VOCABULARY
    assert observed.attributes == {
        "instance_type": "a2-highgpu-8g",
        "market_type": "ON_DEMAND",
        "advanced_instance_config": RESERVATION,  # read back, not echoed: diskSizeGb is an int
        "zones": ["us-central1-a", "us-central1-b"],
        "user_data": "echo hi",
        "min_size": 2,
        "max_size": 4,
        "desired": 2,
        "running": 2,
        "template_version": observed.provider_ids["template"],
    }
    assert observed.tags == spec.tags()
    name = observed.provider_ids["group"]
    assert len(name) <= 58 and name.startswith("pf-") and "reserved-a100" in name

    template = cloud.templates[observed.provider_ids["template"]]
    properties = template["properties"]
    assert json.loads(template["description"])["poolform:token"] == "token-1"
    assert properties["labels"] == {
        "team": "ml",
        "poolform-lineage": LINEAGE,
        "poolform-address": "machine_pool-demo-machine_type-reserved-a100",
    }
    assert properties["reservationAffinity"]["consumeReservationType"] == "SPECIFIC_RESERVATION"
    assert properties["scheduling"] == {"provisioningModel": "STANDARD"}
    assert properties["metadata"]["items"] == [{"key": "startup-script", "value": "echo hi"}]

    group = cloud.groups[name]
    assert group["targetSize"] == 2 and group["baseInstanceName"] == name
    assert json.loads(group["description"])["poolform:address"] == spec.address
    policy = cloud.autoscalers[name]["autoscalingPolicy"]
    assert policy == {"mode": "OFF", "minNumReplicas": 2, "maxNumReplicas": 4}

    instances = list(cloud.instances.values())
    assert len(instances) == 2
    assert {i["zone"].rsplit("/", 1)[-1] for i in instances} == {"us-central1-a", "us-central1-b"}
    assert all(i["labels"]["poolform-lineage"] == LINEAGE for i in instances)


def test_spot_market_and_default_zones(provider: GcpProvider, cloud: FakeCloud) -> None:
    observed = provider.create(machine_type("spot-a100", market="SPOT", low=1, high=2))
    template = cloud.templates[observed.provider_ids["template"]]
    assert template["properties"]["scheduling"] == {
        "provisioningModel": "SPOT",
        "instanceTerminationAction": "DELETE",
    }
    assert observed.attributes["market_type"] == "SPOT"
    # no zones declared: GCE picks them, and poolform does not report its choice as drift
    assert observed.attributes["zones"] == []
    assert observed.attributes["advanced_instance_config"] == {}
    assert observed.attributes["user_data"] is None


def test_create_is_idempotent_by_token(provider: GcpProvider, cloud: FakeCloud) -> None:
    first = provider.create(machine_type())
    again = provider.create(machine_type())
    assert again.provider_ids == first.provider_ids
    assert len(cloud.groups) == len(cloud.templates) == len(cloud.autoscalers) == 1
    assert len(cloud.instances) == 2
    assert provider.api_calls["instanceTemplates.insert"] == 2  # the second got 409


def test_create_resumes_after_a_half_made_first_attempt(
    provider: GcpProvider, cloud: FakeCloud
) -> None:
    provider.create(machine_type())
    name = next(iter(cloud.groups))
    cloud.autoscalers.clear()  # the first attempt died before the autoscaler
    observed = provider.create(machine_type())
    assert observed.provider_ids["group"] == name
    assert observed.attributes["max_size"] == 4


def test_resize_keeps_a_size_the_scheduler_moved(provider: GcpProvider, cloud: FakeCloud) -> None:
    ids = provider.create(machine_type(low=2, high=4)).provider_ids
    cloud.hand_resize(ids["group"], 3)  # the scheduler grew it inside the bounds

    wider = provider.update(machine_type(low=1, high=6), ids)
    assert (wider.attributes["min_size"], wider.attributes["max_size"]) == (1, 6)
    assert wider.attributes["desired"] == wider.attributes["running"] == 3

    narrower = provider.update(machine_type(low=1, high=2), ids)
    assert narrower.attributes["desired"] == narrower.attributes["running"] == 2

    raised = provider.update(machine_type(low=5, high=8), ids)
    assert raised.attributes["desired"] == 5 and len(cloud.instances) == 5
    assert cloud.autoscalers[ids["group"]]["autoscalingPolicy"]["mode"] == "OFF"


def test_update_restores_bounds_deleted_by_hand(provider: GcpProvider, cloud: FakeCloud) -> None:
    ids = provider.create(machine_type()).provider_ids
    cloud.autoscalers.clear()
    (seen,) = provider.list(LINEAGE)
    assert seen.attributes["min_size"] is None and seen.attributes["max_size"] is None
    restored = provider.update(machine_type(), ids)
    assert (restored.attributes["min_size"], restored.attributes["max_size"]) == (2, 4)


@pytest.mark.parametrize("destroy_first", [False, True])
def test_replace_rolls_the_group_onto_a_new_template(
    provider: GcpProvider, cloud: FakeCloud, destroy_first: bool
) -> None:
    old = provider.create(machine_type(low=3, high=4, zones=["us-central1-a"]))
    group = old.provider_ids["group"]
    before = set(cloud.instances)

    new = provider.replace(
        machine_type(
            instance_type="a2-highgpu-1g", low=3, high=4, zones=["us-central1-a"], token="t-2"
        ),
        old.provider_ids,
        RollingSpec(batch_size=1, destroy_first=destroy_first),
    )
    assert new.provider_ids["group"] == group  # same group, rolled in place
    assert new.provider_ids["template"] != old.provider_ids["template"]
    assert new.attributes["instance_type"] == "a2-highgpu-1g"
    assert old.provider_ids["template"] not in cloud.templates  # the old one is deleted
    assert set(cloud.instances).isdisjoint(before) and len(cloud.instances) == 3
    assert {i["_template"] for i in cloud.instances.values()} == {new.provider_ids["template"]}

    (patch,) = [r for r in cloud.log if r.method == "regionInstanceGroupManagers.patch"]
    policy = cloud.groups[group]["updatePolicy"]
    assert policy["type"] == "PROACTIVE" and patch.verb == "PATCH"
    expected = (0, 1) if destroy_first else (1, 0)
    assert (policy["maxSurge"]["fixed"], policy["maxUnavailable"]["fixed"]) == expected
    # one batch per poll: the provider waited for all three
    assert provider.api_calls["regionInstanceGroupManagers.get"] >= 4


def test_replace_with_new_zones_makes_a_new_group(provider: GcpProvider, cloud: FakeCloud) -> None:
    old = provider.create(machine_type(zones=["us-central1-a"]))
    cloud.hand_resize(old.provider_ids["group"], 3)
    new = provider.replace(
        machine_type(zones=["us-central1-b", "us-central1-c"], token="t-2"),
        old.provider_ids,
        RollingSpec(batch_size=1, destroy_first=False),
    )
    assert new.provider_ids["group"] != old.provider_ids["group"]
    assert list(cloud.groups) == [new.provider_ids["group"]]
    assert list(cloud.templates) == [new.provider_ids["template"]]
    assert new.attributes["zones"] == ["us-central1-b", "us-central1-c"]
    assert new.attributes["desired"] == new.attributes["running"] == 3


def test_list_finds_groups_and_templates_left_behind(
    provider: GcpProvider, cloud: FakeCloud
) -> None:
    kept = provider.create(machine_type("a"))
    lost = provider.create(machine_type("b", token="token-2"))
    provider.create(machine_type("c", token="token-3", lineage="another-lineage"))
    cloud.hand_delete_group(lost.provider_ids["group"])
    before = sum(provider.api_calls.values())

    found = provider.list(LINEAGE)

    assert [o.address for o in found] == [kept.address, lost.address]
    assert found[0].provider_ids == kept.provider_ids
    assert found[1].provider_ids == {"template": lost.provider_ids["template"]}
    assert found[1].tags["poolform:token"] == "token-2"
    assert found[1].attributes["instance_type"] == "a2-highgpu-8g"
    assert sum(provider.api_calls.values()) - before == 4  # one list per resource type


def test_a_template_swapped_by_hand_is_reported(provider: GcpProvider, cloud: FakeCloud) -> None:
    ids = provider.create(machine_type()).provider_ids
    cloud.hand_set_template(
        ids["group"], {"machineType": "n2-standard-8", "scheduling": {"provisioningModel": "SPOT"}}
    )
    seen, left = provider.list(LINEAGE)
    assert seen.provider_ids == {"group": ids["group"], "template": "hand-made"}
    assert seen.attributes["instance_type"] == "n2-standard-8"
    assert seen.attributes["market_type"] == "SPOT"
    assert seen.tags == machine_type().tags()
    # poolform's own template, used by no group now, is reported on its own: refresh matches
    # it to the record by its id, and the replacement that restores the group deletes it
    assert left.provider_ids == {"template": ids["template"]}
    assert provider.api_calls["instanceTemplates.get"] == 1  # the hand-made one, by name


def test_read_returns_only_the_refs_asked(provider: GcpProvider) -> None:
    a = provider.create(machine_type("a"))
    provider.create(machine_type("b", token="token-2"))
    ref = ResourceRef(a.address, "machine_type", a.provider_ids)
    gone = ResourceRef("machine_pool.demo.machine_type.x", "machine_type", {"group": "pf-nope"})
    before = sum(provider.api_calls.values())
    found = provider.read([ref, gone])
    assert [o.provider_ids for o in found] == [a.provider_ids]
    assert found[0].attributes == a.attributes
    assert sum(provider.api_calls.values()) - before == 4


def test_delete_then_not_found(provider: GcpProvider, cloud: FakeCloud) -> None:
    observed = provider.create(machine_type())
    provider.delete(observed.address, "machine_type", observed.provider_ids, lineage=LINEAGE)
    assert not (cloud.groups or cloud.templates or cloud.autoscalers or cloud.instances)
    with pytest.raises(ProviderError) as raised:
        provider.delete(observed.address, "machine_type", observed.provider_ids, lineage=LINEAGE)
    assert raised.value.kind is ErrorKind.NOT_FOUND


def test_delete_a_template_left_behind(provider: GcpProvider, cloud: FakeCloud) -> None:
    observed = provider.create(machine_type())
    cloud.hand_delete_group(observed.provider_ids["group"])
    provider.delete(
        observed.address,
        "machine_type",
        {"template": observed.provider_ids["template"]},
        lineage=LINEAGE,
    )
    assert not cloud.templates


def test_settings_need_a_project(make_provider: Callable[..., GcpProvider]) -> None:
    with pytest.raises(ProviderError) as raised:
        make_provider(project="")
    assert raised.value.kind is ErrorKind.PERMANENT and "project" in raised.value.message
    with pytest.raises(ProviderError, match="did you mean 'project'"):
        make_provider(projet="x")
