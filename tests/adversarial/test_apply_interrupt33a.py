"""Ctrl-C (or SIGTERM) during apply: it stops the walk whichever thread the kernel hands it
to, is answered at once, and its end says what was done and what was not.

1. The walk runs on threads of its own while the main thread waits for it. The kernel may
   deliver a process's signal to any of its threads; handed to one of the walk's (one sleeping
   in a provider call), Python only marked its handler as due, and the main thread, blocked in
   one long wait, never ran it: the apply went on starting every change of the plan and the
   Ctrl-C took effect only once all were made (3 runs in 8 of a 40-change apply, measured).
   A CI job cancelled with SIGTERM went on the same way. Now the main thread waits in short
   waits and acts on the signal within one.
2. Until the changes in flight ended (a cloud's replace can take minutes) a Ctrl-C was met by
   silence, then only `error: interrupted`. Now each Ctrl-C prints at once what is still in
   flight, and the end counts done / failed / skipped / not started, as a failed apply's
   summary does. `apply --json` is unchanged: its stream ends with the `error` event."""

from __future__ import annotations

import ctypes
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.test_apply_json_errors6 import stream
from tests.scenario.forty import write_forty
from tests.scenario.installed import poolform, start
from tests.scenario.state_view import recorded_addresses

STARTED = re.compile(r": (Creating|Updating|Replacing|Destroying)\.\.\.$")
ENDED = re.compile(r": (Created|Updated|Replaced|Destroyed) after ")
IN_FLIGHT = re.compile(r"Interrupt received: nothing new starts; waiting for the (\d+) change")
SUMMARY = re.compile(r"Interrupted: (\d+) done, (\d+) failed, (\d+) skipped, (\d+) not started;")
TOTAL = 40  # write_forty's changes, all creates on a first apply


def _blocks(pid: int, tid: int, signum: int) -> bool:
    """Whether the thread blocks `signum` (its SigBlk mask in /proc); a thread gone: yes."""
    try:
        status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    except OSError:
        return True
    line = re.search(r"^SigBlk:\s*([0-9a-f]+)$", status, re.MULTILINE)
    return line is None or bool(int(line.group(1), 16) >> (signum - 1) & 1)


def _to_a_walk_thread(process: subprocess.Popen[str], signum: int) -> None:
    """Send `signum` to one of the process's threads other than its main one, as the kernel
    may choose to (tgkill(2), glibc 2.30+): one that does not block it (the kernel never
    gives a process's signal to a thread that does, such as apply's heartbeat ticker)."""
    tids = sorted(int(t) for t in os.listdir(f"/proc/{process.pid}/task"))
    others = [t for t in tids if t != process.pid and not _blocks(process.pid, t, signum)]
    assert others, "the walk's threads run"
    assert ctypes.CDLL(None, use_errno=True).tgkill(process.pid, others[-1], signum) == 0


def _interrupted_apply(
    directory: Path, *extra: str, signum: int = signal.SIGINT, to_a_thread: bool = False
) -> tuple[list[str], str, int]:
    """`apply` sent `signum` once its first change has started: (stdout lines, stderr, code)."""
    process = start("apply", directory, "--auto-approve", *extra)
    assert process.stdout is not None and process.stderr is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if STARTED.search(lines[-1]) or '"type": "start"' in lines[-1]:
            break
    if to_a_thread:
        _to_a_walk_thread(process, signum)
    else:
        process.send_signal(signum)
    lines += process.stdout.read().splitlines()
    code = process.wait(timeout=120)
    return lines, process.stderr.read(), code


def _summary(lines: list[str]) -> tuple[int, int, int, int]:
    found = [m for m in map(SUMMARY.search, lines) if m is not None]
    assert len(found) == 1, lines
    done, failed, skipped, not_started = map(int, found[0].groups())
    return done, failed, skipped, not_started


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tgkill(2) and /proc: Linux")
@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_a_signal_handed_to_a_walk_thread_stops_the_apply_starting_changes(
    tmp_path: Path, signum: int, code: int
) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=1500)  # the first changes still run when it lands
    lines, err, exit_code = _interrupted_apply(directory, signum=signum, to_a_thread=True)
    assert exit_code == code, err
    assert "error: interrupted" in err and "Traceback" not in err
    done, failed, skipped, not_started = _summary(lines)
    # Only what had started (at most the 10 of one round of parallelism) was made.
    assert not_started > 0 and done <= 10, lines
    assert (failed, skipped) == (0, 0) and done + not_started == TOTAL
    assert done == len(recorded_addresses(directory))


def test_ctrl_c_during_apply_says_at_once_what_is_in_flight_and_then_what_was_done(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=1500)
    lines, err, code = _interrupted_apply(directory)
    assert code == 130, err
    assert "error: interrupted" in err and "Traceback" not in err

    told = [n for n, line in enumerate(lines) if IN_FLIGHT.search(line)]
    assert len(told) == 1, lines  # one Ctrl-C, one answer
    match = IN_FLIGHT.search(lines[told[0]])
    assert match is not None
    in_flight = int(match.group(1))
    ended_after = [line for line in lines[told[0] :] if ENDED.search(line)]
    assert in_flight >= 1 and len(ended_after) == in_flight, lines  # each one, then finished

    done, failed, skipped, not_started = _summary(lines)
    assert (done, failed, skipped) == (len([x for x in lines if ENDED.search(x)]), 0, 0)
    assert done == len(recorded_addresses(directory))
    assert not_started > 0 and done + not_started == TOTAL

    after = poolform("plan", directory)  # the lock released; the rest is planned
    assert after.returncode == 0, after.stderr
    assert f"Plan: {not_started} to add" in after.stdout


def test_apply_json_keeps_only_its_events_when_interrupted(tmp_path: Path) -> None:
    """The two text lines are no `apply --json` events: its stream is only schema events."""
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=1500)
    lines, err, code = _interrupted_apply(directory, "--json")
    assert code == 130, err
    events = stream("\n".join(lines) + "\n")
    assert {e["type"] for e in events} <= {"start", "retry", "done", "failed", "skipped", "error"}
    assert events[-1]["type"] == "error" and events[-1]["exit_code"] == 130
    assert 0 < len(recorded_addresses(directory)) < TOTAL
