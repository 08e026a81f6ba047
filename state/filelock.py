"""The local lock: an OS lock (flock) on a file beside the database, held for a command's life.

The kernel drops an flock when its holder dies, however it dies, so a `kill -9`-ed apply never
leaves a lock a human must break (as Terraform's local lock). The file's content only names the
holder, for the message the next command prints: a non-empty file whose flock is free was left
by a holder that died, and taking it over says so in one line.

A command that created the state directory and the lock file and then wrote no state removes
both when it lets go, so a refused or failed command leaves nothing behind. A waiter that then
gets the flock of the removed file notices the path no longer names it, and tries again.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

from state.errors import LockMismatch, StateError, StateLocked
from state.locking import Clock, Sleep, breaking, new_lock_info, wait_for_lock
from state.model import LockInfo

__all__ = ["FileLock", "lock_path_for"]


def lock_path_for(database: Path) -> Path:
    """``state.db`` -> ``state.lock`` in the same directory."""
    return database.with_name(f"{database.stem}.lock")


def _holder_from(text: str) -> LockInfo | None:
    if not text.strip():
        return None
    try:
        data = json.loads(text)
        return LockInfo(**{k: data[k] for k in LockInfo.__dataclass_fields__ if k in data})
    except (ValueError, TypeError, RecursionError):
        return LockInfo("unknown", "unknown", "unknown", 0, "unknown", "unknown")


def _read_fd(fd: int) -> str:
    size = os.fstat(fd).st_size
    return os.pread(fd, size, 0).decode("utf-8", "replace") if size else ""


def _unknown_holder(path: Path) -> LockInfo:
    return LockInfo("unknown", "starting", "another process", 0, "", "just now", path=str(path))


# A busy flock on a file that names no holder is tried again this many times, this far apart
# (0.1 s in all), before the lock counts as held: a look at the holder takes it for an instant.
GLANCES, GLANCE_S = 20, 0.005


class FileLock:
    """A Locker over ``flock`` on ``path``. ``leave_nothing()`` answers, at release, whether
    this command wrote no state (so what it created for the lock goes again)."""

    frees_dead_holder = True

    def __init__(
        self,
        path: Path,
        *,
        state_path: str = "",
        directory: str = "",
        leave_nothing: Callable[[], bool] = lambda: False,
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.path = Path(path)
        self.state_path = state_path or str(path)
        self.directory = directory
        self.leave_nothing = leave_nothing
        self.clock = clock
        self.sleep = sleep
        self.held: LockInfo | None = None
        self._fd: int | None = None
        self._made: list[Path] = []  # directories and the lock file this holder created
        self._made_late: list[Path] = []

    # -- taking ---------------------------------------------------------------------------

    def lock(self, operation: str, *, timeout: float = 0, who: str | None = None) -> LockInfo:
        if self.held is not None:
            raise StateError(f"the state lock {self.path} is already held by this process")
        info = new_lock_info(operation, who=who, path=self.state_path)
        return wait_for_lock(lambda: self._try(info), timeout, clock=self.clock, sleep=self.sleep)

    def _try(self, info: LockInfo) -> LockInfo:
        glances = 0
        while True:  # until we hold the flock of the file the path names
            self._made_late = []
            made = self._make_parents()
            fd, created = self._open()
            made += self._made_late
            if created:
                made.append(self.path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder_from(_read_fd(fd))
                os.close(fd)
                if holder is None and glances < GLANCES:
                    # Held, and named by nobody: for an instant, by a look at who holds it
                    # (`current_lock`: plan --no-lock, force-unlock) or by a holder between
                    # its flock and writing its name. Tried again before the lock counts as
                    # held, also with no timeout.
                    glances += 1
                    self.sleep(GLANCE_S)
                    continue
                holder = holder or _unknown_holder(self.path)
                raise StateLocked(holder, directory=self.directory) from None
            if not self._still_named(fd):
                os.close(fd)  # released and removed by its creator: take the new file
                continue
            break
        previous = _holder_from(_read_fd(fd))
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(asdict(info)).encode(), 0)
        os.fsync(fd)
        self._fd, self._made, self.held = fd, made, info
        if previous is not None:
            info = replace(info, notice=_takeover_notice(previous, self.path))
        return info

    def _make_parents(self) -> list[Path]:
        missing = []
        parent = self.path.parent
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        made = []
        for directory in reversed(missing):
            if directory.is_symlink():  # dangling or looping: no mkdir can make it
                raise StateError(
                    f"cannot make the state's directory {directory}: it is a symbolic link to "
                    f"{os.readlink(directory)}, which does not exist (or loops)"
                )
            with contextlib.suppress(FileExistsError):
                directory.mkdir(mode=0o700)
                made.append(directory)
        return made

    def _open(self) -> tuple[int, bool]:
        """The lock file's descriptor, and whether this call created the file."""
        flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW
        for _ in range(100):  # the file (or its directory) may come and go meanwhile
            try:
                return os.open(self.path, flags | os.O_CREAT | os.O_EXCL, 0o600), True
            except FileExistsError:
                pass
            except FileNotFoundError:  # a releasing creator removed the directory
                self._made_late += self._make_parents()
                continue
            except OSError as exc:
                raise StateError(
                    f"cannot open the state lock file {self.path}: {_why(exc)}"
                ) from exc
            try:
                return os.open(self.path, flags), False
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StateError(
                    f"cannot open the state lock file {self.path}: {_why(exc)}"
                ) from exc
        raise StateError(f"cannot open the state lock file {self.path}: it keeps disappearing")

    def _still_named(self, fd: int) -> bool:
        try:
            named = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)

    # -- letting go -----------------------------------------------------------------------

    def unlock(self, lock_id: str) -> None:
        if self.held is None or self._fd is None:
            return
        if self.held.lock_id != lock_id:
            raise LockMismatch(
                f"the state lock is held under ID {self.held.lock_id}, not {lock_id}; "
                "nothing was unlocked"
            )
        fd = self._fd
        try:
            os.ftruncate(fd, 0)
            if self._made and self.leave_nothing():
                self._remove_made()
        finally:
            self._fd, self.held, self._made = None, None, []
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _remove_made(self) -> None:
        for made in reversed(self._made):  # the file, then the directories, innermost first
            try:
                made.unlink() if made == self.path else made.rmdir()
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EEXIST):
                    raise

    def close(self) -> None:
        """Release a lock still held (the process is ending without unlocking)."""
        if self.held is not None:
            self.unlock(self.held.lock_id)

    # -- looking --------------------------------------------------------------------------

    def current_lock(self) -> LockInfo | None:
        if self.held is not None:
            return self.held
        holder, free = self._peek()
        return None if free else holder or _unknown_holder(self.path)

    def _open_existing(self) -> int | None:
        """The lock file's descriptor, or None when there is none (never through a link)."""
        try:
            return os.open(self.path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateError(f"cannot open the state lock file {self.path}: {_why(exc)}") from exc

    def _peek(self) -> tuple[LockInfo | None, bool]:
        """The named holder and whether the flock is free (a free, named lock: a dead holder)."""
        fd = self._open_existing()
        if fd is None:
            return None, True
        try:
            holder = _holder_from(_read_fd(fd))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return holder, False
            fcntl.flock(fd, fcntl.LOCK_UN)
            return holder, True
        finally:
            os.close(fd)

    def force_unlock(self, lock_id: str) -> None:
        found, free = self._peek()
        holder = breaking(found, lock_id)
        if not free:
            raise LockMismatch(
                f"the state lock {lock_id} is held by a running process (pid {holder.pid} on "
                f"{holder.host}); a local lock frees itself when its holder ends: stop that "
                "process instead"
            )
        fd = self._open_existing()
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.ftruncate(fd, 0)
            except BlockingIOError:
                pass  # taken meanwhile by a live command: its name stays
            finally:
                os.close(fd)


def _why(exc: OSError) -> str:
    # O_NOFOLLOW: a link planted as the lock file is refused, never written through.
    if exc.errno == errno.ELOOP:
        return "it is a symbolic link (remove it: poolform never writes through a link)"
    return str(exc)


def _takeover_notice(previous: LockInfo, lock_file: Path) -> str:
    if previous.lock_id == "unknown":
        return (
            "Took over a state lock left behind by a process that ended without releasing it "
            f"({lock_file} named no holder poolform could read)."
        )
    return (
        f"Took over the state lock of {previous.operation!r} by {previous.who} (pid "
        f"{previous.pid} on {previous.host}, since {previous.created}): that process ended "
        "without releasing it."
    )
