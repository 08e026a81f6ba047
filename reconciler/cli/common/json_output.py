"""`--json`'s one rule: stdout holds what a tool can parse, a document or a stream of events,
also when the command ends on an error."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Sequence
from typing import Any

import click

from reconciler.cli.common.exit_codes import diagnostic_json, explain
from reconciler.cli.held_signals import hold_signals
from reconciler.errors import (
    ConfigurationError,
)

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
