"""`state push` of a document that records one cloud object at two addresses (a pulled record
copied under another name, an edit gone wrong). Push checked every field but not that, so
it took the document; the next plan then destroyed the address the configuration does not
declare, and `apply` deleted with it the worker pool the other record (still declared) used:
capacity gone by a plan that named only an address nobody knew. Push now refuses it, naming
both addresses, and writes nothing."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from tests.adversarial.conftest import Pf, cloud_holds


def test_a_push_recording_one_cloud_object_at_two_addresses_is_refused(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    document = json.loads(pf("state", "pull", "--chdir", quick).stdout)
    (workers,) = (r for r in document["resources"] if r["address"] == "worker_pool.cpu-workers")
    ghost = copy.deepcopy(workers)
    ghost["address"] = "worker_pool.ghost"
    document["resources"].append(ghost)
    pushed = tmp_path / "pushed.json"
    pushed.write_text(json.dumps(document))
    state_db = quick / ".poolform" / "state.db"
    before, held = state_db.read_bytes(), cloud_holds(quick)

    result = pf("state", "push", pushed, "--chdir", quick)

    assert result.returncode == 1, result.stdout
    assert "'worker_pool.ghost'" in result.stderr and "'worker_pool.cpu-workers'" in result.stderr
    assert "internal error" not in result.stderr
    assert state_db.read_bytes() == before
    planned = pf("plan", quick, "--detailed-exitcode")
    assert planned.returncode == 0, planned.stdout  # nothing to destroy
    assert cloud_holds(quick) == held


def test_a_push_that_moves_an_object_to_another_address_is_still_taken(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    """The check is about two records at once: one record under a new name is a rename."""
    assert pf("apply", quick, "--auto-approve").returncode == 0
    document = json.loads(pf("state", "pull", "--chdir", quick).stdout)
    (policy,) = (r for r in document["resources"] if r["address"] == "subject_policy.research")
    policy["address"] = "subject_policy.renamed"
    pushed = tmp_path / "pushed.json"
    pushed.write_text(json.dumps(document))
    result = pf("state", "push", pushed, "--chdir", quick)
    assert result.returncode == 0, result.stderr
    listed = pf("state", "list", "--chdir", quick).stdout.split()
    assert "subject_policy.renamed" in listed and "subject_policy.research" not in listed


def test_another_directorys_state_or_an_older_pull_is_refused_in_the_terms_of_force(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    """The refusals were the backend's words: "state lineage mismatch: expected <the file's>,
    but the stored state has lineage <this one>; ...; force it", and "force the push", which
    named no option. They now say which file, whose state, and `--force`."""
    other = tmp_path / "other"
    shutil.copytree(quick, other)
    for directory in (quick, other):
        assert pf("apply", directory, "--auto-approve").returncode == 0
    theirs, older = tmp_path / "theirs.json", tmp_path / "older.json"
    theirs.write_text(pf("state", "pull", "--chdir", other).stdout)
    document = json.loads(pf("state", "pull", "--chdir", quick).stdout)
    older.write_text(json.dumps({**document, "serial": document["serial"] - 1}))
    state_db = quick / ".poolform" / "state.db"
    before = state_db.read_bytes()
    refusals = ((theirs, "is the state of lineage"), (older, "is at serial"))
    for pushed, says in refusals:
        result = pf("state", "push", pushed, "--chdir", quick)
        assert result.returncode == 1, result.stdout
        assert f"{pushed} {says}" in result.stderr and "pass --force" in result.stderr
        assert "nothing was pushed" in result.stderr
    assert state_db.read_bytes() == before
