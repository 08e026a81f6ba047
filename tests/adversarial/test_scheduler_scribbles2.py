"""A job that scribbles over its own attempt's bookkeeping (it can: the directory belongs to
the user it runs as, one level above its working directory): an exit file holding a number no
store can hold, a negative one, words, a fifo, a symlink to an endless device, gigabytes; a pid
file holding nonsense. The scheduler is shared by every job: no cycle may fail or hang on
what one job wrote, and the job's real end is recorded when its wrapper writes it."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import CONFIG, applied, job_file
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


def test_what_a_job_writes_over_its_bookkeeping_never_stops_the_scheduler(
    pf: Pf, tmp_path: Path
) -> None:
    """One job per scribble, queued together with a job that scribbles nothing: every cycle
    exits 0 (a number past 64 bits was an internal error in every cycle, so one job stopped
    the scheduler for all: OverflowError from SQLite); each scribbler ends as its wrapper
    records it (exit 3), and the job beside them runs as ever. The pool runs them all at once:
    every scribble is there while the gate holds its job running."""
    root = tmp_path
    directory = applied(root, CONFIG.replace("step_run: 4", "step_run: 16"))
    gate = root / "gate"
    cases = sorted(SCRIBBLES)
    for number, case in enumerate(cases):
        job = job_file(
            root,
            f"kind: Job\nname: {case.replace('_', '-')}\npool: seats\nrun: |\n"
            f"  {SCRIBBLES[case]}\n"
            f"  while [ ! -e {gate} ]; do sleep 0.05; done\n  exit 3\n",
            f"scribbler-{number}.yaml",
        )
        ok("jobs", "submit", job, "--chdir", directory)
    beside = job_file(root, "kind: Job\nname: n\npool: seats\nrun: echo fine\n", "n.yaml")
    ok("jobs", "submit", beside, "--chdir", directory)
    try:
        for _ in range(3):  # the first admits and starts them all
            result = pf("scheduler", "run", "--once", "--chdir", directory, timeout=60)
            assert result.returncode == 0, result.stderr
        held = statuses(directory)
        assert [held[n] for n in range(1, len(cases) + 1)] == ["running"] * len(cases), held
    finally:
        gate.touch()  # the jobs end even when a cycle failed (their files defeat the clean-up)
    for _ in range(100):
        result = pf("scheduler", "run", "--once", "--chdir", directory, timeout=60)
        assert result.returncode == 0, result.stderr
        if set(statuses(directory).values()) <= TERMINAL:
            break
    scribblers = range(1, len(cases) + 1)
    assert statuses(directory) == {
        **dict.fromkeys(scribblers, "failed"),
        len(cases) + 1: "succeeded",
    }
    for number in scribblers:
        shown = ok("jobs", "show", str(number), "--chdir", directory)
        assert "exited with status 3" in shown, cases[number - 1]
