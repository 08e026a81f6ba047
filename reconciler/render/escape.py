"""Output that input cannot forge.

Names, keys, values, reasons and messages come from configurations, state and clouds; a value
holding a newline, a terminal escape sequence or Markdown could otherwise fake lines of a plan,
move the cursor, recolour or reorder text (bidi overrides), or close a pull-request comment's
code fence and print a heading of its own. Every renderer passes such text through one of these
before it becomes part of a line:

- `one_line` (reconciler/printable.py): any text as one line of printable characters, the rest
  written as visible escapes (`\\n`, `\\u001b`).
- `markdown_text`: text in running Markdown, with every character that could start markup
  backslash-escaped (so `<!--`, `</details>`, `**`, `[x](y)` and `|` read as written).
- `code_span` / `fence`: code in Markdown, delimited by more backticks than the code holds.
"""

from __future__ import annotations

import re

from reconciler.printable import one_line, printable

_TICKS = re.compile(r"`+")
# CommonMark lets any ASCII punctuation be backslash-escaped; these are the ones that can start
# markup in the middle of a line (block markup needs a line start, and one_line leaves none).
_MARKUP = re.compile(r"([\\`*_\[\]<>|~&])")


def markdown_text(text: str) -> str:
    """`text` as literal Markdown inline text."""
    return _MARKUP.sub(r"\\\1", one_line(text))


def _ticks_for(text: str, minimum: int) -> str:
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    return "`" * max(minimum, longest + 1)


def code_span(text: str) -> str:
    """`text` as an inline code span that no backtick inside it can close."""
    text = one_line(text) or " "
    ticks = _ticks_for(text, 1)
    # A span whose content starts or ends with a backtick (or a space) is padded with one space,
    # which CommonMark strips again.
    edges = text[:1] + text[-1:]
    pad = " " if text.strip(" ") and ("`" in edges or " " in edges) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def table_code(text: str) -> str:
    """A code span in a table cell: GitHub splits cells at `|` even inside code."""
    return code_span(text).replace("|", "\\|")


def fence(info: str, lines: list[str]) -> str:
    """A fenced code block holding `lines` (each made one_line), closed only by its own fence."""
    body = [one_line(line) for line in lines]
    ticks = _ticks_for("\n".join(body), 3)
    return "\n".join([f"{ticks}{info}", *body, ticks])


__all__ = ["code_span", "fence", "markdown_text", "one_line", "printable", "table_code"]
