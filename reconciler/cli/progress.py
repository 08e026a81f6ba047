"""Apply progress: a live bar on a terminal, plain lines in CI and pipes, JSON lines with --json.

Plain lines are what CI logs keep: one per event, and for a change still running a heartbeat
every 10 s (`machine_pool.x: still creating... 20s elapsed`, as Terraform prints), so a slow
apply never looks hung; with `CI=true` each line starts with its UTC time. On a terminal the bar
advances with each finished change and names what is in flight.

Addresses and provider messages are printed through one_line (and, for rich, with their markup
escaped): a message cannot print a line, a colour or a cursor movement of its own.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from providers.retry import SYSTEM_CLOCK, Clock
from reconciler.cli.held_signals import written_whole
from reconciler.printable import continued, one_line
from state.threads import leave_signals_to_the_main_thread

if TYPE_CHECKING:
    from rich.console import Console

VERBS = {"create": "Creating", "update": "Updating", "replace": "Replacing", "delete": "Destroying"}
DONE = {"create": "Created", "update": "Updated", "replace": "Replaced", "delete": "Destroyed"}
HEARTBEAT_SECONDS = 10.0


# The walker's answer to Ctrl-C (reconciler/apply/walker.py), shown as text only: no
# `apply --json` event (the stream ends with its `error` event, exit 130, as before).
TEXT_ONLY = ("interrupt", "interrupted")


def interrupt_line(event: dict[str, Any]) -> str:
    """What a Ctrl-C during apply got: what is still in flight, then what was done."""
    if event["type"] == "interrupted":
        left = event["failed"] + event["skipped"] + event["not_started"]
        return (
            f"Interrupted: {event['done']} done, {event['failed']} failed, {event['skipped']} "
            f"skipped, {event['not_started']} not started"
            + ("; `poolform plan` shows what is left." if left else ".")
        )
    flight = [one_line(str(a)) for a in event["in_flight"]]
    if not flight:
        return "Interrupt received: nothing new starts."
    shown = ", ".join(flight[:3]) + (f" and {len(flight) - 3} more" if len(flight) > 3 else "")
    return (
        f"Interrupt received: nothing new starts; waiting for the {len(flight)} change(s) in "
        f"flight to finish and be recorded ({shown})."
    )


class Reporter(Protocol):
    def __call__(self, event: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


def in_ci(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get("CI", "").lower() in ("1", "true", "yes")


class PlainReporter:
    """One line per event, a heartbeat for each change still running every `heartbeat`
    seconds of `clock`, and with `timestamps` each line prefixed by the UTC time. `ticking`
    runs the heartbeat on a background thread (tests call `beat()` with a fake clock)."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        clock: Clock = SYSTEM_CLOCK,
        timestamps: bool = False,
        heartbeat: float = HEARTBEAT_SECONDS,
        ticking: bool = True,
    ):
        # Resolved now, not at import: main(argv) may run many times under other stdouts.
        self.stream = stream or sys.stdout
        self.clock = clock
        self.timestamps = timestamps
        self.heartbeat = heartbeat
        self._lock = threading.Lock()
        # address -> (action, started at, heartbeats printed)
        self._running: dict[str, tuple[str, float, int]] = {}
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if ticking:
            self._ticker = threading.Thread(target=self._tick, name="heartbeat", daemon=True)
            self._ticker.start()

    def __call__(self, event: dict[str, Any]) -> None:
        kind, address = event["type"], one_line(str(event.get("address", "")))
        error = one_line(str(event.get("error", "")))
        action = str(event.get("action", ""))
        if kind == "start":
            with self._lock:
                self._running[address] = (action, self.clock.monotonic(), 0)
            line = f"{address}: {VERBS.get(action, 'Applying')}..."
        elif kind == "done":
            line = f"{address}: {DONE.get(action, 'Done')} after {event['elapsed']:.1f}s"
        elif kind == "retry":
            line = (
                f"{address}: retrying in {event['delay']:.2f}s (attempt {event['attempt']}): "
                f"{error}"
            )
        elif kind == "failed":
            said = continued(str(event.get("error", "")), "    ")
            line = f"{address}: FAILED after {event['elapsed']:.1f}s: {said}"
        elif kind == "skipped":
            because = one_line(str(event["because"]))
            line = f"{address}: skipped, it depends on {because}, which failed"
        elif kind in TEXT_ONLY:
            line = interrupt_line(event)
        else:
            return
        if kind in ("done", "failed"):
            with self._lock:
                self._running.pop(address, None)
        self._print(line)

    def beat(self) -> None:
        """Print a heartbeat for every change that has run another `heartbeat` seconds."""
        now = self.clock.monotonic()
        due: list[str] = []
        with self._lock:
            for address, (action, started, printed) in sorted(self._running.items()):
                beats = int((now - started) // self.heartbeat)
                if beats > printed:
                    self._running[address] = (action, started, beats)
                    verb = VERBS.get(action, "Applying").lower()
                    due.append(f"{address}: still {verb}... {beats * self.heartbeat:.0f}s elapsed")
        for line in due:
            self._print(line)

    def _tick(self) -> None:
        leave_signals_to_the_main_thread()
        while not self._stop.wait(1.0):
            try:
                self.beat()
            except (OSError, ValueError):  # the reader went away (a closed pipe): stop beating
                return

    def _print(self, line: str) -> None:
        if self.timestamps:
            line = f"{self.clock.now().strftime('%Y-%m-%dT%H:%M:%SZ')} {line}"
        with self._lock:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()


class JsonReporter:
    """One JSON object per line (`apply --json`), with a timestamp from `clock`."""

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.time):
        # Resolved now, not at import: main(argv) may run many times under other stdouts.
        self.stream = stream or sys.stdout
        self.clock = clock
        self._lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> None:
        if event["type"] in TEXT_ONLY:
            return
        line = json.dumps({"time": round(self.clock(), 3), **event}, sort_keys=True)
        # A Ctrl-C in the main thread (the drift and summary events) waits for the line's end:
        # a consumer reads whole lines, then the error event (held_signals.py).
        with self._lock, written_whole():
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        pass


