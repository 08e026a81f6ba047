"""Damaged, hostile or misplaced state: every one is refused with exit 1 and a message naming
it, nothing is planned as if the state were new, and no file poolform did not create changes
(not even its mode)."""

from __future__ import annotations

import copy
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.conftest import Pf, cloud_holds, tree_digest


def use_state_path(directory: Path, path: Path | str) -> None:
    cluster = directory / "cluster.yaml"
    cluster.write_text(cluster.read_text() + f"state:\n  path: {path}\n")


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "a directory": (lambda p: p.mkdir(), "is a directory"),
    "a symlink to /etc/passwd": (lambda p: p.symlink_to("/etc/passwd"), "not a readable"),
    "a dangling symlink": (lambda p: p.symlink_to(p.parent / "gone.db"), "does not exist"),
    "a symlink to itself": (lambda p: p.symlink_to(p.name), "does not exist (or loops)"),
    "random bytes": (lambda p: p.write_bytes(os.urandom(40_000)), "not a readable"),
    "an SQLite header and garbage": (
        lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000),
        "not a readable",
    ),
    "0 bytes": (lambda p: p.write_bytes(b""), "empty (0 bytes)"),
}


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_a_damaged_state_file_is_refused_not_taken_for_a_new_state(
    pf: Pf, quick: Path, name: str
) -> None:
    damage, says = DAMAGE[name]
    (quick / ".poolform").mkdir()
    damage(quick / ".poolform" / "state.db")
    before = tree_digest(quick)
    for args in (("plan", quick), ("apply", quick, "--auto-approve")):
        result = pf(*args)
        assert result.returncode == 1, (args, result.stdout[-300:])
        assert says in result.stderr and "internal error" not in result.stderr
    assert tree_digest(quick) == before and cloud_holds(quick) == 0
    assert not Path("/etc/passwd").read_text().startswith("SQLite")


@pytest.mark.parametrize("target", ["/etc/passwd", "/etc/hostname", "/proc/version"])
def test_a_state_path_at_a_system_file_is_refused_and_the_file_is_untouched(
    pf: Pf, quick: Path, target: str
) -> None:
    if not Path(target).exists():
        pytest.skip(f"{target} does not exist here")
    use_state_path(quick, target)
    mode, content = Path(target).stat().st_mode, Path(target).read_bytes()
    for args in (("plan", quick), ("apply", quick, "--auto-approve")):
        result = pf(*args)
        assert result.returncode == 1, (args, result.stdout[-300:])
        assert "internal error" not in result.stderr
    assert Path(target).stat().st_mode == mode and Path(target).read_bytes() == content


def test_a_state_path_at_a_users_file_keeps_its_mode(pf: Pf, quick: Path, tmp_path: Path) -> None:
    theirs = tmp_path / "notes.txt"
    theirs.write_text("my notes\n")
    theirs.chmod(0o644)
    use_state_path(quick, theirs)
    assert pf("apply", quick, "--auto-approve").returncode == 1
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o644 and theirs.read_text() == "my notes\n"


def test_the_poolform_directory_as_a_file_is_an_error(pf: Pf, quick: Path) -> None:
    (quick / ".poolform").write_text("not a directory\n")
    result = pf("apply", quick, "--auto-approve")
    assert result.returncode == 1 and "internal error" not in result.stderr
    assert ".poolform" in result.stderr
    assert (quick / ".poolform").read_text() == "not a directory\n"


# -- state push of hostile JSON ------------------------------------------------------------

Doc = dict[str, Any]


def _bumped(change: Callable[[Doc], None]) -> Callable[[Doc], str]:
    def make(doc: Doc) -> str:
        edited = copy.deepcopy(doc)
        edited["serial"] += 1
        change(edited)
        return json.dumps(edited)

    return make


def _first(key: str, value: Any) -> Callable[[Doc], None]:
    return lambda doc: doc["resources"][0].update({key: value})


HOSTILE_PUSH: dict[str, tuple[Callable[[Doc], str], str]] = {
    "a serial past 2^63": (_bumped(lambda d: d.update(serial=2**64)), "outside 0.."),
    "a negative serial": (_bumped(lambda d: d.update(serial=-1)), "outside 0.."),
    "a boolean serial": (_bumped(lambda d: d.update(serial=True)), "wrong type"),
    "NaN": (lambda d: json.dumps(d).replace('"serial": ', '"serial": NaN, "x": ', 1), "NaN"),
    "null resources": (_bumped(lambda d: d.update(resources=None)), "is null"),
    "a null record": (_bumped(lambda d: d.update(resources=[None])), "expected an object"),
    "one address twice": (
        _bumped(lambda d: d.update(resources=d["resources"] + d["resources"][:1])),
        "is recorded twice",
    ),
    "nesting 100000 deep": (lambda d: '{"a":' * 100000 + "1" + "}" * 100000, "nested deeper"),
    "a path for an address": (_bumped(_first("address", "../../etc/passwd")), "not the address"),
    "another type's address": (_bumped(_first("address", "resource_pool.x")), "not the address"),
    "a newline in an address": (_bumped(_first("address", "cluster.a\n## No changes")), "U+000A"),
    "numbers for provider ids": (_bumped(_first("provider_ids", {"object": 5})), "provider_ids"),
    "a key given twice": (lambda d: json.dumps(d)[:-1] + ', "serial": 999999}', "appears twice"),
    "another lineage": (_bumped(lambda d: d.update(lineage="x" * 36)), "lineage"),
    "an older serial": (lambda d: json.dumps({**d, "serial": 0}), "older"),
    "not JSON": (lambda d: "hello", "not a state document"),
    "Latin-1 bytes": (lambda d: '{"lineage": "caf\udce9"}', "not a state document"),
}


@pytest.fixture
def applied_state(pf: Pf, quick: Path) -> Doc:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    pulled = pf("state", "pull", "--chdir", quick)
    assert pulled.returncode == 0
    return dict(json.loads(pulled.stdout))


@pytest.mark.parametrize("name", sorted(HOSTILE_PUSH))
def test_state_push_of_hostile_json_changes_nothing(
    pf: Pf, quick: Path, applied_state: Doc, tmp_path: Path, name: str
) -> None:
    make, says = HOSTILE_PUSH[name]
    pushed = tmp_path / "push.json"
    pushed.write_bytes(make(applied_state).encode("utf-8", "surrogateescape"))
    before = tree_digest(quick / ".poolform")
    result = pf("state", "push", pushed, "--chdir", quick)
    assert result.returncode == 1, result.stdout
    assert says in result.stderr and "internal error" not in result.stderr, result.stderr
    assert tree_digest(quick / ".poolform") == before
