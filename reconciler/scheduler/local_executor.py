"""Jobs as local processes: `bash -c RUN` in a worker's directory or the job's own.

Each attempt runs under a small wrapper (local_wrapper.py) in its own session, which outlives
a scheduler killed with kill -9, claims the attempt, records the job's exit status itself, and
ends whatever the job left running before it does. On Linux the wrapper is the child subreaper
of every process the job starts, so a stop (cancel, preemption, a removed worker) reaches
each of them (local_processes.py), also those that started a session of their own.

Layout under `.poolform/jobs/<id>/` (0700): `output.log` (0600, every attempt appended),
`work/` (where a job not on a worker runs), and `attempt-<n>/` (command.sh, env, claim/, exit).

Its place (host and jobs directory) is recorded with each attempt it is given: only here can
the claim, the pid and the exit file be read (a pid means nothing on another machine, and
another configuration directory has other attempt directories).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from reconciler.errors import PoolformError
from reconciler.scheduler.executor import Launch, Observation, Phase, Place, Process
from reconciler.scheduler.job_environment import base_environment
from reconciler.scheduler.local_processes import (
    attempt_marker,
    marked,
    session_groups,
    signal_descendants,
    signal_processes,
    started_at,
    stat_fields,
    wrapper_command,
    wrapper_of,
    zombie,
)
from reconciler.scheduler.local_wrapper import ATTEMPT_DIR_VARIABLE, WRAPPER, wrapper_argv

__all__ = [
    "ATTEMPT_DIR_VARIABLE",
    "CLAIM_WITHOUT_PID_S",
    "HOST_ID_VARIABLE",
    "MACHINE_ID_FILES",
    "PID_MAX",
    "WRAPPER",
    "LocalExecutor",
    "host_identity",
]

CLAIM_WITHOUT_PID_S = 30.0  # a wrapper killed between claiming and writing its pid
PID_MAX = 2**22  # the largest pid Linux gives (the limit of its pid_max)
HOST_ID_VARIABLE = "POOLFORM_HOST_ID"
MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
_MACHINE_ID = re.compile(r"[0-9a-f]{32}")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes from the environment (surrogate escapes)
        return False
    return True


def _stored(path: Path) -> str:
    """A path as text every store takes: bytes that are not UTF-8 escaped, the same each time."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def host_identity(
    environ: Mapping[str, str] = os.environ,
    machine_id_files: tuple[str, ...] = MACHINE_ID_FILES,
) -> str:
    """This host, as the same string every time it runs, whatever it is named.

    POOLFORM_HOST_ID when set (a container with neither a machine id nor a stable hostname, or
    a test playing another host); else the machine id systemd and D-Bus keep for the host's
    life (a rename, a new IP or a reboot keep it); else the hostname (a container without
    /etc/machine-id: give it POOLFORM_HOST_ID or mount the host's machine id if its hostname
    changes at each start)."""
    chosen = environ.get(HOST_ID_VARIABLE, "").strip()
    if chosen:
        if not chosen.isprintable() or len(chosen) > 255 or not _utf8(chosen):
            raise PoolformError(
                f"{HOST_ID_VARIABLE} must be up to 255 printable characters, the same every "
                f"time this host runs poolform; it is {chosen[:60]!r}",
                hint="a name for this host (such as its stable DNS name), or unset it to use "
                "the machine id",
            )
        return chosen
    for path in machine_id_files:
        try:
            text = Path(path).read_text(encoding="ascii", errors="replace").strip().lower()
        except OSError:
            continue
        if _MACHINE_ID.fullmatch(text) and text != "0" * 32:
            return f"machine-id:{text}"
    return f"hostname:{socket.gethostname()}"


def _small_number(path: Path, least: int, most: int) -> int | None:
    """The whole number from `least` to `most` the file holds; None when it holds anything
    else or is not there."""
    # The job may have put a fifo, a symlink or gigabytes there: read 64 bytes of a regular
    # file, never block, never follow.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        text = handle.read(64).decode("ascii", "replace").strip()
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        return None
    number = int(text)
    return number if least <= number <= most else None


