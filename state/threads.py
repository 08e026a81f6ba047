"""Background threads leave Ctrl-C and SIGTERM to the main thread.

The kernel gives a signal sent to the process (a terminal's Ctrl-C, a CI runner's or a
service manager's SIGTERM) to any one of its threads that does not block it. Python runs
signal handlers only in the main thread; a signal a background thread received is only
marked due there, and a main thread blocked in a read (the confirmation prompt) or a long
wait does not wake for it: the command went on as though it had not been sent. Every thread
poolform starts blocks the two at its start (threads it starts in turn, an SDK's included,
inherit the mask), so the main thread gets them and acts at once. A program such a thread
starts is given them unblocked again (`with_signals_unblocked`).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

HANDLED_BY_THE_MAIN_THREAD = frozenset({signal.SIGINT, signal.SIGTERM})


def leave_signals_to_the_main_thread() -> None:
    """Block SIGINT and SIGTERM in the calling thread (never call it in the main thread)."""
    if hasattr(signal, "pthread_sigmask"):  # (not on Windows, where signals go to main anyway)
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_BY_THE_MAIN_THREAD)


# Blocked before poolform blocked anything (by whoever started it): left blocked in children.
_BLOCKED_AT_START = (
    frozenset(signal.pthread_sigmask(signal.SIG_BLOCK, ()))
    if hasattr(signal, "pthread_sigmask")
    else frozenset()
)

_UNBLOCK = """import os, signal, sys
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signals})
os.execvp(sys.argv[1], sys.argv[1:])
"""


def with_signals_unblocked(argv: Sequence[str]) -> list[str]:
    """The command line that runs `argv` with the signals this thread blocks for the main
    thread unblocked again.

    A blocked signal stays blocked across fork and exec: a program a background thread starts
    (a local worker's `setup`, and all it starts in turn) would never get SIGTERM or SIGINT,
    so its own `kill $pid` or `timeout 10 cmd` would not stop what it started, and the setup
    would hang until it timed out. Python's subprocess cannot give a child another mask, so a
    small Python program unblocks them and then executes `argv` (its pid, environment,
    directory and files are the child's own). In a thread that blocks none (the main thread),
    or without an interpreter to run it, `argv` as it is."""
    if not hasattr(signal, "pthread_sigmask"):
        return list(argv)
    held = (
        set(signal.pthread_sigmask(signal.SIG_BLOCK, ())) & HANDLED_BY_THE_MAIN_THREAD
    ) - _BLOCKED_AT_START
    if not held or not sys.executable or not os.access(sys.executable, os.X_OK):
        return list(argv)
    signals = "{" + ", ".join(f"signal.{signal.Signals(s).name}" for s in sorted(held)) + "}"
    # -I: none of the environment's PYTHON* names nor the user's site (the environment is
    # the program's to have, untouched); -S: no site at all.
    return [sys.executable, "-ISc", _UNBLOCK.format(signals=signals), *argv]
