"""The documents of one file, read as fast as they can be and located only when asked.

A file is read by the fast reader whole when it can be. When it cannot (a `.nan`, an escape, a
tag, a syntax error somewhere), the file is cut into its documents at the `---` lines and each
document is tried again on its own: only the documents the fast reader declines go through the
slow, positioned reader. Positions are recovered the same way: a problem in document 5,000 of a
10,000-document file parses document 5,000 with positions, not the file.

Cutting at `---` lines is exact for YAML (a document marker ends any scalar), except with
directives (`%YAML`), document end markers (`...`) or line breaks the two readers count
differently (CR, NEL, LINE and PARAGRAPH SEPARATOR); such files are read whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from reconciler.errors import Location, YamlProblem
from reconciler.loading.sources import RawDocument, SourceFile, SourceRef
from reconciler.loading.yaml_fast import fast_parse

if TYPE_CHECKING:
    from reconciler.loading.yaml_positions import ParsedDocument

BOM = b"\xef\xbb\xbf"
GROUP = 64  # documents tried together when a file is read by parts
_CONTENT = re.compile(rb"^[ \t]*[^#\s]", re.MULTILINE)
_END_MARKER = re.compile(rb"^\.\.\.(?:[ \t]|$)", re.MULTILINE)
# Line breaks the readers count differently: CR, NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
_OTHER_BREAKS = (b"\r", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def _safe_to_cut(raw: bytes) -> bool:
    if any(mark in raw for mark in _OTHER_BREAKS):
        return False
    if raw.startswith(b"%") or b"\n%" in raw:  # a directive
        return False
    ends = raw.startswith(b"...") or b"\n..." in raw
    return not (ends and _END_MARKER.search(raw) is not None)


def _marker_offsets(raw: bytes) -> list[int]:
    """Where the `---` lines start (found with bytes.find: a MULTILINE regex visits every
    byte)."""
    found = [0] if raw.startswith(b"---") else []
    at = raw.find(b"\n---")
    while at != -1:
        found.append(at + 1)
        at = raw.find(b"\n---", at + 4)
    return [start for start in found if raw[start + 3 : start + 4] in (b"", b"\n", b" ", b"\t")]


class Part(NamedTuple):
    """One document's bytes in its file (a tuple: files hold tens of thousands)."""

    start: int
    end: int
    first_line: int  # 1-based line of its first byte


def body(source: SourceFile) -> bytes:
    """The file's bytes without a leading byte-order mark (columns count from after it)."""
    return source.raw[len(BOM) :] if source.raw.startswith(BOM) else source.raw


def decode(source: SourceFile, raw: bytes | None = None, first_line: int = 1) -> str:
    data = body(source) if raw is None else raw
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + first_line
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise YamlProblem(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
            line,
            column,
            "encoding",
        ) from None


def split_documents(raw: bytes) -> list[Part] | None:
    """The documents of a stream as byte ranges, one per document, or None when cutting at
    `---` lines would not be exact (see the module docstring)."""
    if not _safe_to_cut(raw):
        return None
    markers = _marker_offsets(raw)
    starts = ([0] if not markers or _CONTENT.search(raw, 0, markers[0]) else []) + markers
    parts: list[Part] = []
    line = 1
    previous = 0
    for index, start in enumerate(starts):
        line += raw.count(b"\n", previous, start)
        previous = start
        end = starts[index + 1] if index + 1 < len(starts) else len(raw)
        parts.append(Part(start, end, line))
    return parts


def expected_documents(raw: bytes) -> int:
    """How many documents a stream holds, counted from its `---` markers."""
    markers = _marker_offsets(raw)
    if not markers:
        return 1
    content_before = _CONTENT.search(raw, 0, markers[0]) is not None
    return len(markers) + (1 if content_before else 0)


@dataclass
class FileDocuments:
    """What reading one file gave: its documents, and any positioned parses made on the way
    (whole file, or by document index)."""

    documents: list[RawDocument]
    positioned: dict[int, ParsedDocument]


def _positioned(source: SourceFile, raw: bytes, part: Part) -> list[ParsedDocument]:
    from reconciler.loading.yaml_positions import parse_with_positions

    chunk = raw[part.start : part.end]
    return parse_with_positions(decode(source, chunk, part.first_line), part.first_line)


def _whole(source: SourceFile) -> FileDocuments:
    from reconciler.loading.yaml_positions import parse_with_positions

    parsed = parse_with_positions(decode(source))
    refs = [RawDocument(SourceRef(source.display, i), d.data) for i, d in enumerate(parsed)]
    return FileDocuments(refs, dict(enumerate(parsed)))