class RichReporter:
    """A live view on a terminal: finished changes scroll above a bar that advances with each
    of them and names the changes in flight."""

    def __init__(self, total: int, console: Console | None = None):
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = console or Console()
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self.task = self.progress.add_task("[bold]Applying[/]", total=total)
        self._lock = threading.Lock()
        self._running: dict[str, str] = {}  # address (escaped) -> action, in start order
        self.progress.start()

    def __call__(self, event: dict[str, Any]) -> None:
        from rich.markup import escape

        kind, address = event["type"], escape(one_line(str(event.get("address", ""))))
        with self._lock:
            if kind == "start":
                self._running[address] = str(event.get("action", ""))
            elif kind in ("done", "failed", "skipped"):
                self._running.pop(address, None)
                self.progress.advance(self.task)
            self.progress.update(self.task, description=self._in_flight())
        if kind == "done":
            self.console.print(
                f"[green]✓[/] {address}: {DONE.get(event['action'], 'Done')} "
                f"[dim]({event['elapsed']:.1f}s)[/]"
            )
        elif kind == "failed":
            said = escape(continued(str(event.get("error", "")), "    "))
            self.console.print(f"[red]✗ {address}: {said}[/]")
        elif kind == "skipped":
            because = escape(one_line(str(event["because"])))
            self.console.print(f"[yellow]- {address}: skipped (depends on {because})[/]")
        elif kind == "retry":
            self.console.print(
                f"[dim]↻ {address}: retry {event['attempt']} in {event['delay']:.2f}s[/]"
            )
        elif kind in TEXT_ONLY:
            self.console.print(f"[yellow]{escape(interrupt_line(event))}[/]")

    def _in_flight(self) -> str:
        if not self._running:
            return "[bold]Applying[/]"
        address, action = next(iter(self._running.items()))
        more = f" and {len(self._running) - 1} more" if len(self._running) > 1 else ""
        return f"[bold]{VERBS.get(action, 'Applying')}[/] {address}{more}"

    @property
    def description(self) -> str:
        return str(self.progress.tasks[0].description)

    @property
    def completed(self) -> float:
        return float(self.progress.tasks[0].completed)

    def close(self) -> None:
        self.progress.stop()


def reporter_for(total: int, as_json: bool) -> Reporter:
    if as_json:
        return JsonReporter()
    if sys.stdout.isatty() and not in_ci():
        return RichReporter(total)
    return PlainReporter(timestamps=in_ci())
