"""Flow collections the fast YAML reader (rapidyaml) reads otherwise than the authoritative one.

A differential fuzz of flow collections found shapes rapidyaml takes and ruamel.yaml refuses,
as YAML has it, or reads otherwise:

- an implicit key spanning lines (`{b` then `  c: d}`, `{"a` then ` b": c}`, `{"a"` then
  ` : b}`): rapidyaml folded it into the key `b c`; YAML bounds an implicit key to one line;
- in a flow sequence, a quoted key with its value straight after the colon (`["a":x]`): rapidyaml
  read the mapping {a: x}, which YAML allows only in a flow mapping (`{"a":x}`, read alike);
- a `:x` opening a line, a lone `*`, `&` or `!` opening a scalar (`[*]`), text after the
  collection closed on its line (`{}!}`), and an empty line (rapidyaml kept a line break at
  the end of the scalar before it).

`flow_disagrees` finds them by reading each flow collection's tokens (where a collection could
open: at a line's start, after `: ` or after `- `); anything it does not follow (a closer that
does not match, a quote never closed, a collection never closed, an explicit key `?`, a second
key in an entry) sends the file to the authoritative reader too. It never decides that a file
is wrong."""

from __future__ import annotations

import re

# A collection on one line of plain words (no quote, comment, `?`, tag, anchor or alias
# indicator, no colon but a key's): a sequence of them, or a mapping of them to them or to a
# sequence of them. None of the shapes: most of a configuration's (`zones: [a, b]`,
# `selector: {team: ml}`) are skipped unread, the scan taking 3 times rapidyaml's time.
_WORD = rb"""[^\s\[\]{},:"'#!&*?|>@`%-][^\[\]{},:"'#!&*?\n]*"""
_WORDS = rb"\[[ ]*(?:" + _WORD + rb"(?:,[ ]*" + _WORD + rb")*)?\]"
_ENTRY = _WORD + rb"(?::[ ]+(?:" + _WORD + rb"|" + _WORDS + rb"))?"
_PLAIN_ONE_LINE = re.compile(
    rb"(?:" + _WORDS + rb"|\{[ ]*(?:" + _ENTRY + rb"(?:,[ ]*" + _ENTRY + rb")*)?\})[ \t]*(?:\n|$)"
)
_TOKEN = re.compile(
    rb"""(?P<open>[\[{])|(?P<close>[\]}])|(?P<comma>,)|(?P<newline>\n)|(?P<space>[ ]+)"""
    rb"""|(?P<quoted>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')"""
    rb"""|(?P<key>:(?=[\s,\[\]{}]|$))|(?P<comment>(?<=\s)\#[^\n]*)"""
    rb"""|(?P<explicit>\?(?=[\s]|$))"""
    rb"""|(?P<plain>[^\s\[\]{},:"'\#?][^\s\[\]{},:]*|:|\?)|(?P<other>.)""",
    re.DOTALL,
)
_AFTER = re.compile(rb"[ \t]*(?:\#[^\n]*)?(?:\n|$)")


class _Entry:
    """An entry of an open collection: the line it started on, and whether its key was seen."""

    __slots__ = ("closer", "key_seen", "line", "started")

    def __init__(self, closer: int) -> None:
        self.closer = closer
        self.started = False
        self.key_seen = False
        self.line = 0


def _collection_disagrees(raw: bytes, at: int) -> tuple[bool, int]:
    """(whether the collection opening at `at` is a shape the readers differ on, where it
    ends)."""
    stack: list[_Entry] = []
    line = 0
    after_quoted = False  # the previous token was a quoted scalar (a `:` straight after it)
    attached = False  # the previous token was a scalar (a `:` straight after it is its text)
    blank = False  # only spaces since the last line break
    for match in _TOKEN.finditer(raw, at):
        kind = match.lastgroup
        if kind == "newline":
            if blank:
                return True, match.end()  # an empty line: rapidyaml kept a break in a scalar
            line, blank = line + 1, True
        if kind == "space" or kind == "comment" or kind == "newline":
            after_quoted = attached = False
            continue
        blank = False
        if kind == "plain" and not attached and match.group()[:1] in b":!&*":
            # `:x` after a space or a line break (rapidyaml's key), or a lone `!`, `&` or `*`
            # (an empty tag, anchor or alias: ruamel.yaml refuses it or reads null)
            return True, match.end()
        top = stack[-1] if stack else None
        if kind == "open":
            if top is not None and not top.started:
                top.started, top.line = True, line
            stack.append(_Entry(b"]"[0] if match.group() == b"[" else b"}"[0]))
        elif kind == "close":
            if top is None or raw[match.start()] != top.closer:
                return True, match.end()
            stack.pop()
            if not stack:  # only a comment may follow on its line ([a]: b, a key, is rare)
                return _AFTER.match(raw, match.end()) is None, match.end()
        elif kind == "comma":
            if top is None:
                return True, match.end()
            stack[-1] = _Entry(top.closer)
        elif kind == "explicit" or top is None:
            return True, match.end()
        elif kind == "key" or (match.group() == b":" and after_quoted):
            if not top.started or top.key_seen or top.line != line:
                return True, match.end()  # no key, a second key, or a key over lines
            top.key_seen = True
            if (
                after_quoted
                and top.closer == b"]"[0]
                and raw[match.end() : match.end() + 1] != b" "
            ):
                return True, match.end()  # ["a":x], ["a":{b: c}]
            after_quoted = attached = False  # what follows starts the value
            continue
        else:  # a scalar, plain or quoted
            if not top.started:
                top.started, top.line = True, line
            if kind == "other":
                return True, match.end()  # a quote never closed, a `#` opening a scalar
            if kind == "quoted":
                line += match.group().count(b"\n")
        after_quoted = kind == "quoted"
        attached = kind == "quoted" or kind == "plain"
    return True, len(raw)  # never closed


def _opens_collection(raw: bytes, at: int) -> bool:
    """A `[` or `{` at `at` could open a flow collection in block context: at its line's start
    (after indentation) or after `: ` or `- `. One in a block scalar's text that looks like
    one is read as one: at worst the file goes to the authoritative reader."""
    before = raw[raw.rfind(b"\n", 0, at) + 1 : at]
    kept = before.rstrip(b" \t")
    return not kept or (len(kept) < len(before) and kept[-1:] in (b":", b"-"))


def flow_disagrees(raw: bytes) -> bool:
    """`raw` holds a flow collection the two readers may read differently. The openers are
    found by memchr (`find`): a regex for where a collection opens took half the fast
    reader's time on a configuration of short flow sequences."""
    at = 0
    while True:
        square, curly = raw.find(b"[", at), raw.find(b"{", at)
        if square < 0 and curly < 0:
            return False
        at = curly if square < 0 else square if curly < 0 else min(square, curly)
        if not _opens_collection(raw, at):
            at += 1
            continue
        plain = _PLAIN_ONE_LINE.match(raw, at)
        if plain is not None:
            at = plain.end()
            continue
        disagrees, at = _collection_disagrees(raw, at)
        if disagrees:
            return True
