"""Typed errors and diagnostics. Every problem a user can cause carries a location.

Only the CLI prints and chooses exit codes; everything below raises these or returns
`Diagnostic`s. Rendered, each part stays on its line: a name or value quoted in a message cannot
print a line or a terminal escape of its own (reconciler/printable.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal

from reconciler.printable import one_line

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Location:
    file: str
    line: int = 0  # 1-based; 0 when only the file is known
    column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return one_line(self.file)
        return f"{one_line(self.file)}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    rule: str
    message: str
    location: Location | None = None
    suggestion: str | None = None

    def sort_key(self) -> tuple[str, int, int, str]:
        loc = self.location or Location("")
        return (loc.file, loc.line, loc.column, self.message)

    def render(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{self.severity}: {one_line(self.message)} [{self.rule}]"
        if self.suggestion:
            text += f"\n  hint: {one_line(self.suggestion)}"
        return text


class PoolformError(Exception):
    """Base of every error the CLI turns into a message and exit code 1."""

    def __init__(self, message: str, *, location: Location | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def render(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}error: {one_line(self.message)}"
        if self.hint:
            text += f"\n  hint: {one_line(self.hint)}"
        return text


class PathNotFound(PoolformError):
    """A path given on the command line names nothing. It is relative to `--chdir DIR` when
    one is given (as in Terraform), which the CLI says when the path is where poolform was
    started instead (reconciler/cli/global_options.py)."""

    def __init__(self, path: str):
        super().__init__(f"{path} does not exist")
        self.path = path


class ConfigurationError(PoolformError):
    """The configuration is invalid; carries every diagnostic found, sorted."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
        errors = [d for d in self.diagnostics if d.severity == "error"]
        super().__init__(f"{len(errors)} error(s) in the configuration")

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


@dataclass(frozen=True)
class YamlProblem(Exception):
    """A YAML-level problem found while parsing one file."""

    message: str
    line: int
    column: int
    rule: str = field(default="yaml-syntax")


class Cancelled(PoolformError):
    """The user answered no when asked to confirm: nothing was changed."""


_ADDRESS_LIKE = re.compile(r"[a-z_]+\.[A-Za-z0-9_.*-]+")


def shown_address(address: str) -> str:
    """An address given on the command line, as a message shows it: quoted when it could be
    misread (empty, spaces, not TYPE.NAME at all), as `error:  is not in the state` was."""
    return address if _ADDRESS_LIKE.fullmatch(address) else f"'{address}'"


def address_hint(address: str, known: Collection[str], listed_by: str) -> str:
    """The closest known address ("did you mean"), else what an address looks like."""
    from schemas.text import did_you_mean

    close = did_you_mean(address.strip(), known)
    if close:
        return close
    shape = f"an address is TYPE.NAME, as `{listed_by}` prints them"
    example = min(known, default="")
    return f"{shape} (e.g. {example})" if example else shape


class UnknownAddress(PoolformError):
    """An address given on the command line (`state show|rm`, `import`) that names nothing
    where it was looked for: quoted when it could be misread, with a hint saying what an
    address looks like and which one was perhaps meant."""

    def __init__(self, address: str, known: Collection[str], where: str, listed_by: str):
        super().__init__(
            f"{shown_address(address)} is not {where}",
            hint=address_hint(address, known, listed_by),
        )
        self.address = address
