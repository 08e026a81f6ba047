"""`state push --force` of a document whose lineage is no name poolform makes.

The lineage was any text without control characters. On S3 it is a directory of the state's
keys: pushed as `../../escaped` or `a/b`, the state was written under
`PREFIX/lineages/../../escaped/` (a key another tool or an S3 API that resolves dot segments
reads elsewhere) or `PREFIX/lineages/a/b/`, which the damaged-head check then named as
lineage `a`, in a command to put the head back that would point it at no state; a quote in it
broke that command's shell quoting; 1,100 characters passed the push and make keys past
S3's 1,024-byte limit. Now a pushed lineage is held to what poolform makes (a uuid4; letters,
digits, `.`, `_`, `-`, at most 128): anything else is refused before anything is written, on
every backend, with or without --force."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest
from tests.state.services import BUCKET, moto_s3, s3_endpoint

__all__ = ["moto_s3", "s3_endpoint"]  # the S3 fixtures (moto in server mode, over HTTP)

POOL = "kind: ResourcePool\nname: seats\ncapacity: {seat: 2}\n"
ODD = ["../../escaped", "a/b", "x'; touch pwned; echo '", "L" * 1100, ".hidden", "é"]


def _applied(pf: Pf, directory: Path, state: str, env: dict[str, str]) -> dict[str, object]:
    directory.mkdir()
    (directory / "cluster.yaml").write_text(f"kind: Cluster\nname: team\nprovider: local\n{state}")
    (directory / "pool.yaml").write_text(POOL)
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    pulled = pf("state", "pull", "--chdir", directory, env=env)
    assert pulled.returncode == 0, pulled.stderr
    document: dict[str, object] = json.loads(pulled.stdout)
    return document


@pytest.mark.parametrize("lineage", ODD, ids=["dots", "slash", "quote", "long", "dot", "accent"])
def test_a_pushed_lineage_poolform_would_not_make_is_refused(
    pf: Pf, tmp_path: Path, lineage: str
) -> None:
    directory = tmp_path / "local"
    document = _applied(pf, directory, "", {})
    pushed = tmp_path / "pushed.json"
    pushed.write_text(json.dumps({**document, "lineage": lineage}))
    before = tree_digest(directory)

    refused = pf("state", "push", "--force", pushed, "--chdir", directory)

    assert refused.returncode == 1
    assert "lineage" in refused.stderr and "not one poolform makes" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert tree_digest(directory) == before


def test_a_pushed_lineage_with_a_slash_writes_no_s3_key(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    import boto3

    prefix = f"lineage-{uuid.uuid4().hex[:8]}"
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    state = f"state: {{backend: s3, bucket: {BUCKET}, key: {prefix}}}\n"
    document = _applied(pf, tmp_path / "team", state, env)
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")

    def keys() -> list[str]:
        found = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/").get("Contents", [])
        return sorted(o["Key"] for o in found if not o["Key"].endswith("lock.json"))

    before = keys()
    for lineage in ("../../escaped", "a/b"):
        pushed = tmp_path / "pushed.json"
        pushed.write_text(json.dumps({**document, "lineage": lineage}))
        refused = pf("state", "push", "--force", pushed, "--chdir", tmp_path / "team", env=env)
        assert refused.returncode == 1, refused.stdout
        assert "not one poolform makes" in refused.stderr
    assert keys() == before
    plan = pf("plan", tmp_path / "team", "--detailed-exitcode", env=env)
    assert plan.returncode == 0, plan.stderr  # the state is the one applied, as it was


def test_a_uuid_lineage_of_another_state_is_still_pushed_with_force(pf: Pf, tmp_path: Path) -> None:
    """What the ForeignState hint asks for: `state push --force` of a state of that lineage."""
    directory = tmp_path / "local"
    document = _applied(pf, directory, "", {})
    other = str(uuid.uuid4())
    pushed = tmp_path / "pushed.json"
    pushed.write_text(json.dumps({**document, "lineage": other, "serial": 1}))
    done = pf("state", "push", "--force", pushed, "--chdir", directory)
    assert done.returncode == 0, done.stderr
    assert json.loads(pf("state", "pull", "--chdir", directory).stdout)["lineage"] == other
