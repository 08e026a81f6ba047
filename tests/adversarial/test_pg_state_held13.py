"""A PostgreSQL team state whose tables another session holds and never lets go: a `psql`
transaction left open (`LOCK TABLE`, an `UPDATE` not committed), a poolform stopped with
Ctrl-Z in the middle of a write.

Before, `plan`, `apply`, `drift`, ... on every runner waited for it forever, saying nothing,
while holding the state lock (so every other runner was refused as well) until CI killed the
job. With a lock_timeout of its own (PGOPTIONS) the wait ended in a message saying the
connection was lost and to run again "once the server is back". Now the state's session gives
up after lock_timeout (30 s, as the scheduler's queue does, unless the session sets its own)
and says what holds it; exit 1, nothing changed. Needs POOLFORM_TEST_PG_URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, cloud_holds
from tests.state.services import schema

__all__ = ["schema"]  # the fixture

CONFIG = """kind: Cluster
name: team
provider: local
state: {{backend: postgres, dsn: "${{env:TEAM_PG}}", key: {schema}}}
---
kind: ResourcePool
name: seats
capacity: {{seat: {seats}}}
"""


def test_the_state_session_gives_up_on_a_held_table_after_lock_timeout(
    schema: tuple[str, str],
) -> None:
    """The default: 30 s, unless the session came with a lock_timeout of its own."""
    from state.postgres import PostgresBackend

    url, name = schema
    backend = PostgresBackend(url, schema=name)
    try:
        with backend._txn() as conn:
            row = conn.execute("SELECT current_setting('lock_timeout')").fetchone()
    finally:
        backend.close()
    assert row is not None and row[0] == "30s"


@pytest.mark.parametrize("command", ["plan", "apply", "drift"])
def test_a_table_held_by_another_session_is_named_not_waited_on_forever(
    pf: Pf, tmp_path: Path, schema: tuple[str, str], command: str
) -> None:
    import psycopg

    url, name = schema
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG.format(schema=name, seats=2))
    env = {"TEAM_PG": url}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    (directory / "config.yaml").write_text(CONFIG.format(schema=name, seats=3))
    before = cloud_holds(directory)

    quick = {**env, "PGOPTIONS": "-c lock_timeout=500"}
    args = ["--auto-approve"] if command == "apply" else []
    with psycopg.connect(url) as holder:  # a psql session left in its transaction
        holder.execute(f'LOCK TABLE "{name}".meta IN ACCESS EXCLUSIVE MODE')
        result = pf(command, directory, *args, env=quick)
        holder.rollback()

    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert "stayed locked by another session" in said, said
    assert "lock_timeout (500ms)" in said, said
    assert "server is back" not in said and "Traceback" not in said
    assert cloud_holds(directory) == before
    shown = pf("show", "--chdir", directory, env=env)
    assert "capacity.seat = 2" in shown.stdout, shown.stdout + shown.stderr
    # Once the session lets go, the same command works.
    assert pf(command, directory, *args, env=env).returncode in (0, 2)
