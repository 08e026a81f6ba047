"""The `gcp` fixture: the GCP example configured against a local Compute endpoint that the real
google-cloud-compute client talks to (tests/gcp/), and the fake cloud behind it. A test module
imports it (and lists it in `__all__`) to use it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gcp.conftest import example_on_endpoint
from tests.gcp.fake_cloud import FakeCloud
from tests.gcp.fake_compute import FakeComputeServer


@pytest.fixture
def gcp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, FakeCloud]]:
    server = FakeComputeServer(port=0).start()
    monkeypatch.setenv("POOLFORM_GCP_ENDPOINT", server.url)
    try:
        yield example_on_endpoint(tmp_path / "gcp", server.cloud), server.cloud
    finally:
        server.stop()
