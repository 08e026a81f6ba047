"""Real workers: each instance has its own directory, and a WorkerPool's `setup` runs there.

A worker boots in three steps: its directory is made (with the pool's `workdir` and local
`file_mounts` copied in), `setup` runs as `bash -c SETUP` with stdout and stderr appended to
`setup.log`, and only a worker whose setup exited 0 is recorded as launched.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from providers.local.redaction import redact_file
from providers.process_environment import base_environment
from providers.protocol import ErrorKind, ProviderError

LOG_NAME = "setup.log"
REDACTED = "(sensitive)"
MIN_REDACTED_LINE = 4  # shorter lines of a multi-line secret are too common to blank out
PID_NAME = "setup.pid"
WORKER_ENV = "POOLFORM_WORKER_ID"  # set for `setup`: how upkeep finds a killed boot's processes
TAIL_LINES = 20
TAIL_BYTES = 64 * 1024  # read from the log's end for its last TAIL_LINES lines
SETUPS_AT_ONCE = 8  # `setup` processes a boot runs at the same time


def _copy_in(source: Path, destination: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, destination, dirs_exist_ok=True)
    elif source.is_file():
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)


def prepare(directory: Path, config: Mapping[str, Any], config_dir: Path) -> None:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if config.get("workdir"):
        _copy_in(config_dir / str(config["workdir"]), directory)
    for remote, mount in (config.get("file_mounts") or {}).items():
        source = mount.get("source") if isinstance(mount, Mapping) else mount
        if isinstance(source, str) and "://" not in source:
            relative = re.sub(r"^(~/|/)+", "", str(remote)) or "mount"
            _copy_in(config_dir / os.path.expanduser(source), directory / relative)
    private(directory)


def private(directory: Path) -> None:
    """Only the owner may enter a worker's directory or read its files: directories 0700,
    files 0600 (0700 when they were executable, so a copied script still runs)."""
    os.chmod(directory, 0o700)
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o700)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700 if os.stat(path).st_mode & 0o100 else 0o600)


def redact(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:  # longest first (see providers.shapes.sensitive_values)
        if secret:
            text = text.replace(secret, REDACTED)
            for line in secret.splitlines():  # a multi-line secret printed line by line
                if len(line.strip()) >= MIN_REDACTED_LINE:
                    text = text.replace(line, REDACTED)
    return text


def _redact_log(directory: Path, secrets: Sequence[str]) -> None:
    """Take sensitive values out of what `setup` printed, in place (a process `setup` left
    running keeps appending to the same file), in bounded memory: see redaction.py."""
    if secrets:
        redact_file(directory / LOG_NAME, secrets, REDACTED, MIN_REDACTED_LINE)


def log_tail(directory: Path, secrets: Sequence[str] = ()) -> str:
    """The last lines of the log, read from its end: a `setup` that printed gigabytes before
    failing must not have its whole log read (several times its size in memory) for them."""
    longest = max((len(secret.encode()) for secret in secrets), default=0)
    try:
        with open(directory / LOG_NAME, "rb") as log:
            size = os.fstat(log.fileno()).st_size
            start = max(0, size - TAIL_BYTES - longest)
            log.seek(start)
            text = redact(log.read().decode(errors="replace"), secrets)
    except FileNotFoundError:
        return "(no output)"
    if start:
        # Whatever secret did not fit whole in what was read ended within its first `longest`
        # bytes: drop them, and the rest of the line they cut (unless it is all there is).
        cut = text.find("\n", longest)
        text = text[cut + 1 :] if cut >= 0 else text[longest:]
    lines = text.splitlines()
    return "\n".join(lines[-TAIL_LINES:]) or "(no output)"


def run_setups(
    directories: Mapping[str, Path],
    setup: str | None,
    env: Mapping[str, str],
    timeout: float,
    address: str,
    *,
    secrets: Sequence[str] = (),
) -> None:
    """Run `setup` in every directory, SETUPS_AT_ONCE at a time; PERMANENT (with the log tail)
    if one fails. A cloud boots each worker on a machine of its own; here they share this one,
    so a pool of a thousand workers must not start a thousand `setup` processes (and what they
    start) at once. Each gets `timeout` from its own start.

    Each worker's directory keeps the pid of its `setup` (setup.pid) while it runs, so what a
    killed poolform leaves running can be found and ended (providers/local/upkeep.py)."""
    if not setup or not setup.strip():
        return
    items = list(directories.items())
    for first in range(0, len(items), SETUPS_AT_ONCE):
        wave = dict(items[first : first + SETUPS_AT_ONCE])
        _run_wave(wave, setup, env, timeout, address, secrets)
    for directory in directories.values():
        _redact_log(directory, secrets)
        (directory / PID_NAME).unlink(missing_ok=True)


def _run_wave(
    directories: Mapping[str, Path],
    setup: str,
    env: Mapping[str, str],
    timeout: float,
    address: str,
    secrets: Sequence[str],
) -> None:
    started: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for worker_id, directory in directories.items():
            fd = os.open(directory / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "ab") as log:
                started[worker_id] = subprocess.Popen(
                    # bash found on poolform's own PATH: the pool's `envs` may set another
                    # (its tools' directory), which is for the setup's commands, not for this.
                    [shutil.which("bash") or "bash", "-c", setup],
                    cwd=directory,
                    # a base a shell needs, not the whole environment of whoever runs
                    # apply (their state and cloud credentials): providers/process_environment.py
                    env={**base_environment(os.environ), **env, WORKER_ENV: worker_id},
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    umask=0o077,  # what setup writes is the owner's only, as its directory
                )
            _write_private(directory / PID_NAME, f"{started[worker_id].pid}\n")
        deadline = time.monotonic() + timeout
        for worker_id, process in started.items():
            try:
                code = process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                why = f"timed out after {timeout:g}s"
                raise _failed(address, worker_id, directories, why, secrets) from None
            if code != 0:
                why = f"exited with status {code}"
                raise _failed(address, worker_id, directories, why, secrets)
    finally:
        for process in started.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def _failed(
    address: str,
    worker_id: str,
    directories: Mapping[str, Path],
    why: str,
    secrets: Sequence[str],
) -> ProviderError:
    tail = log_tail(directories[worker_id], secrets)
    return ProviderError(
        ErrorKind.PERMANENT,
        f"setup on worker {worker_id} {why}; last lines of {LOG_NAME}:\n{tail}",
        address=address,
    )


def remove(directories: Mapping[str, Path] | list[Path]) -> None:
    for directory in directories.values() if isinstance(directories, Mapping) else directories:
        shutil.rmtree(directory, ignore_errors=True)
