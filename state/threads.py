"""Background threads leave Ctrl-C and SIGTERM to the main thread.

The kernel gives a signal sent to the process (a terminal's Ctrl-C, a CI runner's or a
service manager's SIGTERM) to any one of its threads that does not block it. Python runs
signal handlers only in the main thread; a signal a background thread received is only
marked due there, and a main thread blocked in a read (the confirmation prompt) does not wake
for it: the command went on as though it had not been sent. The threads that run beside a
prompt or a long wait and start no programs (the S3 lease's renewer, the S3 reader's pool,
apply's heartbeat) block the two at their start, so the main thread gets them and acts at
once. Threads that start programs do not: a blocked signal stays blocked across fork and
exec, and a program started so (a local worker's `setup`) could not stop what it starts with
`kill` or `timeout`. apply's walk threads are such threads; the main thread waits for the
walk in short waits instead (reconciler/apply/walker.py), so a signal one of them received is
acted on within one. A program such a thread
starts is given them unblocked again (`with_signals_unblocked`).
"""

from __future__ import annotations

import signal

HANDLED_BY_THE_MAIN_THREAD = frozenset({signal.SIGINT, signal.SIGTERM})


def leave_signals_to_the_main_thread() -> None:
    """Block SIGINT and SIGTERM in the calling thread (never call it in the main thread)."""
    if hasattr(signal, "pthread_sigmask"):  # (not on Windows, where signals go to main anyway)
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_BY_THE_MAIN_THREAD)
