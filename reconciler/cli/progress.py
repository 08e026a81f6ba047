"""Apply progress: rich live lines on a terminal, plain lines in CI, JSON lines with --json.

Addresses and provider messages are printed through one_line (and, for rich, with their markup
escaped): a message cannot print a line, a colour or a cursor movement of its own."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from reconciler.printable import one_line

VERBS = {"create": "Creating", "update": "Updating", "replace": "Replacing", "delete": "Destroying"}
DONE = {"create": "Created", "update": "Updated", "replace": "Replaced", "delete": "Destroyed"}


class Reporter(Protocol):
    def __call__(self, event: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class PlainReporter:
    """One line per event; what CI logs and pipes see."""

    def __init__(self, stream: TextIO | None = None):
        # Resolved now, not at import: main(argv) may run many times under other stdouts.
        self.stream = stream or sys.stdout
        self._lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> None:
        kind, address = event["type"], one_line(str(event.get("address", "")))
        error = one_line(str(event.get("error", "")))
        if kind == "start":
            line = f"{address}: {VERBS.get(event['action'], 'Applying')}..."
        elif kind == "done":
            line = f"{address}: {DONE.get(event['action'], 'Done')} after {event['elapsed']:.1f}s"
        elif kind == "retry":
            line = f"{address}: retrying in {event['delay']:.2f}s (attempt {event['attempt']}): {error}"
        elif kind == "failed":
            line = f"{address}: FAILED after {event['elapsed']:.1f}s: {error}"
        elif kind == "skipped":
            because = one_line(str(event["because"]))
            line = f"{address}: skipped, it depends on {because}, which failed"
        else:
            return
        with self._lock:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        pass


class JsonReporter:
    """One JSON object per line (`apply --json`), with a timestamp from `clock`."""

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.time):
        # Resolved now, not at import: main(argv) may run many times under other stdouts.
        self.stream = stream or sys.stdout
        self.clock = clock
        self._lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> None:
        with self._lock:
            print(
                json.dumps({"time": round(self.clock(), 3), **event}, sort_keys=True),
                file=self.stream,
                flush=True,
            )

    def close(self) -> None:
        pass


class RichReporter:
    """A live view on a terminal: finished changes scroll above a running summary."""

    def __init__(self, total: int):
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console()
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self.task = self.progress.add_task("Applying", total=total)
        self.progress.start()

    def __call__(self, event: dict[str, Any]) -> None:
        from rich.markup import escape

        kind, address = event["type"], escape(one_line(str(event.get("address", ""))))
        error = escape(one_line(str(event.get("error", ""))))
        if kind == "done":
            self.console.print(
                f"[green]✓[/] {address}: {DONE.get(event['action'], 'Done')} "
                f"[dim]({event['elapsed']:.1f}s)[/]"
            )
            self.progress.advance(self.task)
        elif kind == "failed":
            self.console.print(f"[red]✗ {address}: {error}[/]")
            self.progress.advance(self.task)
        elif kind == "skipped":
            because = escape(one_line(str(event["because"])))
            self.console.print(f"[yellow]- {address}: skipped (depends on {because})[/]")
            self.progress.advance(self.task)
        elif kind == "retry":
            self.console.print(
                f"[dim]↻ {address}: retry {event['attempt']} in {event['delay']:.2f}s[/]"
            )

    def close(self) -> None:
        self.progress.stop()


def reporter_for(total: int, as_json: bool) -> Reporter:
    import os

    if as_json:
        return JsonReporter()
    if sys.stdout.isatty() and os.environ.get("CI", "").lower() not in ("1", "true"):
        return RichReporter(total)
    return PlainReporter()
