"""A delete goes by the ids the state records; they may name an object that is not this
resource's (a state pushed with another state's ids, a record edited by hand, an object `state
rm` let go). A refreshed plan sees that (it plans `gone`); `plan --no-refresh` reads nothing.

Before, its apply deleted whatever the ids named: another state's Auto Scaling group (AWS),
another address's group (local), a forgotten GCP group. Now every provider's delete reads the
object's tags first and refuses (exit 1, naming the address and the id), deleting nothing, when
they are not this lineage's at this address; a template a person swapped in stays too. And
`state rm` of such a record (the way out the refusal names) no longer strips the tags of this
state's object at another address (only another lineage's were left alone)."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest

from providers.gcp import GcpProvider
from providers.local import LocalProvider
from providers.protocol import ErrorKind, ProviderError
from tests.adversarial.conftest import Pf
from tests.aws.conftest import AMI, aws_env, moto_endpoint
from tests.gcp.conftest import LINEAGE, cloud, endpoint, machine_type, make_provider, provider
from tests.gcp.fake_cloud import FakeCloud

__all__ = ["aws_env", "cloud", "endpoint", "make_provider", "moto_endpoint", "provider"]

REGION = "us-west-2"


def aws_config(name: str, machine: str) -> str:
    return f"""kind: Cluster
name: {name}
provider: aws
region: {REGION}
provider_settings: {{image_id: {AMI}, poll_interval: 0}}
---
kind: MachinePool
name: gpu
machine_types:
  - machine_type: {machine}
    launch_templates: [{{instance_type: m5.large}}]
    partitions: [{{name: any, size: 2, warm: 0}}]
