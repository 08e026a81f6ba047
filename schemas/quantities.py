"""Quantities with units (`500GB`, `16Gi`, `4000m`) and durations (`30s`, `1m`, `60m`).

Both normalise to plain numbers in base units (bytes, cores, seconds) so that diffs compare
values, not spellings: `16Gi` and `17179869184` are the same capacity. A number read from text
remembers how it was written (`Written`), so a plan can show `256Gi` rather than 274877906944.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import PlainValidator, WithJsonSchema

from schemas.base import RESOURCE_KEY_PATTERN, ResourceKey

_QUANTITY = re.compile(r"^\s*([+]?[0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")
_SUFFIXES: dict[str, Decimal] = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10) ** 3,
    "K": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "KB": Decimal(10) ** 3,
    "MB": Decimal(10) ** 6,
    "GB": Decimal(10) ** 9,
    "TB": Decimal(10) ** 12,
    "PB": Decimal(10) ** 15,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
}
# One or more number-and-unit parts, summed: `30s`, `10m`, `1m30s`, `1h 15m`.
_DURATION_PART = r"[0-9]+(?:\.[0-9]+)?\s*(?:ms|s|m|h|d)"
_DURATION = re.compile(rf"^\s*(?:{_DURATION_PART}\s*)+$")
_DURATION_PARTS = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h|d)")
_SECONDS = {
    "ms": Decimal("0.001"),
    "s": Decimal(1),
    "m": Decimal(60),
    "h": Decimal(3600),
    "d": Decimal(86400),
}
# Anything past this is a typo, not a machine (an exabyte of memory, 10^15 GPUs).
MAX_QUANTITY = Decimal(10) ** 18


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


class WrittenInt(int):
    """An int read from text, with the text (`written`): equal to, and serialised as, the int."""

    written: str


class WrittenFloat(float):
    """A float read from text, with the text (`written`)."""

    written: str


def _written(value: int | float, text: str) -> int | float:
    kept = WrittenInt(value) if isinstance(value, int) else WrittenFloat(value)
    kept.written = text.strip()
    return kept


def parse_quantity(value: Any) -> int | float:
    if type(value) is int and 0 <= value <= MAX_QUANTITY:  # the common case, kept cheap
        return value
    if isinstance(value, bool):
        raise ValueError("expected a quantity such as 8, 500GB, 16Gi or 4000m, got a boolean")
    if isinstance(value, int | float):
        amount = Decimal(str(value))
    elif isinstance(value, str):
        match = _QUANTITY.match(value)
        if not match or match.group(2) not in _SUFFIXES:
            raise ValueError(
                f"{value!r} is not a quantity; use a number with an optional unit "
                "(m, K, M, G, T, P, KB, MB, GB, TB, PB, Ki, Mi, Gi, Ti, Pi)"
            )
        try:
            amount = Decimal(match.group(1)) * _SUFFIXES[match.group(2)]
        except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
            raise ValueError(f"{value!r} is not a quantity") from exc
    else:
        raise ValueError(f"expected a quantity, got {type(value).__name__}")
    if not amount.is_finite():
        raise ValueError(f"{value!r} is not a finite quantity")
    if amount < 0:
        raise ValueError("a quantity cannot be negative")
    if amount > MAX_QUANTITY:
        raise ValueError(f"{value!r} is larger than any real capacity (limit 10^18)")
    return _written(_number(amount), value) if isinstance(value, str) else _number(amount)


def parse_duration(value: Any) -> int | float:
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 30s, 1m or 2h, got a boolean")
    if isinstance(value, int | float):
        seconds = Decimal(str(value))
    elif isinstance(value, str):
        if not _DURATION.match(value):
            raise ValueError(
                f"{value!r} is not a duration; use numbers with units (ms, s, m, h, d), "
                "such as 30s, 10m or 1m30s"
            )
        seconds = sum(
            (Decimal(n) * _SECONDS[unit] for n, unit in _DURATION_PARTS.findall(value)),
            Decimal(0),
        )
    else:
        raise ValueError(f"expected a duration, got {type(value).__name__}")
    if not seconds.is_finite() or seconds < 0 or seconds > Decimal(10) ** 9:
        raise ValueError(f"{value!r} is out of range for a duration")
    return _written(_number(seconds), value) if isinstance(value, str) else _number(seconds)


_QUANTITY_SCHEMA = {
    "anyOf": [
        {"type": "number", "minimum": 0},
        {
            "type": "string",
            "pattern": r"^\s*[+]?[0-9]+(\.[0-9]+)?\s*(m|k|K|M|G|T|P|KB|MB|GB|TB|PB|Ki|Mi|Gi|Ti|Pi)?\s*$",
        },
    ]
}
_DURATION_SCHEMA = {
    "anyOf": [
        {"type": "number", "minimum": 0},
        {"type": "string", "pattern": r"^\s*([0-9]+(\.[0-9]+)?\s*(ms|s|m|h|d)\s*)+$"},
    ]
}

# Plain validators: the parsed number is kept as returned, `written` and all.
Quantity = Annotated[int | float, PlainValidator(parse_quantity), WithJsonSchema(_QUANTITY_SCHEMA)]
Duration = Annotated[int | float, PlainValidator(parse_duration), WithJsonSchema(_DURATION_SCHEMA)]

# Amounts per resource key (a pool's capacity, a policy's reservations): keys checked by the
# key pattern, here and in the exported schema, so an editor flags `Gpu` as the loader does.
_AMOUNTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "propertyNames": {"pattern": RESOURCE_KEY_PATTERN},
    "additionalProperties": _QUANTITY_SCHEMA,
}
ResourceAmounts = Annotated[dict[ResourceKey, Quantity], WithJsonSchema(_AMOUNTS_SCHEMA)]
# The same, with at least one key (a pool without capacity holds nothing).
ResourceCapacity = Annotated[
    dict[ResourceKey, Quantity], WithJsonSchema({**_AMOUNTS_SCHEMA, "minProperties": 1})
]
