"""Effective advanced_instance_config: Anyscale's machine pool merge rules and precedence."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.effective import (
    effective_compute_config,
    effective_worker_config,
    merge_advanced_config,
)
from schemas.compute_config import ComputeConfig
from schemas.machine_pool import MachinePool


def tag(key: str, value: str) -> dict[str, str]:
    return {"Key": key, "Value": value}


def tag_spec(resource_type: str, *tags: dict[str, str]) -> dict[str, Any]:
    return {"ResourceType": resource_type, "Tags": list(tags)}


AWS_CASES = [
    pytest.param(
        {"TagSpecifications": [tag_spec("instance", tag("team", "ml"), tag("env", "prod"))]},
        {"TagSpecifications": [tag_spec("instance", tag("env", "dev"), tag("owner", "ana"))]},
        {
            "TagSpecifications": [
                tag_spec("instance", tag("team", "ml"), tag("env", "dev"), tag("owner", "ana"))
            ]
        },
        id="tags-merge-by-key-within-resource-type",
    ),
    pytest.param(
        {"TagSpecifications": [tag_spec("instance", tag("team", "ml"))]},
        {"TagSpecifications": [tag_spec("volume", tag("team", "infra"))]},
        {
            "TagSpecifications": [
                tag_spec("instance", tag("team", "ml")),
                tag_spec("volume", tag("team", "infra")),
            ]
        },
        id="tag-spec-new-resource-type-appended",
    ),
    pytest.param(
        {
            "TagSpecifications": [
                tag_spec("instance", tag("a", "1")),
                tag_spec("volume", tag("b", "2")),
            ]
        },
        {"TagSpecifications": [tag_spec("volume", tag("b", "3"))]},
        {
            "TagSpecifications": [
                tag_spec("instance", tag("a", "1")),
                tag_spec("volume", tag("b", "3")),
            ]
        },
        id="tag-spec-missing-from-override-kept",
    ),
    pytest.param(
        {"TagSpecifications": [{"ResourceType": "instance"}]},
        {"TagSpecifications": [tag_spec("instance", tag("a", "1"))]},
        {"TagSpecifications": [tag_spec("instance", tag("a", "1"))]},
        id="tags-added-to-spec-without-tags",
    ),
    pytest.param(
        {
            "NetworkInterfaces": [
                {"DeviceIndex": 0, "SubnetId": "s-a", "Groups": ["sg-1"]},
                {"DeviceIndex": 1, "NetworkCardIndex": 1, "SubnetId": "s-b"},
            ]
        },
        {
            "NetworkInterfaces": [
                {"DeviceIndex": 0, "NetworkCardIndex": 1, "SubnetId": "s-c"},
                {"DeviceIndex": 1, "NetworkCardIndex": 1, "InterfaceType": "efa"},
            ]
        },
        {
            "NetworkInterfaces": [
                {"DeviceIndex": 0, "SubnetId": "s-a", "Groups": ["sg-1"]},
                {
                    "DeviceIndex": 1,
                    "NetworkCardIndex": 1,
                    "SubnetId": "s-b",
                    "InterfaceType": "efa",
                },
                {"DeviceIndex": 0, "NetworkCardIndex": 1, "SubnetId": "s-c"},
            ]
        },
        id="network-interfaces-composite-key-same-device-index-distinct",
    ),
    pytest.param(
        {"NetworkInterfaces": [{"DeviceIndex": 0, "SubnetId": "s-a", "Groups": ["sg-1"]}]},
        {"NetworkInterfaces": [{"DeviceIndex": 0, "NetworkCardIndex": 0, "Groups": ["sg-2"]}]},
        {
            "NetworkInterfaces": [
                {"DeviceIndex": 0, "SubnetId": "s-a", "Groups": ["sg-2"], "NetworkCardIndex": 0}
            ]
        },
        id="network-interfaces-missing-card-index-is-zero",
    ),
    pytest.param(
        {
            "BlockDeviceMappings": [
                {"DeviceName": "/dev/sda1", "Ebs": {"VolumeSize": 100, "VolumeType": "gp3"}},
                {"DeviceName": "/dev/sdb", "Ebs": {"VolumeSize": 50}},
            ]
        },
        {
            "BlockDeviceMappings": [
                {"DeviceName": "/dev/sdc", "Ebs": {"VolumeSize": 10}},
                {"DeviceName": "/dev/sda1", "Ebs": {"VolumeSize": 500, "Iops": 6000}},
            ]
        },
        {
            "BlockDeviceMappings": [
                {
                    "DeviceName": "/dev/sda1",
                    "Ebs": {"VolumeSize": 500, "VolumeType": "gp3", "Iops": 6000},
                },
                {"DeviceName": "/dev/sdb", "Ebs": {"VolumeSize": 50}},
                {"DeviceName": "/dev/sdc", "Ebs": {"VolumeSize": 10}},
            ]
        },
        id="block-devices-by-device-name-nested-ebs-merged",
    ),
    pytest.param(
        {"Placement": {"GroupName": "pg-1", "Tenancy": "default"}, "InstanceType": "x"},
        {"Placement": {"AvailabilityZone": "us-west-2a"}},
        {"Placement": {"AvailabilityZone": "us-west-2a"}, "InstanceType": "x"},
        id="other-nested-map-replaced-not-merged",
    ),
    pytest.param(
        {"SecurityGroupIds": ["sg-1", "sg-2"]},
        {"SecurityGroupIds": ["sg-3"]},
        {"SecurityGroupIds": ["sg-3"]},
        id="other-list-replaced",
    ),
    pytest.param(
        {"IamInstanceProfile": {"Arn": "a"}, "EbsOptimized": True},
        {"UserData": "x"},
        {"IamInstanceProfile": {"Arn": "a"}, "EbsOptimized": True, "UserData": "x"},
        id="fields-missing-from-override-kept",
    ),
    pytest.param(
        {"CapacityReservationSpecification": {"CapacityReservationTarget": {"Id": "cr-1"}}},
        {"CapacityReservationSpecification": {"CapacityReservationPreference": "open"}},
        {"CapacityReservationSpecification": {"CapacityReservationPreference": "open"}},
        id="capacity-reservation-replaced-wholesale",
    ),
    pytest.param(
        {"NetworkInterfaces": [{"SubnetId": "s-a"}]},
        {"NetworkInterfaces": [{"SubnetId": "s-b"}]},
        {"NetworkInterfaces": [{"SubnetId": "s-a"}, {"SubnetId": "s-b"}]},
        id="entries-without-identity-key-appended",
    ),
]


@pytest.mark.parametrize("provider", ["aws", "local"])
@pytest.mark.parametrize(("base", "override", "expected"), AWS_CASES)
def test_aws_merge(
    base: dict[str, Any], override: dict[str, Any], expected: dict[str, Any], provider: Any
) -> None:
    assert merge_advanced_config(base, override, provider) == expected


def gcp(**properties: Any) -> dict[str, Any]:
    return {"instance_properties": properties}


BOOT = {"device_name": "boot", "boot": True, "initialize_params": {"disk_size_gb": 100}}
DATA = {"device_name": "data", "initialize_params": {"disk_size_gb": 10}}
SCRATCH = {"device_name": "scratch", "type": "SCRATCH"}

GCP_CASES = [
    pytest.param(
        gcp(labels={"team": "ml", "env": "prod"}),
        gcp(labels={"env": "dev", "owner": "ana"}),
        gcp(labels={"team": "ml", "env": "dev", "owner": "ana"}),
        id="labels-merged-by-key",
    ),
    pytest.param(
        gcp(network_interfaces=[{"network": "a", "subnetwork": "sa"}, {"network": "b"}]),
        gcp(network_interfaces=[{"subnetwork": "sx"}]),
        gcp(network_interfaces=[{"network": "a", "subnetwork": "sx"}, {"network": "b"}]),
        id="network-interfaces-by-index",
    ),
    pytest.param(
        gcp(network_interfaces=[{"network": "a"}]),
        gcp(network_interfaces=[{}, {"network": "b"}]),
        gcp(network_interfaces=[{"network": "a"}, {"network": "b"}]),
        id="network-interfaces-extra-index-appended",
    ),
    pytest.param(
        gcp(disks=[BOOT, DATA]),
        gcp(disks=[{"device_name": "data", "initialize_params": {"disk_type": "pd-ssd"}}]),
        gcp(
            disks=[
                BOOT,
                {
                    "device_name": "data",
                    "initialize_params": {"disk_size_gb": 10, "disk_type": "pd-ssd"},
                },
            ]
        ),
        id="disks-by-device-name",
    ),
    pytest.param(
        gcp(disks=[BOOT, DATA]),
        gcp(disks=[SCRATCH, {"device_name": "boot", "initialize_params": {"disk_size_gb": 500}}]),
        gcp(
            disks=[
                {"device_name": "boot", "boot": True, "initialize_params": {"disk_size_gb": 500}},
                DATA,
                SCRATCH,
            ]
        ),
        id="boot-disk-first-when-override-lists-it-later",
    ),
    pytest.param(
        gcp(disks=[DATA, BOOT]),
        gcp(disks=[SCRATCH]),
        gcp(disks=[BOOT, DATA, SCRATCH]),
        id="boot-disk-first-when-base-lists-it-later",
    ),
    pytest.param(
        gcp(disks=[DATA]),
        gcp(disks=[SCRATCH, BOOT]),
        gcp(disks=[BOOT, DATA, SCRATCH]),
        id="new-boot-disk-moved-first",
    ),
    pytest.param(
        gcp(disks=[BOOT, DATA]),
        gcp(disks=[{"boot": True, "initialize_params": {"disk_size_gb": 1000}}]),
        gcp(
            disks=[
                {"device_name": "boot", "boot": True, "initialize_params": {"disk_size_gb": 1000}},
                DATA,
            ]
        ),
        id="unnamed-override-boot-disk-modifies-base-boot-disk",
    ),
    pytest.param(
        {"instanceProperties": {"labels": {"a": "1"}, "networkInterfaces": [{"network": "a"}]}},
        {"instanceProperties": {"labels": {"b": "2"}, "networkInterfaces": [{"stackType": "V4"}]}},
        {
            "instanceProperties": {
                "labels": {"a": "1", "b": "2"},
                "networkInterfaces": [{"network": "a", "stackType": "V4"}],
            }
        },
        id="camel-case-spellings",
    ),
    pytest.param(
        {"instanceProperties": {"networkInterfaces": [{"network": "a"}], "disks": [BOOT]}},
        gcp(
            network_interfaces=[{"subnetwork": "s"}],
            disks=[{"deviceName": "boot", "autoDelete": True}],
        ),
        {
            "instanceProperties": {
                "networkInterfaces": [{"network": "a", "subnetwork": "s"}],
                "disks": [{**BOOT, "autoDelete": True}],
            }
        },
        id="mixed-spellings-match-and-keep-base-spelling",
    ),
    pytest.param(
        {},
        {"instanceProperties": {"labels": {"a": "1"}}},
        {"instanceProperties": {"labels": {"a": "1"}}},
        id="override-spelling-when-base-has-none",
    ),
    pytest.param(
        gcp(labels={"a": "1"}),
        gcp(disks=[DATA, BOOT]),
        gcp(labels={"a": "1"}, disks=[BOOT, DATA]),
        id="boot-disk-first-when-base-has-no-disks",
    ),
    pytest.param(
        gcp(scheduling={"preemptible": True, "automatic_restart": False}, machine_type="a2"),
        gcp(scheduling={"provisioning_model": "SPOT"}),
        gcp(scheduling={"provisioning_model": "SPOT"}, machine_type="a2"),
        id="other-nested-map-under-instance-properties-replaced",
    ),
    pytest.param(
        gcp(tags={"items": ["a", "b"]}),
        gcp(tags={"items": ["c"]}),
        gcp(tags={"items": ["c"]}),
        id="other-field-under-instance-properties-replaced",
    ),
    pytest.param(
        {"metadata": {"a": "1"}, **gcp(labels={"x": "1"})},
        {"metadata": {"b": "2"}},
        {"metadata": {"b": "2"}, **gcp(labels={"x": "1"})},
        id="top-level-map-replaced",
    ),
    pytest.param(
        {"TagSpecifications": [tag_spec("instance", tag("a", "1"))]},
        {"TagSpecifications": [tag_spec("instance", tag("b", "2"))]},
        {"TagSpecifications": [tag_spec("instance", tag("b", "2"))]},
        id="aws-fields-replaced-on-gcp",
    ),
]


@pytest.mark.parametrize(("base", "override", "expected"), GCP_CASES)
def test_gcp_merge(
    base: dict[str, Any], override: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert merge_advanced_config(base, override, "gcp") == expected


def test_boot_disk_key_order_is_deterministic() -> None:
    merged = merge_advanced_config(gcp(disks=[DATA, BOOT]), gcp(disks=[SCRATCH]), "gcp")
    names = [d["device_name"] for d in merged["instance_properties"]["disks"]]
    assert names == ["boot", "data", "scratch"]


@pytest.mark.parametrize(
    ("base", "override"),
    [
        pytest.param(
            {"instance_properties": {}, "instanceProperties": {}}, {}, id="base-both-spellings"
        ),
        pytest.param(
            {}, {"instance_properties": {}, "instanceProperties": {}}, id="override-both-spellings"
        ),
        pytest.param(
            gcp(network_interfaces=[]),
            gcp(network_interfaces=[], networkInterfaces=[]),
            id="override-both-nic-spellings",
        ),
    ],
)
def test_both_spellings_rejected(base: dict[str, Any], override: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="spelling"):
        merge_advanced_config(base, override, "gcp")


@pytest.mark.parametrize(
    ("base", "override", "provider"),
    [
        pytest.param(AWS_CASES[0].values[0], AWS_CASES[0].values[1], "aws", id="aws-tags"),
        pytest.param(AWS_CASES[6].values[0], AWS_CASES[6].values[1], "aws", id="aws-block-devices"),
        pytest.param(GCP_CASES[4].values[0], GCP_CASES[4].values[1], "gcp", id="gcp-disks"),
        pytest.param(GCP_CASES[0].values[0], GCP_CASES[0].values[1], "gcp", id="gcp-labels"),
    ],
)
def test_inputs_not_mutated_and_result_not_aliased(
    base: dict[str, Any], override: dict[str, Any], provider: Any
) -> None:
    base_before, override_before = copy.deepcopy(base), copy.deepcopy(override)
    merged = merge_advanced_config(base, override, provider)
    assert (base, override) == (base_before, override_before)

    def scramble(value: Any) -> None:  # mutate every container of the result in place
        if isinstance(value, dict):
            for child in value.values():
                scramble(child)
            value["__scrambled__"] = True
        elif isinstance(value, list):
            for child in value:
                scramble(child)
            value.append("__scrambled__")

    scramble(merged)
    assert (base, override) == (base_before, override_before)


# --- precedence -----------------------------------------------------------------------------

POOL = MachinePool.model_validate(
    {
        "name": "gpu-pool",
        "machine_types": [
            {
                "machine_type": "a100",
                "launch_templates": [
                    {
                        "instance_type": "p4de.24xlarge",
                        "market_type": "SPOT",
                        "advanced_instance_config": {
                            "TagSpecifications": [
                                tag_spec("instance", tag("src", "template"), tag("tpl", "1"))
                            ],
                            "SecurityGroupIds": ["sg-template"],
                            "KeyName": "template-key",
                        },
                    }
                ],
                "partitions": [{"name": "p", "size": 4}],
            }
        ],
    }
)


def compute_config(group_config: dict[str, Any], *, pool: str | None = "gpu-pool") -> ComputeConfig:
    flags = {"cloud_deployment": {"machine_pool": pool}} if pool else None
    return ComputeConfig.model_validate(
        {
            "name": "cc",
            "head_node": {"instance_type": "m5.xlarge"},
            "advanced_instance_config": {
                "TagSpecifications": [tag_spec("instance", tag("src", "cluster"), tag("cl", "1"))],
                "SecurityGroupIds": ["sg-cluster"],
            },
            "worker_nodes": [
                {
                    "name": "gpus",
                    "instance_type": "a100" if pool else "g5.xlarge",
                    "min_nodes": 1,
                    "max_nodes": 3,
                    "flags": flags,
                    "advanced_instance_config": group_config,
                }
            ],
        }
    )


PRECEDENCE_CASES = [
    pytest.param(
        {"TagSpecifications": [tag_spec("instance", tag("src", "group"))]},
        {
            "TagSpecifications": [
                tag_spec("instance", tag("src", "group"), tag("tpl", "1"), tag("cl", "1"))
            ],
            "SecurityGroupIds": ["sg-cluster"],
            "KeyName": "template-key",
        },
        id="group-beats-cluster-beats-template",
    ),
    pytest.param(
        {},
        {
            "TagSpecifications": [
                tag_spec("instance", tag("src", "cluster"), tag("tpl", "1"), tag("cl", "1"))
            ],
            "SecurityGroupIds": ["sg-cluster"],
            "KeyName": "template-key",
        },
        id="cluster-beats-template",
    ),
    pytest.param(
        {"SecurityGroupIds": ["sg-group"], "KeyName": "group-key"},
        {
            "TagSpecifications": [
                tag_spec("instance", tag("src", "cluster"), tag("tpl", "1"), tag("cl", "1"))
            ],
            "SecurityGroupIds": ["sg-group"],
            "KeyName": "group-key",
        },
        id="group-replaces-list-from-cluster-and-template",
    ),
]


@pytest.mark.parametrize(("group_config", "expected"), PRECEDENCE_CASES)
def test_effective_worker_config_precedence(
    group_config: dict[str, Any], expected: dict[str, Any]
) -> None:
    config = compute_config(group_config)
    template = POOL.machine_types[0].template.advanced_instance_config
    effective = effective_worker_config(config, config.worker_nodes[0], template, "aws")
    assert effective == expected


def test_effective_worker_config_without_pool_is_cluster_then_group() -> None:
    config = compute_config({"KeyName": "group-key"}, pool=None)
    effective = effective_worker_config(config, config.worker_nodes[0], None, "aws")
    assert effective == {**config.advanced_instance_config, "KeyName": "group-key"}


def test_effective_compute_config_pool_group() -> None:
    config = compute_config({"KeyName": "group-key"})
    result = effective_compute_config(config, {"gpu-pool": POOL}, "aws")
    assert set(result) == {"gpus"}
    gpus = result["gpus"]
    assert {k: v for k, v in gpus.items() if k != "advanced_instance_config"} == {
        "instance_type": "p4de.24xlarge",
        "market_type": "SPOT",
        "machine_pool": "gpu-pool",
        "machine_type": "a100",
        "min_nodes": 1,
        "max_nodes": 3,
    }
    assert gpus["advanced_instance_config"]["KeyName"] == "group-key"
    assert gpus["advanced_instance_config"]["SecurityGroupIds"] == ["sg-cluster"]


def test_effective_compute_config_plain_group() -> None:
    config = compute_config({}, pool=None)
    gpus = effective_compute_config(config, {}, "aws")["gpus"]
    assert gpus["instance_type"] == "g5.xlarge"
    assert gpus["market_type"] == "ON_DEMAND"
    assert (gpus["machine_pool"], gpus["machine_type"]) == (None, None)
    assert gpus["advanced_instance_config"] == config.advanced_instance_config


@pytest.mark.parametrize(
    ("pools", "pool_name"),
    [
        pytest.param({}, "gpu-pool", id="unknown-pool"),
        pytest.param({"gpu-pool": POOL}, "gpu-pool", id="unknown-machine-type"),
    ],
)
def test_effective_compute_config_unknown_reference(
    pools: dict[str, MachinePool], pool_name: str
) -> None:
    config = compute_config({})
    if pools:  # point the group at a machine type the pool lacks
        group = config.worker_nodes[0].model_copy(update={"instance_type": "h100"})
        config = config.model_copy(update={"worker_nodes": [group]})
    with pytest.raises(KeyError):
        effective_compute_config(config, pools, "aws")


# --- properties ------------------------------------------------------------------------------

small_text = st.sampled_from(["a", "b", "c", "d"])
scalar = st.one_of(st.integers(-3, 3), small_text, st.booleans(), st.none())
other_value = st.recursive(
    scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(small_text, inner, max_size=3),
    max_leaves=6,
)
aws_config = st.fixed_dictionaries(
    {},
    optional={
        "TagSpecifications": st.lists(
            st.fixed_dictionaries(
                {
                    "ResourceType": st.sampled_from(["instance", "volume", "network-interface"]),
                    "Tags": st.lists(
                        st.fixed_dictionaries({"Key": small_text, "Value": small_text}), max_size=4
                    ),
                }
            ),
            max_size=3,
        ),
        "NetworkInterfaces": st.lists(
            st.fixed_dictionaries(
                {"DeviceIndex": st.integers(0, 2)},
                optional={"NetworkCardIndex": st.integers(0, 1), "SubnetId": small_text},
            ),
            max_size=4,
        ),
        "BlockDeviceMappings": st.lists(
            st.fixed_dictionaries(
                {"DeviceName": st.sampled_from(["/dev/sda1", "/dev/sdb", "/dev/sdc"])},
                optional={"Ebs": st.dictionaries(small_text, scalar, max_size=2)},
            ),
            max_size=3,
        ),
        "Placement": st.dictionaries(small_text, scalar, max_size=2),
        "SecurityGroupIds": st.lists(small_text, max_size=3),
        "KeyName": other_value,
    },
)
gcp_disk = st.fixed_dictionaries(
    {"device_name": st.sampled_from(["d0", "d1", "d2", "d3"])},
    optional={"boot": st.booleans(), "type": small_text},
)
gcp_config = st.fixed_dictionaries(
    {},
    optional={
        "instance_properties": st.fixed_dictionaries(
            {},
            optional={
                "labels": st.dictionaries(small_text, small_text, max_size=3),
                "network_interfaces": st.lists(
                    st.dictionaries(small_text, scalar, max_size=2), max_size=3
                ),
                "disks": st.lists(gcp_disk, max_size=4),
                "scheduling": st.dictionaries(small_text, scalar, max_size=2),
            },
        ),
        "metadata": other_value,
    },
)


def identity_keys(config: dict[str, Any], provider: str) -> set[tuple[Any, ...]]:
    keys: set[tuple[Any, ...]] = {("field", k) for k in config}
    if provider == "gcp":
        props = config.get("instance_properties", {})
        keys |= {("prop", k) for k in props}
        keys |= {("label", k) for k in props.get("labels", {})}
        keys |= {("nic", i) for i in range(len(props.get("network_interfaces", [])))}
        keys |= {("disk", d["device_name"]) for d in props.get("disks", [])}
        return keys
    for spec in config.get("TagSpecifications", []):
        keys.add(("spec", spec["ResourceType"]))
        keys |= {("tag", spec["ResourceType"], t["Key"]) for t in spec["Tags"]}
    for nic in config.get("NetworkInterfaces", []):
        keys.add(("nic", nic["DeviceIndex"], nic.get("NetworkCardIndex", 0)))
    keys |= {("bdm", b["DeviceName"]) for b in config.get("BlockDeviceMappings", [])}
    return keys


@settings(max_examples=200, deadline=None)
@given(base=aws_config, override=aws_config, provider=st.sampled_from(["aws", "local"]))
def test_aws_merge_properties(
    base: dict[str, Any], override: dict[str, Any], provider: Any
) -> None:
    assert merge_advanced_config(base, {}, provider) == base
    before = copy.deepcopy((base, override))
    merged = merge_advanced_config(base, override, provider)
    assert (base, override) == before
    assert identity_keys(base, provider) <= identity_keys(merged, provider)
    assert identity_keys(override, provider) <= identity_keys(merged, provider)
    assert merge_advanced_config(base, override, provider) == merged


@settings(max_examples=200, deadline=None)
@given(base=gcp_config, override=gcp_config)
def test_gcp_merge_properties(base: dict[str, Any], override: dict[str, Any]) -> None:
    assert merge_advanced_config(base, {}, "gcp") == base
    before = copy.deepcopy((base, override))
    merged = merge_advanced_config(base, override, "gcp")
    assert (base, override) == before
    assert identity_keys(base, "gcp") <= identity_keys(merged, "gcp")
    assert identity_keys(override, "gcp") <= identity_keys(merged, "gcp")
    # Whenever the override touches disks, a boot disk ends up first.
    disks = merged.get("instance_properties", {}).get("disks")
    touched = "disks" in override.get("instance_properties", {})
    if touched and any(d.get("boot") is True for d in disks):
        assert disks[0].get("boot") is True
