"""AWS tests against moto in server mode, over HTTP, with the real boto3 client.

The server is `POOLFORM_MOTO_ENDPOINT` when set (a `moto_server` that `.ci/run` or a developer
started), else an in-process `ThreadedMotoServer` on a free port, one per test session (so one
per xdist worker). Each test starts from an empty cloud (`POST /moto-api/reset`; on a server
the xdist workers share, AWS tests take turns through a file lock) and reaches it
only through the standard AWS environment: fake credentials, AWS_ENDPOINT_URL and
AWS_DEFAULT_REGION, as a user would point poolform at LocalStack; no provider code knows moto.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from providers.aws import AwsProvider
from providers.protocol import ResourceSpec

AMI = "ami-03cf127a"  # an image moto knows
REGION = "us-east-1"


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    shared = os.environ.get("POOLFORM_MOTO_ENDPOINT")
    if shared:
        yield shared.rstrip("/")
        return
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def reset(endpoint: str) -> None:
    request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=30):
        pass


@contextlib.contextmanager
def exclusive(endpoint: str) -> Iterator[None]:
    """One test at a time on a server the xdist workers share: a reset would otherwise wipe
    another worker's cloud mid-test. (A server of our own is ours alone.)"""
    if not (os.environ.get("POOLFORM_MOTO_ENDPOINT") and os.environ.get("PYTEST_XDIST_WORKER")):
        yield
        return
    digest = hashlib.sha256(endpoint.encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"poolform-moto-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def aws_env(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An empty moto cloud and the standard AWS environment pointing at it."""
    with exclusive(moto_endpoint):
        reset(moto_endpoint)
        _point_at(moto_endpoint, monkeypatch)
        yield moto_endpoint


def _point_at(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)


@pytest.fixture
def lineage() -> str:
    return f"lineage-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make_provider(aws_env: str, tmp_path: Path) -> Iterator[Callable[..., AwsProvider]]:
    made: list[AwsProvider] = []

    def _make(**settings: Any) -> AwsProvider:
        provider = AwsProvider(
            settings={"image_id": AMI, "poll_interval": 0, **settings},
            state_dir=tmp_path / ".poolform",
            sleep=lambda _: None,
        )
        made.append(provider)
        return provider

    yield _make
    for provider in made:
        provider.close()


@pytest.fixture
def provider(make_provider: Callable[..., AwsProvider]) -> AwsProvider:
    return make_provider()


def machine(
    lineage: str,
    name: str = "h100",
    *,
    warm: int = 1,
    size: int = 3,
    instance_type: str = "p5.48xlarge",
    market: str = "ON_DEMAND",
    advanced: dict[str, Any] | None = None,
    zones: list[str] | None = None,
    user_data: str | None = None,
    token: str | None = None,
) -> ResourceSpec:
    """A machine type as `plan` expands it (see tests/unit/test_local_provider.py)."""
    attributes = {
        "provider": "aws",
        "launch_templates": [
            {
                "instance_type": instance_type,
                "market_type": market,
                "advanced_instance_config": advanced or {},
                "zones": zones or [],
                "user_data": user_data,
            }
        ],
        "partitions": [{"name": "p", "size": size, "warm": warm, "rules": []}],
        "min_size": warm,
        "max_size": size,
        "max_surge": 1,
        "max_unavailable": 0,
        "recycle_policy": None,
    }
    address = f"machine_pool.gpu.machine_type.{name}"
    return ResourceSpec(address, "machine_type", attributes, lineage, token or uuid.uuid4().hex)
