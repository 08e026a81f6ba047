"""`jobs logs --follow` while the log is truncated under it (`: > output.log`, or a log
rotation that copies and truncates, to make room on a full disk). The follower kept its
offset past the new end: whatever the job wrote afterwards, up to that many bytes, was never
shown, and a job that wrote less was shown nothing more at all. It now reads the log from its
start again, as `tail -F` does."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file
from tests.scenario.installed import start
from tests.scheduler.scenario import ok, statuses, wait_until


def test_follow_goes_on_after_the_log_is_truncated(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    gate = tmp_path / "gate"
    before = "before-" + "x" * 200  # longer than what the job writes after the truncation
    run = f"echo {before}; while [ ! -e {gate} ]; do sleep 0.05; done; echo after"
    ok("jobs", "submit", job_file(tmp_path, f"kind: Job\nname: j\npool: seats\nrun: {run}\n"),
       "--chdir", directory)  # fmt: skip
    ok("scheduler", "run", "--once", "--chdir", directory)
    follower = start("jobs", "logs", "1", "--follow", "--chdir", directory)
    try:
        assert follower.stdout is not None
        assert follower.stdout.readline() == before + "\n"
        log = directory / ".poolform" / "jobs" / "1" / "output.log"
        log.write_bytes(b"")  # truncated in place: the job's O_APPEND writes start at 0 again
        gate.touch()

        def ended() -> bool:
            ok("scheduler", "run", "--once", "--chdir", directory)
            return statuses(directory)[1] == "succeeded"

        wait_until("the job ended", ended)
        rest, stderr = follower.communicate(timeout=60)
    finally:
        follower.kill()
    assert follower.returncode == 0, stderr
    assert rest == "after\n"
