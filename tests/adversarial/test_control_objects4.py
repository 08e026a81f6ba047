"""The control-plane objects the AWS and GCP providers keep in the state backend (resource
pools, policies, compute configs), damaged by hand in the state database: text that is no
JSON, a list, NaN, nesting past any reader. The object is named as damaged (exit 1) by plan and
drift, never an internal error and never a silent change; restored, all is well again. Runs
the installed poolform against the local Compute endpoint (tests/gcp)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.gcp.conftest import cloud, endpoint, example_on_endpoint
from tests.gcp.fake_cloud import FakeCloud
from tests.gcp.fake_compute import FakeComputeServer

__all__ = ["cloud", "endpoint"]  # the local Compute endpoint's fixtures

POOL = "kind: ResourcePool\nname: seats\ncapacity: {seat: 2}\n"


# Each damage a hand edit can leave, in the column where it is left.
DAMAGES = [
    ("attributes", "{bad"),
    ("attributes", "[1]"),
    ("attributes", '{"capacity": {"seat": NaN}}'),
    ("attributes", "[" * 5000),
    ("tags", '"a string"'),
]


def test_a_damaged_control_plane_object_is_named(
    pf: Pf, tmp_path: Path, endpoint: FakeComputeServer, cloud: FakeCloud
) -> None:
    """One apply, then each damage in turn: named by plan and drift, then restored."""
    directory = example_on_endpoint(tmp_path / "gcp", cloud)
    (directory / "pool.yaml").write_text(POOL)
    env = {"POOLFORM_GCP_ENDPOINT": endpoint.url}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    database = directory / ".poolform" / "state.db"
    for column, damage in DAMAGES:
        with sqlite3.connect(database) as db:
            (kept,) = db.execute(
                f"SELECT {column} FROM objects WHERE address = 'resource_pool.seats'"
            ).fetchone()
            db.execute(
                f"UPDATE objects SET {column} = ? WHERE address = 'resource_pool.seats'", (damage,)
            )
        for command in (["plan", directory], ["drift", directory]):
            result = pf(*command, env=env)
            assert result.returncode == 1, (damage[:20], result.stdout)
            assert "control-plane object" in result.stderr, damage[:20]
            assert "resource_pool.seats" in result.stderr, damage[:20]
            assert "damaged" in result.stderr and "internal error" not in result.stderr
        with sqlite3.connect(database) as db:
            db.execute(
                f"UPDATE objects SET {column} = ? WHERE address = 'resource_pool.seats'", (kept,)
            )
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0
