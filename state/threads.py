"""Background threads leave Ctrl-C and SIGTERM to the main thread.

The kernel gives a signal sent to the process (a terminal's Ctrl-C, a CI runner's or a
service manager's SIGTERM) to any one of its threads that does not block it. Python runs
signal handlers only in the main thread; a signal a background thread received is only
marked due there, and a main thread blocked in a read (the confirmation prompt) or a long
wait does not wake for it: the command went on as though it had not been sent. Every thread
poolform starts blocks the two at its start (threads it starts in turn, an SDK's included,
inherit the mask), so the main thread gets them and acts at once.
"""

from __future__ import annotations

import signal

HANDLED_BY_THE_MAIN_THREAD = frozenset({signal.SIGINT, signal.SIGTERM})


def leave_signals_to_the_main_thread() -> None:
    """Block SIGINT and SIGTERM in the calling thread (never call it in the main thread)."""
    if hasattr(signal, "pthread_sigmask"):  # (not on Windows, where signals go to main anyway)
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_BY_THE_MAIN_THREAD)
