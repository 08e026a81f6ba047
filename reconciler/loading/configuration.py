"""Read a configuration: its files, each document validated against its model.

Problems are gathered, not raised one at a time: a run reports every error it can find, and
positions are recovered only for the documents that need them. The rules between documents are
checked one layer up (`reconciler.checks`), which also offers the whole load.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from reconciler.errors import Diagnostic, Location, YamlProblem
from reconciler.loading.documents import PositionIndex, read_documents
from reconciler.loading.sources import (
    Listing,
    RawDocument,
    SourceFile,
    SourceRef,
    digest,
    list_sources,
    one_per_file,
    read_single_file,
    yaml_diagnostic,
)
from reconciler.loading.values import unsafe_values
from schemas import KINDS, Cluster, Document, canonical_kind, model_for_kind
from schemas.base import PATTERN_MEANINGS, Strict
from schemas.kinds import ALIASES
from schemas.text import did_you_mean, printable

T = TypeVar("T", bound=Document)


@dataclass(frozen=True)
class Finding:
    """A diagnostic before its position is known."""

    severity: str
    rule: str
    message: str
    ref: SourceRef
    suggestion: str | None = None
    point_at_key: bool = False


class LoadedDocument(NamedTuple):
    """A valid document: where it is, its canonical kind, its model."""

    ref: SourceRef
    kind: str
    model: Document


@dataclass
class Configuration:
    """Every valid document of a configuration, and the warnings it raised."""

    directory: Path
    documents: list[LoadedDocument]
    digest: str
    warnings: list[Diagnostic] = field(default_factory=list)
    # (kind, name) of documents that failed validation: references to them are not reported
    # again as unknown, so one mistake yields one error.
    invalid: set[tuple[str, str]] = field(default_factory=set)
    # Nothing was declared: no files, or files holding no documents (empty, only `---`, only
    # comments). A plan from it would destroy everything recorded, so callers decide.
    declares_nothing: bool = False
    file_count: int = 0
    # Indexes, built on first use: `documents` is fixed once the configuration is loaded.
    _refs: dict[int, SourceRef] = field(default_factory=dict, repr=False)
    _by_type: dict[type, list[Document]] = field(default_factory=dict, repr=False)

    def of_kind(self, kind: type[T]) -> list[T]:
        if kind not in self._by_type:
            self._by_type[kind] = [d.model for d in self.documents if isinstance(d.model, kind)]
        return list(self._by_type[kind])  # type: ignore[arg-type]

    def find(self, kind: type[T], name: str) -> T | None:
        return next((m for m in self.of_kind(kind) if m.name == name), None)

    @property
    def cluster(self) -> Cluster:
        clusters = self.of_kind(Cluster)
        return clusters[0] if clusters else Cluster(name="default")

    def ref_of(self, model: Document) -> SourceRef:
        if not self._refs:
            self._refs = {id(d.model): d.ref for d in self.documents}
        return self._refs[id(model)]


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def dotted(path: tuple[Any, ...]) -> str:
    """`machine_types[0].partitions`: a path as a user would write it."""
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        elif not _PLAIN_KEY.fullmatch(step):  # `capacity["gpu "]`, `labels["a.b"]`
            text += f"[{json.dumps(step, ensure_ascii=False)}]"
        else:
            text += f".{step}" if text else step
    return text


def _model_at(model: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that holds the fields at `path` (indexes and map keys skipped)."""
    from schemas.rules import _submodel

    current: type[BaseModel] | None = model
    for step in path:
        if current is None:
            return None
        if isinstance(step, str) and step in current.model_fields:
            current = _submodel(current.model_fields[step].annotation)
    return current


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    """The steps of a pydantic error location that are in the data. The others are pydantic's
    own (union branches such as `list[str]`, validators, `[key]`); telling them apart by the
    data, not by their spelling, keeps a user's key such as `a[b]` a key."""
    path: list[str | int] = []
    current = data
    for step in loc:
        in_map = isinstance(current, dict) and isinstance(step, str) and step in current
        in_list = isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current)
        if in_map or in_list:
            current = current[step]
            path.append(step)
    return tuple(path)


