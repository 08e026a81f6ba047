"""`apply` against a read-only local cloud (a read-only mount, a backup restored read-only).
SQLite's "attempt to write a readonly database" used to be taken for a transient error: the
walker retried the change 8 times, with backoff, before it failed. No retry can make a file
writable, so the change now fails at its first attempt, naming the database file (exit 1, the
state unchanged). The read-only mount is made as in test_read_only_files5.py (skipped where
mount namespaces cannot be made)."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.test_read_only_files5 import directory, read_only
from tests.scenario.installed import poolform

__all__ = ["directory"]  # the fixture, made where the read-only mount is possible


def test_a_read_only_local_cloud_fails_the_change_at_once_naming_the_file(
    directory: Path,
) -> None:
    cloud = directory / ".poolform" / "local-cloud.db"
    config = directory / "config.yaml"
    config.write_text(config.read_text().replace("seat: 2", "seat: 3"))
    before = poolform("state", "pull", "--chdir", directory).stdout

    applied = read_only(cloud, "apply", directory, "--auto-approve")

    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert "retrying" not in applied.stdout, applied.stdout
    assert "resource_pool.seats: FAILED after" in applied.stdout, applied.stdout
    failure = f"local cloud database {cloud}: attempt to write a readonly database"
    assert failure in applied.stderr, applied.stderr
    assert poolform("state", "pull", "--chdir", directory).stdout == before
