"""A GCP command loads the Compute services poolform calls, not all of Compute's (providers/gcp/
sdk.py): the package's own `__init__` imports about a hundred services, 1.5 s of every GCP
command's start. The rest of the package still loads on first use, for any other code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from providers.gcp.sdk import SERVICES
from tests.gcp.conftest import cloud, endpoint, example_on_endpoint
from tests.gcp.fake_cloud import FakeCloud
from tests.gcp.fake_compute import FakeComputeServer
from tests.scenario.installed import poolform

__all__ = ["cloud", "endpoint"]

SERVICES_PREFIX = "google.cloud.compute_v1.services."


def _services_loaded(importtime: str) -> set[str]:
    """The Compute services of which a `-X importtime` report shows a module imported."""
    found = set()
    for line in importtime.splitlines():
        name = line.rsplit("|", 1)[-1].strip()
        if name.startswith(SERVICES_PREFIX):
            found.add(name.removeprefix(SERVICES_PREFIX).split(".")[0])
    return found


def test_an_apply_and_a_plan_load_only_the_services_poolform_calls(
    tmp_path: Path, endpoint: FakeComputeServer, cloud: FakeCloud
) -> None:
    directory = example_on_endpoint(tmp_path / "gcp", cloud)
    env = {"POOLFORM_GCP_ENDPOINT": endpoint.url, "PYTHONPROFILEIMPORTTIME": "1"}
    for command in (["apply", directory, "--auto-approve"], ["plan", directory]):
        result = poolform(*command, env=env)
        assert result.returncode == 0, result.stdout + result.stderr[-2000:]
        loaded = _services_loaded(result.stderr)
        # Those, and what their own modules import (the instances client's zone operations):
        # a handful of Compute's hundred.
        assert set(SERVICES.values()) <= loaded and len(loaded) < 10, loaded


def test_the_rest_of_the_package_loads_on_first_use() -> None:
    """In a fresh interpreter: after the provider's modules, another service, a submodule and
    a message type are all there, and a name Compute does not have is an AttributeError."""
    script = """
import sys
import providers.gcp.clients
from google.cloud import compute_v1
assert "google.cloud.compute_v1.services.addresses" not in sys.modules
from google.cloud.compute_v1 import gapic_version
assert gapic_version.__version__
assert compute_v1.AddressesClient.__name__ == "AddressesClient"
assert compute_v1.Errors.__name__ == "Errors"
assert compute_v1.__version__ and "InstancesClient" in compute_v1.__all__
assert compute_v1.InstancesClient is providers.gcp.clients.compute_v1.InstancesClient
try:
    compute_v1.NoSuchThing
except AttributeError as error:
    assert "NoSuchThing" in str(error)
else:
    raise AssertionError("no AttributeError")
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "ok", result.stderr
