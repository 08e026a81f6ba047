"""The one mapping from errors to messages and exit codes.

Exit codes: 0 success, 1 error (usage errors included: 2 is reserved), 2 changes present or
drift where a command says so, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM). An error is one message on stderr;
`--debug` adds the traceback.
"""

from __future__ import annotations

import errno
import traceback
from typing import Any

import click

from reconciler.cli.global_options import relative_to_chdir_hint
from reconciler.cli.stdout_guard import OutputError
from reconciler.errors import (
    Cancelled,
    Diagnostic,
    Location,
    PathNotFound,
    PoolformError,
)
from reconciler.printable import continued, one_line, printable

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CHANGES = 2  # plan --detailed-exitcode: changes present; drift: drift found
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_TERMINATED = 143  # 128 + SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job cancelled, a container stopped), raised by the handler main.py
    installs: a command ends on it exactly as on Ctrl-C, but exits 128 + SIGTERM, as a shell
    reports a process SIGTERM ended."""


# The optional dependencies (pyproject's extras) by the top-level module a missing one names.
EXTRAS = {"boto3": "aws", "botocore": "aws", "google": "gcp", "psycopg": "postgres"}


def missing_extra(error: ModuleNotFoundError) -> str | None:
    """What to install when a cloud SDK or driver is missing, or None for any other module."""
    module = (error.name or "").split(".", 1)[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return None
    from providers.install import install_command

    return f"{error.name} is not installed: run `{install_command(extra)}`"


def _interruption(error: BaseException) -> KeyboardInterrupt | None:
    """Ctrl-C (or SIGTERM), also when click turned it into Abort on the way up."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _interrupted(error: BaseException) -> bool:
    return _interruption(error) is not None


def exit_code_for(error: BaseException, *, debug: bool) -> int:
    """Report `error` on stderr the way a user should see it, and the exit code it means."""
    if isinstance(error, click.exceptions.Exit):
        return error.exit_code
    if (
        debug
        and not _interrupted(error)
        and not isinstance(error, click.ClickException | click.exceptions.Abort)
    ):
        traceback.print_exception(error)
    if isinstance(error, click.ClickException):
        error.show()  # with the usage line that helps
        return EXIT_ERROR
    code, text = explain(error)
    click.echo(text, err=True)
    return code


def explain(error: BaseException) -> tuple[int, str]:
    """The exit code `error` means and the text that reports it (one line, or a few: a hint,
    every diagnostic of a configuration), as stderr and `apply --json`'s error event show it."""
    interruption = _interruption(error)
    if interruption is not None:
        # The state lock is released and every change already started has finished and been
        # recorded by the time the exception reaches here.
        if isinstance(interruption, Terminated):
            return EXIT_TERMINATED, "error: interrupted (terminated by SIGTERM)"
        return EXIT_INTERRUPTED, "error: interrupted"
    if isinstance(error, OutputError):
        return EXIT_ERROR, _output_error(error)
    if isinstance(error, Cancelled):  # the user said no: not an error of theirs or ours
        return EXIT_ERROR, f"{error.message}."
    if isinstance(error, PathNotFound) and error.hint is None:
        error.hint = relative_to_chdir_hint(error.path)
    if isinstance(error, PoolformError):
        return EXIT_ERROR, error.render()
    if isinstance(error, ModuleNotFoundError) and missing_extra(error) is not None:
        return EXIT_ERROR, f"error: {missing_extra(error)}"
    if isinstance(error, click.exceptions.Abort):
        return EXIT_ERROR, "error: aborted"
    if isinstance(error, click.ClickException):
        return EXIT_ERROR, printable(f"error: {error.format_message()}")
    # Translated here, imported only now: neither is needed to start the CLI.
    from providers.protocol import ProviderError
    from state.errors import StateError

    if isinstance(error, StateError | ProviderError):
        return EXIT_ERROR, _one_diagnostic(f"error: {error}")
    return EXIT_ERROR, (
        f"internal error: {type(error).__name__}: {one_line(str(error))} "
        "(run with --debug for details)"
    )


def _one_diagnostic(text: str) -> str:
    """A provider's or a state backend's error as one diagnostic: the text those layers pass on
    from an SDK or a server is folded into one line where it is translated; a line break left
    (a local `setup`'s last log lines) goes on an indented line, so no text of theirs can
    print an `error:` or `  hint:` line that looks like poolform's own."""
    return continued(text, "    ")


def _output_error(error: OutputError) -> str:
    if error.errno == errno.EBADF:
        return (
            "error: standard output is closed, so nothing could be printed\n"
            "  hint: to discard the output, send it to /dev/null (`>/dev/null`) rather than "
            "closing it (`>&-`)"
        )
    return printable(f"error: cannot write to standard output: {error.strerror}")


def diagnostic_json(diagnostic: Diagnostic) -> dict[str, Any]:
    """One diagnostic as `validate --json` (and `apply --json`'s error event) print it."""
    location = diagnostic.location or Location("")
    return {
        "file": location.file or None,
        "line": location.line or None,
        "column": location.column or None,
        "severity": diagnostic.severity,
        "rule": diagnostic.rule,
        "message": diagnostic.message,
        "suggestion": diagnostic.suggestion,
    }
