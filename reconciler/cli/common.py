"""What every command module shares: argument and option definitions, the terminal prompt,
and the one mapping from errors to messages and exit codes.

Exit codes: 0 success, 1 error (usage errors included: 2 is reserved), 2 changes present or
drift where a command says so, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM). An error is one message on stderr;
`--debug` adds the traceback.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from reconciler.cli.global_options import relative_to_chdir_hint
from reconciler.cli.held_signals import hold_signals
from reconciler.cli.stdout_guard import OutputError
from reconciler.errors import (
    Cancelled,
    ConfigurationError,
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


DIR = click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)

lock_timeout_option = click.option(
    "--lock-timeout",
    default="0s",
    show_default=True,
    metavar="DURATION",
    help="How long to wait for the state lock held by another run (e.g. 30s, 2m, 1m30s).",
)

lock_option = click.option(
    "--lock/--no-lock",
    default=True,
    show_default=True,
    help="Hold the state lock while reading state. --no-lock (Terraform's -lock=false) reads "
    "without it, for credentials that may only read: a plan saved then is still refused by "
    "apply if the state has moved since.",
)


def utf8_text(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A click callback for a name or ID argument (not a path): bytes that are not UTF-8,
    which the OS hands over as they are, can name nothing poolform keeps; say so, exit 1."""
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise click.BadParameter(
                f"{printable(value)} is not UTF-8 text, so it names nothing", param=param
            ) from None
    return value


def warn_damaged(damaged: Mapping[str, str]) -> None:
    """Name each damaged record on stderr with the way out. Its address is read from the
    damaged store itself, so it is escaped: a record edited to hold a terminal sequence or a
    newline must not clear the screen or forge a line."""
    for address, why in damaged.items():
        shown = one_line(address)
        click.echo(
            f"warning: the record of {shown} is damaged ({one_line(why)}); it is left out. "
            f"`poolform state rm {shown}` forgets it (then `poolform import` takes the "
            "resource back)",
            err=True,
        )


def parse_timeout(text: str) -> float:
    """A `--lock-timeout`: a duration as the configuration takes them (`30s`, `2m`, `1m30s`),
    or a bare number of seconds, in ASCII digits (numbers.py)."""
    from reconciler.cli.numbers import ascii_decimal
    from schemas.quantities import parse_duration

    try:
        return float(parse_duration(float(text) if ascii_decimal(text) else text))
    except ValueError as exc:
        raise PoolformError(f"--lock-timeout: {exc}") from None


def lock_wait(lock_timeout: str, lock: bool) -> float:
    """A reading command's `--lock-timeout`, parsed. With `--no-lock` no lock is waited for, so
    a timeout given with it is one the user believes protects the read (a CI step copied from
    an apply's): say it does nothing rather than ignore it silently."""
    wait = parse_timeout(lock_timeout)
    source = click.get_current_context().get_parameter_source("lock_timeout")
    if not lock and source is not click.core.ParameterSource.DEFAULT:
        click.echo(
            f"warning: --lock-timeout {one_line(lock_timeout)} does nothing with --no-lock "
            "(Terraform's -lock=false): no lock is taken, so none is waited for",
            err=True,
        )
    return wait


NO_TERMINAL_HINTS = {
    "apply": "review with `poolform plan -out FILE`, then apply exactly that plan with "
    "`poolform apply FILE` (or pass --auto-approve)",
    "destroy": "review with `poolform plan --destroy -out FILE`, then apply exactly that plan "
    "with `poolform apply FILE` (or pass --auto-approve)",
    "apply --refresh-only": "review with `poolform plan --refresh-only`, then pass --auto-approve",
}


def standard_input_bytes(limit: int) -> bytes:
    """At most `limit` bytes of standard input (`fmt -`, `state push -`). A process started
    with it closed (`<&-`, some daemons) has none: said so, not "internal error"."""
    if sys.stdin is None:
        raise PoolformError("standard input is closed, so `-` has nothing to read")
    return sys.stdin.buffer.read(limit)


def terminal_confirm(auto_approve: bool, command: str = "apply") -> Callable[[str], bool]:
    """The `confirm` a use case asks: yes with --auto-approve, else only a typed `yes` on a
    terminal (anything else, `y` included, cancels). Without a terminal there is no one to
    ask: an error that says how `command` is run unattended."""

    def confirm(question: str) -> bool:
        if auto_approve:
            return True
        if sys.stdin is None or not sys.stdin.isatty():  # None: started with stdin closed
            raise PoolformError(
                f"`poolform {command}` needs confirmation to {question}, and there is no "
                "terminal to ask on",
                hint=NO_TERMINAL_HINTS.get(command, "pass --auto-approve"),
            )
        answer = click.prompt(
            f"\nDo you want to {question}? Only 'yes' will be accepted",
            default="",
            show_default=False,
        ).strip()
        if answer != "yes" and answer.lower() in ("y", "ye", "yes", "yeah", "ok"):
            click.echo(f"Only 'yes' is accepted, not {answer!r}.", err=True)
        return bool(answer == "yes")

    return confirm


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


