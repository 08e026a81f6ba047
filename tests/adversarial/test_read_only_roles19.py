"""PostgreSQL roles that may read the state, or not even that, running every command a pull
request's job might.

Before:
* a role never granted the state's schema was told there was no state: `show` printed
  "No state.", `state list` "no state for . yet", and plan/drift planned or judged against an
  empty state (information_schema hides tables a role has no privilege on);
* `plan --no-lock -out FILE` with no state yet printed the plan, then "permission denied for
  database postgres" (saving a plan makes the state), and left FILE behind;
* `apply` and the job commands said "permission denied for ..." and nothing of what to grant;
  `jobs list` before the scheduler's tables existed said "permission denied for database
  postgres".
Now each is exit 1 with a message that says it is a permission problem and what it takes.

Needs POOLFORM_TEST_PG_URL (a real server and real roles).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.conftest import Pf, tree_digest
from tests.adversarial.test_read_only_credentials import CONFIG, grant_reading, reader
from tests.state.services import schema

__all__ = ["reader", "schema"]  # the fixtures


def team(tmp_path: Path, schema_name: str, seats: int = 2) -> Path:
    directory = tmp_path / "team"
    directory.mkdir(exist_ok=True)
    (directory / "config.yaml").write_text(CONFIG.format(schema=schema_name, seats=seats))
    return directory


def test_a_role_never_granted_the_schema_is_told_so_not_that_there_is_no_state(
    pf: Pf, tmp_path: Path, schema: tuple[str, str], reader: str
) -> None:
    url, name = schema
    directory = team(tmp_path, name)
    assert pf("apply", directory, "--auto-approve", env={"TEAM_PG": url}).returncode == 0
    stranger = {"TEAM_PG": reader}  # a login role, no grant on the schema
    before = tree_digest(directory)
    for command in (
        ("show", directory),
        ("state", "list", "--chdir", directory),
        ("plan", directory, "--no-lock"),
        ("drift", directory, "--no-lock"),
    ):
        refused = pf(*command, env=stranger)
        assert refused.returncode == 1, (command, refused.stdout)
        assert "No state." not in refused.stdout and "no state" not in refused.stderr
        assert "permission denied for schema" in refused.stderr, refused.stderr
        assert "USAGE on its schema and SELECT on its tables" in refused.stderr
        assert "Traceback" not in refused.stderr and "LINE 1" not in refused.stderr
    assert tree_digest(directory) == before


def test_a_saved_plan_a_reader_cannot_pin_is_refused_and_not_left_behind(
    pf: Pf, tmp_path: Path, schema: tuple[str, str], reader: str
) -> None:
    _url, name = schema  # nothing applied: no state, no schema
    directory = team(tmp_path, name)
    saved = tmp_path / "plan.bin"
    readonly = {"TEAM_PG": reader}
    refused = pf("plan", directory, "--no-lock", "-out", saved, env=readonly)
    assert refused.returncode == 1
    assert "saving a plan makes it" in refused.stderr, refused.stderr
    assert "plan without -out" in refused.stderr
    assert not saved.exists()
    as_json = pf("plan", directory, "--no-lock", "-out", saved, "--json", env=readonly)
    assert as_json.returncode == 1
    document = json.loads(as_json.stdout)  # one error document, nothing before it
    assert "saving a plan makes it" in document["error"]["message"]
    assert not saved.exists()
    # Without -out the reader plans, and nothing was made.
    assert pf("plan", directory, "--no-lock", env=readonly).returncode == 0


def test_a_reader_that_runs_a_command_that_writes_is_told_what_writing_takes(
    pf: Pf, tmp_path: Path, schema: tuple[str, str], reader: str
) -> None:
    url, name = schema
    directory = team(tmp_path, name)
    assert pf("apply", directory, "--auto-approve", env={"TEAM_PG": url}).returncode == 0
    grant_reading(url, name, reader)
    team(tmp_path, name, seats=3)
    for command in (
        ("apply", directory, "--auto-approve"),
        ("state", "rm", "resource_pool.seats", "--chdir", directory),
    ):
        refused = pf(*command, env={"TEAM_PG": reader})
        assert refused.returncode == 1
        assert "permission denied for table lock" in refused.stderr, refused.stderr
        assert "INSERT, UPDATE and DELETE" in refused.stderr


def test_job_commands_of_a_reader_say_what_the_queue_takes(
    pf: Pf, tmp_path: Path, schema: tuple[str, str], reader: str
) -> None:
    url, name = schema
    directory = team(tmp_path, name)
    owner, readonly = {"TEAM_PG": url}, {"TEAM_PG": reader}
    assert pf("apply", directory, "--auto-approve", env=owner).returncode == 0
    grant_reading(url, name, reader)
    for command in ("jobs", "list"), ("pools", "status"):
        refused = pf(*command, "--chdir", directory, env=readonly)
        assert refused.returncode == 1
        assert "are not made yet, and these credentials may not make them" in refused.stderr
        assert "with the credentials that apply" in refused.stderr, refused.stderr
    # The owner's first job command makes the tables; the reader's grant came before them.
    assert pf("jobs", "list", "--chdir", directory, env=owner).returncode == 0
    ungranted = pf("jobs", "list", "--chdir", directory, env=readonly)
    assert ungranted.returncode == 1
    assert "permission denied for table sched_" in ungranted.stderr, ungranted.stderr
    assert "covers only the tables there when it is made" in ungranted.stderr
    grant_reading(url, name, reader)
    listed = pf("jobs", "list", "--chdir", directory, env=readonly)
    assert listed.returncode == 0, listed.stderr
    assert pf("pools", "status", "--chdir", directory, env=readonly).returncode == 0


def test_state_list_with_no_state_names_the_directory_chdir_moved_into(
    pf: Pf, tmp_path: Path, schema: tuple[str, str], reader: str
) -> None:
    """`state list --chdir team` said "no state for . yet": the directory after --chdir."""
    _url, name = schema
    directory = team(tmp_path, name)
    for command in ("list",), ("pull",):
        said = pf("state", *command, "--chdir", directory, env={"TEAM_PG": reader})
        assert said.returncode == 1
        assert f"no state for {directory.resolve()} yet" in said.stderr, said.stderr