# `%YAML 1.1` at the start of a document: poolform reads every file as YAML 1.2.
_VERSION_DIRECTIVE = re.compile(rb"^%YAML[ \t]+([^\s#]*)", re.MULTILINE)


def _refuse_other_versions(raw: bytes) -> None:
    """A file that says it is YAML 1.1 (`%YAML 1.1`) would be read as 1.2 all the same, and
    the two read the same text differently: `no` and `on` are text in 1.2, false and true in
    1.1; `017` is 17 in 1.2, 15 in 1.1. A YAML 1.1 tool (PyYAML, ruamel honouring the
    directive) reads another capacity from the file than poolform plans; say so instead."""
    if not (raw.startswith(b"%") or b"\n%" in raw):
        return
    for match in _VERSION_DIRECTIVE.finditer(raw):
        version = match.group(1).decode("utf-8", "replace")
        if version != "1.2":
            raise YamlProblem(
                f"`%YAML {version}`: poolform reads YAML 1.2, where `no`, `on` and `yes` are "
                "text and `017` is 17 (YAML 1.1 reads false, true, true and 15); remove the "
                "directive, and write booleans as true/false and octal as 0o17",
                raw.count(b"\n", 0, match.start()) + 1,
                1,
                "yaml-version",
            )


def read_documents(source: SourceFile) -> FileDocuments:
    """The documents of one file. Raises YamlProblem for anything wrong at the YAML level."""
    raw = body(source)
    _refuse_other_versions(raw)
    docs = fast_parse(raw)
    if docs is not None and len(docs) == expected_documents(raw):
        return FileDocuments(
            [RawDocument(SourceRef(source.display, i), d) for i, d in enumerate(docs)], {}
        )
    parts = split_documents(raw)
    if parts is None or len(parts) < 2:
        return _whole(source)
    data: list[Any] = []
    positioned: dict[int, ParsedDocument] = {}
    # Groups of documents first (one call each, not one per document), then the documents of
    # a group the fast reader declines one by one.
    for first in range(0, len(parts), GROUP):
        group = parts[first : first + GROUP]
        fast = fast_parse(raw[group[0].start : group[-1].end]) if len(group) > 1 else None
        if fast is not None and len(fast) == len(group):
            data.extend(fast)
            continue
        for index, part in enumerate(group, first):
            alone = fast_parse(raw[part.start : part.end])
            if alone is not None and len(alone) == 1:
                data.append(alone[0])
                continue
            parsed = _positioned(source, raw, part)
            if len(parsed) != 1:  # not one document after all: let the whole file decide
                return _whole(source)
            positioned[index] = parsed[0]
            data.append(parsed[0].data)
    refs = [RawDocument(SourceRef(source.display, i), d) for i, d in enumerate(data)]
    return FileDocuments(refs, positioned)


class PositionIndex:
    """Turns a SourceRef into a file:line:column, parsing with positions only the document
    asked about (the whole file only when it cannot be cut into documents)."""

    def __init__(self, sources: list[SourceFile]):
        self._sources = {s.display: s for s in sources}
        self._documents: dict[str, dict[int, ParsedDocument]] = {}
        self._whole: set[str] = set()
        # Each file cut into its documents once: cutting it again for every document asked
        # about made locating N problems in an N-document file take N^2 (a 20,000-document job
        # file with a name repeated took minutes).
        self._parts: dict[str, list[Part] | None] = {}

    def remember(self, display: str, positioned: dict[int, ParsedDocument]) -> None:
        self._documents.setdefault(display, {}).update(positioned)

    def _document(self, display: str, index: int) -> ParsedDocument | None:
        known = self._documents.setdefault(display, {})
        if index in known or display in self._whole or display not in self._sources:
            return known.get(index)
        source = self._sources[display]
        raw = body(source)
        if display not in self._parts:
            self._parts[display] = split_documents(raw)
        parts = self._parts[display]
        part = parts[index] if parts is not None and index < len(parts) else None
        try:
            if part is not None:
                found = _positioned(source, raw, part)
                if len(found) == 1:
                    known[index] = found[0]
                    return known[index]
            self._whole.add(display)
            known.update(_whole(source).positioned)
        except YamlProblem:
            self._whole.add(display)
        return known.get(index)

    def locate(self, ref: SourceRef, *, prefer_key: bool = False) -> Location:
        doc = self._document(ref.file, ref.document)
        if doc is None:
            return Location(ref.file)
        best = (doc.line, doc.column)
        for depth in range(len(ref.path), 0, -1):
            path = ref.path[:depth]
            found = (doc.key_positions.get(path) if prefer_key else None) or doc.positions.get(path)
            found = found or doc.key_positions.get(path)
            if found:
                best = found
                break
        return Location(ref.file, best[0], best[1])
