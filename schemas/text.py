"""Text helpers every layer shares: the one "did you mean" and the one way to show user text.

A leaf module (standard library only), so loading, checks, the CLI and the providers' settings
parsers can all import it without pulling in anything else.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

CUTOFF = 0.6


def closest(word: object, choices: Iterable[object], *, cutoff: float = CUTOFF) -> str | None:
    """The choice nearest to `word` by spelling, or None when none is close enough."""
    options = sorted({str(choice) for choice in choices})
    found = difflib.get_close_matches(str(word), options, n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(word: object, choices: Iterable[object]) -> str | None:
    """ "did you mean `x`?" for the nearest choice, or None."""
    found = closest(word, choices)
    return f"did you mean `{printable(found)}`?" if found is not None else None


def case_twin(word: str, choices: Iterable[str | None]) -> str | None:
    """The choice that is `word` but for letter case, or None. Cloud instance types are
    matched letter for letter (SkyPilot and EC2 refuse `P4d.24xlarge`): a user who wrote one
    so is told the spelling their pool has, not only that the types differ."""
    folded = word.casefold()
    for choice in choices:
        if choice is not None and choice != word and choice.casefold() == folded:
            return choice
    return None


def case_note(word: str, choices: Iterable[str | None]) -> str:
    """ "; instance type names are case-sensitive: write `x`" for the case twin, or ""."""
    twin = case_twin(word, choices)
    return "" if twin is None else f"; instance type names are case-sensitive: write {twin}"


# Everything that could move the cursor, start a terminal escape sequence, end a line, reorder
# text (bidirectional controls) or fail to encode (lone surrogates): shown as an escape instead.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff"
    "\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (a file name, surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control, line-breaking, bidirectional or unencodable character
    escaped (`\\n`, `\\x1b`, `\\u202e`), so user text can never forge a line of output."""
    return _UNSAFE.sub(_escape, text)


_PAGE = re.compile(r"<(!doctype|html|head|body|title)\b", re.IGNORECASE)
_MARKUP = re.compile(r"<[^>]*>")


def folded(message: str, limit: int = 300) -> str:
    """A cloud's or a server's message (an SDK's error text) as one short line: its line
    breaks, tabs and runs of spaces become one space, so a diagnostic stays one line and the
    text cannot print an `error:` or `hint:` line of its own (PostgreSQL's "connection
    refused\\n\\tIs the server running...", a GCE message, a proxy's 5xx page, which also
    loses its tags), cut at `limit` characters."""
    if _PAGE.search(message):  # only a page: a message may say "<= 100" of its own
        message = _MARKUP.sub(" ", message)
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
