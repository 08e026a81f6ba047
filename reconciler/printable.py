"""Text from input made safe to print: what a terminal, a log viewer or a Markdown renderer
would act on is shown as a visible escape instead.

Names, keys, values and messages come from configurations, state and clouds. A newline in one
would print a line of its own; ESC, CSI, OSC, BEL and C1 controls move the cursor, recolour,
retitle or clear the screen; bidi overrides reorder what is shown. `one_line` writes every
character that is not printable (Python's definition: controls, format characters such as bidi
overrides, separators other than the space, unassigned code points) as `\\n`, `\\t`, `\\r` or
`\\uXXXX`, so the text keeps its meaning and stays on its line.
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def one_line(text: str) -> str:
    """`text` with every non-printable character (newlines included) written as an escape."""
    if text.isprintable():
        return text  # the common case, and the fast one
    return "".join(c if c.isprintable() else _escaped(c) for c in text)


def printable(text: str) -> str:
    """Text whose line breaks are meant (a message and its hint), each line made `one_line`."""
    return "\n".join(one_line(line) for line in text.split("\n"))


def continued(text: str, indent: str) -> str:
    """Text whose line breaks are its own, not poolform's (a provider's message quoting a
    `setup` log's last lines): its first line, then each further one on a line of its own
    behind `indent` and a bar, every line `one_line`. Such text can then neither print a line
    that reads as poolform's own (`error: ...`, `  hint: ...`) nor be shown as one line of
    `\\n` escapes."""
    first, *rest = text.split("\n")
    return "\n".join([one_line(first), *(f"{indent}| {one_line(line)}" for line in rest)])
