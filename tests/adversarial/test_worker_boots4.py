"""A worker pool booted on the local provider runs each worker's `setup` as a process of this
machine. A cloud would boot every worker on a machine of its own; here they share one, so a
big pool boots in waves (providers/local/workers.py, SETUPS_AT_ONCE) rather than starting
every `setup` (and what it starts) at the same moment. Each `setup` here notes how many were
running when it began, using shell builtins only (10 workers: at most 20 processes)."""

from __future__ import annotations

from pathlib import Path

from providers.local.workers import SETUPS_AT_ONCE
from tests.adversarial.conftest import Pf

WORKERS = 10
POOL = """kind: WorkerPool
name: many
pool:
  workers: {workers}
resources:
  instance_type: c5.xlarge
setup: |
  : > {marks}/started.$POOLFORM_WORKER_ID
  begun=({marks}/started.*)
  ended=({marks}/ended.*)
  [ -e "${{ended[0]}}" ] || ended=()
  echo $(( ${{#begun[@]}} - ${{#ended[@]}} )) >> {marks}/running-at-start
  sleep 2
  : > {marks}/ended.$POOLFORM_WORKER_ID
"""


def test_a_big_pool_boots_its_workers_a_wave_at_a_time(pf: Pf, tmp_path: Path) -> None:
    assert WORKERS > SETUPS_AT_ONCE  # else there is nothing to bound
    marks = tmp_path / "marks"
    marks.mkdir()
    directory = tmp_path / "pool"
    directory.mkdir()
    (directory / "cluster.yaml").write_text("kind: Cluster\nname: c\nprovider: local\n")
    (directory / "pool.yaml").write_text(POOL.format(workers=WORKERS, marks=marks))
    applied = pf("apply", directory, "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    counts = [int(line) for line in (marks / "running-at-start").read_text().split()]
    assert len(counts) == WORKERS  # every worker's setup ran, once
    assert max(counts) <= SETUPS_AT_ONCE
    assert len(list(marks.glob("ended.*"))) == WORKERS
    assert pf("plan", directory, "--detailed-exitcode").returncode == 0
