"""A launch template's `zones` were taken as any text: an empty zone, one with a space around
it, or one of another region than the Cluster's passed `validate` and `plan`, and AWS refused
them only at apply ("AWS SDK: Parameter validation failed:\\nInvalid length for parameter
AvailabilityZones[0]", "No default subnet for availability zone: 'us-east-1a '"), after the
changes ordered before them were made. Now validate (and so plan and apply, before any cloud is
asked) names the zone, its file, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

CONFIGURATION = """kind: Cluster
name: zones21
provider: aws
region: us-east-1
provider_settings:
  image_id: ami-03cf127a
---
kind: MachinePool
name: m
machine_types:
  - machine_type: cpu
    launch_templates:
      - instance_type: m5.large
        zones: {zones}
    partitions:
      - name: any
        size: 2
"""
# Unreachable on purpose: nothing may be asked of a cloud.
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
    "AWS_MAX_ATTEMPTS": "1",
}


@pytest.mark.parametrize(
    ("zones", "said"),
    [
        ('[""]', "zones[0]: a zone name is empty [invalid-value]"),
        ('["us-east-1a "]', "zones[0]: zone 'us-east-1a ' has spaces around its name"),
        (
            "[us-east-1a, us-west-2a]",
            "error: zone `us-west-2a` is not in the Cluster's region us-east-1 [zone-region]",
        ),
    ],
)
def test_a_zone_the_cloud_would_refuse_is_refused_before_any_change(
    pf: Pf, tmp_path: Path, zones: str, said: str
) -> None:
    (tmp_path / "capacity.yaml").write_text(CONFIGURATION.format(zones=zones))
    for command in (["validate"], ["plan"], ["apply", "--auto-approve"]):
        result = pf(*command, tmp_path, env=AWS_ENV)
        assert result.returncode == 1, result.stdout
        assert "capacity.yaml:14:" in result.stderr
        assert said in result.stderr
    assert not (tmp_path / ".poolform").exists()


def test_zones_of_the_region_are_valid(pf: Pf, tmp_path: Path) -> None:
    zones = "[us-east-1a, us-east-1b, us-east-1-lax-1a]"
    (tmp_path / "capacity.yaml").write_text(CONFIGURATION.format(zones=zones))
    result = pf("validate", tmp_path)
    assert result.returncode == 0, result.stderr