ERROR_FORMAT_VERSION = "1.0"


# The commands that take `--json`, and what their stdout is then: one document, or a stream of
# events (one JSON object a line: reconciler/apply/events.schema.json). Checked against the
# command line's own options by tests/adversarial/test_json_contract24.py.
JSON_DOCUMENT_COMMANDS = frozenset(
    {
        "validate",
        "plan",
        "show",
        "drift",
        "version",
        "jobs submit",
        "jobs list",
        "jobs show",
        "pools status",
    }
)
JSON_EVENT_COMMANDS = frozenset({"apply", "destroy"})

_document_begun = False  # set once a command starts printing its --json document


def echo_json_document(text: str, *, nl: bool = True) -> None:
    """Print (part of) a `--json` command's document on stdout. Once any of it is out, an
    error that follows cannot be told as a second document (a rejected `jobs submit` printed
    its jobs, and their status says it): `tell_json_error` then prints nothing more."""
    global _document_begun
    _document_begun = True
    hold_signals()  # until the command ends (main.py): the document is written whole
    click.echo(text, nl=nl)


def end_json_stream(event: dict[str, Any]) -> None:
    """Print the last event of `apply --json` (its summary): nothing follows it, not even an
    error event for a Ctrl-C that lands while or after it is written (held till the command
    ends, which it then ends as interrupted, exit 130)."""
    from reconciler.cli.progress import JsonReporter

    global _document_begun
    _document_begun = True
    hold_signals()
    JsonReporter()(event)


def forget_json_output() -> None:
    """A new command line (main() may run many times in one process) has printed nothing."""
    global _document_begun
    _document_begun = False


def tell_json_error(args: Sequence[str], error: BaseException) -> None:
    """The one rule of `--json`: a command line with `--json` (or `-json`; `validate --format
    json`) that ends on an error prints on stdout what its consumer can parse. A one-document
    command prints the error document (reconciler/cli/error.schema.json) unless its own
    document was begun; `apply` and `destroy` end their stream with one `error` event. It holds
    for every error, wherever it arose: a command line click refused (unknown option, bad
    value, missing argument; an unknown command, or one without --json: the error document
    with no operation), a Terraform spelling refused, Ctrl-C while starting, and any error of
    the command itself. Called at the boundary (main.py, entry.py), which still
    prints the error on stderr and chooses the exit code."""
    if isinstance(error, click.exceptions.Exit) or _document_begun:
        return
    from reconciler.cli.spellings import command_named

    options = list(args[: args.index("--")] if "--" in args else args)
    command = command_named(options)
    if not _asks_json(command or "", options):
        return
    refresh_only = "--refresh-only" in options or "-refresh-only" in options
    # stdout may be gone (a closed pipe): stderr still says it
    with contextlib.suppress(OSError, ValueError):
        if command in JSON_EVENT_COMMANDS:
            from reconciler.cli.progress import JsonReporter  # the stream's own line format

            JsonReporter()(error_event("refresh-only" if refresh_only else command, error))
            return
        operation: str | None = None  # no command that takes --json: a misspelt or unknown
        if command in JSON_DOCUMENT_COMMANDS:  # one, none, or one without --json
            operation = f"{command} --refresh-only" if refresh_only else command
        document = error_document(operation, error)
        click.echo(json.dumps(document, indent=2, sort_keys=True))


def _asks_json(command: str, options: list[str]) -> bool:
    if "--json" in options or "-json" in options:
        return True
    if command != "validate":
        return False
    pairs = itertools.pairwise(options)
    return "--format=json" in options or ("--format", "json") in pairs


EVENTS_FORMAT_VERSION = "1.0"


def error_event(operation: str, error: BaseException) -> dict[str, Any]:
    """The last JSON line of `apply --json` (`destroy`, `apply --refresh-only`) that stopped
    on `error`, in place of the summary: the text stderr shows, the exit code, and a
    configuration's diagnostics as `validate --json` prints them."""
    code, text = explain(error)
    diagnostics = error.diagnostics if isinstance(error, ConfigurationError) else []
    return {
        "type": "error",
        "format_version": EVENTS_FORMAT_VERSION,
        "operation": operation,
        "message": text,
        "exit_code": code,
        "diagnostics": [diagnostic_json(d) for d in diagnostics],
    }


def error_document(operation: str | None, error: BaseException) -> dict[str, Any]:
    code, text = explain(error)
    diagnostics = error.diagnostics if isinstance(error, ConfigurationError) else []
    return {
        "format_version": ERROR_FORMAT_VERSION,
        "operation": operation,
        "error": {
            "message": text,
            "exit_code": code,
            "diagnostics": [diagnostic_json(d) for d in diagnostics],
        },
    }
