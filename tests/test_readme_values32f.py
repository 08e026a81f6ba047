"""The command reference and each command's `--help` name an option's value alike, and every
option a README's command line gives is one that command takes.

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

from reconciler.cli.spellings import terraform_spellings
from reconciler.errors import PoolformError
from tests.conftest import ROOT
from tests.test_readme import ALL, READMES, code_in, options_of, reference

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


# A command line as a README shows it: `poolform` where a command starts (as test_readme's
# MENTION), then its words up to a comment, a pipe, `;`, `&&`, `)` or the line's end.
LINE = re.compile(
    r"(?:^[ \t]*(?:\$[ \t]+)?|\$\(|[|;&][ \t]*)poolform((?:[ \t]+[^\s|;&#)`]+)+)", re.M
)
GLOBAL = {"--chdir", "--no-color", "--debug", "--version", "--help", "-h"}


def command_lines() -> list[tuple[str, str]]:
    found = []
    for readme in READMES:
        for code in code_in(readme.read_text()):
            for match in LINE.finditer(code):
                found.append((str(readme.relative_to(ROOT)), match.group(1).strip()))
    return sorted(set(found))


@pytest.mark.parametrize(("readme", "line"), command_lines())
def test_every_option_a_readme_command_line_gives_is_one_that_command_takes(
    readme: str, line: str
) -> None:
    """test_readme checks each command a README shows exists; this checks its options do
    (Terraform's spellings read as poolform reads them: `-out=FILE` is `--out`)."""
    try:
        words = terraform_spellings(line.split())
    except PoolformError:
        return  # a spelling poolform refuses with its reason (`apply -lock=false`)
    path: tuple[str, ...] = ()
    rest: list[str] = []
    while words:
        word = words.pop(0)
        if not rest and word == "--chdir":  # before the command, as Terraform's -chdir
            words.pop(0)
        elif not rest and (word in GLOBAL or word.startswith("--chdir=")):
            continue
        elif not rest and (*path, word) in ALL:
            path = (*path, word)
        else:
            rest.append(word)
    if path not in ALL or not isinstance(ALL[path], click.Command):
        return  # test_readme names it
    takes = options_of(ALL[path]) | GLOBAL
    unknown = [w for w in rest if w.startswith("--") and w.split("=")[0] not in takes]
    assert unknown == [], f"{readme}: `poolform {line}`"


def arguments(path: tuple[str, ...]) -> list[click.Argument]:
    return [p for p in ALL[path].params if isinstance(p, click.Argument)]


ALTERNATIVES = re.compile(r"^\[[A-Z]+(?: \| (?:[A-Z]+|-))+\]")


@pytest.mark.parametrize(
    "path",
    [p for p, synopsis in sorted(reference().items()) if ALTERNATIVES.match(synopsis)],
    ids=" ".join,
)
def test_a_usage_line_names_what_a_command_takes_as_the_reference_does(
    path: tuple[str, ...],
) -> None:
    """`poolform apply [OPTIONS] [TARGET]`, beside `--target ADDR`, read as an address to
    apply; the reference says `[DIR | PLANFILE]` (validate `[DIR | FILE]`, fmt `[DIR | FILE |
    -]`, show `[PLANFILE | DIR]`)."""
    match = ALTERNATIVES.match(reference()[path])
    assert match is not None
    (argument,) = arguments(path)
    assert argument.make_metavar(click.Context(ALL[path])) == match.group(0)
