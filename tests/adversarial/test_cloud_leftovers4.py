"""What a cloud hands back that poolform did not make, under a name poolform's list filter
matches: a Compute instance template named with this state's prefix whose description is no
poolform description (deeply nested JSON, as anyone may write into that free-text field). It
is someone else's object: plan and drift leave it alone, and it breaks no command. Runs the
installed poolform against the local Compute endpoint (tests/gcp)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.gcp.conftest import cloud, endpoint, example_on_endpoint
from tests.gcp.fake_cloud import FakeCloud
from tests.gcp.fake_compute import FakeComputeServer

__all__ = ["cloud", "endpoint"]  # the local Compute endpoint's fixtures


@pytest.fixture
def gcp_config(tmp_path: Path, cloud: FakeCloud) -> Path:
    return example_on_endpoint(tmp_path / "anyscale-gcp", cloud)


# Descriptions anyone may write: nested past any reader, a forged poolform key, no JSON, none.
DESCRIPTIONS = ["[" * 1500, "{" * 1500, '{"poolform:lineage": ' + "[" * 1500, "not json", ""]


def test_a_stranger_under_this_states_name_prefix_is_left_alone(
    pf: Pf, gcp_config: Path, endpoint: FakeComputeServer, cloud: FakeCloud
) -> None:
    """One stranger per description, all at once: every one of them is listed back by each
    command and must be passed over."""
    env = {"POOLFORM_GCP_ENDPOINT": endpoint.url}
    assert pf("apply", gcp_config, "--auto-approve", env=env).returncode == 0
    ours = next(iter(cloud.templates))
    prefix = "-".join(ours.split("-")[:2])  # pf-<lineage hash>
    strangers = [f"{prefix}-made-by-someone-else-{n}" for n in range(len(DESCRIPTIONS))]
    with cloud.lock:
        for name, description in zip(strangers, DESCRIPTIONS, strict=True):
            cloud.templates[name] = cloud._resource(
                name,
                "global/instanceTemplates",
                {
                    "name": name,
                    "description": description,
                    "properties": {"machineType": "n2-standard-8", "labels": {}},
                },
            )
    for command in (["drift", gcp_config], ["plan", gcp_config, "--detailed-exitcode"]):
        result = pf(*command, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "internal error" not in result.stderr
    assert all(name in cloud.templates for name in strangers)  # never deleted: not ours
