"""`jobs logs ID --follow` of a job still queued waited in silence, as if hung, until a
scheduler started the job. It now says once on stderr that the job is waiting to start, and
why (as `kubectl logs -f` of a pending pod says it is waiting), then follows the output as
before; stdout holds only the job's output."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import IO

from tests.adversarial.scheduler_setup import applied, job_file
from tests.scenario.installed import start
from tests.scheduler.scenario import ok


def _first_line(stream: IO[str], within: float) -> str:
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(within)
    assert lines, "nothing said on stderr while the job waited"
    return lines[0]


def test_following_a_queued_job_says_once_that_it_waits_for_it_to_start(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo started\n")
    ok("jobs", "submit", job, "--chdir", directory)
    follow = start("jobs", "logs", "1", "--follow", "--chdir", directory)
    try:
        assert follow.stdout is not None and follow.stderr is not None
        # Before any scheduler has run, the wait is told (without that, this line never came
        # and the follow waited for good: a hang guard, not a timing).
        said = _first_line(follow.stderr, within=120)
        assert said.startswith("job 1 is waiting to start (queued: "), said
        ok("scheduler", "run", "--once", "--chdir", directory)
        out, err = follow.communicate(timeout=120)
    finally:
        follow.kill()
        follow.wait()
    assert (follow.returncode, out) == (0, "started\n"), err
    assert "waiting" not in err  # once


def test_following_a_job_that_ran_says_nothing_of_waiting(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo done\n")
    ok("jobs", "submit", job, "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    follow = start("jobs", "logs", "1", "--follow", "--chdir", directory)
    out, err = follow.communicate(timeout=120)
    assert (follow.returncode, out, err) == (0, "done\n", "")
