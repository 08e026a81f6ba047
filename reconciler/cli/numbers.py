"""Numbers on the command line are ASCII digits. Python's int() and float() also read other
scripts' digits (`--lock-timeout` with an Arabic-Indic three waited 3 s, `--parallelism` with a
Devanagari three ran 3 at once, `jobs show` with an Arabic-Indic one showed job 1) and
underscores (`--parallelism 1_0` ran 10): a value no shell user typed as that number, or one
pasted from elsewhere, is refused naming its option instead."""

from __future__ import annotations

import re
from typing import Any

import click

INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def ascii_decimal(text: str) -> bool:
    """A bare number of seconds (`30`, `0.5`), written in ASCII."""
    return DECIMAL.fullmatch(text.strip()) is not None


def not_ascii_number(value: Any) -> str:
    return f"{value!r} is not a number: write it in ASCII digits (0-9)"


class Integer(click.IntRange):
    """An integer in ASCII digits, within `min`..`max` when given (click.IntRange's); with
    neither, its help reads as a plain integer's."""

    def __init__(self, min: int | None = None, max: int | None = None) -> None:
        super().__init__(min, max)
        # click names a range "integer range": "'2-4' is not a valid integer range" read as if
        # some range would do. The range is in the help (`[1<=x<=100000]`) and its errors.
        self.name = "integer"

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)  # "'abc' is not a valid integer" as ever
        if isinstance(value, str) and not INTEGER.fullmatch(value.strip()):
            self.fail(not_ascii_number(value), param, ctx)
        return number


class Decimal(click.FloatRange):
    """A number in ASCII digits within `min`..`max`, and not NaN (every comparison with NaN
    is false, so a plain range lets it through, and a loop sleeping NaN seconds never
    sleeps)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if isinstance(value, str) and not ascii_decimal(value):
            self.fail(not_ascii_number(value), param, ctx)
        return number
