"""`state migrate` of a local-provider configuration to a SQLite file in another directory.

The local provider keeps its cloud beside the state. `state migrate --to /elsewhere/state.db`
copied the state and told the user to point the Cluster at it; once they did, the next plan
looked for the cloud in /elsewhere, found none, and planned every recorded resource again
(`apply` made them all a second time, while the first ones kept running, workers included).
Now such a migration (either way, `--to` or `--from`) is refused before anything is copied,
naming where the cloud is; a migration that keeps the state beside its cloud works as before.
"""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import queue_digest  # .poolform, WAL files aside


def applied(pf: Pf, quick: Path) -> Path:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    return quick


def point_state_at(directory: Path, path: Path | str) -> None:
    cluster = directory / "cluster.yaml"
    cluster.write_text(cluster.read_text() + f"state:\n  path: {path}\n")


def test_migrating_away_from_the_local_cloud_is_refused(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    applied(pf, quick)
    before = queue_digest(quick)
    elsewhere = tmp_path / "elsewhere" / "state.db"
    elsewhere.parent.mkdir()

    refused = pf("state", "migrate", "--chdir", quick, "--to", elsewhere)

    assert refused.returncode == 1, refused.stdout
    assert f"the local provider's cloud is in {quick / '.poolform'}" in refused.stderr
    assert "Traceback" not in refused.stderr and "internal error" not in refused.stderr
    assert not elsewhere.exists() and queue_digest(quick) == before


def test_migrating_from_beside_the_cloud_to_elsewhere_is_refused(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    applied(pf, quick)
    elsewhere = tmp_path / "elsewhere.db"
    point_state_at(quick, elsewhere)
    refused = pf("state", "migrate", "--chdir", quick, "--from", quick / ".poolform" / "state.db")
    assert refused.returncode == 1, refused.stdout
    assert "every resource would be planned again" in refused.stderr
    assert not elsewhere.exists()


def test_a_migration_that_keeps_the_state_beside_its_cloud_plans_nothing_new(
    pf: Pf, quick: Path
) -> None:
    applied(pf, quick)
    moved = pf("state", "migrate", "--chdir", quick, "--to", ".poolform/moved.db")
    assert moved.returncode == 0, moved.stderr
    point_state_at(quick, ".poolform/moved.db")
    plan = pf("plan", quick, "--detailed-exitcode")
    assert plan.returncode == 0, plan.stdout + plan.stderr
