"""A Ctrl-C held while a --json document or the last event of an apply is written: acted on
once the write is whole, and never followed by a second terminal object on stdout."""

from __future__ import annotations

import io
import json
import os
import signal

import pytest

from reconciler.cli import common
from reconciler.cli.held_signals import hold_signals, release_signals, written_whole


def test_a_ctrl_c_while_held_is_raised_on_release() -> None:
    hold_signals()
    try:
        os.kill(os.getpid(), signal.SIGINT)  # handled at once, in this (the main) thread
    except KeyboardInterrupt:
        release_signals()
        pytest.fail("the Ctrl-C was raised while held")
    with pytest.raises(KeyboardInterrupt):
        release_signals()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_nothing_held_nothing_raised() -> None:
    hold_signals()
    release_signals()
    with written_whole():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_line_written_whole_inside_a_hold_keeps_the_hold() -> None:
    hold_signals()
    try:
        with written_whole():
            os.kill(os.getpid(), signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    finally:
        with pytest.raises(KeyboardInterrupt):
            release_signals()


def test_after_an_apply_summary_a_ctrl_c_adds_no_error_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The summary ends the stream: a Ctrl-C that lands as it is written is acted on after
    it (exit 130), with no `error` event behind it."""
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    try:
        common.end_json_stream({"type": "summary", "ok": True})
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt) as raised:
            release_signals()
        common.tell_json_error(["apply", "--json", "--auto-approve"], raised.value)
    finally:
        release_signals()
        common.forget_json_output()
    lines = out.getvalue().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["summary"]


def test_a_second_ctrl_c_while_held_is_acted_on_at_once() -> None:
    """A write blocked on a pipe nobody reads never ends by itself: the user's second Ctrl-C
    stops the command there (the document may be cut, as they asked)."""
    hold_signals()
    os.kill(os.getpid(), signal.SIGINT)  # held
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)  # the second: raised here, not at release
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    release_signals()  # nothing left held: nothing raised again


def test_a_second_sigterm_while_held_is_acted_on_at_once() -> None:
    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: seen.append(signum))
    try:
        hold_signals()
        os.kill(os.getpid(), signal.SIGTERM)
        assert seen == []
        os.kill(os.getpid(), signal.SIGTERM)
        assert seen == [signal.SIGTERM]  # the first, acted on by the command's own handler
        release_signals()
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)
