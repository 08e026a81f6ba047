"""Taking sensitive values out of a worker's setup log in bounded memory.

A setup may print hundreds of megabytes; reading the whole log to redact it took several times
its size in memory (1.7 GB for a 400 MB log). The log is read in chunks instead, and what
could be the start of a secret that goes on in the next chunk (its last `longest - 1` bytes)
is carried over, never written out before it is decided. Every stretch of the log covered by
an occurrence of a secret, or of a line of a multi-line secret (as `workers.redact` takes them
out), becomes one `(sensitive)`: overlapping or touching occurrences, of the same secret or of
different ones, become a single marker, so no part of any of them is ever left in between.

The text is matched as bytes (a secret's UTF-8 bytes match wherever its characters do, and a
chunk may end inside a character). The redacted copy goes to a private file beside the log and
is then written back into the log itself, in place: the file keeps its inode, so a process
`setup` left running still appends to it (as before, what it appends while this runs is not
redacted)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20  # bytes read at a time: the memory used is a few times this, whatever the log


def patterns(secrets: Sequence[str], redacted: str, min_line: int) -> list[bytes]:
    """What is taken out: each secret, and each line of a multi-line secret of `min_line`
    characters or more (as `workers.redact`), as UTF-8 bytes."""
    found: set[bytes] = set()
    for secret in secrets:
        if not secret:
            continue
        found.add(secret.encode(errors="surrogateescape"))
        for line in secret.splitlines():
            if len(line.strip()) >= min_line:
                found.add(line.encode(errors="surrogateescape"))
    found.discard(redacted.encode())  # never "redact" the marker itself, over and over
    return sorted(found, key=len, reverse=True)


class StreamRedactor:
    """Feed it a log's bytes chunk by chunk; it returns what may be written out so far."""

    def __init__(self, secrets: list[bytes], marker: bytes) -> None:
        self.secrets = secrets
        self.marker = marker
        self.keep = max((len(s) for s in secrets), default=1) - 1  # a secret's start, at most
        self.carry = b""
        self.covered_until = 0  # in `carry`: covered by an occurrence that began before it
        self.in_marker = False  # the output so far ends with a marker that may go on
        self.changed = False

    def feed(self, chunk: bytes, *, last: bool = False) -> bytes:
        data = self.carry + chunk
        cut = len(data) if last else len(data) - self.keep
        if cut <= 0:  # not yet more than a secret's start: nothing can be decided
            self.carry = data
            return b""
        spans = self._covered(data, cut)
        out = bytearray()
        at = 0
        for start, end in spans:
            out += data[at:start]
            if not (start == 0 and self.in_marker):  # else the marker already written goes on
                out += self.marker
            self.changed = True
            at = min(end, cut)
        out += data[at:cut]
        reach = spans[-1][1] if spans else 0  # the spans are apart: only the last can go on
        self.in_marker = reach >= cut
        self.covered_until = max(0, reach - cut)
        self.carry = data[cut:]
        return bytes(out)

    def _covered(self, data: bytes, cut: int) -> list[tuple[int, int]]:
        """The merged stretches of `data` covered by an occurrence that starts before `cut`
        (one starting later is looked at again with the next chunk), and the stretch an
        occurrence in an earlier chunk still covers. Merged as they are found: a log of one
        character repeated, and a secret of it, makes one stretch, not one per byte."""
        spans = [(0, self.covered_until)] if self.covered_until else []
        for secret in self.secrets:
            at = data.find(secret, 0, cut + len(secret) - 1)
            while at >= 0:
                end = at + len(secret)
                if spans and at <= spans[-1][1] and at >= spans[-1][0]:
                    spans[-1] = (spans[-1][0], max(spans[-1][1], end))
                else:
                    spans.append((at, end))
                at = data.find(secret, at + 1, cut + len(secret) - 1)
        spans.sort()
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:  # overlapping or touching: one marker
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged


def redact_file(path: Path, secrets: Sequence[str], redacted: str, min_line: int) -> None:
    """Take `secrets` out of the file at `path`, in place, in bounded memory (see above)."""
    found = patterns(secrets, redacted, min_line)
    if not found:
        return
    try:
        log = open(path, "r+b")  # noqa: SIM115 - closed below, after the copy back
    except FileNotFoundError:
        return
    with log:
        fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w+b") as copy:
                redactor = StreamRedactor(found, redacted.encode())
                while chunk := log.read(CHUNK):
                    copy.write(redactor.feed(chunk))
                copy.write(redactor.feed(b"", last=True))
                if redactor.changed:
                    _copy_back(copy, log)
        finally:
            os.unlink(scratch)


def _copy_back(copy: BinaryIO, log: BinaryIO) -> None:
    copy.seek(0)
    log.seek(0)
    while chunk := copy.read(CHUNK):
        log.write(chunk)
    log.truncate()
