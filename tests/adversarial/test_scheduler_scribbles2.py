"""A job that scribbles over its own attempt's bookkeeping (it can: the directory belongs to
the user it runs as, one level above its working directory): an exit file holding a number no
store can hold, a negative one, words, a fifo, a symlink to an endless device, gigabytes; a pid
file holding nonsense. The scheduler is shared by every job: no cycle may fail or hang on
what one job wrote.

The scheduler reads those files only where it must: an exit file once the attempt's wrapper is
gone (while it runs, the file is not its status), a pid file only when the store holds no
process for the attempt. So each scribble here is made where it is read: the exit file by a
job that killed its wrapper (nothing the job starts outlives a wrapper that records a status:
it kills all of it first, also what left the job's session); the pid file by a job
whose process the store never recorded (a scheduler killed between starting it and recording
it leaves exactly that)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import CONFIG, applied, job_file
from tests.scheduler.scenario import TERMINAL, ok, statuses

ATTEMPT = '"$POOLFORM_WORKDIR/../attempt-$POOLFORM_ATTEMPT"'
EXIT_SCRIBBLES = {
    "exit_past_64_bits": f"echo 99999999999999999999999 > {ATTEMPT}/exit",
    "exit_negative": f"echo -1 > {ATTEMPT}/exit",
    "exit_words": f"echo done > {ATTEMPT}/exit",
    "exit_fifo": f"mkfifo {ATTEMPT}/exit",
    "exit_endless_device": f"ln -s /dev/zero {ATTEMPT}/exit",
    "exit_huge_file": f"head -c 20000000 /dev/zero | tr '\\0' 7 > {ATTEMPT}/exit",
}
PID_SCRIBBLES = {
    "pid_past_64_bits": f"echo 99999999999999999999999 > {ATTEMPT}/claim/pid",
    "pid_zero": f"echo 0 > {ATTEMPT}/claim/pid",
    "pid_words": f"echo me > {ATTEMPT}/claim/pid",
}
MANY = CONFIG.replace("step_run: 4", "step_run: 16")


def cycles_until_done(pf: Pf, directory: Path) -> dict[int, str]:
    """`scheduler run --once` until every job has ended: each cycle exits 0 (a hang fails
    the test at its timeout)."""
    for _ in range(100):
        result = pf("scheduler", "run", "--once", "--chdir", directory, timeout=60)
        assert result.returncode == 0, result.stderr
        if set(statuses(directory).values()) <= TERMINAL:
            break
    return statuses(directory)


def test_an_exit_file_scribbled_where_the_wrapper_would_record_it(pf: Pf, tmp_path: Path) -> None:
    """Each scribbler kills its wrapper, leaves its scribble where the wrapper would have
    written the status, and exits 3: no status is left, nothing of the job runs, so the
    attempt is lost (failed: no retries). A number past 64 bits was an internal error in every cycle
    (OverflowError from SQLite), words a ValueError, the fifo and the device a hang: one job
    stopped the scheduler for all. The job beside them runs as ever."""
    directory = applied(tmp_path, MANY)
    cases = sorted(EXIT_SCRIBBLES)
    for number, case in enumerate(cases):
        done = tmp_path / f"scribbled-{number}"
        job = job_file(
            tmp_path,
            f"kind: Job\nname: {case.replace('_', '-')}\npool: seats\nrun: |\n"
            "  kill -9 $PPID\n"
            f"  rm -f {ATTEMPT}/exit; {EXIT_SCRIBBLES[case]}; touch {done}\n"
            "  exit 3\n",
            f"scribbler-{number}.yaml",
        )
        ok("jobs", "submit", job, "--chdir", directory)
    beside = job_file(tmp_path, "kind: Job\nname: n\npool: seats\nrun: echo fine\n", "n.yaml")
    ok("jobs", "submit", beside, "--chdir", directory)
    result = pf("scheduler", "run", "--once", "--chdir", directory, timeout=60)
    assert result.returncode == 0, result.stderr  # starts them all
    for number in range(len(cases)):  # every scribble in place before the next look
        marker = tmp_path / f"scribbled-{number}"
        for _ in range(600):
            if marker.exists():
                break
            time.sleep(0.05)
        assert marker.exists(), cases[number]
    scribblers = range(1, len(cases) + 1)
    assert cycles_until_done(pf, directory) == {
        **dict.fromkeys(scribblers, "failed"),
        len(cases) + 1: "succeeded",
    }
    for number in scribblers:
        shown = ok("jobs", "show", str(number), "--chdir", directory)
        assert "vanished without an exit status" in shown, (cases[number - 1], shown)


def test_a_pid_file_scribbled_where_the_store_holds_no_process(pf: Pf, tmp_path: Path) -> None:
    """Each job writes nonsense over its claim's pid, then waits for the gate and exits 3;
    the store's record of its process is then taken away. The scheduler must read the pid
    file: it finds nothing it can use there, and yet it keeps the job running while the
    wrapper runs, and records the status the wrapper writes (not a loss after 30 s)."""
    directory = applied(tmp_path, MANY)
    gate = tmp_path / "gate"
    cases = sorted(PID_SCRIBBLES)
    for number, case in enumerate(cases):
        job = job_file(
            tmp_path,
            f"kind: Job\nname: {case.replace('_', '-')}\npool: seats\nrun: |\n"
            f"  {PID_SCRIBBLES[case]}\n"
            f"  while [ ! -e {gate} ]; do sleep 0.05; done\n  exit 3\n",
            f"scribbler-{number}.yaml",
        )
        ok("jobs", "submit", job, "--chdir", directory)
    try:
        result = pf("scheduler", "run", "--once", "--chdir", directory, timeout=60)
        assert result.returncode == 0, result.stderr
        scribbled = {"0", "9" * 23, "me"}
        for number in range(1, len(cases) + 1):  # each scribble in place before the next look
            pid = directory / ".poolform" / "jobs" / str(number) / "attempt-1" / "claim" / "pid"
            for _ in range(600):
                if pid.exists() and pid.read_text().strip() in scribbled:
                    break
                time.sleep(0.05)
            assert pid.read_text().strip() in scribbled, cases[number - 1]
        with sqlite3.connect(directory / ".poolform" / "scheduler.db") as db:
            db.execute("UPDATE jobs SET pid = NULL, pid_start = NULL")  # never recorded
        for _ in range(2):
            result = pf("scheduler", "run", "--once", "--chdir", directory, timeout=60)
            assert result.returncode == 0, result.stderr
        held = statuses(directory)
        assert list(held.values()) == ["running"] * len(cases), held
    finally:
        gate.touch()
    assert cycles_until_done(pf, directory) == dict.fromkeys(range(1, len(cases) + 1), "failed")
    for number in range(1, len(cases) + 1):
        shown = ok("jobs", "show", str(number), "--chdir", directory)
        assert "exited with status 3" in shown, (cases[number - 1], shown)
