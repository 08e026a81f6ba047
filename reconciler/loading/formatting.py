"""One canonical layout for configuration files (`poolform fmt`), comments kept.

Each document is rewritten by ruamel.yaml's round-trip dumper: mappings indented by two,
sequence dashes indented by two under their key, no line wrapping, quotes kept as written,
line endings kept (CRLF when the first line ends so, otherwise LF), a byte order mark kept.
Comment-only stretches (a file's opening comments before its first `---`, an empty document)
are kept byte for byte.

A rewrite is only ever offered when it provably changes nothing but layout: the result must
read back, by the authoritative reader, to the same data, and keep every comment (the count of
`#` characters is the same). Otherwise `FormatRefused` says why, and the file is left alone.
"""

from __future__ import annotations

import functools
import io
import math
import re
from typing import Any

from reconciler.errors import YamlProblem
from reconciler.loading.documents import read_documents, split_documents
from reconciler.loading.sources import SourceFile

# ruamel's round trip lays out about 100 KB a second (measured: 870 KB in 10.6 s, a 12 MB flow
# list in 113 s, spent all through its pure-Python scanner): past this, fmt would seem to hang.
MIB = 1 << 20
MAX_FORMAT_BYTES = MIB


class FormatRefused(Exception):
    """The file cannot be rewritten safely; it is left as it is."""


def _yaml(explicit_start: bool, nulls: bool) -> Any:
    from ruamel.yaml import YAML

    from reconciler.loading.yaml_scanner import RoundTripYamlScanner

    yaml = YAML(typ="rt")
    yaml.Scanner = RoundTripYamlScanner  # reads block scalars as the authoritative reader
    if nulls:
        yaml.Constructor, yaml.Representer = _null_keeping_classes()
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 1 << 26  # never wrap long strings: wider than the longest file (32 MiB)
    yaml.explicit_start = explicit_start
    return yaml


def _has_content(text: str) -> bool:
    """Anything but blank lines, comments and document markers (a marker's comment too)."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
            continue
        if not stripped.startswith(("--- #", "---\t#")):
            return True
    return False


def _dump(text: str, explicit_start: bool, nulls: bool) -> str:
    yaml = _yaml(explicit_start, nulls)
    out = io.StringIO()
    yaml.dump_all(list(yaml.load_all(text)), out)
    return out.getvalue()


_MARKER_LINE = re.compile(r"---(?: +#.*)?")  # `---`, or `---` and a comment
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


def _format_document(text: str, nulls: bool) -> str:
    """One document's text (its `---` line included, if any) in the canonical layout."""
    if not _has_content(text):
        return text
    first, newline, rest = text.partition("\n")
    marker = first.rstrip()
    if _MARKER_LINE.fullmatch(marker):
        # The marker line (and its comment) kept as written; the body laid out. Blank lines
        # right after the marker go: ruamel took one of them away per run, so a second fmt
        # changed the file again.
        rest = _LEADING_BLANK_LINES.sub("", rest)
        return marker + newline + _dump(rest, explicit_start=False, nulls=nulls)
    return _dump(text, explicit_start=text.startswith("---"), nulls=nulls)