"""


def _applied(pf: Pf, directory: Path, text: str) -> Path:
    directory.mkdir()
    (directory / "config.yaml").write_text(text)
    done = pf("apply", directory, "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    return directory


def _ids(pf: Pf, directory: Path, address: str) -> dict[str, str]:
    shown = pf("state", "show", address, "--chdir", directory)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    ids: dict[str, str] = json.loads(shown.stdout)["provider_ids"]
    return ids


def _push_ids(pf: Pf, directory: Path, ids_by_address: dict[str, dict[str, str]]) -> None:
    """The state pulled, these records' ids edited, pushed back: what a user's edit does."""
    pulled = pf("state", "pull", "--chdir", directory)
    assert pulled.returncode == 0, pulled.stderr
    document = json.loads(pulled.stdout)
    for record in document["resources"]:
        if record["address"] in ids_by_address:
            record["provider_ids"] = ids_by_address[record["address"]]
    edited = directory.parent / f"{directory.name}-edited.json"
    edited.write_text(json.dumps(document))
    pushed = pf("state", "push", edited, "--chdir", directory)
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr


def test_aws_no_refresh_destroy_leaves_another_states_group(
    pf: Pf, tmp_path: Path, aws_env: str
) -> None:
    ours = _applied(pf, tmp_path / "ours", aws_config("ours", "alpha"))
    theirs = _applied(pf, tmp_path / "theirs", aws_config("theirs", "beta"))
    alpha, beta = "machine_pool.gpu.machine_type.alpha", "machine_pool.gpu.machine_type.beta"
    their_ids = _ids(pf, theirs, beta)
    _push_ids(pf, ours, {alpha: their_ids})

    planned = pf("plan", ours, "--no-refresh", "--destroy", "--out", tmp_path / "p.plan")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    applied = pf("apply", tmp_path / "p.plan", "--chdir", ours)
    assert applied.returncode == 1, applied.stdout + applied.stderr
    said = applied.stdout + applied.stderr
    assert alpha in said and their_ids["group"] in said and "another poolform state" in said
    assert "Traceback" not in said and "internal error" not in said

    asg = boto3.client("autoscaling", region_name=REGION)
    names = {g["AutoScalingGroupName"] for g in asg.describe_auto_scaling_groups()[
        "AutoScalingGroups"]}  # fmt: skip
    assert their_ids["group"] in names  # the other state's group stands
    ec2 = boto3.client("ec2", region_name=REGION)
    kept = ec2.describe_launch_templates(LaunchTemplateIds=[their_ids["template"]])
    assert kept["LaunchTemplates"]
    assert _ids(pf, ours, alpha) == their_ids  # the record stays: nothing was done
    assert pf("drift", theirs).returncode == 0


def test_local_no_refresh_delete_of_an_address_leaves_the_group_another_one_has(
    pf: Pf, quick: Path
) -> None:
    done = pf("apply", quick, "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    cpu, h100 = (f"machine_pool.shared-machines.machine_type.{n}" for n in ("cpu", "h100"))
    cpu_ids, h100_ids = _ids(pf, quick, cpu), _ids(pf, quick, h100)
    _push_ids(pf, quick, {cpu: h100_ids, h100: cpu_ids})  # the records' ids swapped

    planned = pf("plan", quick, "--no-refresh", "--destroy", "--target", cpu, "--out",
                 quick / "p.plan")  # fmt: skip
    assert planned.returncode == 0, planned.stdout + planned.stderr
    applied = pf("apply", quick / "p.plan", "--chdir", quick)
    assert applied.returncode == 1, applied.stdout + applied.stderr
    said = applied.stdout + applied.stderr
    assert cpu in said and h100_ids["group"] in said and f"this state's {h100}" in said
    lineage = _lineage(pf, quick)
    groups = LocalProvider(state_dir=quick / ".poolform").list(lineage)
    assert h100_ids["group"] in {o.provider_ids.get("group") for o in groups}

    # The way out the refusal names: `state rm` drops the record and leaves the object as it
    # is. It stripped the tags of whatever the ids named: h100's group, lost to h100 for good.
    removed = pf("state", "rm", cpu, "--chdir", quick)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert f"as this state's {h100}, not {cpu}: it was left as it is" in removed.stdout
    groups = LocalProvider(state_dir=quick / ".poolform").list(lineage)
    assert h100_ids["group"] in {o.provider_ids.get("group") for o in groups}


def _lineage(pf: Pf, directory: Path) -> str:
    lineage: str = json.loads(pf("state", "pull", "--chdir", directory).stdout)["lineage"]
    return lineage


def test_gcp_delete_refuses_another_lineages_group_and_a_forgotten_one(
    provider: GcpProvider, cloud: FakeCloud
) -> None:
    theirs = provider.create(machine_type(lineage="another-lineage", token="t-1"))
    spec = machine_type("mine", token="t-2")
    with pytest.raises(ProviderError) as refused:
        provider.delete(spec.address, spec.resource_type, theirs.provider_ids, lineage=LINEAGE)
    assert refused.value.kind is ErrorKind.PERMANENT
    assert theirs.provider_ids["group"] in str(refused.value) and spec.address in str(refused.value)
    assert theirs.provider_ids["group"] in cloud.groups

    mine = provider.create(spec)
    provider.forget(spec.address, spec.resource_type, mine.provider_ids)  # `state rm`
    with pytest.raises(ProviderError) as forgotten:
        provider.delete(spec.address, spec.resource_type, mine.provider_ids, lineage=LINEAGE)
    assert "`state rm` let it go" in str(forgotten.value)
    assert mine.provider_ids["group"] in cloud.groups


def test_aws_delete_keeps_a_template_a_person_swapped_in(
    pf: Pf, tmp_path: Path, aws_env: str
) -> None:
    ours = _applied(pf, tmp_path / "ours", aws_config("ours", "alpha"))
    alpha = "machine_pool.gpu.machine_type.alpha"
    ec2 = boto3.client("ec2", region_name=REGION)
    by_hand = ec2.create_launch_template(
        LaunchTemplateName="by-hand",
        LaunchTemplateData={"ImageId": AMI, "InstanceType": "m5.large"},
    )["LaunchTemplate"]["LaunchTemplateId"]
    ids = _ids(pf, ours, alpha)
    _push_ids(pf, ours, {alpha: {**ids, "template": by_hand}})
    destroyed = pf("plan", ours, "--no-refresh", "--destroy", "--out", tmp_path / "p.plan")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    applied = pf("apply", tmp_path / "p.plan", "--chdir", ours)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert ec2.describe_launch_templates(LaunchTemplateIds=[by_hand])["LaunchTemplates"]
