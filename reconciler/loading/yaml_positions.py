"""The authoritative YAML reader: YAML 1.2 core schema, with the position of every node.

Built on ruamel.yaml's event stream rather than its round-trip loader: we need positions for
every key and value, and we must reject what the round-trip loader would accept (tags, anchors
and aliases, duplicate keys). Slow (pure Python), so it runs only for files the fast reader
cannot take with certainty and for files whose errors need locating.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from ruamel.yaml.reader import ReaderError

from reconciler.errors import YamlProblem
from reconciler.loading.yaml_core import ScalarTooLong, resolve_plain
from reconciler.loading.yaml_scanner import YamlScanner

Path = tuple[str | int, ...]

MAX_DEPTH = 64


@dataclass
class ParsedDocument:
    data: Any
    line: int  # 1-based line of the document's first node
    column: int
    positions: dict[Path, tuple[int, int]] = field(default_factory=dict)  # value positions
    key_positions: dict[Path, tuple[int, int]] = field(default_factory=dict)  # mapping keys


def _mark(event: Event) -> tuple[int, int]:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1)


class _Composer:
    """Builds plain Python data from the event stream, recording positions by path."""

    def __init__(self, events: Any, first_line: int = 1):
        self.events = events
        self.offset = first_line - 1

    def _mark(self, event: Event) -> tuple[int, int]:
        line, column = _mark(event)
        return (line + self.offset, column)

    def next(self) -> Event:
        event: Event = next(self.events)
        return event

    def resolve(self, event: ScalarEvent) -> Any:
        try:
            return resolve_plain(event.value)
        except ScalarTooLong as exc:
            raise YamlProblem(str(exc), *self._mark(event), "yaml-number") from None

    def documents(self) -> list[ParsedDocument]:
        docs: list[ParsedDocument] = []
        event = self.next()
        assert isinstance(event, StreamStartEvent)
        while True:
            event = self.next()
            if isinstance(event, StreamEndEvent):
                return docs
            assert isinstance(event, DocumentStartEvent)
            first = self.next()
            doc = ParsedDocument(data=None, line=self._mark(first)[0], column=self._mark(first)[1])
            doc.data = self.node(first, (), doc)
            end = self.next()
            assert isinstance(end, DocumentEndEvent)
            docs.append(doc)

    def _reject_decorations(self, event: Event) -> None:
        line, column = self._mark(event)
        if isinstance(event, AliasEvent):
            raise YamlProblem(
                f"aliases (*{event.anchor}) are not allowed; write the value out",
                line,
                column,
                "yaml-alias",
            )
        anchor = getattr(event, "anchor", None)
        if anchor:
            raise YamlProblem(
                f"anchors (&{anchor}) are not allowed; write the value out",
                line,
                column,
                "yaml-alias",
            )
        tag = getattr(event, "tag", None)
        if tag and not (isinstance(event, ScalarEvent) and tag == "!"):
            raise YamlProblem(f"YAML tags ({tag}) are not allowed", line, column, "yaml-tag")

    def node(self, event: Event, path: Path, doc: ParsedDocument) -> Any:
        self._reject_decorations(event)
        if len(path) > MAX_DEPTH:
            raise YamlProblem(
                f"nesting deeper than {MAX_DEPTH} levels", *self._mark(event), "yaml-depth"
            )
        doc.positions[path] = self._mark(event)
        if isinstance(event, ScalarEvent):
            if event.style is None and event.implicit[0]:
                return self.resolve(event)
            return event.value
        if isinstance(event, SequenceStartEvent):
            items: list[Any] = []
            while True:
                child = self.next()
                if isinstance(child, SequenceEndEvent):
                    return items
                items.append(self.node(child, (*path, len(items)), doc))
        if isinstance(event, MappingStartEvent):
            mapping: dict[Any, Any] = {}
            while True:
                key_event = self.next()
                if isinstance(key_event, MappingEndEvent):
                    return mapping
                self._reject_decorations(key_event)
                if not isinstance(key_event, ScalarEvent):
                    raise YamlProblem(
                        "mapping keys must be plain strings", *self._mark(key_event), "yaml-key"
                    )
                key = key_event.value if key_event.style else self.resolve(key_event)
                if not isinstance(key, str):
                    raise YamlProblem(
                        f"mapping keys must be strings, not {'null' if key is None else type(key).__name__}"
                        f" ({key_event.value or '~'!s}); quote it if it is a name",
                        *self._mark(key_event),
                        "yaml-key",
                    )
                if key in mapping:
                    first = doc.key_positions.get((*path, key), (0, 0))
                    raise YamlProblem(
                        f"duplicate key {key!r} (first defined on line {first[0]})",
                        *self._mark(key_event),
                        "yaml-duplicate-key",
                    )
                doc.key_positions[(*path, key)] = self._mark(key_event)
                mapping[key] = self.node(self.next(), (*path, key), doc)
        raise YamlProblem(f"unexpected YAML event {type(event).__name__}", *self._mark(event))


def parse_with_positions(text: str, first_line: int = 1) -> list[ParsedDocument]:
    """Every document in `text`, or a `YamlProblem` at the first thing wrong. `first_line`:
    where `text` starts in its file, when it is a part of one (lines are counted from it)."""
    yaml = YAML(typ="safe", pure=True)
    yaml.Scanner = YamlScanner  # YAML's empty lines before a block scalar's text
    offset = first_line - 1
    try:
        return _Composer(iter(yaml.parse(text)), first_line).documents()
    except YamlProblem:
        raise
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        # A construct left open (a quote, a bracket) is found only at the end of the stream;
        # where it opened is what the user needs to see.
        if exc.context_mark is not None and mark is not None and mark.index >= len(text.rstrip()):
            mark = exc.context_mark
        line, column = (mark.line + 1 + offset, mark.column + 1) if mark else (0, 0)
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            problem = f"{exc.problem} ({exc.context})"
        raise YamlProblem(f"invalid YAML: {problem}", line, column) from None
    except ReaderError as exc:
        before = text[: exc.position]
        line = before.count("\n") + 1 + offset
        column = exc.position - (before.rfind("\n") + 1) + 1
        raise YamlProblem(
            f"invalid character #x{exc.character if isinstance(exc.character, int) else ord(exc.character):04x} is not allowed in YAML",
            line,
            column,
        ) from None
    except YAMLError as exc:
        raise YamlProblem(f"invalid YAML: {exc}", 0, 0) from None
    except RecursionError:
        raise YamlProblem(f"nesting deeper than {MAX_DEPTH} levels", 0, 0, "yaml-depth") from None
