"""A recorded resource that the configuration no longer declares and that refresh does not
find under this state's tags was deleted by the ids its record holds, whatever now has them.
Two configurations whose states sit side by side share one local cloud (as two teams share
one cloud account); a record carrying the other's worker pool id (pushed from an edited pull,
or restored from a file) made `plan` say "destroyed (no longer in the configuration)" while
`drift` said it was gone from the provider, and `apply` (or `destroy`) then deleted the other
configuration's worker pool. Now such a record is planned as `gone`: the record is removed,
nothing in the cloud is touched.

`state rm` of that record untagged the other configuration's worker pool (the provider was
told to forget whatever the ids named), so the other configuration's next plan recreated it
(a second pool) and its drift said it was gone. Now `state rm` leaves alone what the provider
marks as another lineage's, and says so."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import EXAMPLES, Pf
from tests.conftest import copy_example

STOLEN = "worker_pool.stolen"


@pytest.fixture
def neighbours(pf: Pf, tmp_path: Path) -> tuple[Path, Path]:
    """`ours` (zenml's resource pool) and `theirs` (the quickstart), applied, their states in
    one directory and so their resources in one local cloud; `ours` records `theirs`'s worker
    pool at an address it does not declare."""
    shared = tmp_path / "shared"
    shared.mkdir()
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    copy_example(EXAMPLES / "zenml", ours, "*.md", "jobs")
    (ours / "cluster.yaml").write_text(
        f"kind: Cluster\nname: ours\nprovider: local\nstate:\n  path: {shared / 'ours.db'}\n"
    )
    copy_example(EXAMPLES / "quickstart", theirs, "*.md")
    cluster = theirs / "cluster.yaml"
    cluster.write_text(cluster.read_text() + f"state:\n  path: {shared / 'theirs.db'}\n")
    for directory in (ours, theirs):
        assert pf("apply", directory, "--auto-approve").returncode == 0
    pulled = json.loads(pf("state", "pull", "--chdir", theirs).stdout)
    (workers,) = (r for r in pulled["resources"] if r["address"] == "worker_pool.cpu-workers")
    document = json.loads(pf("state", "pull", "--chdir", ours).stdout)
    document["resources"].append({**copy.deepcopy(workers), "address": STOLEN})
    pushed = tmp_path / "pushed.json"
    pushed.write_text(json.dumps(document))
    assert pf("state", "push", pushed, "--chdir", ours).returncode == 0
    return ours, theirs


def their_workers_stand(pf: Pf, theirs: Path) -> bool:
    """Their worker pool still runs, and their plan has nothing to do."""
    planned = pf("plan", theirs, "--detailed-exitcode")
    running = pf("local", "instances", "--chdir", theirs).stdout
    return planned.returncode == 0 and "worker_pool.cpu-workers" in running


def test_plan_says_only_the_record_goes_and_apply_leaves_their_pool(
    pf: Pf, neighbours: tuple[Path, Path]
) -> None:
    ours, theirs = neighbours
    planned = pf("plan", ours, "--json")
    (change,) = json.loads(planned.stdout)["changes"]
    assert (change["address"], change["action"], change["reason_code"]) == (
        STOLEN,
        "delete",
        "gone",
    )
    applied = pf("apply", ours, "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    assert STOLEN not in pf("state", "list", "--chdir", ours).stdout
    assert their_workers_stand(pf, theirs)


def test_destroy_leaves_their_pool(pf: Pf, neighbours: tuple[Path, Path]) -> None:
    ours, theirs = neighbours
    destroyed = pf("destroy", ours, "--auto-approve")
    assert destroyed.returncode == 0, destroyed.stderr
    assert their_workers_stand(pf, theirs)


def test_a_saved_plan_leaves_their_pool(
    pf: Pf, neighbours: tuple[Path, Path], tmp_path: Path
) -> None:
    ours, theirs = neighbours
    plan_file = tmp_path / "ours.plan"
    assert pf("plan", ours, "-out", plan_file).returncode == 0
    applied = pf("apply", plan_file)
    assert applied.returncode == 0, applied.stderr
    assert their_workers_stand(pf, theirs)


def test_state_rm_leaves_their_pool_tagged(pf: Pf, neighbours: tuple[Path, Path]) -> None:
    ours, theirs = neighbours
    removed = pf("state", "rm", STOLEN, "--chdir", ours)
    assert removed.returncode == 0, removed.stderr
    assert "as another state's (lineage" in removed.stdout
    assert "it was left as it is" in removed.stdout
    assert STOLEN not in pf("state", "list", "--chdir", ours).stdout
    assert their_workers_stand(pf, theirs)
    assert pf("drift", theirs).returncode == 0
