"""Resource amounts as exact integers: every quantity is kept in thousandths of its base unit
(a GPU is 1000, `500m` cpu is 500, a byte of memory is 1000), so sums and comparisons never
suffer float rounding, and shown back in the units a person wrote."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

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


def show(key: str, value: int) -> str:
    """`gpu 3`, `cpu 0.5`, `memory 8GB`: one amount as a person reads it."""
    if key == "memory":
        size = value / SCALE
        for unit, factor in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
            if size >= factor:
                return f"memory {_number(size / factor)}{unit}"
        return f"memory {_number(size)}B"
    return f"{key} {_number(value / SCALE)}"


def show_all(values: Mapping[str, int]) -> str:
    return ", ".join(show(k, v) for k, v in sorted(values.items())) or "nothing"


def plain(value: int) -> float | int:
    """Units back to the base unit, for JSON (an int when whole)."""
    number = value / SCALE
    return int(number) if number == int(number) else number
