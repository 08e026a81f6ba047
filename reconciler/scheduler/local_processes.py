"""An attempt's processes as /proc shows them: its wrapper, the wrapper's session, and every
process below the wrapper (which is their child subreaper on Linux: local_wrapper.py).

None of this is read each cycle for a running job: only when an attempt is signalled, or when
its wrapper is gone without an exit status, or a dead scheduler's launch is looked for.
Where there is no /proc every look finds nothing, and the executor falls back to the pid.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from reconciler.scheduler.executor import Process
from reconciler.scheduler.local_wrapper import ATTEMPT_DIR_VARIABLE

KILL_PASSES = 8  # a process killed in the middle of a fork leaves a child: looked for again


def stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name (state first); None when no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_bytes().decode("ascii", "replace")
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()  # the name may hold spaces and parentheses


def started_at(pid: int) -> int | None:
    """When `pid` started (clock ticks after boot): a later process given the same pid
    started later. None when it cannot be read (no /proc, or no such process)."""
    fields = stat_fields(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def session_groups(sid: int, marker: bytes | None = None) -> set[int]:
    """The process groups with a process running in the session (zombies waiting to be reaped
    do not run). The wrapper leads the session, so its pid is the session's number, and no
    other process can bear that pid while a process of the session exists.

    `marker` (an attempt's `POOLFORM_ATTEMPT_DIR=...` entry): once the wrapper is gone, its
    pid is free again as soon as the session is empty, and a later process given that pid
    may lead a session of the same number and leave it (a daemon's fork, setsid, exit). Such
    a session is the attempt's only if one of its processes was started with the attempt's
    environment entry: an unrelated session is never taken for the job, nor signalled."""
    groups: set[int] = set()
    wanted = str(sid)
    marked = marker is None
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = stat_fields(int(entry.name))
        if fields and len(fields) > 3 and fields[3] == wanted and fields[0] != "Z":
            with contextlib.suppress(ValueError):
                groups.add(int(fields[2]))
            if not marked and marker is not None:
                marked = started_with(int(entry.name), marker)
    return groups if marked else set()


def started_with(pid: int, entry: bytes) -> bool:
    """Whether `pid` was started with the environment entry (another user's process, whose
    environment cannot be read, was not: it is never the scheduler's job)."""
    try:
        return entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def attempt_marker(attempt: Path) -> bytes:
    return f"{ATTEMPT_DIR_VARIABLE}=".encode() + os.fsencode(attempt)


def zombie(process: Process) -> bool:
    """Whether `process` is there still, as a zombie (which holds its pid: no other process
    can lead a session of that number)."""
    fields = stat_fields(process.pid)
    return fields is not None and fields[:1] == ["Z"] and started_at(process.pid) == process.since


def wrapper_command(pid: int, attempt: bytes) -> bool:
    """Whether `pid` runs the wrapper (`... -c PROGRAM poolform-job ATTEMPT NAME`) of the
    attempt, and is not a zombie."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if len(argv) <= 4 or argv[3] != b"poolform-job" or argv[4] != attempt:
        return False
    fields = stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def wrapper_of(attempt: Path) -> int | None:
    """The pid of the wrapper running `attempt` on this machine, found by its command line
    (None where there is no /proc). Read only for an attempt with no claim and no recorded
    process: a launch a scheduler that died was making, so scanning /proc is rare."""
    if not sys.platform.startswith("linux"):
        return None
    wanted = os.fsencode(attempt)
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and wrapper_command(int(entry.name), wanted):
            return int(entry.name)
    return None


@dataclass(frozen=True)
class Below:
    """A running process below a wrapper: its pid, when that pid started, its group."""

    pid: int
    since: int
    group: int


def descendants(root: int) -> list[Below]:
    """Every running process below `root` (children, theirs, and so on), from one read of
    /proc. Below a wrapper that is their subreaper this is everything the job started and
    that runs, whatever session it moved to."""
    children: dict[int, list[Below]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = stat_fields(int(entry.name))
        if not fields or len(fields) <= 19 or fields[0] == "Z":
            continue
        try:
            parent, group, since = int(fields[1]), int(fields[2]), int(fields[19])
        except ValueError:
            continue
        children.setdefault(parent, []).append(Below(int(entry.name), since, group))
    found: list[Below] = []
    queue = [root]
    while queue:
        kids = children.pop(queue.pop(), [])
        found += kids
        queue += [kid.pid for kid in kids]
    return found


def marked(marker: bytes) -> list[Below]:
    """Every running process started with the attempt's mark (`POOLFORM_ATTEMPT_DIR=...`),
    wherever it is: once the job has killed its wrapper, what it started and moved out of
    the session was given to init, and only the mark still says whose it is (a process
    that cleared its environment, or whose environment is not the scheduler's to read, is
    not found). Read only while an attempt's wrapper is gone without an exit status."""
    found: list[Below] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = stat_fields(int(entry.name))
        if not fields or len(fields) <= 19 or fields[0] == "Z":
            continue
        with contextlib.suppress(ValueError):
            below = Below(int(entry.name), int(fields[19]), int(fields[2]))
            if started_with(below.pid, marker):
                found.append(below)
    return found


def signal_processes(processes: list[Below], signum: int, skip_groups: set[int]) -> None:
    """`signum` to each process found, but those in `skip_groups` (signalled as groups)."""
    for process in processes:
        if process.group not in skip_groups:
            _send(process, signum)


def _send(process: Below, signum: int) -> None:
    """Signal the process, and never another one that was given its pid since it was found:
    the pid is pinned (a pidfd, where the kernel has them) before its start time is checked
    again, so what is signalled is what was found below the wrapper."""
    pidfd = None
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(process.pid)
    try:
        if started_at(process.pid) != process.since:
            return  # gone, and its pid maybe another's
        if pidfd is None:
            os.kill(process.pid, signum)
        else:
            signal.pidfd_send_signal(pidfd, signum)
    except (ProcessLookupError, PermissionError):
        pass  # ended meanwhile, or not ours to signal (a set-uid program it ran)
    finally:
        if pidfd is not None:
            os.close(pidfd)


CHILD_READS = 2_000  # bounds the reads of a subreaper's children (each: a small /proc file)


def kill_children(root: int) -> None:
    """SIGKILL each running child of `root` (the wrapper, stopped) as soon as it is read, the
    newest (last) first, until none of them runs. A process that forks and exits at once,
    again and again (a new pid each time, in a session of its own), lives for less than a scan
    of /proc takes: found by one, it has been replaced by its child when the signal comes. Its
    parent gone, each new one is the wrapper's child (it is their subreaper), read from one
    file; one killed is looked at again until it is a zombie (only then were its own children
    given to the wrapper)."""
    for _ in range(CHILD_READS):
        try:
            kids = Path(f"/proc/{root}/task/{root}/children").read_bytes().split()
        except OSError:
            return  # no such file (a kernel without it), or the wrapper is gone
        running = False
        for kid in reversed(kids):
            fields = stat_fields(int(kid))
            if fields is None:
                running = True  # gone meanwhile: its children were given to the wrapper first
            elif len(fields) > 19 and fields[0] != "Z" and fields[1] == str(root):
                with contextlib.suppress(ValueError):
                    _send(Below(int(kid), int(fields[19]), int(fields[2])), signal.SIGKILL)
                    running = True
        if not running:
            return  # none, or only zombies the stopped wrapper has not reaped


def signal_descendants(root: int, signum: int, skip_groups: set[int]) -> None:
    """Send `signum` to every process below `root` but those in `skip_groups` (signalled as
    groups, so a process gets one SIGTERM, not two). A SIGKILL looks again until nothing new
    is found (a process killed while forking leaves a child below `root`)."""
    sent: set[tuple[int, int]] = set()
    for _ in range(KILL_PASSES if signum == signal.SIGKILL else 1):
        if signum == signal.SIGKILL:
            kill_children(root)
        fresh = [
            process
            for process in descendants(root)
            if (process.pid, process.since) not in sent and process.group not in skip_groups
        ]
        if not fresh:
            return
        for process in fresh:
            _send(process, signum)
            sent.add((process.pid, process.since))
