"""Only the main thread holds and releases signals (reconciler/cli/held_signals.py). apply's
walk thread writes its `--json` event lines through `written_whole` too: had it released a
hold the main thread had begun, the remembered signal's handler would have raised its
KeyboardInterrupt in the walk thread, ending the walk with its changes in flight unreported
(seen once in CI: a SIGTERM-ed `apply --json` reported 2 of the 10 changes it had started)."""

from __future__ import annotations

import contextlib
import signal
import threading

from reconciler.cli import held_signals


def test_a_write_in_another_thread_neither_releases_the_main_threads_hold_nor_raises() -> None:
    raised: list[BaseException] = []
    held_signals.hold_signals()
    try:
        held_signals._remember(signal.SIGINT, None)  # a Ctrl-C came while held

        def write() -> None:
            try:
                with held_signals.written_whole():
                    pass
                held_signals.release_signals()
            except BaseException as error:
                raised.append(error)

        thread = threading.Thread(target=write)
        thread.start()
        thread.join()
        assert raised == []
        assert held_signals._handlers  # still held: the main thread's to release
    finally:
        # The remembered Ctrl-C, acted on in the main thread as it should be.
        with contextlib.suppress(KeyboardInterrupt):
            held_signals.release_signals()
    assert not held_signals._handlers and not held_signals._arrived
