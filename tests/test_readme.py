"""The READMEs tell the truth about the CLI (issue 12, items 13 and 15).

- The command reference in README.md and the CLI's own help agree both ways: every command
  and option in the reference exists, every command the CLI has is in the reference, and every
  option a command shows in its `--help` is in that command's line.
- Every `poolform <command>` in README.md and examples/**/README.md exists.
- No README points outside the project (a sibling checkout, the issue tracker, notes).
- The README's test command is the one `.ci/run` runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from reconciler.cli.main import cli
from tests.conftest import ROOT

READMES = [ROOT / "README.md", *sorted((ROOT / "examples").rglob("README.md"))]
SHARED = {"--chdir", "--no-color", "--help", "-h"}  # every command takes them
OPTION = re.compile(r"(?<![\w-])--?[a-z][a-z-]*")


def commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> dict[tuple[str, ...], click.Command]:
    """Every visible command by its words, groups included."""
    found: dict[tuple[str, ...], click.Command] = {}
    for name, command in group.commands.items():
        if command.hidden:
            continue
        found[(*path, name)] = command
        if isinstance(command, click.Group):
            found.update(commands(command, (*path, name)))
    return found


ALL = commands(cli)
LEAVES = {path for path, command in ALL.items() if not isinstance(command, click.Group)}


def options_of(command: click.Command) -> set[str]:
    return {
        opt
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for opt in (*param.opts, *param.secondary_opts)
    }


def reference() -> dict[tuple[str, ...], str]:
    """The README's command reference: each command's words and its synopsis (comments cut)."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Command reference", 1)[1]
    block = section.split("```", 2)[1]
    entries: dict[tuple[str, ...], str] = {}
    current: tuple[str, ...] | None = None
    for line in block.splitlines():
        synopsis = line.split(" #", 1)[0].rstrip()
        if line.startswith("poolform "):
            words = synopsis.split()[1:]
            path: tuple[str, ...] = ()
            while words and (*path, words[0]) in ALL:
                path, words = (*path, words[0]), words[1:]
            assert path, f"the reference names no command: {line!r}"
            current = path
            entries[current] = " ".join(words)
        elif synopsis.strip() and current is not None:
            entries[current] += " " + synopsis.strip()
    return entries


def test_every_command_of_the_cli_is_in_the_reference() -> None:
    assert sorted(LEAVES) == sorted(reference())


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_a_command_s_line_and_its_help_list_the_same_options(path: tuple[str, ...]) -> None:
    synopsis = reference().get(path, "")
    written = set(OPTION.findall(synopsis))
    shown = options_of(ALL[path])
    assert written - shown == set(), f"in the reference, not in `poolform {' '.join(path)}`"
    # One spelling of each option is enough (--out or -out; --refresh/--no-refresh both).
    missing = {
        min(param.opts, key=len)
        for param in ALL[path].params
        if isinstance(param, click.Option) and not param.hidden
        if not {*param.opts, *param.secondary_opts} & (written | SHARED)
    }
    assert missing == set(), f"`poolform {' '.join(path)}` has options the reference lacks"


def test_every_option_has_help_and_every_command_a_whole_summary() -> None:
    for path, command in {(): cli, **ALL}.items():
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert param.help, f"`poolform {' '.join(path)}` {param.opts} has no help"
        assert command.short_help or command.help, path
        summary = command.get_short_help_str(limit=45)
        assert not summary.endswith("..."), f"`poolform {' '.join(path)}`: {summary!r}"


def code_in(markdown: str) -> list[str]:
    """The code of a Markdown text: fenced blocks and inline spans."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", markdown, flags=re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", markdown, flags=re.S | re.M)
    return fenced + re.findall(r"`([^`\n]+)`", prose)


# `poolform ...` where a command starts: a line (after an optional `$ `), `$(`, a pipe, `;`, `&&`.
MENTION = re.compile(r"(?:^\s*(?:\$\s+)?|\$\(|[|;&]\s*)poolform((?:\s+[a-z][a-z-]*)+)", re.M)


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_a_readme_shows_exists(readme: Path) -> None:
    for code in code_in(readme.read_text()):
        for match in MENTION.finditer(code):
            words = match.group(1).split()
            path: tuple[str, ...] = ()
            while words and (*path, words[0]) in ALL:
                path, words = (*path, words[0]), words[1:]
            shown = f"{readme.relative_to(ROOT)}: `poolform {match.group(1).strip()}`"
            assert path, f"{shown} is no command"
            assert path in LEAVES, f"{shown} names no command of `poolform {' '.join(path)}`"


OUTSIDE = [
    r"\.\./shared",
    r"FIELD-NOTES",
    r"DESIGN\.md",
    r"/work/",
    r"`issues\b",
    r"\bopen issues?\b",
    r"\bissue #?\d+",
    r"\bseeds/",
]


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_readme_points_outside_the_project(readme: Path) -> None:
    text = readme.read_text()
    for pattern in OUTSIDE:
        assert not re.search(pattern, text, flags=re.I), f"{readme}: {pattern}"
    for target in re.findall(r"\]\(([^)#\s]+)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        resolved = (readme.parent / target).resolve()
        assert resolved.is_relative_to(ROOT) and resolved.exists(), f"{readme}: {target}"


def test_the_readme_s_test_command_is_the_one_ci_runs() -> None:
    """`.ci/run` runs exactly the README's test command: a newcomer who runs it runs what CI
    runs (CI only adds the services and the checks after it)."""
    section = (ROOT / "README.md").read_text().split("## Run the tests", 1)[1]
    (command,) = section.split("```", 2)[1].strip().splitlines()
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert command in ci, f".ci/run does not run the README's test command {command!r}"
