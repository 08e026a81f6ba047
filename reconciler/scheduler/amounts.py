"""Resource amounts as exact integers: every quantity is kept in thousandths of its base unit
(a GPU is 1000, `500m` cpu is 500, a byte of memory is 1000), so sums and comparisons never
suffer float rounding, and shown back in the units a person wrote."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

SCALE = 1000
WORKER = "worker"  # a worker pool's only key: one whole worker per job
STEP_RUN = "step_run"  # one per job, implicitly, where a resource pool declares it
# Keys a resource pool counts only when it declares them (ZenML: an undeclared cpu or memory
# row is unbounded); any other undeclared key (gpu, custom) has no capacity at all.
UNBOUNDED_WHEN_UNDECLARED = frozenset({"cpu", "memory"})

Amounts = tuple[tuple[str, int], ...]  # sorted (key, units): hashable, cheap to iterate


def units(value: float) -> int:
    """A quantity in its base unit (cores, bytes, GPUs) as integer thousandths."""
    return round(float(value) * SCALE)


def amounts(mapping: Mapping[str, int]) -> Amounts:
    return tuple(sorted((k, v) for k, v in mapping.items() if v))


def as_dict(values: Amounts) -> dict[str, int]:
    return dict(values)


def total(values: Iterable[Amounts]) -> dict[str, int]:
    result: dict[str, int] = {}
    for amount in values:
        for key, value in amount:
            result[key] = result.get(key, 0) + value
    return result


def _number(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


# Memory units, binary and decimal: state keeps bytes, not how they were written, so memory is
# shown in the unit that says it shortest and exactly (16Gi, not 17.18GB; 500GB, not 465.66Gi).
_MEMORY_UNITS = tuple(
    (unit, Fraction(base) ** power)
    for power, (binary, decimal) in enumerate(
        (("Ki", "KB"), ("Mi", "MB"), ("Gi", "GB"), ("Ti", "TB"), ("Pi", "PB")), start=1
    )
    for unit, base in ((binary, 1024), (decimal, 1000))
)


def _memory(value: int) -> str:
    size = Fraction(value, SCALE)
    found = f"{_number(float(size))}B"
    exact = size.denominator == 1
    for unit, factor in _MEMORY_UNITS:
        amount = size / factor
        if amount < 1:
            continue
        if (amount * 1000).denominator == 1:  # exact to three decimals
            spelled = f"{_number(float(amount))}{unit}"
            if not exact or len(spelled) <= len(found):
                found, exact = spelled, True
    if not exact:  # no unit says it exactly: the nearest decimal one, rounded
        for unit, factor in reversed(_MEMORY_UNITS[1::2]):
            if size >= factor:
                return f"{_number(float(size / factor))}{unit}"
    return found


def show(key: str, value: int) -> str:
    """`gpu 3`, `cpu 0.5`, `memory 16Gi`: one amount as a person reads it."""
    if key == "memory":
        return f"memory {_memory(value)}"
    return f"{key} {_number(value / SCALE)}"


def show_all(values: Mapping[str, int]) -> str:
    return ", ".join(show(k, v) for k, v in sorted(values.items())) or "nothing"


def plain(value: int) -> float | int:
    """Units back to the base unit, for JSON (an int when whole)."""
    number = value / SCALE
    return int(number) if number == int(number) else number
