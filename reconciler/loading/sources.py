"""Reading configuration files: which files, their bytes, their documents."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from reconciler.errors import Diagnostic, Location, PathNotFound, PoolformError, YamlProblem
from schemas.text import printable

MAX_FILE_BYTES = 32 * 1024 * 1024
SUFFIXES = (".yaml", ".yml")
# Emacs keeps a lock on a file being edited as a dangling symbolic link named `.#NAME`.
EDITOR_LOCK_PREFIX = ".#"


class NotAConfigurationDirectory(PoolformError):
    """A configuration is a directory: given a file, nothing can say what else it declares."""

    def __init__(self, path: Path):
        super().__init__(
            f"{printable(str(path))} is a file; a configuration is a directory",
            hint=f"give the directory that holds it ({printable(str(path.parent))}); "
            "`poolform validate FILE` checks one file on its own",
        )
        self.path = path


class NothingDeclared(PoolformError):
    """A configuration directory that declares nothing: a plan from it would destroy every
    recorded resource, so it is refused unless the caller asked for exactly that. Raised when
    nothing is recorded either: the wrong directory (the repository's root, a typo), never a
    wish to delete, so the hint is only where to look (the hint once offered `destroy` here,
    reading an empty directory as "delete everything")."""

    def __init__(self, directory: Path, file_count: int):
        shown = printable(str(directory))
        why = (
            f"no configuration found: {shown} has no *.yaml or *.yml files"
            if file_count == 0
            else f"no configuration found: the {file_count} file(s) of {shown} declare nothing "
            "(empty, only `---` or only comments)"
        )
        super().__init__(
            why,
            hint="point poolform at the directory that holds the configuration: give it "
            "after the command, or `--chdir DIR`",
        )
        self.directory = directory
        self.file_count = file_count


class SourceRef(NamedTuple):
    """Where a value came from: a document of a file (counted from 0), and a path inside it.
    (A tuple: one is made per document, and building a frozen dataclass costs more.)"""

    file: str
    document: int
    path: tuple[str | int, ...] = ()

    def at(self, *path: str | int) -> SourceRef:
        return SourceRef(self.file, self.document, (*self.path, *path))


class RawDocument(NamedTuple):
    """One document as read (a tuple: files hold tens of thousands)."""

    ref: SourceRef
    data: Any


@dataclass(frozen=True)
class SourceFile:
    display: str  # the path as shown to the user: control characters and odd bytes escaped
    raw: bytes
    name: str = ""  # the file's own name, as the configuration's digest records it
    path: Path | None = None  # where it was read from


@dataclass(frozen=True)
class Listing:
    """The files of a configuration, and the entries that should be files but cannot be read."""

    sources: list[SourceFile]
    problems: list[Diagnostic]


def _unreadable(path: Path, why: str, hint: str | None = None) -> Diagnostic:
    """An entry that should be a configuration file and cannot be read: never skipped."""
    return Diagnostic(
        "error",
        "unreadable-file",
        f"`{printable(path.name)}` {why}, so it cannot be read",
        Location(printable(str(path))),
        hint,
    )


def _open_problem(path: Path, error: OSError) -> Diagnostic:
    if error.errno == errno.ELOOP:
        return _unreadable(path, "is a symbolic link that loops back on itself")
    target = os.readlink(path) if path.is_symlink() else None
    if error.errno == errno.ENOENT and target is not None:
        return _unreadable(
            path,
            f"is a symbolic link to {printable(target)}, which does not exist",
            "restore the target, or remove the link",
        )
    if error.errno in (errno.EACCES, errno.EPERM):
        return _unreadable(path, "is not readable (permission denied)")
    if error.errno == errno.ENXIO:
        return _unreadable(path, "is a socket, not a file")
    return _unreadable(path, f"cannot be opened ({printable(error.strerror or str(error))})")


_NOT_A_FILE = {
    stat.S_IFDIR: "is a directory, not a file",
    stat.S_IFIFO: "is a FIFO (named pipe), not a file",
    stat.S_IFSOCK: "is a socket, not a file",
    stat.S_IFCHR: "is a device, not a file",
    stat.S_IFBLK: "is a device, not a file",
}


def read_source(path: Path) -> SourceFile | Diagnostic:
    """The bytes of one configuration file, or why they cannot be had. Never blocks: a FIFO
    or a device is refused from its type, not read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return _open_problem(path, exc)
    try:
        info = os.fstat(fd)
        kind = stat.S_IFMT(info.st_mode)
        if kind != stat.S_IFREG:
            return _unreadable(path, _NOT_A_FILE.get(kind, "is not a regular file"))
        if info.st_size > MAX_FILE_BYTES:
            return Diagnostic(
                "error",
                "file-too-large",
                f"`{printable(path.name)}` is {info.st_size} bytes; configuration files are "
                "limited to 32 MiB",
                Location(printable(str(path))),
            )
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        raw = b"".join(chunks)
    except OSError as exc:
        return _unreadable(path, f"cannot be read ({printable(exc.strerror or str(exc))})")
    finally:
        os.close(fd)
    return SourceFile(printable(str(path)), raw, path.name, path)


def _bad_name(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # bytes that were not UTF-8, kept as lone surrogates
        return True
    return False


def _refuse_non_directory(directory: Path) -> None:
    shown = printable(str(directory))
    if directory.is_file():
        raise NotAConfigurationDirectory(directory)
    if directory.exists() or directory.is_symlink():
        raise PoolformError(f"{shown} is not a directory")
    raise PathNotFound(shown)


def list_sources(directory: Path) -> Listing:
    """A directory's own *.yaml/*.yml entries (not its subdirectories'), read."""
    if not directory.is_dir():
        _refuse_non_directory(directory)
    try:
        names = sorted(
            entry.name
            for entry in os.scandir(directory)
            if entry.name.endswith(SUFFIXES) and not entry.name.startswith(EDITOR_LOCK_PREFIX)
        )
    except OSError as exc:
        raise PoolformError(
            f"{printable(str(directory))} cannot be listed: {printable(exc.strerror or str(exc))}"
        ) from None
    sources: list[SourceFile] = []
    problems: list[Diagnostic] = []
    for name in names:
        path = directory / name
        if _bad_name(name):
            problems.append(
                Diagnostic(
                    "error",
                    "file-name",
                    f"the file name `{printable(name)}` is not valid UTF-8",
                    Location(printable(str(path))),
                    "rename the file",
                )
            )
            continue
        found = read_source(path)
        if isinstance(found, SourceFile):
            sources.append(found)
        else:
            problems.append(found)
    return Listing(sources, problems)


def one_per_file(
    sources: list[SourceFile],
) -> tuple[list[SourceFile], list[tuple[SourceFile, SourceFile]]]:
    """One source per file, and each source left out with the one kept for the same file. A
    link beside its target (`b.yaml -> a.yaml`), or a hard link, is one file under a second
    name: read under both, everything it declares was declared twice. The file is kept under
    its own name (the one that is not a link), else under the first name in path order."""
    kept: dict[tuple[int, int], int] = {}
    chosen: list[SourceFile] = []
    left: list[tuple[SourceFile, int]] = []
    for source in sources:
        try:
            status = source.path.stat() if source.path is not None else None
        except OSError:
            status = None  # read a moment ago, gone now: kept, as read
        if status is None:
            chosen.append(source)
            continue
        identity = (status.st_dev, status.st_ino)
        where = kept.get(identity)
        if where is None:
            kept[identity] = len(chosen)
            chosen.append(source)
        elif _is_link(chosen[where]) and not _is_link(source):
            left.append((chosen[where], where))
            chosen[where] = source
        else:
            left.append((source, where))
    return chosen, [(source, chosen[where]) for source, where in left]


def _is_link(source: SourceFile) -> bool:
    return source.path is not None and source.path.is_symlink()


def read_single_file(path: Path) -> Listing:
    """One file given on its own (`validate FILE`), whatever its name."""
    if not path.exists() and not path.is_symlink():
        raise PathNotFound(printable(str(path)))
    found = read_source(path)
    if isinstance(found, SourceFile):
        return Listing([found], [])
    return Listing([], [found])


def digest(sources: list[SourceFile]) -> str:
    """A hash of the configuration as read: names and bytes, in order."""
    h = hashlib.sha256()
    for source in sources:
        h.update((source.name or Path(source.display).name).encode())
        h.update(b"\0")
        h.update(hashlib.sha256(source.raw).digest())
    return h.hexdigest()


def yaml_diagnostic(source: SourceFile, problem: YamlProblem) -> Diagnostic:
    location = Location(source.display, problem.line, problem.column)
    return Diagnostic("error", problem.rule, printable(problem.message), location)
