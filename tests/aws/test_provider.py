"""The AWS provider against moto over HTTP: every call goes through boto3 to a real server.

Replacing a group that has instances needs start_instance_refresh, which moto does not
implement: that path is in test_stubbed.py. Here a replace runs on an empty group.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import boto3
import pytest

from providers.aws import AwsProvider
from providers.protocol import (
    TAG_ADDRESS,
    TAG_LINEAGE,
    TAG_TOKEN,
    ErrorKind,
    Observed,
    ProviderError,
    ResourceRef,
    ResourceSpec,
    RollingSpec,
)

from .conftest import AMI, machine


def clients() -> tuple[Any, Any]:
    return boto3.client("ec2"), boto3.client("autoscaling")


def tag_map(items: list[dict[str, Any]] | None) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in items or []}


def by_address(observed: list[Observed]) -> dict[str, list[Observed]]:
    result: dict[str, list[Observed]] = {}
    for item in observed:
        result.setdefault(item.address, []).append(item)
    return result


def test_create_tags_template_group_and_instances(provider: AwsProvider, lineage: str) -> None:
    spec = machine(lineage, warm=2, size=4, user_data="#!/bin/bash\necho warm\n")
    observed = provider.create(spec)
    ec2, asg = clients()

    assert observed.attributes["running"] == 2
    assert observed.attributes["user_data"] == "#!/bin/bash\necho warm\n"
    template = ec2.describe_launch_templates(LaunchTemplateIds=[observed.provider_ids["template"]])[
        "LaunchTemplates"
    ][0]
    assert tag_map(template["Tags"]) == spec.tags()
    group = asg.describe_auto_scaling_groups(
        AutoScalingGroupNames=[observed.provider_ids["group"]]
    )["AutoScalingGroups"][0]
    zones = ",".join(sorted(group["AvailabilityZones"]))  # none declared: the region's
    assert {(t["Key"], t["Value"], t["PropagateAtLaunch"]) for t in group["Tags"]} == {
        *((k, v, True) for k, v in spec.tags().items()),
        ("poolform:default-zones", zones, False),  # bookkeeping, not for instances
    }
    assert (group["MinSize"], group["MaxSize"], group["DesiredCapacity"]) == (2, 4, 2)
    instances = [i for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]]
    assert len(instances) == 2
    for instance in instances:
        assert spec.tags().items() <= tag_map(instance["Tags"]).items()
        assert instance["ImageId"] == AMI


def test_observed_vocabulary(provider: AwsProvider, lineage: str) -> None:
    """Exactly the keys of providers/observable.py, with the declared template data back."""
    advanced = {
        "CapacityReservationSpecification": {
            "CapacityReservationTarget": {"CapacityReservationId": "cr-0123456789abcdef0"}
        },
        "TagSpecifications": [
            {"ResourceType": "instance", "Tags": [{"Key": "team", "Value": "ml"}]}
        ],
    }
    spec = machine(lineage, market="SPOT", advanced=advanced, zones=["us-east-1b", "us-east-1a"])
    provider.create(spec)
    [observed] = provider.list(lineage)
    assert observed.attributes == {
        "instance_type": "p5.48xlarge",
        "market_type": "SPOT",
        "advanced_instance_config": advanced,
        "zones": ["us-east-1b", "us-east-1a"],
        "user_data": None,
        "min_size": 1,
        "max_size": 3,
        "desired": 1,
        "running": 1,
        "template_version": 1,
    }
    assert observed.resource_type == "machine_type"
    assert observed.tags[TAG_LINEAGE] == lineage


def test_create_is_idempotent_by_token(provider: AwsProvider, lineage: str) -> None:
    spec = machine(lineage, warm=2)
    first = provider.create(spec)
    again = provider.create(spec)  # a retried or resumed create: same token
    assert again.provider_ids == first.provider_ids
    _, asg = clients()
    assert len(asg.describe_auto_scaling_groups()["AutoScalingGroups"]) == 1
    assert [o.provider_ids for o in provider.list(lineage)] == [first.provider_ids]
    other = provider.create(machine(lineage, "a100", token=uuid.uuid4().hex))
    assert other.provider_ids["group"] != first.provider_ids["group"]


def test_create_resumes_after_the_template_was_made(provider: AwsProvider, lineage: str) -> None:
    """A crash between the two creates: the resumed call makes only the missing group."""
    spec = machine(lineage)
    made = provider.create(spec)
    _, asg = clients()
    asg.delete_auto_scaling_group(AutoScalingGroupName=made.provider_ids["group"], ForceDelete=True)
    again = provider.create(spec)
    assert again.provider_ids == made.provider_ids
    assert again.attributes["running"] == 1


def test_resize_keeps_a_scheduler_moved_count_inside_the_bounds(
    provider: AwsProvider, lineage: str
) -> None:
    spec = machine(lineage, warm=1, size=6)
    ids = provider.create(spec).provider_ids
    _, asg = clients()
    asg.set_desired_capacity(AutoScalingGroupName=ids["group"], DesiredCapacity=4)  # scheduler

    grown = provider.update(machine(lineage, warm=2, size=8, token=spec.token), ids)
    assert (grown.attributes["min_size"], grown.attributes["max_size"]) == (2, 8)
    assert grown.attributes["desired"] == 4  # inside [2, 8]: not reset to the warm count
    assert grown.provider_ids == ids

    shrunk = provider.update(machine(lineage, warm=1, size=3, token=spec.token), ids)
    assert shrunk.attributes["desired"] == 3  # clamped to the new maximum
    assert shrunk.attributes["running"] == 3

    raised = provider.update(machine(lineage, warm=3, size=5, token=spec.token), ids)
    assert raised.attributes["desired"] == 3


def test_update_of_a_missing_group_is_not_found(provider: AwsProvider, lineage: str) -> None:
    with pytest.raises(ProviderError) as caught:
        provider.update(machine(lineage), {"group": "poolform-gone", "template": "lt-0"})
    assert caught.value.kind is ErrorKind.NOT_FOUND


def test_list_finds_everything_by_tag(provider: AwsProvider, lineage: str) -> None:
    """Including a template whose group was deleted by hand, and nothing of other lineages."""
    kept = provider.create(machine(lineage, "h100"))
    orphaned = provider.create(machine(lineage, "a100"))
    provider.create(machine("someone-else", "h100"))
    _, asg = clients()
    asg.delete_auto_scaling_group(
        AutoScalingGroupName=orphaned.provider_ids["group"], ForceDelete=True
    )
    found = by_address(provider.list(lineage))
    assert set(found) == {kept.address, orphaned.address}
    assert [o.provider_ids for o in found[kept.address]] == [kept.provider_ids]
    [loose] = found[orphaned.address]
    assert loose.provider_ids == {"template": orphaned.provider_ids["template"]}
    assert loose.attributes["instance_type"] == "p5.48xlarge"
    assert loose.tags[TAG_TOKEN] == orphaned.tags[TAG_TOKEN]


def test_list_reports_a_template_changed_by_hand(provider: AwsProvider, lineage: str) -> None:
    ids = provider.create(machine(lineage)).provider_ids
    ec2, _ = clients()
    ec2.create_launch_template_version(
        LaunchTemplateId=ids["template"],
        LaunchTemplateData={"ImageId": AMI, "InstanceType": "p4d.24xlarge"},
    )
    [observed] = provider.list(lineage)
    assert observed.attributes["instance_type"] == "p4d.24xlarge"
    assert observed.attributes["template_version"] == 2
    assert observed.attributes["zones"] == []  # the group's zones did not change
    assert observed.attributes["advanced_instance_config"] == {"ImageId": AMI}  # not declared


def test_read_only_the_given_refs(provider: AwsProvider, lineage: str) -> None:
    one = provider.create(machine(lineage, "h100"))
    two = provider.create(machine(lineage, "a100"))
    provider.api_calls.clear()
    refs = [
        ResourceRef(one.address, "machine_type", one.provider_ids),
        ResourceRef("machine_pool.gpu.machine_type.gone", "machine_type", {"group": "nope"}),
    ]
    read = provider.read(refs)
    # One call names the groups, one fetches the one template's latest version.
    assert provider.api_calls == {
        "DescribeAutoScalingGroups": 1,
        "DescribeLaunchTemplateVersions": 1,
    }
    assert [o.provider_ids for o in read] == [one.provider_ids]
    listed = {o.address: o for o in provider.list(lineage)}
    assert read[0].attributes == listed[one.address].attributes
    assert two.address in listed


def test_delete_then_not_found(provider: AwsProvider, lineage: str) -> None:
    spec = machine(lineage, warm=2)
    ids = provider.create(spec).provider_ids
    provider.delete(spec.address, "machine_type", ids, lineage=lineage)
    assert provider.list(lineage) == []
    ec2, _ = clients()
    running = [
        i
        for r in ec2.describe_instances()["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] == "running"
    ]
    assert running == []
    with pytest.raises(ProviderError) as caught:
        provider.delete(spec.address, "machine_type", ids, lineage=lineage)
    assert caught.value.kind is ErrorKind.NOT_FOUND


def test_replace_an_empty_group_makes_a_new_version(provider: AwsProvider, lineage: str) -> None:
    spec = machine(lineage, warm=0, size=2)
    ids = provider.create(spec).provider_ids
    changed = machine(lineage, warm=0, size=2, instance_type="p4de.24xlarge", user_data="new")
    rolling = RollingSpec(batch_size=1, destroy_first=False)
    observed = provider.replace(changed, ids, rolling)
    assert observed.provider_ids == ids
    assert observed.attributes["template_version"] == 2
    again = provider.replace(changed, ids, rolling)  # retried: no third version
    assert again.attributes["template_version"] == 2
    [listed] = provider.list(lineage)
    assert listed.attributes["instance_type"] == "p4de.24xlarge"
    assert listed.attributes["user_data"] == "new"
    assert "StartInstanceRefresh" not in provider.api_calls


def test_zones_chosen_by_poolform_read_back_as_undeclared(
    provider: AwsProvider, lineage: str
) -> None:
    """Without declared zones a group goes to every zone of the region, and reads back as []."""
    spec = machine(lineage, warm=0)
    ids = provider.create(spec).provider_ids
    _, asg = clients()

    def group() -> dict[str, Any]:
        found = asg.describe_auto_scaling_groups(AutoScalingGroupNames=[ids["group"]])
        return dict(found["AutoScalingGroups"][0])

    assert len(group()["AvailabilityZones"]) > 1
    assert provider.list(lineage)[0].attributes["zones"] == []
    rolling = RollingSpec(batch_size=1, destroy_first=False)
    provider.replace(machine(lineage, warm=0, zones=["us-east-1c"]), ids, rolling)
    assert group()["AvailabilityZones"] == ["us-east-1c"]
    assert provider.list(lineage)[0].attributes["zones"] == ["us-east-1c"]
    provider.replace(machine(lineage, warm=0), ids, rolling)
    assert provider.list(lineage)[0].attributes["zones"] == []
    asg.update_auto_scaling_group(
        AutoScalingGroupName=ids["group"], AvailabilityZones=["us-east-1a"]
    )
    assert provider.list(lineage)[0].attributes["zones"] == ["us-east-1a"]  # by hand: drift


def test_replace_of_a_deleted_group_recreates_it(provider: AwsProvider, lineage: str) -> None:
    spec = machine(lineage, warm=1)
    ids = provider.create(spec).provider_ids
    provider.delete(spec.address, "machine_type", {"group": ids["group"]}, lineage=lineage)
    new_spec = machine(lineage, warm=1, instance_type="p4d.24xlarge")
    observed = provider.replace(new_spec, ids, RollingSpec(1, False))
    assert observed.provider_ids["group"] != ids["group"]
    assert [o.provider_ids for o in provider.list(lineage)] == [observed.provider_ids]


def test_worker_pool_runs_setup_from_user_data(provider: AwsProvider, lineage: str) -> None:
    attributes = {
        "provider": "aws",
        "pool": {"workers": 2, "min_workers": None, "max_workers": None},
        "resources": {"instance_type": "c5.xlarge"},
        "setup": "pip install -r requirements.txt\necho ready",
        "file_mounts": {},
        "workdir": None,
        "envs": {"MODE": "it's on"},
        "secrets": {},
    }
    spec = ResourceSpec("worker_pool.cpu", "worker_pool", attributes, lineage, uuid.uuid4().hex)
    provider.create(spec)
    [observed] = provider.list(lineage)
    assert observed.resource_type == "worker_pool"
    expected: dict[str, Any] = {
        "instance_type": "c5.xlarge",
        "market_type": "ON_DEMAND",
        "setup": "pip install -r requirements.txt\necho ready",
        "envs": {"MODE": "it's on"},
        "workdir": None,
        "file_mounts": {},
        "secret_names": [],
        "min_size": 2,
        "max_size": 2,
        "desired": 2,
        "running": 2,
    }
    assert expected.items() <= observed.attributes.items()
    secret = ResourceSpec(
        "worker_pool.s",
        "worker_pool",
        {**attributes, "secrets": {"TOKEN": "x"}},
        lineage,
        uuid.uuid4().hex,
    )
    with pytest.raises(ProviderError, match="user data is readable") as caught:
        provider.create(secret)
    assert caught.value.kind is ErrorKind.PERMANENT


def test_control_plane_objects_round_trip(provider: AwsProvider, lineage: str) -> None:
    attributes = {"subject": "team/a", "pool": "quota", "priority": 5}
    spec = ResourceSpec("subject_policy.a", "subject_policy", attributes, lineage, "t-1")
    created = provider.create(spec)
    assert provider.create(spec).provider_ids == created.provider_ids  # token: idempotent
    updated = provider.update(
        ResourceSpec(spec.address, spec.resource_type, {**attributes, "priority": 9}, lineage, ""),
        created.provider_ids,
    )
    assert updated.attributes["priority"] == 9
    [listed] = provider.list(lineage)
    assert listed.attributes["priority"] == 9
    ref = ResourceRef(spec.address, spec.resource_type, created.provider_ids)
    assert provider.read([ref])[0].attributes["priority"] == 9
    provider.delete(spec.address, spec.resource_type, created.provider_ids, lineage=lineage)
    assert provider.list(lineage) == []
    # poolform's own objects: AWS is only listed (for groups), never changed.
    assert set(provider.api_calls) <= {"DescribeAutoScalingGroups", "DescribeLaunchTemplates"}


def test_import_tags_an_existing_group(provider: AwsProvider, lineage: str) -> None:
    ec2, asg = clients()
    template = ec2.create_launch_template(
        LaunchTemplateName="hand-made",
        LaunchTemplateData={"ImageId": AMI, "InstanceType": "m5.large"},
    )["LaunchTemplate"]
    asg.create_auto_scaling_group(
        AutoScalingGroupName="hand-made",
        LaunchTemplate={"LaunchTemplateId": template["LaunchTemplateId"], "Version": "$Latest"},
        MinSize=1,
        MaxSize=2,
        AvailabilityZones=["us-east-1a"],
    )
    address = "machine_pool.gpu.machine_type.m5"
    tags = {TAG_LINEAGE: lineage, TAG_ADDRESS: address}
    observed = provider.import_resource(address, "machine_type", "hand-made", tags)
    assert observed.provider_ids == {"group": "hand-made", "template": template["LaunchTemplateId"]}
    assert observed.attributes["instance_type"] == "m5.large"
    assert [o.address for o in provider.list(lineage)] == [address]
    with pytest.raises(ProviderError) as caught:
        provider.import_resource(address, "machine_type", "nope", tags)
    assert caught.value.kind is ErrorKind.NOT_FOUND


def test_api_calls_are_recorded_per_operation(provider: AwsProvider, lineage: str) -> None:
    provider.create(machine(lineage))
    assert provider.api_calls["CreateLaunchTemplate"] == 1
    assert provider.api_calls["CreateAutoScalingGroup"] == 1
    provider.api_calls.clear()
    provider.list(lineage)
    assert provider.api_calls == {
        "DescribeAutoScalingGroups": 1,
        "DescribeLaunchTemplates": 1,
        "DescribeLaunchTemplateVersions": 1,
    }


def test_settings_are_checked(make_provider: Callable[..., AwsProvider], lineage: str) -> None:
    with pytest.raises(ProviderError, match="did you mean 'image_id'") as caught:
        make_provider(imageid="ami-1")
    assert caught.value.kind is ErrorKind.PERMANENT
    no_ami = make_provider(image_id=None)
    with pytest.raises(ProviderError, match=r"provider_settings\.image_id"):
        no_ami.create(machine(lineage))


def test_region_argument_wins_over_the_environment(aws_env: str, tmp_path: Any) -> None:
    provider = AwsProvider(settings={}, state_dir=tmp_path, region="eu-west-1")
    try:
        assert provider.clients.region == "eu-west-1"
    finally:
        provider.close()


def test_missing_region_is_a_clear_permanent_error(
    aws_env: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    with pytest.raises(ProviderError, match="set `region` on the Cluster") as caught:
        AwsProvider(settings={}, state_dir=tmp_path)
    assert caught.value.kind is ErrorKind.PERMANENT


def test_a_replace_cut_short_after_the_group_moved_to_the_new_version_says_so(
    provider: AwsProvider, lineage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the resize the group launches from the new version; a refresh that fails there
    left only the cloud's words, hiding that the replacement was half done."""
    spec = machine(lineage, warm=1)
    ids = provider.create(spec).provider_ids

    def refused(*_: object) -> None:
        raise ProviderError(ErrorKind.PERMANENT, "instance refresh refused", address=spec.address)

    monkeypatch.setattr(provider.waiter, "refresh", refused)
    changed = machine(lineage, warm=1, instance_type="p4de.24xlarge")
    with pytest.raises(ProviderError) as caught:
        provider.replace(changed, ids, RollingSpec(batch_size=1, destroy_first=False))
    assert caught.value.kind is ErrorKind.PERMANENT
    assert caught.value.message.startswith(
        f"replacement half done: group {ids['group']} launches from template "
        f"{ids['template']} version 2 now; moving its instances over failed: "
        "instance refresh refused"
    )
