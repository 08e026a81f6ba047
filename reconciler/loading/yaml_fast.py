"""The fast YAML reader: rapidyaml parses and emits JSON, the json module builds the data.

About 10x faster than PyYAML's C loader on large configurations (see bench/README.md), but
rapidyaml does not resolve scalars by the YAML 1.2 core schema, does not reject tags, anchors or
duplicate keys, and keeps no positions we can use. So it is only trusted when it provably agrees
with the authoritative reader: any sign of a tag, anchor or alias in the text, any string that
the core schema would read as null/bool/number, any duplicate key, any parse error sends the
file to `yaml_positions` instead. It never decides that a file is wrong.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

# Something that could be a tag (!x), anchor (&x) or alias (*x) at a token start.
_DECORATION = re.compile(rb"(?:^|[\s\[\{,])[!&*][^\s,\]\}]", re.MULTILINE)
# A JSON string the core schema would have read as something else if it was a plain scalar.
_AMBIGUOUS = re.compile(
    r'"(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?[0-9][0-9]*|0o[0-7]+|0x[0-9a-fA-F]+'
    r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\""
)


# Cheap first pass: only strings that start like a core-schema scalar can be ambiguous.
_CANDIDATE = re.compile(r'"(?=[-+~.0-9]|(?:null|Null|NULL|true|True|TRUE|false|False|FALSE)")')


def _ambiguous(text: str) -> bool:
    return any(_AMBIGUOUS.match(text, m.start()) for m in _CANDIDATE.finditer(text))


class _Disagreement(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _Disagreement("duplicate key")
    return mapping


def _constant(name: str) -> Any:
    raise _Disagreement(name)


def _quiet_parse(raw: bytes) -> str | None:
    """rapidyaml writes parse errors to fd 2 itself; keep them off the user's terminal."""
    import ryml

    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        tree = ryml.parse_in_arena(raw)
        if tree.size() == 0:
            return None
        return str(ryml.emit_json_malloc(tree, tree.root_id()))
    except Exception:
        return None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def fast_parse(raw: bytes) -> list[Any] | None:
    """The documents in `raw`, or None when the authoritative reader must decide."""
    if b"\t" in raw or b"\r" in raw:
        return None
    if (b"!" in raw or b"&" in raw or b"*" in raw) and _DECORATION.search(raw):
        return None
    stripped = raw.lstrip()
    if not stripped or stripped.startswith(b"%"):
        return None
    text = _quiet_parse(raw)
    if text is None or _ambiguous(text):
        return None
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except (ValueError, _Disagreement):
        return None
    # A stream with explicit `---` markers comes back as a list of documents; a bare document
    # as the document itself. A bare top-level list is ambiguous with that: let the slow path see it.
    if stripped.startswith(b"---") or re.search(rb"^---", raw, re.MULTILINE):
        return data if isinstance(data, list) else None
    if isinstance(data, list):
        return None
    return [data]
