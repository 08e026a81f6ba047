"""`jobs cancel 1 --grace 1h` gives a job an hour to checkpoint; it hangs in its handler, and
the user asks again with `--grace 0`. That second cancel said "Nothing to cancel: the job(s)
had already ended." (the job ran, holding its capacity, for the rest of the hour). Now it
brings the SIGKILL deadline to now, and one that asks for no sooner a deadline says the job
is already being cancelled. With the installed poolform."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from tests.adversarial.scheduler_setup import applied, group_alive, job_file, job_group
from tests.scenario.installed import poolform
from tests.scheduler.scenario import ok, statuses, wait_until

HANGS = """kind: Job
name: hangs
pool: seats
run: |
  trap 'echo checkpointing; sleep 3301; exit 0' TERM
  sleep 3302 & wait
"""


def test_a_second_cancel_with_a_shorter_grace_kills_the_job_now(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    ok("jobs", "submit", job_file(tmp_path, HANGS), "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    wait_until("it runs", lambda: (directory / ".poolform/jobs/1/attempt-1/claim/pid").exists())
    group = job_group(directory, 1)
    try:
        first = ok("jobs", "cancel", "1", "--grace", "1h", "--chdir", directory)
        assert first.startswith("Stopping 1 running job(s): 1"), first
        log = directory / ".poolform/jobs/1/output.log"
        wait_until("it checkpoints", lambda: "checkpointing" in log.read_text())
        later = ok("jobs", "cancel", "1", "--grace", "2h", "--chdir", directory)
        assert later == (
            "Nothing to change: job(s) 1 are already being cancelled, SIGKILL due no later "
            "than this --grace would make it\n"
        )
        ok("scheduler", "run", "--once", "--chdir", directory)
        assert statuses(directory)[1] == "running"  # an hour's grace: not killed yet

        now = ok("jobs", "cancel", "1", "--grace", "0", "--chdir", directory)
        assert now.startswith("Stopping 1 running job(s): 1"), now
        killed = ok("scheduler", "run", "--once", "--chdir", directory)
        assert "killed 1" in killed, killed  # at once, not in an hour

        def ended() -> bool:
            result = poolform("scheduler", "run", "--once", "--chdir", directory)
            assert result.returncode == 0, result.stderr
            return statuses(directory)[1] == "cancelled"

        wait_until("it is cancelled", ended)
        assert not group_alive(group)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
