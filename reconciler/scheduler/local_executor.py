"""Jobs as local processes: `bash -c RUN` in a worker's directory or the job's own.

Each attempt runs under a small bash wrapper in its own session (so SIGTERM and SIGKILL reach
the whole session, every process group in it, and the job outlives a scheduler killed with
kill -9). The wrapper:

1. claims the attempt by creating `claim/` (mkdir is atomic); if it exists the attempt was
   already run or fenced off by a restarted scheduler, and the wrapper exits without running;
2. writes its pid to `claim/pid`;
3. runs the job, waits for it (a trapped SIGTERM does not stop the wrapper, only the job),
   and writes the exit status to `exit` (via a rename, so it is whole or absent);
4. kills the other process groups of its session (a job's shell with job control, `set -m`,
   puts each background job in a group of its own), then its own group, itself included:
   what the job left running in the background (a data loader, a server holding GPU memory)
   ends with it, as a Slurm job step's or a pod's processes do, so the capacity the job's end
   frees is free. Only a process that started a session of its own (`setsid`) escapes.

The wrapper runs with the jobs' base environment (job_environment.py: PATH, HOME, the locale,
... and the names passed on by the operator, never the scheduler's secrets); the job's envs
(and POOLFORM_*) are given to the job's own bash only (from `env`, NUL-separated): a job's
`PATH` without bash in it, or its `BASH_ENV`, must not stop the wrapper from starting,
claiming or recording the job.

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

WRAPPER = r"""
attempt=$1; name=$2; mask=$(umask); umask 077
mkdir "$attempt/claim" 2>/dev/null || exit 0
echo $$ > "$attempt/claim/pid.tmp" && mv "$attempt/claim/pid.tmp" "$attempt/claim/pid"
trap 'true' TERM INT HUP
command=$(cat "$attempt/command.sh")
envs=(); while IFS= read -r -d '' entry; do envs+=("$entry"); done < "$attempt/env"
(umask "$mask"; exec env -- "${envs[@]}" "$BASH" -c "$command" "$name") &
child=$!
wait "$child"; code=$?
while kill -0 "$child" 2>/dev/null; do wait "$child"; code=$?; done
others() {  # the session's process groups other than the wrapper's own (from /proc)
  local stat line rest; found=0
  for stat in /proc/[0-9]*/stat; do
    { IFS= read -r line < "$stat"; } 2>/dev/null || continue
    rest=${line##*) }; rest=(${rest})
    if [ "${rest[3]}" = "$$" ] && [ "${rest[2]}" != "$$" ] && [ "${rest[0]}" != Z ]; then
      kill -KILL -- "-${rest[2]}" 2>/dev/null; found=1
    fi
  done
}
for pass in 1 2 3 4 5 6 7 8; do others; [ "$found" = 0 ] && break; done
echo "$code" > "$attempt/exit.tmp" && mv "$attempt/exit.tmp" "$attempt/exit"
kill -KILL 0
"""
CLAIM_WITHOUT_PID_S = 30.0  # a wrapper killed between claiming and writing its pid
PID_MAX = 2**22  # the largest pid Linux gives (the limit of its pid_max)
HOST_ID_VARIABLE = "POOLFORM_HOST_ID"
ATTEMPT_DIR_VARIABLE = "POOLFORM_ATTEMPT_DIR"  # marks every process an attempt starts
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


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name (state first); None when no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_bytes().decode("ascii", "replace")
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()  # the name may hold spaces and parentheses


def _since(pid: int) -> int | None:
    """When `pid` started (clock ticks after boot): a later process given the same pid
    started later. None when it cannot be read (no /proc, or no such process)."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def _session_groups(sid: int, marker: bytes | None = None) -> set[int]:
    """The process groups with a process running in the session (zombies waiting to be reaped
    do not run). The wrapper leads the session, so its pid is the session's number, and no
    other process can bear that pid while a process of the session exists. Read only when an
    attempt is signalled or its wrapper is gone without an exit status, so scanning /proc is
    rare.

    `marker` (an attempt's `POOLFORM_ATTEMPT_DIR=...` entry): once the wrapper is gone, its
    pid is free again as soon as the session is empty, and a later process given that pid
    may lead a session of the same number and leave it (a daemon's fork, setsid, exit). Such
    a session is the attempt's only if one of its processes was started with the attempt's
    environment entry: an unrelated session is never taken for the job, nor signalled."""
    groups: set[int] = set()
    wanted = str(sid)
    marked = marker is None
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields and len(fields) > 3 and fields[3] == wanted and fields[0] != "Z":
            with contextlib.suppress(ValueError):
                groups.add(int(fields[2]))
            if not marked and marker is not None:
                marked = _started_with(int(entry.name), marker)
    return groups if marked else set()


def _started_with(pid: int, entry: bytes) -> bool:
    """Whether `pid` was started with the environment entry (another user's process, whose
    environment cannot be read, was not: it is never the scheduler's job)."""
    try:
        return entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _marker(attempt: Path) -> bytes:
    return f"{ATTEMPT_DIR_VARIABLE}=".encode() + os.fsencode(attempt)


def _zombie(process: Process) -> bool:
    """Whether `process` is there still, as a zombie (which holds its pid: no other process
    can lead a session of that number)."""
    fields = _stat_fields(process.pid)
    return fields is not None and fields[:1] == ["Z"] and _since(process.pid) == process.since


def _wrapper_command(pid: int, attempt: bytes) -> bool:
    """Whether `pid` runs the wrapper (`bash -c WRAPPER poolform-job ATTEMPT NAME`) of the
    attempt, and is not a zombie."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if len(argv) <= 4 or argv[3] != b"poolform-job" or argv[4] != attempt:
        return False
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def _wrapper_of(attempt: Path) -> int | None:
    """The pid of the wrapper running `attempt` on this machine, found by its command line
    (None where there is no /proc). Read only for an attempt with no claim and no recorded
    process: a launch a scheduler that died was making, so scanning /proc is rare."""
    if not sys.platform.startswith("linux"):
        return None
    wanted = os.fsencode(attempt)
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and _wrapper_command(int(entry.name), wanted):
            return int(entry.name)
    return None


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
                ["bash", "-c", WRAPPER, "poolform-job", str(attempt), launch.name],
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
            return _wrapper_command(pid, os.fsencode(attempt))
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def identify(self, pid: int) -> Process:
        return Process(pid, _since(pid))

    def _leader_runs(self, key: tuple[int, int], process: Process, attempt: Path) -> bool | None:
        """Whether the recorded process (the wrapper, its group's leader) still runs: True or
        False, or None when it is gone (or a zombie) and its pid not given to another process,
        so its group may still run (the job killed its wrapper)."""
        if not sys.platform.startswith("linux") or process.since is None:
            return self._alive(key, process.pid, attempt)
        child = self._children.get(key)
        if child is not None and child.pid == process.pid and child.poll() is None:
            return True
        fields = _stat_fields(process.pid)
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
            and leader is None
            and _session_groups(process.pid, None if _zombie(process) else _marker(directory))
        ):
            # The job killed its wrapper: a pid is not reused while a session bears its
            # number, so while the wrapper is a zombie the session is the attempt's; once it
            # is gone, the session is the attempt's only if it carries its mark (the pid may
            # have been given to another process, which led a session of its own).
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
            wrapper = _wrapper_of(directory)
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
        alive = self._alive(key, pid, directory)
        groups: set[int] = set()
        if sys.platform.startswith("linux"):
            fields = _stat_fields(pid)
            if alive or fields is None or fields[0] == "Z":
                # The wrapper runs, or is gone (the job killed it; a zombie until its new
                # parent reaps it) while its session may run on: no other process can bear
                # the pid while that session exists. Every group of the session is reached:
                # a job's shell with job control (`set -m`) puts its background jobs in
                # groups of their own.
                # Once the wrapper is gone (or a zombie, which may be another process's),
                # the pid may lead another session: only one with the attempt's mark is
                # signalled.
                groups = _session_groups(pid, None if alive else _marker(directory))
                alive = alive or bool(groups)
        if not alive:
            return
        groups.add(pid)
        for group in sorted(groups):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL if kill else signal.SIGTERM)
