"""The labels GCE accepts on an instance template, for `validate` to refuse the others before
an apply has changed anything (GCE refuses the whole template at insert, 400 invalid).

GCE's rules: a key is 1-63 characters, starting with a lowercase letter, of lowercase letters,
digits, `_` and `-`; a value is 0-63 of the same; international letters count when lowercase
(Unicode Ll) or caseless (Lo); at most 64 labels on a resource. poolform adds two of its own
(names.labels_for), which a user label of the same key would be overwritten by, for ever read
back as drift.
"""

from __future__ import annotations

import unicodedata

from .names import LABEL_ADDRESS, LABEL_LINEAGE

MAX_LENGTH = 63
OWN_KEYS = (LABEL_LINEAGE, LABEL_ADDRESS)
MAX_USER_LABELS = 64 - len(OWN_KEYS)


def _letter(char: str) -> bool:
    return unicodedata.category(char) in ("Ll", "Lo")


def _allowed(char: str) -> bool:
    return _letter(char) or unicodedata.category(char) == "Nd" or char in "_-"


def label_problem(text: str, *, key: bool) -> str | None:
    """Why GCE refuses `text` as a label key (or value), or None."""
    what = "key" if key else "value"
    if key and not text:
        return "a label key cannot be empty"
    if len(text) > MAX_LENGTH:
        return f"a label {what} has at most {MAX_LENGTH} characters (this one has {len(text)})"
    if key and not _letter(text[0]):
        return f"a label key starts with a lowercase letter, not {text[0]!r}"
    bad = next((c for c in text if not _allowed(c)), None)
    if bad is not None:
        upper = " (GCE labels are lowercase)" if bad != bad.lower() else ""
        return (
            f"a label {what} holds only lowercase letters, digits, `_` and `-`, not {bad!r}{upper}"
        )
    return None


def user_label_problem(key: object, value: object) -> str | None:
    """Why a label a user wrote cannot go onto a template as written, or None."""
    if key in OWN_KEYS:
        return f"`{key}` is poolform's own label (how it finds the instances): use another key"
    problem = label_problem(str(key), key=True)
    if problem is None and not isinstance(value, str):
        return f'a label value is a string: quote it ("{value}")'
    return problem or label_problem(str(value), key=False)
