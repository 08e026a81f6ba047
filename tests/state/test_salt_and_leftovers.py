"""The salt of sensitive values lives in the state; a refused or failed command leaves nothing."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sqlite3
import uuid
from pathlib import Path

from reconciler.checks import load_configuration
from reconciler.plan.expand import expand
from tests.state.conftest import state_db

LAYOUT_1 = """
CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), lineage TEXT NOT NULL,
    serial INTEGER NOT NULL, created TEXT NOT NULL);
CREATE TABLE resources (address TEXT PRIMARY KEY, kind TEXT NOT NULL,
    schema_version INTEGER NOT NULL, attributes TEXT NOT NULL, provider_ids TEXT NOT NULL,
    dependencies TEXT NOT NULL, tainted INTEGER NOT NULL, updated_serial INTEGER NOT NULL)
    WITHOUT ROWID;
CREATE TABLE intents (address TEXT PRIMARY KEY, token TEXT NOT NULL, created TEXT NOT NULL)
    WITHOUT ROWID;
CREATE TABLE history (id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL,
    user TEXT NOT NULL, plan_hash TEXT NOT NULL, changes INTEGER NOT NULL,
    outcome TEXT NOT NULL, serial INTEGER NOT NULL);
CREATE TABLE lock (id INTEGER PRIMARY KEY CHECK (id = 1), lock_id TEXT NOT NULL,
    operation TEXT NOT NULL, who TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    created TEXT NOT NULL, path TEXT NOT NULL, info TEXT NOT NULL);
PRAGMA user_version = 1;
"""


def write_layout_1_state(directory: Path) -> None:
    """A state as poolform wrote it before the salt moved into the state: layout 1, with the
    salt's key in `.poolform/secret` beside it, every resource recorded as applied."""
    path = state_db(directory)
    path.parent.mkdir(mode=0o700)
    key = os.urandom(32).hex()
    (path.parent / "secret").write_text(key)
    lineage = str(uuid.uuid4())
    salt = hmac.new(key.encode(), lineage.encode(), hashlib.sha256).hexdigest()
    configuration = load_configuration(directory)
    with sqlite3.connect(path) as db:
        db.executescript(LAYOUT_1)
        db.execute("INSERT INTO meta VALUES (1, ?, 0, 'then')", (lineage,))
        for n, resource in enumerate(
            expand(configuration, salt=salt, environment={}).values(), start=1
        ):
            db.execute(
                "INSERT INTO resources VALUES (?, ?, 1, ?, ?, ?, 0, ?)",
                (
                    resource.address,
                    resource.resource_type,
                    json.dumps(resource.attributes),
                    json.dumps({"object": f"obj-{n}"}),
                    json.dumps(list(resource.dependencies)),
                    n,
                ),
            )
        db.execute("UPDATE meta SET serial = ?", (n,))


def test_a_layout_1_state_keeps_its_salt_after_the_secret_file_is_gone(run, small: Path) -> None:
    write_layout_1_state(small)
    first = run("plan", small, "--no-refresh", "--detailed-exitcode")
    assert first.code == 0, first.out + first.err  # the old salt was adopted into the state
    (small / ".poolform" / "secret").unlink()
    again = run("plan", small, "--no-refresh", "--detailed-exitcode")
    assert again.code == 0, again.out + again.err
    with sqlite3.connect(state_db(small)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (2,)


def test_losing_the_secret_of_a_layout_1_state_is_refused_not_planned_as_replacements(
    run, small: Path
) -> None:
    write_layout_1_state(small)
    secret = small / ".poolform" / "secret"
    kept = secret.read_text()
    secret.unlink()
    refused = run("plan", small, "--no-refresh")
    assert refused.code == 1
    assert "secret" in refused.err and "is missing" in refused.err
    assert f"Restore {secret}" in refused.err
    assert "replace" not in refused.out
    secret.write_text(kept)  # restored as the message says: back to no changes
    assert run("plan", small, "--no-refresh", "--detailed-exitcode").code == 0


def test_the_salt_lives_in_the_state_not_in_a_file(run, small: Path) -> None:
    assert run("apply", small, "--auto-approve").code == 0
    assert not (small / ".poolform" / "secret").exists()
    dumped = "\n".join(sqlite3.connect(state_db(small)).iterdump())
    assert "sensitive:sha256:" in dumped and "USER-DATA-SECRET-1" not in dumped
    plan = run("plan", small, "--detailed-exitcode")
    assert plan.code == 0, plan.out
    pulled = run("state", "pull", "--chdir", small).out
    (salt,) = sqlite3.connect(state_db(small)).execute("SELECT salt FROM meta").fetchone()
    assert salt not in pulled and salt not in plan.out


def test_plan_creates_no_state_and_a_failed_plan_leaves_nothing(
    run, small: Path, monkeypatch
) -> None:
    assert run("plan", small).code == 0
    assert not (small / ".poolform").exists()
    config = small / "config.yaml"
    config.write_text(config.read_text().replace("USER-DATA-SECRET-1", "${env:POOLFORM_UNSET_X}"))
    monkeypatch.delenv("POOLFORM_UNSET_X", raising=False)
    failed = run("plan", small)
    assert failed.code == 1 and "POOLFORM_UNSET_X" in failed.err
    assert not (small / ".poolform").exists()


def test_a_saved_plan_pins_a_new_state_and_applies(run, small: Path, tmp_path: Path) -> None:
    planfile = tmp_path / "plan.out"
    assert run("plan", small, "-out", planfile).code == 0
    applied = run("apply", planfile)
    assert applied.code == 0, applied.err
    assert run("plan", small, "--detailed-exitcode").code == 0


def test_the_mode_of_a_state_file_poolform_did_not_create_is_left_alone(
    run, small: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "shared" / "team.db"
    config = small / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "provider: local", f"provider: local\nstate: {{path: {elsewhere}}}"
        )
    )
    assert run("apply", small, "--auto-approve").code == 0
    assert elsewhere.stat().st_mode & 0o777 == 0o600  # made by poolform: private
    os.chmod(elsewhere, 0o640)
    os.chmod(elsewhere.parent, 0o750)
    config.write_text(config.read_text().replace("gpu: 16", "gpu: 20"))
    assert run("apply", small, "--auto-approve").code == 0
    assert elsewhere.stat().st_mode & 0o777 == 0o640
    assert elsewhere.parent.stat().st_mode & 0o777 == 0o750


def test_plans_and_applies_racing_on_a_new_directory_agree(small: Path) -> None:
    """Plans create and remove the lock file of a state that does not exist yet, while applies
    wait on it: every command still gets the lock in turn and the state is made once."""
    from tests.scenario.installed import start

    commands = [
        ("plan", small, "--lock-timeout", "120s")
        if n % 2
        else ("apply", small, "--auto-approve", "--lock-timeout", "120s")
        for n in range(8)
    ]
    runs = [start(*command) for command in commands]
    outputs = [p.communicate(timeout=300) for p in runs]
    assert [p.returncode for p in runs] == [0] * 8, outputs
    assert all("internal error" not in err and "Took over" not in err for _, err in outputs)
    created = [out for out, _ in outputs if "Apply complete! Resources: 3 added" in out]
    assert len(created) == 1
    with sqlite3.connect(state_db(small)) as db:
        assert db.execute("SELECT serial FROM meta").fetchone() == (3,)
