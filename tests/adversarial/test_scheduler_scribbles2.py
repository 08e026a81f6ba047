"""A job that scribbles over its own attempt's bookkeeping (it can: the directory belongs to
the user it runs as, one level above its working directory): an exit file holding a number no
store can hold, a negative one, words, a fifo, a symlink to an endless device, gigabytes; a pid
file holding nonsense. The scheduler is shared by every job: no cycle may fail or hang on
what one job wrote, and the job's real end is recorded when its wrapper writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file
from tests.scheduler.scenario import TERMINAL, ok, statuses

ATTEMPT = '"$POOLFORM_WORKDIR/../attempt-$POOLFORM_ATTEMPT"'
SCRIBBLES = {
    "exit_past_64_bits": f"echo 99999999999999999999999 > {ATTEMPT}/exit",
    "exit_negative": f"echo -1 > {ATTEMPT}/exit",
    "exit_words": f"echo done > {ATTEMPT}/exit",
    "exit_fifo": f"mkfifo {ATTEMPT}/exit",
    "exit_endless_device": f"ln -s /dev/zero {ATTEMPT}/exit",
    "exit_huge_file": f"head -c 20000000 /dev/zero | tr '\\0' 7 > {ATTEMPT}/exit",
    "pid_past_64_bits": f"echo 99999999999999999999999 > {ATTEMPT}/claim/pid",
    "pid_zero": f"echo 0 > {ATTEMPT}/claim/pid",
}


@pytest.mark.parametrize("case", sorted(SCRIBBLES))
def test_what_a_job_writes_over_its_bookkeeping_never_stops_the_scheduler(
    pf: Pf, tmp_path: Path, case: str
) -> None:
    """Every cycle exits 0 (a number past 64 bits was an internal error in every cycle, so
    one job stopped the scheduler for all: OverflowError from SQLite); the job ends as its
    wrapper records it (exit 3), and the job beside it runs as ever."""
    root = tmp_path
    directory = applied(root)
    gate = root / "gate"
    job = job_file(
        root,
        "kind: Job\nname: scribbler\npool: seats\nrun: |\n"
        f"  {SCRIBBLES[case]}\n"
        f"  while [ ! -e {gate} ]; do sleep 0.05; done\n  exit 3\n",
    )
    ok("jobs", "submit", job, "--chdir", directory)
    ok("jobs", "submit", job_file(root, "kind: Job\nname: n\npool: seats\nrun: echo fine\n",
                                  "n.yaml"), "--chdir", directory)  # fmt: skip
    try:
        for _ in range(3):
            result = pf("scheduler", "run", "--once", "--chdir", directory, timeout=60)
            assert result.returncode == 0, result.stderr
    finally:
        gate.touch()  # the job ends even when a cycle failed (its files defeat the clean-up)
    for _ in range(100):
        result = pf("scheduler", "run", "--once", "--chdir", directory, timeout=60)
        assert result.returncode == 0, result.stderr
        if set(statuses(directory).values()) <= TERMINAL:
            break
    assert statuses(directory) == {1: "failed", 2: "succeeded"}
    listed = ok("jobs", "show", "1", "--chdir", directory)
    assert "exited with status 3" in listed
