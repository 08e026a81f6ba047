"""A damaged or foreign state is never a fresh one, and one bad record blocks no way out."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.state.conftest import cloud_groups, pulled, state_db

GPUS = "resource_pool.gpus"
POLICY = "subject_policy.ml"


def applied(run, small: Path) -> Path:  # type: ignore[no-untyped-def]
    result = run("apply", small, "--auto-approve")
    assert result.code == 0, result.err
    return state_db(small)


def flip_in_file(path: Path, find: bytes, replace: bytes) -> None:
    """Change bytes in the database file itself, as a disk or a careless editor would."""
    data = path.read_bytes()
    assert find in data, f"{find!r} not in {path}"
    path.write_bytes(data.replace(find, replace))


def damage(path: Path, how: str, other: Path) -> str:
    """Damage the state file; returns words the error must contain."""
    if how == "empty":
        path.write_bytes(b"")
        return "empty (0 bytes)"
    if how == "not sqlite":
        path.write_bytes(b"these are not the bytes of a database" * 200)
        return "not a readable poolform state"
    if how == "another program's database":
        shutil.copy(other, path)
        return "not a poolform state database (it holds the tables"
    with sqlite3.connect(path) as db:
        if how == "missing table":
            db.execute("DROP TABLE intents")
            return "the table intents is missing"
        if how == "missing meta row":
            db.execute("DELETE FROM meta")
            return "meta row (lineage and serial) is missing"
        if how == "future layout":
            db.execute("PRAGMA user_version = 99")
            return "layout version 99, newer than this poolform"
    raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    [
        "empty",
        "not sqlite",
        "another program's database",
        "missing table",
        "missing meta row",
        "future layout",
    ],
)
@pytest.mark.parametrize("command", ["plan", "apply", "drift", "state list"])
def test_a_damaged_state_is_an_error_never_a_fresh_state(
    run, small: Path, how: str, command: str
) -> None:
    path = applied(run, small)
    groups = cloud_groups(small)
    words = damage(path, how, small / ".poolform" / "local-cloud.db")
    before = path.read_bytes()
    args = {
        "plan": ("plan", small),
        "apply": ("apply", small, "--auto-approve"),
        "drift": ("drift", small),
        "state list": ("state", "list", "--chdir", small),
    }[command]
    result = run(*args)
    assert result.code == 1, result.out
    assert words in result.err and str(path) in result.err
    assert "internal error" not in result.err
    assert path.read_bytes() == before  # nothing rewritten, nothing re-initialised
    assert cloud_groups(small) == groups  # nothing created a second time


def test_a_flipped_digit_is_found_by_the_checksum(run, small: Path) -> None:
    path = applied(run, small)
    flip_in_file(path, b'"gpu":16', b'"gpu":36')  # still valid JSON: only the checksum sees it
    plan = run("plan", small)
    assert plan.code == 1
    assert GPUS in plan.err and "checksum does not match" in plan.err
    assert f"poolform state rm {GPUS}" in plan.err


@pytest.mark.parametrize(
    "damage_bytes", [(b'"gpu":16', b'"gpu"\x0016'), (b'"gpu":16', b'"gpu"\xff16')]
)
def test_one_bad_record_blocks_plan_but_not_the_state_commands(
    run, small: Path, damage_bytes: tuple[bytes, bytes]
) -> None:
    path = applied(run, small)
    flip_in_file(path, *damage_bytes)

    for args in (("plan", small), ("apply", small, "--auto-approve")):
        refused = run(*args)
        assert refused.code == 1
        assert GPUS in refused.err and f"poolform state rm {GPUS}" in refused.err

    listed = run("state", "list", "--chdir", small)
    assert listed.code == 0
    assert POLICY in listed.out.split() and GPUS not in listed.out.split()
    assert f"the record of {GPUS} is damaged" in listed.err
    document = pulled(run, small)
    assert GPUS not in [r["address"] for r in document["resources"]]
    assert run("state", "show", POLICY, "--chdir", small).code == 0
    shown = run("state", "show", GPUS, "--chdir", small)
    assert shown.code == 1 and "damaged" in shown.err

    removed = run("state", "rm", GPUS, "--chdir", small)
    assert removed.code == 0, removed.err
    assert run("state", "list", "--chdir", small).err == ""
    assert run("plan", small, "--no-refresh").code == 0


def test_an_empty_sqlite_file_is_not_a_state(run, small: Path) -> None:
    path = state_db(small)
    path.parent.mkdir()
    sqlite3.connect(path).close()  # 0 bytes: sqlite writes nothing until a table exists
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 1")
    result = run("apply", small, "--auto-approve")
    assert result.code == 1 and "empty SQLite database, not a poolform state" in result.err
    assert cloud_groups(small) == 0
