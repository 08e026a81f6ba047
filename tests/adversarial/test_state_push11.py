"""`state push` into a directory with no state adopts the document as it is: every check must
hold there as it does over an existing state.

A document whose dependencies loop was adopted (exit 0), and every later `plan --destroy`
failed with "the change graph has a cycle" until the state was pushed away by hand. Now the
push refuses it, naming the loop (exit 1, nothing written), over no state and over one alike.
A duplicate address is named too (it was "duplicate resource addresses", naming none)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from tests.adversarial.conftest import Pf, tree_digest

CPU = "machine_pool.shared-machines.machine_type.cpu"
H100 = "machine_pool.shared-machines.machine_type.h100"


def _pulled(pf: Pf, quick: Path) -> dict[str, Any]:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    pulled = pf("state", "pull", "--chdir", quick)
    assert pulled.returncode == 0, pulled.stderr
    document: dict[str, Any] = json.loads(pulled.stdout)
    return document


def _record(document: dict[str, Any], address: str) -> dict[str, Any]:
    record: dict[str, Any] = next(r for r in document["resources"] if r["address"] == address)
    return record


def _fresh(quick: Path, tmp_path: Path) -> Path:
    """The same configuration in a directory with no state."""
    target = tmp_path / "fresh"
    shutil.copytree(quick, target, ignore=shutil.ignore_patterns(".poolform"))
    return target


def test_push_of_a_dependency_loop_is_refused_with_no_state_and_with_one(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    document = _pulled(pf, quick)
    _record(document, CPU)["dependencies"] = [H100]
    _record(document, H100)["dependencies"] = [CPU]
    looped = tmp_path / "looped.json"
    looped.write_text(json.dumps(document))

    fresh = _fresh(quick, tmp_path)
    before = tree_digest(fresh)
    pushed = pf("state", "push", looped, "--chdir", fresh)
    assert pushed.returncode == 1, pushed.stdout + pushed.stderr
    assert f"{CPU} -> {H100} -> {CPU}" in pushed.stderr, pushed.stderr
    assert "Traceback" not in pushed.stderr
    assert tree_digest(fresh) == before and not (fresh / ".poolform").exists()

    kept = tree_digest(quick)
    over = pf("state", "push", looped, "--chdir", quick)
    assert over.returncode == 1 and f"{CPU} -> {H100} -> {CPU}" in over.stderr
    assert tree_digest(quick) == kept


def test_push_of_a_self_dependency_and_of_a_duplicate_names_the_address(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    document = _pulled(pf, quick)
    fresh = _fresh(quick, tmp_path)

    own = copy.deepcopy(document)
    _record(own, CPU)["dependencies"] = [CPU]
    (tmp_path / "own.json").write_text(json.dumps(own))
    pushed = pf("state", "push", tmp_path / "own.json", "--chdir", fresh)
    assert pushed.returncode == 1 and f"{CPU} -> {CPU}" in pushed.stderr, pushed.stderr

    twice = copy.deepcopy(document)
    twice["resources"].append(copy.deepcopy(_record(document, H100)))
    (tmp_path / "twice.json").write_text(json.dumps(twice))
    pushed = pf("state", "push", tmp_path / "twice.json", "--chdir", fresh)
    assert pushed.returncode == 1 and f"{H100!r} is recorded twice" in pushed.stderr
    assert not (fresh / ".poolform").exists()
