"""Keep a C library's complaints on the C `stderr` stream off the user's terminal.

rapidyaml prints every parse error with `fwrite(..., stderr)` before raising, and its Python
binding offers no way to replace that callback. Redirecting file descriptor 2 would silence the
whole process (other threads' output, Python's own `sys.stderr`) for the duration; instead the
C library's `stderr` *stream pointer* is pointed at /dev/null while the call runs, under a lock.
Only C code writing to that stream during the call is affected; Python writes to descriptor 2
directly and is not. Where the stream cannot be found (a C library without an exported
`stderr`), nothing is changed and the complaint may show.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_SLOT_NAMES = ("stderr", "__stderrp")  # glibc and musl; BSD and macOS


class _Stream:
    def __init__(self) -> None:
        import ctypes  # only when a file is first parsed: `--help` does without it

        self.slot: ctypes.c_void_p | None = None
        self.sink: int | None = None
        try:
            libc = ctypes.CDLL(None)
        except OSError:
            return
        for name in _SLOT_NAMES:
            try:
                self.slot = ctypes.c_void_p.in_dll(libc, name)
                break
            except ValueError:
                continue
        if self.slot is None:
            return
        fopen = libc.fopen
        fopen.restype = ctypes.c_void_p
        fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
        self.sink = fopen(os.devnull.encode(), b"w")


_stream: _Stream | None = None


@contextmanager
def c_stderr_silenced() -> Iterator[None]:
    global _stream
    with _LOCK:
        if _stream is None:
            _stream = _Stream()
        slot, sink = _stream.slot, _stream.sink
        if slot is None or not sink:
            yield
            return
        saved = slot.value
        slot.value = sink
        try:
            yield
        finally:
            slot.value = saved
