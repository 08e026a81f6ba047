"""Values YAML can express that nothing downstream can keep: NaN and infinities (a JSON
encoder writes them as `NaN`, which no JSON reader takes back), lone surrogates (`"\\ud800"`
is not a character: encoding it fails) and NUL characters (PostgreSQL refuses them in text).

They are refused wherever they appear, free-form maps included (`advanced_instance_config`,
`provider_settings`), each at its own position. The fast reader declines every document that
could hold one (`.nan`, an escape, a number too large for a float), so only documents read by
the positioned reader are walked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Path = tuple[str | int, ...]
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class UnsafeValue:
    path: Path
    is_key: bool
    rule: str
    message: str


def _text_problem(text: str) -> str | None:
    found = _SURROGATE.search(text)
    if found:
        return (
            f"holds a lone surrogate (\\u{ord(found.group()):04x}), which is not a character; "
            "write the character itself, or a \\U escape"
        )
    if "\x00" in text:
        return "holds a NUL character (\\x00), which cannot be stored"
    return None


def _spelling(value: float) -> str:
    """As YAML writes it (a literal too large for a float reads as infinity)."""
    if math.isnan(value):
        return "`.nan`"
    return "`-.inf`" if value < 0 else "`.inf`"


def unsafe_values(data: Any) -> Iterator[UnsafeValue]:
    """Every unsafe value (or key) in `data`, outermost first, with its path."""
    stack: list[tuple[Path, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            yield UnsafeValue(
                path,
                False,
                "non-finite-number",
                f"{_spelling(value)} is not a finite number; poolform stores numbers as JSON, "
                "which has no NaN or infinity",
            )
        elif isinstance(value, str):
            problem = _text_problem(value)
            if problem:
                yield UnsafeValue(path, False, "invalid-text", f"the text {problem}")
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                problem = _text_problem(key) if isinstance(key, str) else None
                if problem:
                    yield UnsafeValue((*path, key), True, "invalid-text", f"the key {problem}")
                stack.append(((*path, key), item))
        elif isinstance(value, list):
            stack.extend(((*path, index), item) for index, item in reversed(list(enumerate(value))))
