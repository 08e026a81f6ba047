"""Threads poolform starts leave Ctrl-C and SIGTERM to the main thread (state/threads.py): the
kernel gives a signal sent to the process to any thread that does not block it, and Python
acts on it only in the main thread, which, blocked at the confirmation prompt, never woke for
one a background thread had received. The S3 state lease's renewer runs through every prompt
of an S3-state apply. (apply's walk threads start programs and so block nothing: a signal one
of them gets is acted on by the main thread's short waits, tests/adversarial/
test_apply_interrupt33a.py; a setup's own signals work, test_setup_signals33b.py.)"""

from __future__ import annotations

import re
import signal
import sys
import threading
from pathlib import Path

import pytest

from state.s3_lease import Lease, S3Calls
from state.threads import leave_signals_to_the_main_thread

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc: Linux")


def blocked(thread: threading.Thread) -> set[int]:
    """Which of SIGINT and SIGTERM the running thread blocks."""
    assert thread.native_id is not None
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    line = re.search(r"^SigBlk:\s*([0-9a-f]+)$", status, re.MULTILINE)
    assert line is not None, status
    mask = int(line.group(1), 16)
    return {s for s in (signal.SIGINT, signal.SIGTERM) if mask >> (s - 1) & 1}


class MemoryObjects:
    """Conditional writes as S3 makes them, in memory (the lease's whole use of S3)."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[bytes, str]] = {}

    def get(self, key: str) -> tuple[bytes, str] | None:
        return self.objects.get(key)

    def put(
        self, key: str, body: bytes, *, if_match: str | None = None, if_none_match: bool = False
    ) -> str | None:
        current = self.objects.get(key)
        if (if_none_match and current is not None) or (
            if_match is not None and (current is None or current[1] != if_match)
        ):
            return None
        etag = f'"{len(self.objects)}-{hash(body)}"'
        self.objects[key] = (body, etag)
        return etag


def test_the_s3_lease_renewer_leaves_both_signals_to_the_main_thread() -> None:
    objects = MemoryObjects()
    lease = Lease(S3Calls(objects.get, objects.put), "lock.json", where="s3://b/p", renew_every=5)
    lease.lock("apply")
    try:
        renewer = lease._renewer
        assert renewer is not None and renewer.is_alive()
        assert blocked(renewer) == {signal.SIGINT, signal.SIGTERM}
        assert blocked(threading.main_thread()) == set()  # the main thread still gets them
    finally:
        assert lease.held is not None
        lease.unlock(lease.held.lock_id)


def test_a_thread_that_leaves_them_to_the_main_thread_blocks_both_and_only_in_itself() -> None:
    ready, done = threading.Event(), threading.Event()

    def body() -> None:
        leave_signals_to_the_main_thread()
        ready.set()
        done.wait(10)

    thread = threading.Thread(target=body)
    thread.start()
    try:
        assert ready.wait(10)
        assert blocked(thread) == {signal.SIGINT, signal.SIGTERM}
        assert blocked(threading.main_thread()) == set()
    finally:
        done.set()
        thread.join()
