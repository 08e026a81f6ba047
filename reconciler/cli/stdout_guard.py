"""Standard output that cannot be written is an error of the command, said in words.

A process started with stdout closed (`poolform plan --json >&-`, some daemons and CI steps)
has no `sys.stdout`: click then printed nothing and the command exited 0, so a CI step read
a plan that was never written as a success (and a text plan ended in "internal error:
AttributeError"). A stdout on a full disk (`>/dev/full`) ended in "internal error: OSError".
Here every write that fails (but a broken pipe, below) raises `OutputError`, which the CLI
reports as "cannot write to standard output", exit 1, where the write was: as a C program's
write(2) fails, before an apply has changed anything (its plan is printed first).

A broken pipe (`poolform plan | head -c 10` whose reader left before the plan was written)
is left to click: it ends the command at that write, quietly, exit 1, as most CLIs do. A
reader that left after the whole document was in the pipe was sent all of it: exit 0 is true.

With fd 1 closed, /dev/null is put there first: the next file poolform opens (the state
database, a lock file) would otherwise be given fd 1, and a job or worker command started
with it inherited as its stdout would write into that file."""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import Any

STDOUT_FD = 1


class OutputError(OSError):
    """Standard output could not be written (closed, or its disk full)."""


class _GuardedBuffer(io.BufferedIOBase):
    """The bytes under `sys.stdout`, written straight to fd 1 by the write that was asked for:
    a failure is raised there, never later at exit from a buffer (where Python prints
    "Exception ignored" and the exit code says nothing). `closed_at_start`: fd 1 was closed
    when the process began (it is /dev/null now, written to by nothing of poolform's)."""

    def __init__(self, *, closed_at_start: bool) -> None:
        super().__init__()
        self.closed_at_start = closed_at_start

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return STDOUT_FD

    def isatty(self) -> bool:
        return not self.closed_at_start and os.isatty(STDOUT_FD)

    def write(self, data: Any) -> int:
        if self.closed_at_start:
            raise OutputError(errno.EBADF, "standard output is closed")
        view = memoryview(data).cast("B")
        try:
            while view:
                view = view[os.write(STDOUT_FD, view) :]
        except BrokenPipeError:
            raise  # click's own handling: exit 1, quietly
        except OSError as error:
            raise OutputError(error.errno, error.strerror or str(error)) from None
        return len(data)


def guard_stdout() -> None:
    """Replace `sys.stdout` by one whose failed writes raise `OutputError` (call once, first
    thing in the process: the CLI's entry point)."""
    original = sys.stdout
    if original is None:
        _occupy_closed_stdout()
        encoding, errors = "utf-8", "strict"
    else:
        original.flush()  # nothing is written yet; if it were, it goes first
        encoding, errors = original.encoding, original.errors or "strict"
    buffer = _GuardedBuffer(closed_at_start=original is None)
    sys.stdout = io.TextIOWrapper(buffer, encoding=encoding, errors=errors, write_through=True)


def _occupy_closed_stdout() -> None:
    try:
        os.fstat(STDOUT_FD)
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)
        if null != STDOUT_FD:
            os.dup2(null, STDOUT_FD)
            os.close(null)
