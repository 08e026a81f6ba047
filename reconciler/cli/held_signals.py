"""Ctrl-C (and SIGTERM) held back while a `--json` document is being written, raised once it
is whole: a consumer reads a complete document or, when the signal came first, the error
document (common.tell_json_error), never a document cut off where the signal landed.

A plan too big for the pipe blocks in write(2) until its reader reads; a Ctrl-C then ended
the write where it was, so the reader got the first 4096 bytes of the plan (exit 130). Now
the document is finished first and the command then ends as interrupted (exit 130, or 143
for SIGTERM): the exit code still says the run was interrupted."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

HELD = (signal.SIGINT, signal.SIGTERM)

_handlers: dict[int, Any] = {}  # the handlers replaced while held, by signal
_arrived: list[int] = []  # what came while held, in order


def _remember(signum: int, _frame: FrameType | None) -> None:
    """Keep the first signal for `release_signals`. A second of the same kind is acted on at
    once: a document written into a pipe nobody reads blocks for good, and the user pressing
    Ctrl-C again (as with Terraform's second Ctrl-C) must be able to stop it, cut or not."""
    if signum in _arrived:
        release_signals()
        return
    _arrived.append(signum)


def hold_signals() -> None:
    """Hold SIGINT and SIGTERM until `release_signals` (idempotent; only the main thread can
    handle signals, and only it writes a document)."""
    if _handlers or threading.current_thread() is not threading.main_thread():
        return
    for signum in HELD:
        _handlers[signum] = signal.signal(signum, _remember)


def release_signals() -> None:
    """Put the handlers back and, if a signal came meanwhile, act on the first now, as its
    handler would have (KeyboardInterrupt for Ctrl-C, the CLI's Terminated for SIGTERM). Only
    in the main thread: the hold is its own, and a handler run in another thread (apply's walk
    writes its event lines through `written_whole` too) would raise its KeyboardInterrupt there,
    ending the walk with its changes in flight unreported."""
    if not _handlers or threading.current_thread() is not threading.main_thread():
        return
    for signum, handler in _handlers.items():
        signal.signal(signum, handler)
    handlers = dict(_handlers)
    _handlers.clear()
    arrived = list(_arrived)
    _arrived.clear()
    if arrived:
        handler = handlers[arrived[0]]
        if callable(handler):
            handler(arrived[0], None)
        elif arrived[0] == signal.SIGINT and handler != signal.SIG_IGN:
            raise KeyboardInterrupt


@contextlib.contextmanager
def written_whole() -> Iterator[None]:
    """One write (an `apply --json` event line) finished before a signal that lands in it is
    acted on; inside a hold already begun, the hold goes on. (In any other thread than the
    main one, hold_signals and release_signals do nothing.)"""
    if _handlers:
        yield
        return
    hold_signals()
    try:
        yield
    finally:
        release_signals()
