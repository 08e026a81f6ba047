"""Ctrl-C (or SIGTERM) while a `--json` document is being written. A document bigger than
the pipe blocks in write(2) until its reader reads; the signal ended the write there, so the
reader got the document's first 4096 bytes, unparseable. The document is now finished first
and the command then ends as interrupted (130, or 143 for SIGTERM): the consumer reads a
whole document or (a signal before it began: test_json_contract24.py) the error document."""

from __future__ import annotations

import array
import fcntl
import json
import os
import signal
import subprocess
import termios
import time
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.scenario.installed import poolform_command

PIPE_SIZE = 4096  # the smallest pipe Linux makes: the documents below are bigger

pytestmark = pytest.mark.skipif(
    not hasattr(fcntl, "F_SETPIPE_SZ"), reason="needs Linux's F_SETPIPE_SZ"
)


def in_the_pipe(read_end: int) -> int:
    count = array.array("i", [0])
    fcntl.ioctl(read_end, termios.FIONREAD, count)
    return count[0]


def signalled_mid_document(signum: int, *args: object) -> tuple[int, bytes, str]:
    """Run poolform with stdout a small pipe nobody reads until it is full (poolform is then
    blocked writing the rest of its document), send `signum`, then read everything."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    process = subprocess.Popen(
        [*poolform_command(), *map(str, args)],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env={**os.environ, "CI": "true", "NO_COLOR": "1"},
    )
    os.close(write_end)
    try:
        while in_the_pipe(read_end) < PIPE_SIZE:
            assert process.poll() is None, "it ended before filling the pipe"
            time.sleep(0.01)
        process.send_signal(signum)
        out = b""
        while chunk := os.read(read_end, 65536):
            out += chunk
        _, err = process.communicate(timeout=120)
    finally:
        os.close(read_end)
        if process.poll() is None:
            process.kill()
    return process.returncode, out, err.decode()


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [
        (signal.SIGINT, 130, "error: interrupted"),
        (signal.SIGTERM, 143, "error: interrupted (terminated by SIGTERM)"),
    ],
)
def test_a_signal_while_the_plan_document_is_written_leaves_it_whole(
    signum: int, code: int, said: str, quick: Path
) -> None:
    returncode, out, err = signalled_mid_document(signum, "plan", "--json", "--chdir", quick)
    assert len(out) > PIPE_SIZE
    document = json.loads(out)  # whole, not cut at the pipe's size
    assert document["summary"]["add"] > 0
    assert returncode == code
    assert said in err
    assert "Traceback" not in err


def test_a_ctrl_c_while_a_long_jobs_list_is_written_leaves_it_whole(pf: Pf, quick: Path) -> None:
    """`jobs list --json` writes its document a thousand jobs at a time: the hold spans every
    part, not one write."""
    assert pf("apply", "--auto-approve", "--chdir", quick).returncode == 0
    job = quick / "jobs" / "hello.yaml"
    assert pf("jobs", "submit", job, "--num-jobs", "40", "--chdir", quick).returncode == 0
    returncode, out, err = signalled_mid_document(
        signal.SIGINT, "jobs", "list", "--json", "--chdir", quick
    )
    assert len(json.loads(out)["jobs"]) == 40
    assert returncode == 130
    assert "error: interrupted" in err
