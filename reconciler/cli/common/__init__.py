"""What every command module shares: argument and option definitions and the terminal prompt
(options.py), the one mapping from errors to messages and exit codes (exit_codes.py), and
`--json`'s output, a document or a stream of events, errors included (json_output.py)."""

from __future__ import annotations

from reconciler.cli.common.exit_codes import (
    EXIT_CHANGES,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXTRAS,
    Terminated,
    diagnostic_json,
    exit_code_for,
    explain,
    missing_extra,
)
from reconciler.cli.common.json_output import (
    ERROR_FORMAT_VERSION,
    EVENTS_FORMAT_VERSION,
    JSON_DOCUMENT_COMMANDS,
    JSON_EVENT_COMMANDS,
    echo_json_document,
    end_json_stream,
    error_document,
    error_event,
    forget_json_output,
    tell_json_error,
)
from reconciler.cli.common.options import (
    DIR,
    NO_TERMINAL_HINTS,
    lock_option,
    lock_timeout_option,
    lock_wait,
    parse_timeout,
    standard_input_bytes,
    terminal_confirm,
    utf8_text,
    warn_damaged,
)

__all__ = [
    "DIR",
    "ERROR_FORMAT_VERSION",
    "EVENTS_FORMAT_VERSION",
    "EXIT_CHANGES",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXTRAS",
    "JSON_DOCUMENT_COMMANDS",
    "JSON_EVENT_COMMANDS",
    "NO_TERMINAL_HINTS",
    "Terminated",
    "diagnostic_json",
    "echo_json_document",
    "end_json_stream",
    "error_document",
    "error_event",
    "exit_code_for",
    "explain",
    "forget_json_output",
    "lock_option",
    "lock_timeout_option",
    "lock_wait",
    "missing_extra",
    "parse_timeout",
    "standard_input_bytes",
    "tell_json_error",
    "terminal_confirm",
    "utf8_text",
    "warn_damaged",
]
