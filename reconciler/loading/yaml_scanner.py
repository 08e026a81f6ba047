"""ruamel.yaml's scanners, with YAML's rule for the empty lines that open a block scalar.

ruamel.yaml refuses a block scalar whose first line is empty but for a few spaces, fewer than
the text below it ("more indented follow up line than first in a block scalar"):

    run: |
    ␠
      echo a && echo b

YAML 1.2 allows it (an empty line may hold up to the scalar's indentation in spaces, 8.1.1.2),
and so does rapidyaml, the fast reader. The authoritative reader only sees a file the fast one
declines (`&&` is enough), so the same job file was valid with `echo a; echo b` and "invalid
YAML" with `echo a && echo b`; `fmt` refused it too. This is PyYAML's reading of those lines,
the one ruamel.yaml had before it added that check: the scalar's indentation is that of its
first text line, or of a longer empty line before it, which then ends the scalar there (as
YAML has it: an error, since the text line after it is less indented).
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.scanner import RoundTripScanner, Scanner

_BREAKS_AND_SPACE = " \r\n\x85\u2028\u2029"


def _indentation(scanner: Any) -> tuple[list[str], int, Any]:
    peek, forward = scanner.reader.peek, scanner.reader.forward
    chunks: list[str] = []
    max_indent = 0
    end_mark = scanner.reader.get_mark()
    while peek() in _BREAKS_AND_SPACE:
        if peek() != " ":
            chunks.append(scanner.scan_line_break())
            end_mark = scanner.reader.get_mark()
        else:
            forward()
            max_indent = max(max_indent, scanner.reader.column)
    return chunks, max_indent, end_mark


class YamlScanner(Scanner):
    """The safe loader's scanner (the authoritative reader's)."""

    def scan_block_scalar_indentation(self) -> Any:
        return _indentation(self)


class RoundTripYamlScanner(RoundTripScanner):
    """The round-trip scanner (`fmt`'s)."""

    def scan_block_scalar_indentation(self) -> Any:
        return _indentation(self)
