"""`state migrate` looks at the local cloud (to refuse a move that would leave it behind)
without changing it. It opened the cloud's WAL database `mode=ro`, which makes its `-wal` and
`-shm` files and cannot remove them: a refused migration left two files in `.poolform/`. It now
reads with `query_only`, and the last connection removes them as SQLite does."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf


def test_a_refused_migration_leaves_the_local_cloud_as_it_was(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    before = sorted(p.name for p in (quick / ".poolform").iterdir())
    assert "local-cloud.db" in before and "local-cloud.db-wal" not in before
    moved = pf("state", "migrate", "--to", tmp_path / "elsewhere" / "state.db", "--chdir", quick)
    assert moved.returncode == 1
    assert "the local provider's cloud is in" in moved.stderr, moved.stderr
    assert sorted(p.name for p in (quick / ".poolform").iterdir()) == before
