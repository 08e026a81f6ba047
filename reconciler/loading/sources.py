"""Reading configuration files: which files, their bytes, their documents."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconciler.errors import Diagnostic, Location, PoolformError, YamlProblem
from reconciler.loading.yaml_fast import fast_parse

if TYPE_CHECKING:
    from reconciler.loading.yaml_positions import ParsedDocument

MAX_FILE_BYTES = 32 * 1024 * 1024
SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class SourceRef:
    """Where a value came from: a document in a file, and a path inside it."""

    file: str
    index: int
    path: tuple[str | int, ...] = ()

    def at(self, *path: str | int) -> SourceRef:
        return SourceRef(self.file, self.index, (*self.path, *path))


@dataclass(frozen=True)
class RawDocument:
    ref: SourceRef
    data: Any


@dataclass(frozen=True)
class SourceFile:
    display: str
    raw: bytes


def list_sources(target: Path) -> list[SourceFile]:
    """A directory's own *.yaml/*.yml files (not its subdirectories'), or a single file."""
    if not target.exists():
        raise PoolformError(f"{target} does not exist")
    if target.is_file():
        paths = [target]
    else:
        paths = sorted(p for p in target.iterdir() if p.suffix in SUFFIXES and p.is_file())
        if not paths:
            raise PoolformError(
                f"{target} has no *.yaml or *.yml files",
                hint="point poolform at the directory that holds the configuration",
            )
    sources = []
    for path in paths:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise PoolformError(
                f"{path} is {size} bytes; configuration files are limited to 32 MiB"
            )
        sources.append(SourceFile(str(path), path.read_bytes()))
    return sources


def digest(sources: list[SourceFile]) -> str:
    """A hash of the configuration as read: names and bytes, in order."""
    h = hashlib.sha256()
    for source in sources:
        h.update(Path(source.display).name.encode())
        h.update(b"\0")
        h.update(hashlib.sha256(source.raw).digest())
    return h.hexdigest()


def decode(source: SourceFile) -> str:
    try:
        text = source.raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = source.raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise YamlProblem(
            f"not valid UTF-8 (byte 0x{source.raw[exc.start]:02x}); save the file as UTF-8",
            line,
            column,
            "encoding",
        ) from None
    return text.removeprefix("\ufeff")


_MARKER = re.compile(rb"^---(?:[ \t]|$)", re.MULTILINE)
_CONTENT = re.compile(rb"^[ \t]*[^#\s]", re.MULTILINE)


def _expected_documents(raw: bytes) -> int:
    """How many documents a stream holds, counted from its `---` markers."""
    if not raw.startswith(b"---") and b"\n---" not in raw:
        return 1
    first = _MARKER.search(raw)
    if first is None:
        return 1
    content_before = _CONTENT.search(raw, 0, first.start()) is not None
    return len(_MARKER.findall(raw)) + (1 if content_before else 0)


def read_documents(source: SourceFile) -> tuple[list[RawDocument], list[ParsedDocument] | None]:
    """The documents of one file; the positioned parse too when the slow reader was needed.

    Raises YamlProblem for anything wrong at the YAML level.
    """
    docs = fast_parse(source.raw) if source.raw.isascii() else None
    if docs is not None and len(docs) == _expected_documents(source.raw):
        return [RawDocument(SourceRef(source.display, i), d) for i, d in enumerate(docs)], None
    from reconciler.loading.yaml_positions import parse_with_positions

    parsed = parse_with_positions(decode(source))
    return [RawDocument(SourceRef(source.display, i), d.data) for i, d in enumerate(parsed)], parsed


class PositionIndex:
    """Turns a SourceRef into a file:line:column, parsing a file with positions only when asked."""

    def __init__(self, sources: list[SourceFile]):
        self._sources = {s.display: s for s in sources}
        self._parsed: dict[str, list[ParsedDocument]] = {}

    def remember(self, display: str, parsed: list[ParsedDocument]) -> None:
        self._parsed[display] = parsed

    def _documents(self, display: str) -> list[ParsedDocument]:
        if display not in self._parsed:
            from reconciler.loading.yaml_positions import parse_with_positions

            try:
                self._parsed[display] = parse_with_positions(decode(self._sources[display]))
            except (YamlProblem, KeyError):
                self._parsed[display] = []
        return self._parsed[display]

    def locate(self, ref: SourceRef, *, prefer_key: bool = False) -> Location:
        docs = self._documents(ref.file)
        if ref.index >= len(docs):
            return Location(ref.file)
        doc = docs[ref.index]
        best = (doc.line, doc.column)
        for depth in range(len(ref.path), 0, -1):
            path = ref.path[:depth]
            found = (doc.key_positions.get(path) if prefer_key else None) or doc.positions.get(path)
            found = found or doc.key_positions.get(path)
            if found:
                best = found
                break
        return Location(ref.file, best[0], best[1])


def yaml_diagnostic(source: SourceFile, problem: YamlProblem) -> Diagnostic:
    location = Location(source.display, problem.line, problem.column)
    return Diagnostic("error", problem.rule, problem.message, location)
