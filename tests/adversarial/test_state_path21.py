"""The Cluster's SQLite state `path` edited after an apply, without `state migrate` (a copied
Cluster file, a tidy-up): the new path held no state, so `plan` showed all 8 resources to add
and `apply` made them again, the local provider in a new cloud beside the new path (worker
`setup` run a second time), while the first ones stayed recorded in `.poolform/state.db`. A
team backend named the same way was already refused ("a local state is still at ..."); now
another SQLite path is too, and nothing is created. A path naming the same file, or a state
that `state migrate` moved there, works as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, cloud_holds, tree_digest


def _state_at(directory: Path, path: str) -> None:
    cluster = directory / "cluster.yaml"
    cluster.write_text(cluster.read_text() + f"state:\n  backend: sqlite\n  path: {path}\n")


@pytest.mark.parametrize("command", [["plan"], ["apply", "--auto-approve"], ["drift"]])
def test_a_state_path_edited_after_apply_is_refused_naming_the_old_state(
    pf: Pf, quick: Path, command: list[str]
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    _state_at(quick, "other/state.db")
    held = cloud_holds(quick)
    before = tree_digest(quick)
    result = pf(*command, quick)
    assert result.returncode == 1, result.stdout
    assert (
        f"error: the Cluster keeps its state in sqlite at {quick}/other/state.db, but a local "
        f"state is still at {quick}/.poolform/state.db (8 resources)"
    ) in result.stderr
    assert "the local provider keeps its cloud beside that state" in result.stderr
    assert not (quick / "other").exists()
    assert tree_digest(quick) == before
    assert cloud_holds(quick) == held


def test_a_path_naming_the_same_file_is_that_state(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    _state_at(quick, "./.poolform/../.poolform/state.db")
    result = pf("plan", quick, "--detailed-exitcode")
    assert result.returncode == 0, result.stderr


def test_a_state_migrated_to_the_path_is_used(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    moved = quick / ".poolform" / "moved.db"
    migrated = pf("state", "migrate", "--to", moved, "--chdir", quick)
    assert migrated.returncode == 0, migrated.stderr
    _state_at(quick, ".poolform/moved.db")
    result = pf("plan", quick, "--detailed-exitcode")
    assert result.returncode == 0, result.stderr
