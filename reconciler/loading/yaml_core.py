"""The YAML 1.2 core schema's plain scalars, in one place.

The authoritative reader resolves plain scalars with `resolve_plain`; the fast reader must
decline a file when a string it read could have been one of these (rapidyaml keeps `~`, `0o17`
or `.inf` as strings); bench/gen_config.py quotes strings that would resolve. All three use
the patterns below, so they cannot drift apart.
"""

from __future__ import annotations

import re
import sys
from typing import Any

NULL_WORDS = r"null|Null|NULL"
NULL = rf"~|{NULL_WORDS}|"
TRUE = r"true|True|TRUE"
FALSE = r"false|False|FALSE"
INT10 = r"[-+]?[0-9]+"
INT8 = r"0o[0-7]+"
INT16 = r"0x[0-9a-fA-F]+"
FLOAT = r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
INF = r"[-+]?\.(?:inf|Inf|INF)"
NAN = r"\.(?:nan|NaN|NAN)"

# Every non-empty plain scalar the core schema does not read as a string.
NON_STRING = "|".join(("~", NULL_WORDS, TRUE, FALSE, INT10, INT8, INT16, FLOAT, INF, NAN))
# The same, the empty scalar (null) included: what a writer must quote to keep a string.
NON_STRING_SCALAR = re.compile(rf"^(?:{NON_STRING}|)$")
# The characters such a scalar can start with, and the words: a cheap first filter.
FIRST_CHARACTERS = "-+~.0-9"
WORDS = "|".join((NULL_WORDS, TRUE, FALSE))

_NULL, _TRUE, _FALSE = (re.compile(rf"^(?:{p})$") for p in (NULL, TRUE, FALSE))
_INT10, _INT8, _INT16 = (re.compile(rf"^(?:{p})$") for p in (INT10, INT8, INT16))
_FLOAT, _INF, _NAN = (re.compile(rf"^(?:{p})$") for p in (FLOAT, INF, NAN))

# Python refuses to convert integers longer than this from text (CVE-2020-10735).
MAX_INTEGER_DIGITS = sys.get_int_max_str_digits() or 4300


class ScalarTooLong(ValueError):
    """A plain integer with more digits than can be converted."""

    def __init__(self, digits: int):
        super().__init__(
            f"an integer with {digits} digits is too long to read "
            f"(at most {MAX_INTEGER_DIGITS}); quote it if it is text"
        )


def _decimal(text: str) -> int:
    digits = len(text.lstrip("+-"))
    if digits > MAX_INTEGER_DIGITS:
        raise ScalarTooLong(digits)
    return int(text)


def resolve_plain(value: str) -> Any:
    """A plain (unquoted, untagged) scalar as the YAML 1.2 core schema reads it.

    Raises ScalarTooLong for an integer too long to convert."""
    if _NULL.match(value):
        return None
    if _TRUE.match(value):
        return True
    if _FALSE.match(value):
        return False
    if _INT10.match(value):
        return _decimal(value)
    if _INT8.match(value):
        return int(value[2:], 8)
    if _INT16.match(value):
        return int(value[2:], 16)
    if _FLOAT.match(value):
        return float(value)
    if _INF.match(value):
        return float("-inf") if value.startswith("-") else float("inf")
    if _NAN.match(value):
        return float("nan")
    return value