def _pydantic_findings(
    raw: RawDocument, model: type[Document], error: ValidationError
) -> Iterator[Finding]:
    ref = raw.ref
    seen: set[tuple[Any, ...]] = set()
    for item in error.errors(include_url=False):
        loc = tuple(item["loc"])
        ctx = item.get("ctx") or {}
        kind = item["type"]
        # A validator of a free-form map (cloud parameters) names the place inside it.
        path = _data_path(raw.data, loc) + tuple(ctx.get("inner_path", ()))
        at_key = loc[-1:] == ("[key]",)
        # Union branches repeat one problem per alternative; keep the first per place.
        place = (*path, loc[-1]) if kind == "missing" else path
        if place in seen:
            continue
        seen.add(place)
        where = dotted(path) or "document"
        if kind == "extra_forbidden":
            field_name = str(loc[-1])
            owner = _model_at(model, path[:-1])
            yield Finding(
                "error",
                "unknown-field",
                f"unknown field `{field_name}` in {owner.__name__ if owner else model.__name__}",
                ref.at(*path),
                (owner.field_hints.get(field_name) if owner and issubclass(owner, Strict) else None)
                or did_you_mean(field_name, list(owner.model_fields) if owner else []),
                point_at_key=True,
            )
        elif kind == "missing":
            missing = dotted((*path, str(loc[-1])))
            yield Finding("error", "missing-field", f"`{missing}` is required", ref.at(*path))
        else:
            message = item["msg"].removeprefix("Value error, ")
            pattern = ctx.get("pattern")
            if kind == "string_pattern_mismatch" and pattern in PATTERN_MEANINGS:
                what = "the key" if at_key else "the value"
                message = f"{what} {item['input']!r} is not allowed: {PATTERN_MEANINGS[pattern]}"
            yield Finding(
                "error",
                "invalid-value",
                f"{where}: {message}",
                ref.at(*path),
                point_at_key=at_key,
            )


def _unsafe_findings(raw: RawDocument, reported: set[tuple[Any, ...]]) -> list[Finding]:
    """Unsafe values, except inside a value the model already refused (one error each)."""
    return [
        Finding(
            "error",
            found.rule,
            f"{dotted(found.path) or 'document'}: {found.message}",
            raw.ref.at(*found.path),
            point_at_key=found.is_key,
        )
        for found in unsafe_values(raw.data)
        if not any(found.path[: len(path)] == path for path in reported)
    ]


def _validate(
    raw: RawDocument, *, suspicious: bool = True
) -> tuple[LoadedDocument | None, list[Finding]]:
    """One document against its model. `suspicious`: the file could hold values nothing can
    store (NaN, lone surrogates, NUL), so they are looked for too."""
    data = raw.data
    if not isinstance(data, dict):
        what = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        return None, [
            Finding("error", "not-a-mapping", f"a document must be a mapping, not {what}", raw.ref)
        ]
    kind = data.get("kind")
    if kind is None:
        hint = f"add one of: {', '.join(KINDS)}"
        return None, [Finding("error", "missing-kind", "document has no `kind`", raw.ref, hint)]
    model = model_for_kind(str(kind))
    if model is None:
        hint = did_you_mean(str(kind), [*KINDS, *ALIASES]) or f"known kinds: {', '.join(KINDS)}"
        message = f"unknown kind `{kind}`"
        return None, [Finding("error", "unknown-kind", message, raw.ref.at("kind"), hint)]
    findings: list[Finding] = []
    loaded: Document | None = None
    try:
        loaded = model.model_validate(data)
    except ValidationError as exc:
        findings = list(_pydantic_findings(raw, model, exc))
    if suspicious:
        refused = {f.ref.path for f in findings if f.rule != "missing-field"}
        findings += _unsafe_findings(raw, refused)
    if loaded is None or findings:
        return None, findings
    return LoadedDocument(raw.ref, canonical_kind(str(kind)) or str(kind), loaded), []


