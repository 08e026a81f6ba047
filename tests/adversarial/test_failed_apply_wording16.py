"""An apply that failed (a worker pool's setup exits 3) leaves the replacement it made to be
adopted. drift said it was "created by an apply that was interrupted before recording it":
nothing was interrupted, and a user looks for who killed the run. It says the apply stopped,
interrupted or failed, now."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf


def test_a_failed_apply_is_not_called_interrupted(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    pool = quick / "worker-pool.yaml"
    pool.write_text(pool.read_text().replace("echo ready > setup.log", "exit 3"))
    failed = pf("apply", quick, "--auto-approve")
    assert failed.returncode == 1
    assert "setup on worker" in failed.stdout + failed.stderr

    drift = pf("drift", quick)

    assert "worker_pool.cpu-workers: created by an apply that stopped before recording it " in (
        drift.stdout
    )
    assert "(interrupted, or failed after making it): the next apply adopts it" in drift.stdout
    assert "was interrupted" not in drift.stdout
