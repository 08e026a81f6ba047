"""Control-plane resources (kept by the embedded local provider), worker pools as GCE groups,
names, and how the registry finds the provider."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from providers.gcp import GcpProvider
from providers.gcp.names import MAX_NAME, resource_name
from providers.gcp.template import project, skeleton
from providers.protocol import ErrorKind, ProviderError, ResourceRef, ResourceSpec, RollingSpec
from providers.registry import get_provider
from tests.gcp.conftest import LINEAGE, REGION, machine_type
from tests.gcp.fake_cloud import FakeCloud


def _spec(resource_type: str, attributes: dict[str, Any], token: str = "tok") -> ResourceSpec:
    return ResourceSpec(f"{resource_type}.demo", resource_type, attributes, LINEAGE, token)


def test_control_plane_round_trip(provider: GcpProvider, cloud: FakeCloud) -> None:
    spec = _spec("resource_pool", {"capacity": {"gpu": 8}})
    made = provider.create(spec)
    assert provider.create(spec).provider_ids == made.provider_ids  # idempotent by token
    provider.create(machine_type())
    assert not cloud.log or all("resource_pool" not in r.path for r in cloud.log)

    listed = provider.list(LINEAGE)
    assert sorted(o.resource_type for o in listed) == ["machine_type", "resource_pool"]
    ref = ResourceRef(spec.address, "resource_pool", made.provider_ids)
    assert provider.read([ref])[0].attributes == {"capacity": {"gpu": 8}}

    bigger = _spec("resource_pool", {"capacity": {"gpu": 16}})
    assert provider.update(bigger, made.provider_ids).attributes == {"capacity": {"gpu": 16}}
    replaced = provider.replace(
        _spec("resource_pool", {"capacity": {"gpu": 4}}, token="tok-2"),
        made.provider_ids,
        RollingSpec(1, False),
    )
    provider.delete(spec.address, "resource_pool", replaced.provider_ids, lineage=LINEAGE)
    with pytest.raises(ProviderError) as raised:
        provider.delete(spec.address, "resource_pool", replaced.provider_ids, lineage=LINEAGE)
    assert raised.value.kind is ErrorKind.NOT_FOUND
    assert [o.resource_type for o in provider.list(LINEAGE)] == ["machine_type"]


def test_worker_pool_runs_setup_as_the_startup_script(
    provider: GcpProvider, cloud: FakeCloud
) -> None:
    spec = _spec(
        "worker_pool",
        {
            "resources": {"instance_type": "n2-standard-4"},
            "pool": {"workers": 2},
            "setup": "pip install -r requirements.txt\necho 'ready'\n",
            "envs": {"MODEL": "llama 3", "QUOTE": "it's"},
        },
    )
    observed = provider.create(spec)
    assert observed.attributes["running"] == 2
    assert observed.attributes["instance_type"] == "n2-standard-4"
    assert observed.attributes["setup"] == spec.attributes["setup"]
    assert observed.attributes["envs"] == {"MODEL": "llama 3", "QUOTE": "it's"}
    assert observed.attributes["secret_names"] == [] and observed.attributes["workdir"] is None
    script = cloud.templates[observed.provider_ids["template"]]["properties"]["metadata"]
    assert "export MODEL='llama 3'" in script["items"][0]["value"]
    assert provider.list(LINEAGE)[0].attributes == observed.attributes


@pytest.mark.parametrize(
    ("attributes", "words"),
    [
        ({"secrets": {"TOKEN": "x"}}, "cannot take `secrets`"),
        ({"workdir": "."}, "cannot take `workdir`"),
        ({"resources": {"instance_type": "m5.large"}}, "not a GCE machine type"),
    ],
)
def test_worker_pools_gce_cannot_serve_are_refused(
    provider: GcpProvider, cloud: FakeCloud, attributes: dict[str, Any], words: str
) -> None:
    base = {"resources": {"instance_type": "n2-standard-4"}, "pool": {"workers": 1}}
    with pytest.raises(ProviderError) as raised:
        provider.create(_spec("worker_pool", {**base, **attributes}))
    assert raised.value.kind is ErrorKind.PERMANENT and words in raised.value.message
    assert not cloud.log  # refused before any call


def test_names_are_valid_deterministic_and_short() -> None:
    long_address = "machine_pool.p.machine_type." + "Very_Long-Name." * 3 + "x" * 80
    for address in ("machine_pool.demo.machine_type.reserved-a100", long_address, "a.---"):
        name = resource_name(LINEAGE, address, "token")
        assert name == resource_name(LINEAGE, address, "token")
        assert len(name) <= MAX_NAME
        assert re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name)
    assert resource_name(LINEAGE, "a.b", "t1") != resource_name(LINEAGE, "a.b", "t2")


def test_projection_reads_back_only_what_was_passed() -> None:
    passed = {
        "instance_properties": {
            "labels": {"team": "ml"},
            "metadata": {"items": [{"key": "k", "value": "v"}]},
            "disks": [{"initialize_params": {"disk_size_gb": 100}}],
        }
    }
    cloud = {
        "instanceProperties": {
            "labels": {"team": "ml", "poolform-lineage": "x"},
            "metadata": {
                "items": [{"key": "startup-script", "value": "s"}, {"key": "k", "value": "v"}]
            },
            "disks": [{"initializeParams": {"diskSizeGb": "100", "labels": {}}, "boot": True}],
            "machineType": "n2-standard-8",
        }
    }
    assert project(cloud, skeleton(passed)) == passed


def test_registry_builds_it_and_settings_come_from_the_cluster(
    cloud: FakeCloud, endpoint: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POOLFORM_GCP_ENDPOINT", endpoint.url)
    provider = get_provider("gcp", {"project": cloud.project}, tmp_path, region=REGION)
    try:
        assert provider.list(LINEAGE) == []
    finally:
        provider.close()
    with pytest.raises(ProviderError, match="region is required"):
        get_provider("gcp", {"project": "p"}, tmp_path)


def test_a_huge_advanced_config_still_fits_the_description(
    provider: GcpProvider, cloud: FakeCloud
) -> None:
    labels = {f"label-{i:03d}": "x" for i in range(60)}
    advanced = {"instanceProperties": {"labels": labels, "minCpuPlatform": "Intel Ice Lake"}}
    observed = provider.create(machine_type(advanced=advanced))
    template = cloud.templates[observed.provider_ids["template"]]
    assert len(template["description"]) <= 2048
    # read back whole (poolform's own labels included): drift shows them, nothing is lost
    read_back = observed.attributes["advanced_instance_config"]["instanceProperties"]
    assert read_back["minCpuPlatform"] == "Intel Ice Lake"
    assert labels.items() <= read_back["labels"].items()
