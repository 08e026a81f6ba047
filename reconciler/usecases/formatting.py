"""`poolform fmt` as a use case: which files' layout changes, and to what. The CLI writes them
and prints; this only reads. Terraform's `fmt` habits: `-recursive` takes the subdirectories
too, `-diff` shows each change, `-` reads standard input."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from reconciler.errors import Diagnostic, Location, YamlProblem
from reconciler.loading.documents import read_documents
from reconciler.loading.formatting import FormatRefused, format_text
from reconciler.loading.sources import (
    MAX_FILE_BYTES,
    Listing,
    SourceFile,
    list_sources,
    one_per_file,
    yaml_diagnostic,
)
from schemas.kinds import canonical_kind
from schemas.text import printable

STDIN = "<stdin>"


@dataclass(frozen=True)
class Relayout:
    """A file whose layout changes: what it holds and what it would hold."""

    display: str
    path: Path | None  # None for standard input
    before: str
    after: str

    def diff(self) -> str:
        """The change as a unified diff (`diff -u`), as `terraform fmt -diff` shows it."""
        lines = difflib.unified_diff(
            _lines(self.before),
            _lines(self.after),
            fromfile=f"old/{self.display}",
            tofile=f"new/{self.display}",
        )
        return "".join(lines)


@dataclass(frozen=True)
class Formatting:
    changes: list[Relayout]
    problems: list[Diagnostic]


def configuration_listing(directory: Path, recursive: bool) -> Listing:
    """The YAML files of `directory`, and with `recursive` the poolform files of every
    directory below it, in path order. Below it, a YAML file is poolform's when each of its
    documents declares a kind poolform knows (a Job's too): a repository's other YAML (CI
    workflows, manifests, templates that are not YAML yet) is not poolform's to lay out, as
    `terraform fmt -recursive` only takes *.tf files. Directories whose names start with a
    dot (`.git`, `.venv`, poolform's own state) and links to directories are not entered, and
    links to files below are not taken: a link could lead outside, or in a loop."""
    if not recursive:
        return list_sources(directory)
    sources: list[SourceFile] = []
    problems: list[Diagnostic] = []

    def refused(error: OSError) -> None:
        where = printable(str(error.filename or directory))
        why = printable(error.strerror or str(error))
        problems.append(
            Diagnostic("error", "unreadable", f"cannot be listed ({why})", Location(where))
        )

    first = list_sources(directory)  # the directory given: refused as `fmt DIR` refuses it
    sources.extend(first.sources)
    problems.extend(first.problems)
    # Walked with a stack, not os.walk, which recurses once per level (Python 3.11): a tree
    # 1,000 directories deep ended in "internal error: RecursionError". Links to directories
    # are neither listed nor entered.
    below: list[Path] = []
    pending = [directory]
    while pending:
        root = pending.pop()
        try:
            with os.scandir(root) as entries:
                names = [
                    entry.name
                    for entry in entries
                    if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".")
                ]
        except OSError as error:
            refused(error)
            continue
        below.extend(root / name for name in names)
        pending.extend(root / name for name in names)
    for place in sorted(below, key=lambda path: path.parts):  # in path order
        found = list_sources(place)
        sources.extend(
            source for source in found.sources if not _linked(source) and _poolforms(source)
        )
    return Listing(sources, problems)


def within(listing: Listing, root: Path) -> Listing:
    """The listing without the links that lead outside `root` (the directory given, or a FILE
    given's own directory), each named by a warning instead: fmt writes through a link, so a
    pull request adding `x.yaml -> ../../elsewhere.yaml` (or to a user's dotfile that reads as
    YAML) had a reviewer's `poolform fmt` rewrite a file outside the repository. A link within
    `root` is laid out as before (fmt keeps the target's inode either way), once: a file
    under two names was laid out and listed twice (`--diff` showed the one change twice)."""
    top = root.resolve()
    sources: list[SourceFile] = []
    problems = list(listing.problems)
    for source in listing.sources:
        if source.path is None or not source.path.is_symlink():
            sources.append(source)
            continue
        target = source.path.resolve()
        if target.is_relative_to(top):
            sources.append(source)
            continue
        problems.append(
            Diagnostic(
                "warning",
                "link-outside",
                f"`{printable(source.path.name)}` is a link to "
                f"{printable(os.readlink(source.path))}, outside "
                f"{printable(str(root))}: fmt does not lay it out, and never writes outside "
                "the directory given",
                Location(source.display),
                "lay out the file it leads to in its own directory",
            )
        )
    return Listing(one_per_file(sources)[0], problems)


def _linked(source: SourceFile) -> bool:
    """A link to a file below the directory given: not followed, as a link to a directory is
    not (`fmt` writes through a link, so one to `../../elsewhere/x.yaml` rewrote a file outside
    the tree, and one to a file inside it laid that file out twice)."""
    return source.path is not None and source.path.is_symlink()


def _poolforms(source: SourceFile) -> bool:
    """Whether every document of the file declares a kind poolform knows (one that does not
    read is not known to be poolform's). A document with an `apiVersion` is Kubernetes' (no
    poolform kind has one): Cluster API's `kind: Cluster` and `kind: MachinePool`, kind's
    `kind: Cluster` config are not poolform's files."""
    try:
        documents = read_documents(source).documents
    except YamlProblem:
        return False
    return bool(documents) and all(
        isinstance(document.data, dict)
        and isinstance(document.data.get("kind"), str)
        and canonical_kind(document.data["kind"]) is not None
        and "apiVersion" not in document.data
        for document in documents
    )


def format_sources(sources: list[SourceFile]) -> Formatting:
    """Each source in the canonical layout; a source that cannot be decoded or parsed is a
    problem, and never changes."""
    changes: list[Relayout] = []
    problems: list[Diagnostic] = []
    for source in sources:
        try:
            text = source.raw.decode("utf-8")
            formatted = format_text(text)
        except UnicodeDecodeError as exc:
            problems.append(
                Diagnostic(
                    "error",
                    "encoding",
                    f"not valid UTF-8 (byte 0x{source.raw[exc.start]:02x}); left unchanged",
                    Location(source.display),
                )
            )
            continue
        except YamlProblem as problem:
            problems.append(yaml_diagnostic(source, problem))
            continue
        except FormatRefused as refused:
            problems.append(
                Diagnostic("error", "fmt", f"{refused}; left unchanged", Location(source.display))
            )
            continue
        if formatted.encode("utf-8") != source.raw:
            changes.append(Relayout(source.display, source.path, text, formatted))
    return Formatting(changes, problems)


def standard_input_source(raw: bytes) -> SourceFile | Diagnostic:
    """Standard input as one source (`fmt -`), held to a file's size limit."""
    if len(raw) > MAX_FILE_BYTES:
        return Diagnostic(
            "error",
            "file-too-large",
            "standard input is over 32 MiB; configuration files are limited to 32 MiB",
            Location(STDIN),
        )
    return SourceFile(STDIN, raw, STDIN, None)


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines
