"""The hint of a state lock held by another run, after a `--lock-timeout` wait ran out. It
said "wait for it with --lock-timeout (e.g. --lock-timeout 2m)" to a user who had just
waited with `--lock-timeout`. It now says the state is still locked after the wait (its
length), names the holder, and gives the way on that fits the backend without suggesting
the option again. Without a wait, the hint suggests it as before. The PostgreSQL case needs
POOLFORM_TEST_PG_URL."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.state.services import schema

__all__ = ["schema"]  # the fixture

SUGGESTED = "wait for it with --lock-timeout"


def test_a_wait_that_ran_out_says_so_and_does_not_suggest_waiting(pf: Pf, quick: Path) -> None:
    from state.sqlite import SqliteStateBackend, default_state_path

    assert pf("apply", quick, "--auto-approve").returncode == 0
    backend = SqliteStateBackend(default_state_path(quick.resolve()))
    held = backend.lock("apply", who="someone@elsewhere")
    try:
        at_once = pf("plan", quick)
        waited = pf("plan", quick, "--lock-timeout", "1s")
        waited_apply = pf("apply", quick, "--auto-approve", "-lock-timeout=1.5")
    finally:
        backend.unlock(held.lock_id)
        backend.close()
    assert at_once.returncode == 1
    assert "error: the state is locked by someone@elsewhere" in at_once.stderr
    assert SUGGESTED in at_once.stderr
    for result, wait in ((waited, "1s"), (waited_apply, "1.5s")):
        assert result.returncode == 1
        assert (
            f"error: the state is still locked after waiting {wait} (--lock-timeout): "
            "locked by someone@elsewhere"
        ) in result.stderr
        assert held.lock_id in result.stderr
        assert "--lock-timeout (e.g." not in result.stderr
        assert "hint: the lock frees itself when that process ends" in result.stderr


def test_a_postgres_wait_that_ran_out_points_at_force_unlock_only(
    pf: Pf, tmp_path: Path, schema: tuple[str, str]
) -> None:
    from state.postgres import PostgresBackend

    url, name = schema
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(
        "kind: Cluster\nname: team\nprovider: local\n"
        f'state: {{backend: postgres, dsn: "${{env:TEAM_PG}}", key: {name}}}\n'
        "---\nkind: ResourcePool\nname: seats\ncapacity: {seat: 2}\n"
    )
    env = {"TEAM_PG": url}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    backend = PostgresBackend(url, schema=name)
    held = backend.lock("apply", who="someone@elsewhere")
    try:
        waited = pf("drift", directory, "--lock-timeout", "1", env=env)
    finally:
        backend.unlock(held.lock_id)
        backend.close()
    assert waited.returncode == 1
    assert "the state is still locked after waiting 1s (--lock-timeout)" in waited.stderr
    assert SUGGESTED not in waited.stderr
    assert f"`poolform force-unlock {held.lock_id}`" in waited.stderr