def _private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.is_symlink():  # never chmod, or write into, whatever a planted link points at
        raise OSError(errno.ELOOP, "is a symlink, not the scheduler's own directory", str(path))
    os.chmod(path, 0o700)
    return path


def _set_aside(job_dir: Path) -> None:
    for n in range(1, 1000):
        aside = job_dir.with_name(f"{job_dir.name}.earlier-{n}")
        if not os.path.lexists(aside):
            os.rename(job_dir, aside)
            return
    raise OSError(errno.EEXIST, "too many earlier copies of this job directory", str(job_dir))


def _env_entry(name: str, value: str) -> bytes:
    """`NAME=value` and its NUL. What the OS would refuse (a store made before job files were
    checked) is a ValueError, as Popen raised for it: a NUL would split the entry in two, and
    a name with `=` or none would be taken by `env` for the command to run."""
    if not name or "=" in name or "\0" in name:
        raise ValueError(f"illegal environment variable name {name[:60]!r}")
    if "\0" in value:
        raise ValueError(f"embedded null byte in environment variable {name[:60]!r}")
    return os.fsencode(f"{name}={value}") + b"\0"


# Files the scheduler writes in a job's directory are opened without following a symlink
# planted in their place (a log linked to /etc/passwd must not be appended to).
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW


class LocalExecutor:
    def __init__(self, jobs_dir: Path, pass_env: Iterable[str] = ()):
        self.environment = base_environment(os.environ, pass_env)
        self.jobs_dir = Path(jobs_dir).resolve()  # the wrapper runs elsewhere: paths are absolute
        self._children: dict[tuple[int, int], subprocess.Popen[bytes]] = {}
        self.place = Place(host_identity(), socket.gethostname(), _stored(self.jobs_dir))

    def job_dir(self, job: int) -> Path:
        return self.jobs_dir / str(job)

    def attempt_dir(self, job: int, attempt: int) -> Path:
        return self.job_dir(job) / f"attempt-{attempt}"

    def log_path(self, job: int) -> Path:
        return self.job_dir(job) / "output.log"

    def start(self, launch: Launch) -> int:
        _private_dir(self.jobs_dir)
        if os.path.lexists(self.attempt_dir(launch.job, launch.attempt)):
            # An attempt is numbered anew at each admission and its directory made only here,
            # so one already there was left by another queue that gave out this job's id (a
            # deleted `scheduler.db`): its claim or exit file would pass for this attempt's,
            # which would then never run. It is kept, under another name.
            _set_aside(self.job_dir(launch.job))
        job_dir = _private_dir(self.job_dir(launch.job))
        attempt = _private_dir(self.attempt_dir(launch.job, launch.attempt))
        if launch.workdir is not None and not os.path.lexists(launch.workdir):
            # A worker's directory is its machine's disk, and the machine runs (the cloud
            # listed it this cycle): one a job removed (`rm -rf "$POOLFORM_WORKDIR"`) is made
            # again, empty, rather than fail at once every later job given that worker. (A
            # worker an apply terminated after this cycle read the workers is not found by
            # the next cycle, which stops its job and queues it again, no retry used.)
            _private_dir(launch.workdir)
        # Absolute, so the job sees the same directory whatever the scheduler's own directory
        # is, and can pass it on (POOLFORM_WORKDIR) to processes that change directory.
        cwd = (launch.workdir or _private_dir(job_dir / "work")).resolve()
        command = attempt / "command.sh"
        fd = os.open(command, _NEW_FILE | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(launch.run)
        job_env = {
            **launch.env,
            "POOLFORM_WORKDIR": str(cwd),
            ATTEMPT_DIR_VARIABLE: str(attempt),
            "PWD": str(cwd),
        }
        fd = os.open(attempt / "env", _NEW_FILE | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(b"".join(_env_entry(name, value) for name, value in job_env.items()))
        log_fd = os.open(self.log_path(launch.job), _NEW_FILE | os.O_APPEND, 0o600)
        try:
            if launch.attempt > 1:
                os.write(log_fd, f"--- poolform: attempt {launch.attempt} ---\n".encode())
            process = subprocess.Popen(
                wrapper_argv(str(attempt), launch.name, self.environment),
                cwd=cwd,
                env={**self.environment, "PWD": str(cwd)},
                stdin=subprocess.DEVNULL,
                stdout=log_fd,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            os.close(log_fd)
        self._children[(launch.job, launch.attempt)] = process
        return process.pid

    def _exit_code(self, attempt: Path) -> int | None:
        """The status the wrapper recorded: a shell's, 0 to 255. Anything else in the file is
        not the wrapper's (the job wrote there, it can: the directory is its user's) and is
        no status, as a store could not even hold a number past 64 bits."""
        return _small_number(attempt / "exit", 0, 255)

    def _alive(self, key: tuple[int, int], pid: int, attempt: Path) -> bool:
        child = self._children.get(key)
        if child is not None and child.pid == pid:
            return child.poll() is None
        if sys.platform.startswith("linux"):
            # A reused pid would not be a wrapper of this attempt: its command line is the
            # wrapper's, with this attempt's directory in its place (a process that only names
            # the directory, `tail -f .../attempt-1/...`, is not it).
            return wrapper_command(pid, os.fsencode(attempt))
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def identify(self, pid: int) -> Process:
        return Process(pid, started_at(pid))

    def _leader_runs(self, key: tuple[int, int], process: Process, attempt: Path) -> bool | None:
        """Whether the recorded process (the wrapper, its group's leader) still runs: True or
        False, or None when it is gone (or a zombie) and its pid not given to another process,
        so its group may still run (the job killed its wrapper)."""
        if not sys.platform.startswith("linux") or process.since is None:
            return self._alive(key, process.pid, attempt)
        child = self._children.get(key)
        if child is not None and child.pid == process.pid and child.poll() is None:
            return True
        fields = stat_fields(process.pid)
        if fields is not None:
            try:
                ours = len(fields) > 19 and int(fields[19]) == process.since
            except ValueError:
                ours = False
            if not ours:
                return False  # the pid was given to another process: ours and its group ended
            if fields[0] != "Z":
                return True
        return None

    @staticmethod
    def _left_running(process: Process, directory: Path, *, pid_kept: bool) -> bool:
        """Whether what the job started runs on after its wrapper, which the job killed
        (`pid_kept`: the wrapper's pid was given to no other process since). A pid is not
        reused while a session bears its number, so while the wrapper is a zombie its
        session is the attempt's; once it is gone, a session of that number is the
        attempt's only if it carries its mark (the pid may have been given to another
        process, which led a session of its own). What left the session was given to init
        with the wrapper's end: it is the attempt's by its mark too."""
        if not sys.platform.startswith("linux"):
            return False
        mark = attempt_marker(directory)
        if pid_kept and session_groups(process.pid, None if zombie(process) else mark):
            return True
        return bool(marked(mark))

    def observe(
        self, job: int, attempt: int, *, fence: bool = False, process: Process | None = None
    ) -> Observation:
        """`process`: the attempt's process as the store recorded it when it started."""
        directory = self.attempt_dir(job, attempt)
        key = (job, attempt)
        leader = None if process is None else self._leader_runs(key, process, directory)
        if process is not None and leader:
            # The wrapper runs: an exit file the job wrote itself (it may) does not end it.
            return Observation(Phase.RUNNING, process.pid)
        code = self._exit_code(directory)
        if code is not None:
            # The wrapper is gone and recorded a status: the job ended. Processes it left in
            # its group are not waited for (a daemon would hold the capacity for ever).
            child = self._children.pop(key, None)
            if child is not None:
                child.wait()
            return Observation(Phase.EXITED, exit_code=code)
        if (
            process is not None
            and not leader
            and self._left_running(process, directory, pid_kept=leader is None)
        ):
            return Observation(Phase.RUNNING, process.pid)
        if process is not None:
            # It started (the store recorded its process), it no longer runs, and it left no
            # exit status: lost, never "not started" (fencing its directory anew would queue
            # it again as though it never ran, while a copy might still run).
            child = self._children.pop(key, None)
            if child is not None:
                child.poll()
            return Observation(Phase.VANISHED, process.pid)
        claim = directory / "claim"
        child = self._children.get(key)
        if not claim.exists():
            if child is not None and child.poll() is None:
                return Observation(Phase.RUNNING, child.pid)  # the wrapper is starting
            wrapper = wrapper_of(directory)
            if wrapper is not None:
                # Started by a scheduler that died before recording its process, and the job
                # removed its claim (or the wrapper is about to claim): it runs, so it is
                # adopted, never fenced and started again.
                return Observation(Phase.RUNNING, wrapper)
            if not fence:
                return Observation(Phase.NOT_STARTED)
            try:
                _private_dir(directory)
                claim.mkdir()
            except FileExistsError:
                pass  # the wrapper claimed it just now: it runs
            except OSError:
                # Not the scheduler's own directory (a symlink planted there) or not one it
                # can write: it cannot be fenced, so the attempt is taken for lost (queued
                # again on a retry, else failed) rather than written through or left to
                # stop every cycle.
                return Observation(Phase.VANISHED)
            else:
                return Observation(Phase.NOT_STARTED)
        pid = self._pid(claim)
        if pid is None:
            if time.time() - claim.stat().st_mtime > CLAIM_WITHOUT_PID_S:
                return Observation(Phase.VANISHED)
            return Observation(Phase.RUNNING)
        if self._alive(key, pid, directory):
            return Observation(Phase.RUNNING, pid)
        code = self._exit_code(directory)  # it may have ended between the two looks
        self._children.pop(key, None)
        if code is not None:
            return Observation(Phase.EXITED, pid, code)
        return Observation(Phase.VANISHED, pid)

    @staticmethod
    def _pid(claim: Path) -> int | None:
        return _small_number(claim / "pid", 1, PID_MAX)

    def signal(self, job: int, attempt: int, pid: int, *, kill: bool) -> None:
        key, directory = (job, attempt), self.attempt_dir(job, attempt)
        alive = wrapper_runs = self._alive(key, pid, directory)
        groups: set[int] = set()
        if sys.platform.startswith("linux"):
            fields = stat_fields(pid)
            if alive or fields is None or fields[0] == "Z":
                # The wrapper runs, or is gone (the job killed it; a zombie until its new
                # parent reaps it) while its session may run on: no other process can bear
                # the pid while that session exists. Every group of the session is reached:
                # a job's shell with job control (`set -m`) puts its background jobs in
                # groups of their own.
                # Once the wrapper is gone (or a zombie, which may be another process's),
                # the pid may lead another session: only one with the attempt's mark is
                # signalled.
                groups = session_groups(pid, None if alive else attempt_marker(directory))
                alive = alive or bool(groups)
        signum = signal.SIGKILL if kill else signal.SIGTERM
        if sys.platform.startswith("linux") and not wrapper_runs:
            # What the job started and moved out of its session was given to init when the
            # wrapper ended: found by the attempt's mark. Its pid is never taken for a group
            # but when a session of that number is the attempt's.
            signal_processes(marked(attempt_marker(directory)), signum, groups)
        if not alive:
            return
        groups.add(pid)
        if wrapper_runs and sys.platform.startswith("linux"):
            # What the job started and left the session (`setsid`, a daemon) is still below
            # the wrapper, its subreaper: reached too (once: not those the groups reach), and
            # killed before the wrapper, which would leave them to init, out of reach. The
            # wrapper is stopped first: it would otherwise see its job killed and record a
            # status (137) before its own SIGKILL, which a kill after the grace never left.
            if kill:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGSTOP)
            signal_descendants(pid, signum, set() if kill else groups)
        for group in sorted(groups):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signum)
