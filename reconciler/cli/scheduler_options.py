"""The options and argument types the `jobs`, `pools` and `scheduler` commands share: job ids,
statuses, names, durations, `--dir` and `--json`."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reconciler.cli.common import utf8_text
from reconciler.cli.numbers import Decimal, Integer, ascii_decimal

_ID_RANGE = re.compile(r"\s*([0-9]{1,19})\s*-\s*([0-9]{1,19})\s*")


class JobId(Integer):
    """A job id: SQLite's and PostgreSQL's 64-bit integers, anything else names no job.
    `jobs submit` says `job id(s) 2-4`; given back as it is, that is not an id, and the
    error says how to name those jobs."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        found = _ID_RANGE.fullmatch(value) if isinstance(value, str) else None
        if found is not None:
            first, last = int(found[1]), int(found[2])
            each = " ".join(str(i) for i in range(first, min(last, first + 2) + 1))
            if last > first + 2:
                each += " ..."
            several = param is not None and param.nargs == -1 and first < last
            named = f"; name each one: {each} (in a shell: $(seq {first} {last}))"
            self.fail(f"{value!r} is not a job id{named if several else ''}", param, ctx)
        return super().convert(value, param, ctx)


JOB_ID = JobId(1, 2**63 - 1)
STATUSES = ("queued", "admitted", "running", "succeeded", "failed", "cancelled", "rejected")


def dir_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--dir",
        "directory",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="The configuration directory whose applied state jobs run on (default: the "
        "nearest one with a .poolform/ directory, from the job file's or this directory up).",
    )(function)


def name_option_value(
    _ctx: click.Context, _param: click.Parameter, value: str | None
) -> str | None:
    """A pool or subject given on the command line is a name: an empty one (`--pool "$POOL"`
    with POOL unset) must not fall back to the job file's pool or the default one."""
    if value is not None and not value.strip():
        raise click.BadParameter("an empty name; give one, or leave the option out")
    return utf8_text(_ctx, _param, value)


def subject_option_value(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> str | None:
    """A subject given on the command line is held to what a policy's subject may be (as the
    job file's `subject` is): a longer one names no policy, and would only be recorded as a
    rejected job."""
    from schemas.subject_policy import SUBJECT_MAX_LENGTH

    value = name_option_value(ctx, param, value)
    if value is not None and len(value) > SUBJECT_MAX_LENGTH:
        raise click.BadParameter(
            f"{value[:60]!r}... is not a subject (at most {SUBJECT_MAX_LENGTH} characters)"
        )
    return value


def pool_option_value(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A pool to submit to is a name as the configuration writes it (as the job file's `pool`
    is): anything else names no pool, and would only be recorded as a rejected job."""
    import re

    from schemas.base import NAME_PATTERN

    value = name_option_value(ctx, param, value)
    if value is not None and not re.fullmatch(NAME_PATTERN, value):
        shown = value if len(value) <= 60 else value[:60] + "..."
        raise click.BadParameter(
            f"{shown!r} is not a pool name (lower case letters, digits, '.', '_' and '-', "
            "at most 63)"
        )
    return value


def env_names_value(
    _ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    """`--pass-env NAME`: a shell variable's name each (a name with `=` or a space would be
    taken for something else, and an empty one passes nothing on)."""
    from reconciler.scheduler.job_environment import ENV_NAME

    for name in value:
        if not ENV_NAME.fullmatch(name):
            shown = name if len(name) <= 60 else name[:60] + "..."
            raise click.BadParameter(
                f"{shown!r} is not a variable's name (letters, digits and '_', not first a digit)"
            )
    return value


def json_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(
        function
    )


if TYPE_CHECKING:
    _ParamType = click.ParamType[float, Any]  # generic only in click 8.2 and later
else:
    _ParamType = click.ParamType


class Duration(_ParamType):
    """`30s`, `1m30s`, or a bare number of seconds (`0`): never negative, NaN or infinite."""

    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        from schemas.quantities import parse_duration

        if isinstance(value, float):
            return value
        text = str(value)
        bare = ascii_decimal(text)
        try:
            return float(parse_duration(float(text) if bare else text))
        except ValueError as error:
            self.fail(str(error), param, ctx)


Seconds = Decimal  # `scheduler run --interval`: a number of seconds
