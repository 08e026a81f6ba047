"""Ctrl-C (or SIGTERM) during apply: it stops the walk whichever thread the kernel hands it
to, is answered at once, and its end says what was done and what was not.

1. The walk runs on threads of its own while the main thread waits for it. The kernel may
   deliver a process's signal to any of its threads; handed to one of the walk's (one sleeping
   in a provider call), Python only marked its handler as due, and the main thread, blocked in
   one long wait, never ran it: the apply went on starting every change of the plan and the
   Ctrl-C took effect only once all were made (3 runs in 8 of a 40-change apply, measured).
   A CI job cancelled with SIGTERM went on the same way. Now every thread but the main one
   blocks SIGINT and SIGTERM (state/threads.py), so the kernel hands them to the main thread,
   which also waits in short waits.
2. Until the changes in flight ended (a cloud's replace can take minutes) a Ctrl-C was met by
   silence, then only `error: interrupted`. Now each Ctrl-C prints at once what is still in
   flight, and the end counts done / failed / skipped / not started, as a failed apply's
   summary does. `apply --json` is unchanged: its stream ends with the `error` event."""

from __future__ import annotations

import os
import re
import signal
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


def _blocked_in_other_threads(pid: int) -> dict[int, set[int]]:
    """Per thread of the process but its main one, which of SIGINT and SIGTERM it blocks."""
    found: dict[int, set[int]] = {}
    for tid in sorted(int(t) for t in os.listdir(f"/proc/{pid}/task")):
        if tid == pid:
            continue
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended meanwhile
        line = re.search(r"^SigBlk:\s*([0-9a-f]+)$", status, re.MULTILINE)
        assert line is not None, status
        mask = int(line.group(1), 16)
        found[tid] = {s for s in (signal.SIGINT, signal.SIGTERM) if mask >> (s - 1) & 1}
    return found


def _interrupted_apply(
    directory: Path,
    *extra: str,
    signum: int = signal.SIGINT,
    threads: list[dict[int, set[int]]] | None = None,
) -> tuple[list[str], str, int]:
    """`apply` sent `signum` once its first change has started: (stdout lines, stderr, code);
    `threads` gets what its other threads block at that moment."""
    process = start("apply", directory, "--auto-approve", *extra)
    assert process.stdout is not None and process.stderr is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if STARTED.search(lines[-1]) or '"type": "start"' in lines[-1]:
            break
    if threads is not None:
        threads.append(_blocked_in_other_threads(process.pid))
    process.send_signal(signum)
    lines += process.stdout.read().splitlines()
    code = process.wait(timeout=120)
    return lines, process.stderr.read(), code


def _summary(lines: list[str]) -> tuple[int, int, int, int]:
    found = [m for m in map(SUMMARY.search, lines) if m is not None]
    assert len(found) == 1, lines
    done, failed, skipped, not_started = map(int, found[0].groups())
    return done, failed, skipped, not_started


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc: Linux")
@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_a_signal_to_apply_reaches_its_main_thread_and_stops_it_starting_changes(
    tmp_path: Path, signum: int, code: int
) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=1500)  # the first changes still run when it lands
    threads: list[dict[int, set[int]]] = []
    lines, err, exit_code = _interrupted_apply(directory, signum=signum, threads=threads)
    # The walk's threads (and the provider calls' in them) leave both to the main thread.
    assert threads[0], "the walk's threads run"
    assert all(blocked == {signal.SIGINT, signal.SIGTERM} for blocked in threads[0].values())
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