def _typed(value: Any) -> Any:
    """Comparable data: types matter (1 is not 1.0 nor True) and NaN equals NaN."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value)
    return (type(value).__name__, value)


def _data(text: str) -> list[Any]:
    """What `text` declares, read as validate reads it (tags, anchors, duplicate keys refused)."""
    found = read_documents(SourceFile("-", text.encode("utf-8")))
    return [_typed(document.data) for document in found.documents]


def format_text(text: str) -> str:
    """`text` in the canonical layout. Raises YamlProblem when it does not parse, and
    FormatRefused when a rewrite would change more than layout or the text is too long."""
    size = len(text.encode("utf-8"))
    if size > MAX_FORMAT_BYTES:
        raise FormatRefused(
            f"it is {size} bytes ({size / MIB:.2f} MiB); fmt lays out files of up to "
            f"{MAX_FORMAT_BYTES // MIB} MiB, as its YAML writer takes 10 s or more a MiB"
        )
    # A Windows checkout's CRLF line endings and a UTF-8 byte order mark are the editor's
    # choice, not layout: kept, a CRLF file does not get every line changed. The first line
    # break says which endings the file has.
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text.removeprefix(bom)
    crlf = text.partition("\n")[0].endswith("\r") and "\n" in text  # not old Mac's lone CRs
    text = text.replace("\r\n", "\n")
    before = _data(text)  # YamlProblem: not touched
    formatted = _canonical(text, before)
    laid_out = len((bom + formatted).encode("utf-8")) + (formatted.count("\n") if crlf else 0)
    if laid_out > MAX_FORMAT_BYTES:  # fmt never writes a file its next run would refuse
        raise FormatRefused(
            f"laid out it would be {laid_out} bytes ({laid_out / MIB:.2f} MiB), over fmt's "
            f"limit of {MAX_FORMAT_BYTES // MIB} MiB (then `fmt --check` would refuse it)"
        )
    if formatted != text:
        _refuse_unstable(formatted, before)
    if crlf:
        formatted = formatted.replace("\n", "\r\n")
        if _data(formatted) != before:
            raise FormatRefused("its CRLF line endings would change what it declares")
    return bom + formatted


# YAML 1.1's other line breaks, which ruamel's reader still counts as ones (its columns restart
# after them): a single-quoted `'a\u2028b'  # c` got its comment moved right on every run.
_UNICODE_BREAKS = re.compile("[\x85\u2028\u2029]")


def _refuse_unstable(formatted: str, before: list[Any]) -> None:
    """FormatRefused unless `formatted` is its own layout: fmt never writes what its next run
    would change again, or refuse (`fmt --check` would then fail for ever). ruamel is not
    always stable: a comment inside a flow collection laid out once was lost the next time."""
    try:
        again = _canonical(formatted, before)
    except FormatRefused as refused:
        again = str(refused)
    if again == formatted:
        return
    if _UNICODE_BREAKS.search(formatted):
        raise FormatRefused(
            "it holds a Unicode line or paragraph separator (U+2028, U+2029 or U+0085) that "
            "the YAML writer counts as a line break: each run would move its comments again "
            "(in a double-quoted string, write it as \\L, \\P or \\N)"
        )
    raise FormatRefused(
        "the YAML writer cannot lay it out stably (laid out once, the next run would change "
        "it again or lose a comment); a comment inside a [ ] or { } collection is the usual "
        "cause"
    )


def _canonical(text: str, before: list[Any]) -> str:
    try:
        return _layout(text, before, nulls=True)
    except FormatRefused:
        # Nulls as written can change what a rare shape reads as (`[x, {y}]` would lose its
        # braces): laid out with ruamel's own nulls, it still may be.
        return _layout(text, before, nulls=False)


def _layout(text: str, before: list[Any], nulls: bool) -> str:
    raw = text.encode("utf-8")
    parts = split_documents(raw)
    try:
        if parts is None or not parts:
            formatted = _format_document(text, nulls) if _has_content(text) else text
        else:
            # Comments before the first document stay as written.
            formatted = raw[: parts[0].start].decode("utf-8") + "".join(
                _format_document(raw[part.start : part.end].decode("utf-8"), nulls)
                for part in parts
            )
    except Exception as exc:  # ruamel refusing what the authoritative reader took
        raise FormatRefused(f"the round-trip writer cannot lay it out ({exc})") from None
    formatted = _without_dangling_blanks(formatted, before)
    if formatted.count("#") != text.count("#"):
        raise FormatRefused("laying it out would lose a comment")
    try:
        after = _data(formatted)
    except YamlProblem as problem:
        raise FormatRefused(f"the laid-out text would not read back ({problem.message})") from None
    if after != before:
        raise FormatRefused("laying it out would change what it declares")
    return formatted


# A sequence entry that is null written as nothing: ruamel writes its dash with a space after
# it (`-` became `- `), which an editor or pre-commit's trailing-whitespace hook strips and
# `fmt --check` then wants back, for ever.
_DANGLING_DASH = re.compile(r"^( *-(?: +-)*) +$", re.MULTILINE)


def _without_dangling_blanks(formatted: str, before: list[Any]) -> str:
    """`formatted` without the blank after a null entry's dash; kept when such a line is a
    block scalar's text (stripped, it would read as something else)."""
    tidy = _DANGLING_DASH.sub(r"\1", formatted)
    if tidy == formatted:
        return formatted
    try:
        return tidy if _data(tidy) == before else formatted
    except YamlProblem:
        return formatted


class _Null:
    """A null as written (`null`, `~`, `Null`, or nothing): ruamel's round trip would write
    every null its own way, `b: null` as `b:` and SkyPilot's `{H100:1, H200:1}` as
    `{H100:1: null, H200:1: null}`."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


@functools.cache
def _null_keeping_classes() -> tuple[type, type]:
    """ruamel's round-trip constructor and representer, with nulls kept as written (made
    once, on first use: ruamel is imported only by the commands that write YAML)."""
    from ruamel.yaml.constructor import RoundTripConstructor
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.representer import RoundTripRepresenter

    class Constructor(RoundTripConstructor):
        pass

    class Representer(RoundTripRepresenter):
        pass

    def construct(_: Any, node: ScalarNode) -> _Null:
        return _Null(str(node.value))

    def represent(representer: Any, data: _Null) -> Any:
        node = representer.represent_scalar(_NULL_TAG, data.text)
        if not data.text:
            node.style = "-"  # ruamel's mark for a flow set's key: no `:` written after it
        return node

    Constructor.add_constructor(_NULL_TAG, construct)
    Representer.add_representer(_Null, represent)
    return Constructor, Representer


_NULL_TAG = "tag:yaml.org,2002:null"
