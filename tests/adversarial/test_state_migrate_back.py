"""`state migrate` back to where a state was moved from. The old copy there is marked as moved,
and its marker's words ("point the Cluster's `state` settings at it") were all a user moving
back was told: they had done just that. Now it says what the target is, and that a state is
not moved back over its old copy (which may be older); nothing is changed either side."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf, tree_digest
from tests.adversarial.test_state_migrate9 import CONFIG
from tests.state.services import schema

__all__ = ["schema"]  # the fixture

TEAM = CONFIG.replace(
    "provider: local\n",
    'provider: local\nstate: {backend: postgres, dsn: "${env:POOLFORM_PG_URL}", key: SCHEMA}\n',
)


def test_moving_back_over_the_old_copy_says_what_it_is(
    pf: Pf, tmp_path: Path, schema: tuple[str, str]
) -> None:
    url, name = schema
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    assert pf("apply", directory, "--auto-approve").returncode == 0
    moved = pf("state", "migrate", "--to", f"{url}?schema={name}", "--chdir", directory)
    assert moved.returncode == 0, moved.stderr
    (directory / "config.yaml").write_text(TEAM.replace("SCHEMA", name))
    env = {"POOLFORM_PG_URL": url}
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0
    before = tree_digest(directory)

    back = pf("state", "migrate", "--to", ".poolform/state.db", "--chdir", directory, env=env)
    assert back.returncode == 1
    assert "state.db is the old copy this state was moved from" in back.stderr
    assert "a state is not moved back over its old copy" in back.stderr
    assert "point the Cluster's `state` settings at it" not in back.stderr
    assert tree_digest(directory) == before
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0
