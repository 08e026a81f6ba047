"""The fast YAML reader: rapidyaml parses and emits JSON, the json module builds the data.

About 10x faster than PyYAML's C loader on large configurations (see bench/README.md), but
rapidyaml does not resolve scalars by the YAML 1.2 core schema, does not reject tags, anchors or
duplicate keys, and keeps no positions we can use. So it is only trusted when it provably agrees
with the authoritative reader: any sign of a tag, anchor or alias in the text, any string that
the core schema would read as null/bool/number, any string that is not clean Unicode, any
duplicate key, any parse error sends the file to `yaml_positions` instead. It never decides
that a file is wrong.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from reconciler.loading.quiet import c_stderr_silenced
from reconciler.loading.yaml_core import FIRST_CHARACTERS, NON_STRING, WORDS
from reconciler.loading.yaml_flow import flow_disagrees

# Something that could be a tag (!x), anchor (&x) or alias (*x) at a token start.
_DECORATION = re.compile(rb"(?:^|[\s\[\{,])[!&*][^\s,\]\}]", re.MULTILINE)
# An empty one opening a value (`k: *`, `- &`, `k: ! x`): rapidyaml read text, an empty string
# or the scalar after it; ruamel.yaml refuses an empty anchor or alias and reads `!` as null.
_BARE_DECORATION = re.compile(
    rb"(?:^[ \t-]*|:[ \t]+|[\[\{,][ \t]*)[!&*](?:[\s,\]\}]|$)", re.MULTILINE
)
# A JSON string the core schema would have read as something else if it was a plain scalar.
_AMBIGUOUS = re.compile(rf'"(?:{NON_STRING})"')
# Cheap first pass: only strings that start like a core-schema scalar can be ambiguous.
_CANDIDATE = re.compile(rf'"(?=[{FIRST_CHARACTERS}]|(?:{WORDS})")')
# rapidyaml writes escapes such as "\ud800" as raw (invalid) UTF-8; decoded with
# surrogateescape they become lone surrogates. The authoritative reader must see those.
_SURROGATE = re.compile("[\ud800-\udfff]")


# Characters the two readers could see differently: outside YAML's printable set (controls,
# C1 controls, U+FFFE/U+FFFF), line breaks only one of them honours (NEL, LINE and PARAGRAPH
# SEPARATOR), or a byte-order mark inside the stream. Checked on the UTF-8 bytes.
_ASCII_CONTROLS = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_UNCERTAIN_UTF8 = re.compile(rb"\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbb\xbf|\xef\xbf[\xbe\xbf]")


def _clean_unicode(raw: bytes) -> bool:
    """`raw` is UTF-8 and holds only characters both readers treat alike."""
    if len(raw.translate(None, _ASCII_CONTROLS)) != len(raw):
        return False
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if b"\xc2" not in raw and b"\xe2\x80" not in raw and b"\xef" not in raw:
        return True  # the lead bytes of every uncertain character, found by memchr
    return _UNCERTAIN_UTF8.search(raw) is None


def _unclean(text: str) -> bool:
    """Text the positioned reader must see: lone surrogates (rapidyaml's output for
    escapes such as "\\ud800", read back with surrogateescape) or `\\u` escapes, which could
    decode to anything (rapidyaml writes characters, not escapes; this is a guard)."""
    if "\\u" in text:
        return True
    return not text.isascii() and _SURROGATE.search(text) is not None


# Where rapidyaml reads otherwise than the authoritative reader (found by a differential fuzz):
# - in a flow collection, a comment after a plain scalar went into the scalar
#   (`selector: {team: research # ours` read `research # ours`; a plain scalar never holds
#   ` #`), and a plain scalar starting with `?` is an explicit key for ruamel.yaml (`[?a]`);
# - a plain scalar starting with a reserved indicator (`k: @a`, `` k: `a ``, `[%a]`) is not
#   YAML, and ruamel.yaml refuses it;
# - in a double-quoted scalar, an escaped line break (a `\` ending the line) followed by an
#   empty line gave a space, not the line feed that empty line stands for;
# - a block scalar with an indentation indicator (`|2`) holding only spaces came back empty.
# Each is looked for past a one-character (memchr) test: reading is timed per MiB. A string
# that only looks like one of them (`"@a"`, quoted) goes to the authoritative reader too.
_STARTS_OTHERWISE = re.compile(r'(?:^|[\[{,\s])"[?@`%]')
# A scalar starting with `:` where a key or value starts (`: v` opening a line, `{: x}`, `{:a}`,
# `{a: :b}`): rapidyaml reads the key "" or text, ruamel.yaml a null key (refused) or an error.
# Looked for in the JSON, where a key's colon is always followed by a space.
_COLON_STARTS = re.compile(r'":[^ ]|"":')
# In a flow collection, a key's colon before its end (`{x:}`, `[x:, y]`): rapidyaml reads the
# key x, ruamel.yaml the plain scalar `x:`.
_FLOW_KEY_AT_END = re.compile(rb":[}\],]")
_ESCAPED_BREAK_THEN_EMPTY = re.compile(rb"\\\n[ ]*\n")
# An explicit key (`? key` opening a line, then `: value`): rapidyaml took a value line such as
# `:x` or `:: v` for the value, ruamel.yaml for a plain scalar or an error.
_EXPLICIT_KEY = re.compile(rb"^[ -]*\?(?:[ ]|$)", re.MULTILINE)
# A document end marker (`...`): rapidyaml skipped one with no document before it, which
# ruamel.yaml refuses. Rare in a configuration: any goes to the authoritative reader.
_DOCUMENT_END = re.compile(rb"^\.\.\.(?:[ ]|$)", re.MULTILINE)
_INDICATOR_TAIL = re.compile(rb"[-+]?[1-9]|[ ]+[-+0-9]|[-+]?[ ]+#")


def _indentation_indicator(raw: bytes) -> bool:
    """A block scalar header with an indentation indicator (`|2`, `>-1`), found by memchr:
    a search for the whole header is ten times slower, `|` and `>` being rare in YAML. What
    follows the digit is not looked at: rapidyaml also took a header with more after it
    (`|2-3`, `>1x`, `|-2 x`) for an empty scalar, and a header with a space before its
    indicator (`| -`) for a header, both of which ruamel.yaml refuses; and it read a `-` or
    `+` in the header's comment (`run: | # a - b`) as the header's chomping indicator."""
    for mark in (b"|", b">"):
        at = raw.find(mark)
        while at >= 0:
            if _INDICATOR_TAIL.match(raw, at + 1) is not None:
                return True
            at = raw.find(mark, at + 1)
    return False


def _closer_starts(raw: bytes) -> bool:
    """A `]` or `}` after a space or a line break, or opening the file: where a plain scalar
    starting with it (`k: ]x`, `- }x`) would be, which rapidyaml took as text and ruamel.yaml
    refuses (a flow collection closed after a space, `[ a ]`, goes to it too). A loop of
    memchr: flow collections are common, and a regex over every file is slower."""
    for closer in (b"]", b"}"):
        at = raw.find(closer)
        while at >= 0:
            if at == 0 or raw[at - 1] in b" \n":
                return True
            at = raw.find(closer, at + 1)
    return False


def _read_otherwise(raw: bytes, text: str) -> bool:
    flow = b"{" in raw or b"[" in raw
    if flow and "#" in text and " #" in text:
        return True
    if flow and _FLOW_KEY_AT_END.search(raw) is not None:
        return True
    if b"..." in raw and _DOCUMENT_END.search(raw) is not None:
        return True
    if b"?" in raw and _EXPLICIT_KEY.search(raw) is not None:
        return True
    if any(c in text for c in "?@`%") and _STARTS_OTHERWISE.search(text) is not None:
        return True
    if b"\\\n" in raw and _ESCAPED_BREAK_THEN_EMPTY.search(raw) is not None:
        return True
    if _COLON_STARTS.search(text) is not None:
        return True
    if _closer_starts(raw):
        return True
    if not raw.endswith(b"\n") and (b"|" in raw or b">" in raw):
        # A block scalar that ends the file without a line break: rapidyaml gave it one
        # (`run: |` then `  a` read `a\n`), ruamel.yaml does not, as YAML has it.
        return True
    if _indentation_indicator(raw):
        return True
    return flow and flow_disagrees(raw)


def _ambiguous(text: str) -> bool:
    return any(_AMBIGUOUS.match(text, m.start()) for m in _CANDIDATE.finditer(text))


MAX_SIMPLE_KEY = 1024
# A line whose key (before `: ` or a final `:`) is longer than a simple key may be; anchored at
# line starts and linear, whatever the length of a line without one.
_LONG_KEY = re.compile(rb"^[ \t-]*[^\n:]{1025,}:(?:[ \t]|$)", re.MULTILINE)


class _Disagreement(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _Disagreement("duplicate key")
    return mapping


def _constant(name: str) -> Any:
    raise _Disagreement(name)


def _finite(text: str) -> float:
    """A float that did not overflow: `1e999` is for the positioned reader to refuse."""
    value = float(text)
    if value in (math.inf, -math.inf):
        raise _Disagreement("overflow")
    return value


def _emit_json(raw: bytes) -> str | None:
    """rapidyaml's JSON for `raw`, or None when it cannot parse it (its complaint, printed by
    the library on the C stderr stream, is discarded: the authoritative reader reports)."""
    import ryml

    try:
        with c_stderr_silenced():
            tree = ryml.parse_in_arena(raw)
            if tree.size() == 0:
                return None
            return str(ryml.emit_json_malloc(tree, tree.root_id()))
    except Exception:
        return None


def fast_parse(raw: bytes) -> list[Any] | None:
    """The documents in `raw`, or None when the authoritative reader must decide."""
    if b"\t" in raw or b"\r" in raw or not _clean_unicode(raw):
        return None
    if (b"!" in raw or b"&" in raw or b"*" in raw) and (
        _DECORATION.search(raw) or _BARE_DECORATION.search(raw)
    ):
        return None
    if len(raw) > MAX_SIMPLE_KEY and _LONG_KEY.search(raw):
        return None  # YAML bounds a simple key to 1024 characters; rapidyaml does not
    stripped = raw.lstrip()
    if not stripped or stripped.startswith(b"%"):
        return None
    text = _emit_json(raw)
    if text is None or _ambiguous(text) or _unclean(text) or _read_otherwise(raw, text):
        return None
    try:
        data = json.loads(
            text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_finite
        )
    except (ValueError, RecursionError, _Disagreement):
        return None
    # A stream with explicit `---` markers comes back as a list of documents; a bare document
    # as the document itself. A bare top-level list is ambiguous with that: let the slow path see it.
    if stripped.startswith(b"---") or re.search(rb"^---", raw, re.MULTILINE):
        return data if isinstance(data, list) else None
    if isinstance(data, list):
        return None
    return [data]
