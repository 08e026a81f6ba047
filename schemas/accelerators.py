"""Accelerator specs as SkyPilot writes them: `H100`, `H100:8`, `[H100, H200]`, `{H100: 1, H200: 1}`.

SkyPilot's flow form `{H100:1, H200:1}` has no space after the colon, so YAML reads it as keys
`"H100:1"` with null values; it is normalised here to `{H100: 1, H200: 1}`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

_ITEM = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)(?::([0-9]+))?$")


def _item(text: str) -> tuple[str, int]:
    match = _ITEM.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not an accelerator; write NAME or NAME:COUNT, e.g. H100:8")
    return match.group(1), int(match.group(2) or 1)


def normalise_accelerators(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        name, count = _item(value)
        return f"{name}:{count}"
    if isinstance(value, list):
        return [f"{n}:{c}" for n, c in (_item(str(v)) for v in value)]
    if isinstance(value, dict):
        result: dict[str, int] = {}
        for key, count in value.items():
            if count is None:
                name, parsed = _item(str(key))
                result[name] = parsed
            elif isinstance(count, int) and not isinstance(count, bool) and count >= 0:
                result[_item(str(key))[0]] = count
            else:
                raise ValueError(f"accelerator count for {key!r} must be a whole number, 0 or more")
        return result
    raise ValueError("accelerators must be NAME, NAME:COUNT, a list of those, or {NAME: COUNT}")


def accelerator_count(spec: str | dict[str, int] | list[str] | None) -> int:
    """GPUs a normalised spec asks for (alternatives: the largest)."""
    if spec is None:
        return 0
    if isinstance(spec, dict):
        return max(spec.values(), default=0)
    items = spec if isinstance(spec, list) else [spec]
    return max((_item(item)[1] for item in items), default=0)


_SCHEMA = {
    "anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"type": "string"}},
        # null values: SkyPilot's `{H100:1}` spelling, read as a key with no value.
        {"type": "object", "additionalProperties": {"type": ["integer", "null"], "minimum": 0}},
        {"type": "null"},
    ]
}
Accelerators = Annotated[
    str | dict[str, int] | list[str] | None,
    BeforeValidator(normalise_accelerators),
    WithJsonSchema(_SCHEMA),
]
