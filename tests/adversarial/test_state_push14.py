"""`state push FILE|-` met by a new user: what cannot be read is said in the system's words,
naming the input as the other messages do. Before, bytes that are not UTF-8 on standard input
said `-: not a state document: 'utf-8' codec can't decode byte 0xff in position 0: invalid
start byte` (the empty input beside it said `<stdin>`), and a socket given as FILE
`[Errno 6] No such device or address: '...'`, Python's spelling."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.scenario.installed import poolform_command


def test_bytes_that_are_not_utf8_on_stdin(quick: Path) -> None:
    result = subprocess.run(
        [*poolform_command(), "state", "push", "-", "--chdir", str(quick)],
        input=b"\xff{}",
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    stderr = result.stderr.decode()
    assert result.returncode == 1
    assert "<stdin>: not a state document: not valid UTF-8 (byte 0xff at offset 0)" in stderr
    assert "codec" not in stderr
    assert not (quick / ".poolform").exists()


def test_a_socket_given_as_file(pf: Pf, quick: Path, tmp_path: Path) -> None:
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(path))
        result = pf("state", "push", path, "--chdir", quick)
    assert result.returncode == 1
    assert f"{path} cannot be read (No such device or address); nothing was pushed" in (
        result.stderr
    )
    assert "Errno" not in result.stderr
