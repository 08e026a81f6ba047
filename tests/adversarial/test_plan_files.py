"""Hostile and stale plan files: truncated, edited (with or without a fresh checksum), from
another version or state, replayed, applied after the configuration changed. Each is refused
with exit 1 and applies nothing: the state and the local cloud stay as they were."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.conftest import Pf, cloud_holds, tree_digest

Envelope = dict[str, Any]


def resealed(envelope: Envelope) -> Envelope:
    """What an attacker who read planfile.py would write: the edit, with a valid checksum."""
    body = {k: v for k, v in envelope.items() if k != "checksum"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return {**body, "checksum": hashlib.sha256(canonical).hexdigest()}


def edit(change: Callable[[Envelope], None]) -> Callable[[Envelope], bytes]:
    def apply(envelope: Envelope) -> bytes:
        edited = copy.deepcopy(envelope)
        change(edited)
        return json.dumps(resealed(edited)).encode()

    return apply


def _set(path: tuple[str, ...], value: Any) -> Callable[[Envelope], None]:
    def change(envelope: Envelope) -> None:
        target = envelope
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _all_deletes(envelope: Envelope) -> None:
    for change in envelope["plan"]["changes"]:
        change["action"] = "delete"


HOSTILE: dict[str, tuple[Callable[[Envelope], bytes], str]] = {
    "truncated": (lambda e: json.dumps(e).encode()[:2000], "not a readable plan file"),
    "empty": (lambda e: b"", "apply takes a plan file"),
    "edited, old checksum": (
        lambda e: json.dumps(e).replace('"create"', '"delete"', 1).encode(),
        "checksum mismatch",
    ),
    "every create turned into a delete, resealed": (
        _all_deletes and edit(_all_deletes),
        "steps differ",
    ),
    "another format version": (edit(_set(("version",), 99)), "plan format 99"),
    "a list for a version": (edit(_set(("version",), [3])), "plan format [3]"),
    "another state's lineage": (
        edit(_set(("plan", "state", "lineage"), "x" * 36)),
        "different state",
    ),
    "a serial from the future": (edit(_set(("plan", "state", "serial"), 2**70)), "state changed"),
    "another configuration's digest": (
        edit(_set(("plan", "config_digest"), "0" * 64)),
        "configuration changed",
    ),
    "a string for the changes": (edit(_set(("plan", "changes"), "x")), "not a valid plan"),
    "a null change": (edit(_set(("plan", "changes"), [None])), "not a valid plan"),
    "numbers to re-read": (edit(_set(("rereads",), [1, 2])), "not a valid plan"),
    "pointed at /etc": (
        edit(
            lambda e: e.update(
                directory="/etc", directory_absolute="/etc", directory_from_plan_file="/etc"
            )
        ),
        "/etc has no *.yaml",
    ),
    "nested 100000 deep": (
        lambda e: b'{"kind": "poolform-plan", "plan": ' + b"[" * 100000 + b"]" * 100000 + b"}",
        "nested too deeply",
    ),
}


@pytest.fixture
def planned(pf: Pf, quick: Path) -> tuple[Path, Envelope]:
    plan = quick.parent / "plan.json"
    result = pf("plan", quick, "-out", plan)
    assert result.returncode == 0, result.stderr
    return plan, json.loads(plan.read_text())


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_plan_file_applies_nothing(
    pf: Pf, quick: Path, planned: tuple[Path, Envelope], name: str
) -> None:
    plan, envelope = planned
    damage, says = HOSTILE[name]
    plan.write_bytes(damage(envelope))
    before = tree_digest(quick)
    result = pf("apply", plan)
    assert result.returncode == 1, result.stdout[-500:]
    assert "internal error" not in result.stderr
    assert says in result.stderr, result.stderr
    changed = {
        k
        for k in set(before) | set(tree_digest(quick))
        if before.get(k) != tree_digest(quick).get(k)
    }
    # Only a plan that must be re-planned to be found out opens (and so makes) the local cloud.
    assert changed <= {".poolform/local-cloud.db"} and cloud_holds(quick) == 0, changed


def test_a_plan_replayed_is_refused_the_second_time(
    pf: Pf, quick: Path, planned: tuple[Path, Envelope]
) -> None:
    plan, _ = planned
    assert pf("apply", plan).returncode == 0
    before = tree_digest(quick / ".poolform")
    again = pf("apply", plan)
    assert again.returncode == 1 and "stale" in again.stderr
    assert tree_digest(quick / ".poolform") == before


def test_a_plan_applied_after_the_configuration_changed_is_refused(
    pf: Pf, quick: Path, planned: tuple[Path, Envelope]
) -> None:
    plan, _ = planned
    pool = quick / "resource-pool.yaml"
    pool.write_text(pool.read_text().replace("gpu: 16", "gpu: 17"))
    before = tree_digest(quick)
    result = pf("apply", plan)
    assert result.returncode == 1 and "configuration changed" in result.stderr
    assert tree_digest(quick) == before and cloud_holds(quick) == 0


def test_a_plan_made_for_another_copy_of_the_configuration_is_refused(
    pf: Pf, quick: Path, planned: tuple[Path, Envelope], tmp_path: Path
) -> None:
    plan, _ = planned
    other = tmp_path / "other"
    other.mkdir()
    for path in quick.glob("*.yaml"):
        (other / path.name).write_bytes(path.read_bytes())
    assert pf("plan", other, "-out", tmp_path / "other.plan").returncode == 0
    result = pf("--chdir", other, "apply", plan)  # the right files, the wrong state
    # Refused: --chdir names another configuration than the plan's (test_saved_plan_chdir.py).
    assert result.returncode == 1 and f"--chdir names {other}" in result.stderr
    assert not (other / ".poolform" / "local-cloud.db").exists()


@pytest.mark.parametrize("out", ["missing-dir/plan", "."])
def test_plan_out_to_an_impossible_place_is_an_error(pf: Pf, quick: Path, out: str) -> None:
    result = pf("--chdir", quick, "plan", "-out", out)
    assert result.returncode == 1 and "internal error" not in result.stderr
    assert "plan" in result.stderr
