"""Requests moto cannot check, checked with botocore's Stubber instead.

moto 5.2 does not implement start_instance_refresh / describe_instance_refreshes (HTTP 500),
ignores CapacityReservationSpecification when it launches, and never fails a launch for lack
of capacity (so a failed scaling activity never appears). These tests stub the botocore clients
the provider really uses: each request is validated against the AWS API model and compared
with the parameters expected, and each canned response is validated against the model too.
Nothing here goes over the network.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import ANY, Stubber

from providers.aws import AwsProvider
from providers.aws.errors import Launch
from providers.aws.groups import resource_name
from providers.aws.rollout import preferences
from providers.protocol import ErrorKind, ProviderError, RollingSpec

from .conftest import AMI, machine

NAME = "poolform-machine_pool.gpu.machine_type.h100-0123456789abcdef"
TEMPLATE = "lt-0123456789abcdef0"
RESERVATION = {
    "CapacityReservationSpecification": {
        "CapacityReservationTarget": {"CapacityReservationId": "cr-0123456789abcdef0"}
    }
}


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AwsProvider]:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    ticks = itertools.count(step=6)
    provider = AwsProvider(
        settings={"image_id": AMI, "poll_interval": 0, "capacity_timeout": 10},
        state_dir=tmp_path,
        region="us-east-1",
        sleep=lambda _: None,
        clock=lambda: float(next(ticks)),
    )
    yield provider
    provider.close()


def group(instances: int, desired: int | None = None, version: str = "1") -> dict[str, Any]:
    return {
        "AutoScalingGroupName": NAME,
        "LaunchTemplate": {"LaunchTemplateId": TEMPLATE, "Version": "$Latest"},
        "MinSize": 0,
        "MaxSize": 4,
        "DesiredCapacity": instances if desired is None else desired,
        "DefaultCooldown": 300,
        "AvailabilityZones": ["us-east-1a"],
        "HealthCheckType": "EC2",
        "CreatedTime": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        "Instances": [
            {
                "InstanceId": f"i-{n:017x}",
                "AvailabilityZone": "us-east-1a",
                "LifecycleState": "InService",
                "HealthStatus": "Healthy",
                "ProtectedFromScaleIn": False,
                "LaunchTemplate": {"LaunchTemplateId": TEMPLATE, "Version": version},
            }
            for n in range(instances)
        ],
        "Tags": [
            {"Key": "poolform:lineage", "Value": "L", "PropagateAtLaunch": True},
            {"Key": "poolform:address", "Value": "machine_pool.gpu.machine_type.h100"},
            {"Key": "poolform:token", "Value": "create-token"},
        ],
    }


def latest_version(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "LaunchTemplateVersions": [
            {"LaunchTemplateId": TEMPLATE, "VersionNumber": 1, "LaunchTemplateData": data}
        ]
    }


@pytest.mark.parametrize(
    ("batch", "capacity", "destroy_first", "low", "high"),
    [
        (1, 4, False, 100, 125),  # surge one instance
        (2, 4, False, 100, 150),
        (1, 3, False, 100, 134),  # ceil: at least one new instance fits
        (10, 4, False, 100, 200),  # the batch is capped at the group
        (1, 4, True, 75, 100),  # reservation: no surge, one down at a time
        (1, 3, True, 66, 100),
        (1, 1, True, 0, 100),
        (1, 200, True, 99, 100),  # never 100/100: nothing could move
    ],
)
def test_refresh_preferences_from_rolling_spec(
    batch: int, capacity: int, destroy_first: bool, low: int, high: int
) -> None:
    prefs = preferences(RollingSpec(batch, destroy_first), capacity, warmup=None)
    assert prefs == {
        "MinHealthyPercentage": low,
        "MaxHealthyPercentage": high,
        "SkipMatching": True,
    }


def test_replace_rolls_instances_with_an_instance_refresh(offline: AwsProvider) -> None:
    """A reservation-backed machine type: new version, then a refresh without surge."""
    old = {"ImageId": AMI, "InstanceType": "p4d.24xlarge", **RESERVATION}
    spec = machine(
        "L", warm=0, size=4, instance_type="p5.48xlarge", advanced=RESERVATION, zones=["us-east-1a"]
    )
    ids = {"group": NAME, "template": TEMPLATE}
    with Stubber(offline.clients.ec2) as ec2, Stubber(offline.clients.autoscaling) as asg:
        asg.add_response("describe_auto_scaling_groups", {"AutoScalingGroups": [group(4)]})
        ec2.add_response(
            "describe_launch_template_versions",
            latest_version(old),
            {"LaunchTemplateId": TEMPLATE, "Versions": ["$Latest"]},
        )
        ec2.add_response(
            "create_launch_template_version",
            {"LaunchTemplateVersion": {"LaunchTemplateId": TEMPLATE, "VersionNumber": 2}},
            {
                "LaunchTemplateId": TEMPLATE,
                "VersionDescription": ANY,
                "LaunchTemplateData": {
                    **RESERVATION,  # the full data, not a diff against version 1
                    "InstanceType": "p5.48xlarge",
                    "ImageId": AMI,
                    "TagSpecifications": [
                        {
                            "ResourceType": kind,
                            "Tags": [
                                {"Key": "poolform:lineage", "Value": "L"},
                                {
                                    "Key": "poolform:address",
                                    "Value": "machine_pool.gpu.machine_type.h100",
                                },
                                {"Key": "poolform:token", "Value": "create-token"},
                            ],
                        }
                        for kind in ("instance", "volume")
                    ],
                },
            },
        )
        ec2.add_response(
            "modify_launch_template", {}, {"LaunchTemplateId": TEMPLATE, "DefaultVersion": "2"}
        )
        asg.add_response(
            "update_auto_scaling_group",
            {},
            {
                "AutoScalingGroupName": NAME,
                "MinSize": 0,
                "MaxSize": 4,
                "LaunchTemplate": {"LaunchTemplateId": TEMPLATE, "Version": "$Latest"},
                "AvailabilityZones": ["us-east-1a"],
            },
        )
        asg.add_response(
            "start_instance_refresh",
            {"InstanceRefreshId": "refresh-1"},
            {
                "AutoScalingGroupName": NAME,
                "Strategy": "Rolling",
                "Preferences": {
                    "MinHealthyPercentage": 75,
                    "MaxHealthyPercentage": 100,
                    "SkipMatching": True,
                },
            },
        )
        for status in ("Pending", "InProgress", "Successful"):
            asg.add_response(
                "describe_instance_refreshes",
                {"InstanceRefreshes": [{"InstanceRefreshId": "refresh-1", "Status": status}]},
                {
                    "AutoScalingGroupName": NAME,
                    "MaxRecords": 1,
                    "InstanceRefreshIds": ["refresh-1"],
                },
            )
        asg.add_response(
            "describe_auto_scaling_groups", {"AutoScalingGroups": [group(4, version="2")]}
        )
        observed = offline.replace(spec, ids, RollingSpec(batch_size=1, destroy_first=True))
        ec2.assert_no_pending_responses()
        asg.assert_no_pending_responses()
    assert observed.provider_ids == ids
    assert observed.attributes["template_version"] == 2
    assert observed.attributes["advanced_instance_config"] == RESERVATION


def test_create_passes_the_capacity_reservation(offline: AwsProvider) -> None:
    spec = machine("L", warm=0, size=2, advanced=RESERVATION, zones=["us-east-1a"], token="tok-1")
    with Stubber(offline.clients.ec2) as ec2, Stubber(offline.clients.autoscaling) as asg:
        ec2.add_response(
            "create_launch_template",
            {"LaunchTemplate": {"LaunchTemplateId": TEMPLATE, "LatestVersionNumber": 1}},
            {
                "LaunchTemplateName": ANY,
                "ClientToken": "tok-1",
                "VersionDescription": ANY,
                "LaunchTemplateData": {
                    **RESERVATION,
                    "InstanceType": "p5.48xlarge",
                    "ImageId": AMI,
                    "TagSpecifications": ANY,
                },
                "TagSpecifications": [{"ResourceType": "launch-template", "Tags": ANY}],
            },
        )
        asg.add_response(
            "create_auto_scaling_group",
            {},
            {
                "AutoScalingGroupName": ANY,
                "LaunchTemplate": {"LaunchTemplateId": TEMPLATE, "Version": "$Latest"},
                "MinSize": 0,
                "MaxSize": 2,
                "DesiredCapacity": 0,
                "Tags": ANY,
                "AvailabilityZones": ["us-east-1a"],
            },
        )
        asg.add_response("describe_auto_scaling_groups", {"AutoScalingGroups": [group(0)]})
        observed = offline.create(spec)
    assert observed.attributes["advanced_instance_config"] == RESERVATION


def test_a_failed_spot_launch_is_a_capacity_error(offline: AwsProvider) -> None:
    """A group is created, but AWS cannot launch its instances: the scaling activity says so."""
    spec = machine(
        "L", warm=2, size=2, market="SPOT", instance_type="p4de.24xlarge", zones=["us-east-1a"]
    )
    name = resource_name(spec.lineage, spec.address, spec.token)
    message = (
        "Could not launch Spot Instances. InsufficientInstanceCapacity - There is no Spot "
        "capacity available that matches your request. Launching EC2 instance failed."
    )
    with Stubber(offline.clients.ec2) as ec2, Stubber(offline.clients.autoscaling) as asg:
        ec2.add_response(
            "create_launch_template",
            {"LaunchTemplate": {"LaunchTemplateId": TEMPLATE, "LatestVersionNumber": 1}},
        )
        asg.add_response("create_auto_scaling_group", {})
        asg.add_response("describe_auto_scaling_groups", {"AutoScalingGroups": [group(0, 2)]})
        asg.add_response(
            "describe_scaling_activities",
            {
                "Activities": [
                    {
                        "ActivityId": "a-1",
                        "AutoScalingGroupName": NAME,
                        "Cause": "desired 2",
                        "StartTime": dt.datetime.now(dt.UTC),
                        "StatusCode": "Failed",
                        "StatusMessage": message,
                    }
                ]
            },
            {"AutoScalingGroupName": name, "MaxRecords": 20},
        )
        with pytest.raises(ProviderError) as caught:
            offline.create(spec)
    assert caught.value.kind is ErrorKind.CAPACITY
    assert "no capacity for spot p4de.24xlarge" in caught.value.message
    assert message in caught.value.message


def test_a_launch_that_never_comes_times_out_as_capacity(offline: AwsProvider) -> None:
    waiter = offline.waiter
    with Stubber(offline.clients.autoscaling) as asg:
        for _ in range(2):
            asg.add_response("describe_auto_scaling_groups", {"AutoScalingGroups": [group(1, 3)]})
            asg.add_response("describe_scaling_activities", {"Activities": []})
        with pytest.raises(ProviderError, match=r"1 of 3 on-demand m5\.large instances") as caught:
            waiter.capacity(NAME, 3, waiter.now(), "addr", Launch("m5.large", "ON_DEMAND"))
    assert caught.value.kind is ErrorKind.CAPACITY


def test_a_refresh_already_running_is_waited_for(offline: AwsProvider) -> None:
    """A retried replace: AWS refuses a second refresh, the first one is awaited instead."""
    with Stubber(offline.clients.autoscaling) as asg:
        asg.add_client_error("start_instance_refresh", "InstanceRefreshInProgress", "busy")
        asg.add_response(
            "describe_instance_refreshes",
            {"InstanceRefreshes": [{"InstanceRefreshId": "refresh-0", "Status": "Successful"}]},
            {"AutoScalingGroupName": NAME, "MaxRecords": 1},
        )
        refresh = offline.waiter.refresh(NAME, {}, "addr", Launch("m5.large", "ON_DEMAND"))
    assert refresh == "refresh-0"


def test_a_failed_refresh_reports_the_reason(offline: AwsProvider) -> None:
    reason = "InsufficientInstanceCapacity: no spot capacity for p4de.24xlarge in us-east-1a"
    with Stubber(offline.clients.autoscaling) as asg:
        asg.add_response("start_instance_refresh", {"InstanceRefreshId": "refresh-1"})
        asg.add_response(
            "describe_instance_refreshes",
            {
                "InstanceRefreshes": [
                    {"InstanceRefreshId": "refresh-1", "Status": "Failed", "StatusReason": reason}
                ]
            },
        )
        with pytest.raises(ProviderError) as caught:
            offline.waiter.refresh(NAME, {}, "addr", Launch("p4de.24xlarge", "SPOT"))
    assert caught.value.kind is ErrorKind.CAPACITY
    assert reason in caught.value.message
    assert "spot p4de.24xlarge" in caught.value.message
