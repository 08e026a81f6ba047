"""The command reference and each command's `--help` name an option's value alike.

The reference wrote `--num-jobs N`, `--interval SECONDS`, `--pool NAME`, `schema --out DIR`
while `--help` said `INTEGER`, `FLOAT RANGE`, `TEXT`, `PATH` (and `--num-jobs INTEGER  Submit
N jobs`, naming an N it never showed). tests/test_readme.py checks the options are the same;
this checks what each takes reads the same. A choice (`--format text | json | github`) must
list the same choices; `jobs list --status S` shows its choices in `--help`, and `jobs cancel
--gone ID...` is a flag that reads the ids as arguments, so neither has a metavar to compare.
"""

from __future__ import annotations

import re

import click
import pytest

from tests.test_readme import ALL, reference

# An option and the value the reference gives it: `--out FILE`, `--format mermaid | dot`.
VALUE = re.compile(r"(--[a-z][a-z-]*)(?:[ =]([A-Z][A-Z_]*|[a-z]+(?: \| [a-z]+)+))?")


def values() -> list[tuple[tuple[str, ...], str, str, click.Option]]:
    found = []
    for path, synopsis in sorted(reference().items()):
        for option, value in VALUE.findall(synopsis):
            param = next(
                (
                    p
                    for p in ALL[path].params
                    if isinstance(p, click.Option) and option in (*p.opts, *p.secondary_opts)
                ),
                None,
            )
            if param is not None and not param.is_flag:
                found.append((path, option, value, param))
    return found


@pytest.mark.parametrize(
    ("path", "option", "value", "param"),
    values(),
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else v if isinstance(v, str) else "",
)
def test_the_reference_and_help_name_an_option_s_value_alike(
    path: tuple[str, ...], option: str, value: str, param: click.Option
) -> None:
    shown = param.make_metavar(click.Context(ALL[path]))
    if isinstance(param.type, click.Choice):
        if value.isupper():
            return  # a placeholder for choices `--help` lists (jobs list --status S)
        assert value.split(" | ") == list(param.type.choices), (path, option)
        return
    assert shown == value, (
        f"`poolform {' '.join(path)} {option}`: --help {shown}, reference {value}"
    )