@dataclass
class Reading:
    """Every document read and checked against its model; problems not yet located."""

    configuration: Configuration
    findings: list[Finding]  # model-level problems; `resolve` gives them their positions
    index: PositionIndex
    problems: list[Diagnostic]  # file- and YAML-level problems, already located
    # Files that declare nothing while others do: emptied by mistake (a redirect, a full disk)
    # they would delete what they declared, so each is named (a warning: emptying a file is
    # also how one deletes, as in Terraform).
    notes: list[Diagnostic] = field(default_factory=list)


def _read(listing: Listing, directory: Path) -> Reading:
    sources = listing.sources
    index = PositionIndex(sources)
    documents: list[LoadedDocument] = []
    findings: list[Finding] = []
    problems: list[Diagnostic] = list(listing.problems)
    invalid: set[tuple[str, str]] = set()
    declared = 0
    empty: list[SourceFile] = []
    for source in sources:
        try:
            read = read_documents(source)
        except YamlProblem as problem:
            problems.append(yaml_diagnostic(source, problem))
            continue
        index.remember(source.display, read.positioned)
        before = declared
        for number, raw in enumerate(read.documents):
            if raw.data is None:
                continue
            declared += 1
            # Only what the positioned reader read can hold a value nothing can store.
            loaded, found = _validate(raw, suspicious=number in read.positioned)
            findings.extend(found)
            if loaded is not None:
                documents.append(loaded)
            elif isinstance(raw.data, dict):
                invalid.add(
                    (canonical_kind(str(raw.data.get("kind"))) or "", str(raw.data.get("name")))
                )
        if declared == before:
            empty.append(source)
    configuration = Configuration(
        directory,
        documents,
        digest(sources),
        invalid=invalid,
        declares_nothing=declared == 0 and not problems,
        file_count=len(sources),
    )
    notes = [_declares_nothing(source) for source in empty] if declared else []
    return Reading(configuration, findings, index, problems, notes)


def _declares_nothing(source: SourceFile) -> Diagnostic:
    # A file of `~` or `null` holds a document, a null one: it declares nothing all the same.
    what = (
        "is empty"
        if not source.raw.strip()
        else "declares nothing (only comments, `---` or null documents such as `~`)"
    )
    return Diagnostic(
        "warning",
        "empty-file",
        f"this file {what}: whatever it declared before is no longer declared, and a plan "
        "deletes it",
        Location(source.display),
        "if it was emptied by mistake, restore it; to delete what it declared, delete the file",
    )


def read_directory(directory: Path) -> Reading:
    """Read and validate every document of a configuration directory; the rules between
    documents are not checked here. Raises NotAConfigurationDirectory for a file. A file the
    directory holds under two names (a link beside it, a hard link) is read once, with a note:
    read twice, all it declares was "defined twice", naming two files that are one."""
    listing = list_sources(directory)
    sources, twins = one_per_file(listing.sources)
    reading = _read(Listing(sources, listing.problems), directory)
    reading.notes.extend(_read_once(twin, kept) for twin, kept in twins)
    return reading


def _read_once(twin: SourceFile, kept: SourceFile) -> Diagnostic:
    how = (
        f"is a link to `{printable(kept.name)}`"
        if twin.path is not None and twin.path.is_symlink()
        else f"is the same file as `{printable(kept.name)}` (a hard link)"
    )
    return Diagnostic(
        "warning",
        "same-file",
        f"`{printable(twin.name)}` {how} in this directory: read once, as `{printable(kept.name)}`",
        Location(twin.display),
        "remove the second name, or point it at a file of its own",
    )


def read_file(path: Path) -> Reading:
    """Read and validate the documents of one file given on its own (a Job, say)."""
    return _read(read_single_file(path), path.parent)


def resolve(findings: list[Finding], index: PositionIndex) -> list[Diagnostic]:
    """Findings located in their files. User text in a message is escaped here, once, so no
    key or value can forge a line of output wherever the diagnostic is shown."""
    return [
        Diagnostic(
            "error" if f.severity == "error" else "warning",
            f.rule,
            printable(f.message),
            index.locate(f.ref, prefer_key=f.point_at_key),
            printable(f.suggestion) if f.suggestion is not None else None,
        )
        for f in findings
    ]
