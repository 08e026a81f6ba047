"""Apply progress as CI logs and terminals show it (issue 12, item 8; issue 14, item 2)."""

from __future__ import annotations

import io
import threading

import pytest
from rich.console import Console

from reconciler.cli.apply_commands import ApplyView
from reconciler.cli.progress import PlainReporter, RichReporter, in_ci
from tests.fakes import FakeClock

MACHINE = "machine_pool.gpu.machine_type.h100"


def start(address: str, action: str = "create") -> dict[str, object]:
    return {"type": "start", "address": address, "action": action}


def done(address: str, action: str = "create", elapsed: float = 1.0) -> dict[str, object]:
    return {"type": "done", "address": address, "action": action, "elapsed": elapsed}


def plain(clock: FakeClock, **options: object) -> tuple[PlainReporter, io.StringIO]:
    out = io.StringIO()
    return PlainReporter(out, clock=clock, ticking=False, **options), out  # type: ignore[arg-type]


def test_a_change_still_running_prints_a_heartbeat_every_ten_seconds() -> None:
    clock = FakeClock()
    reporter, out = plain(clock)
    reporter(start(MACHINE))
    reporter(start("resource_pool.quota", "update"))
    clock.sleep(9.9)
    reporter.beat()
    reporter(done("resource_pool.quota", "update"))
    clock.sleep(0.2)  # 10.1 s
    reporter.beat()
    reporter.beat()  # nothing new to say within the same ten seconds
    clock.sleep(10)
    reporter.beat()
    reporter(done(MACHINE, elapsed=20.5))
    clock.sleep(30)
    reporter.beat()  # finished changes fall silent
    assert out.getvalue().splitlines() == [
        f"{MACHINE}: Creating...",
        "resource_pool.quota: Updating...",
        "resource_pool.quota: Updated after 1.0s",
        f"{MACHINE}: still creating... 10s elapsed",
        f"{MACHINE}: still creating... 20s elapsed",
        f"{MACHINE}: Created after 20.5s",
    ]


def test_a_slow_check_after_a_long_wait_says_the_time_actually_elapsed() -> None:
    clock = FakeClock()
    reporter, out = plain(clock)
    reporter(start(MACHINE, "delete"))
    clock.sleep(35)
    reporter.beat()
    assert out.getvalue().splitlines()[-1] == f"{MACHINE}: still destroying... 30s elapsed"


def test_ci_lines_carry_a_utc_timestamp() -> None:
    clock = FakeClock(start=0)
    reporter, out = plain(clock, timestamps=True)
    reporter(start(MACHINE))
    clock.sleep(12)
    reporter.beat()
    assert out.getvalue().splitlines() == [
        f"2026-01-01T00:00:00Z {MACHINE}: Creating...",
        f"2026-01-01T00:00:12Z {MACHINE}: still creating... 10s elapsed",
    ]


def test_the_heartbeat_thread_stops_on_close() -> None:
    reporter = PlainReporter(io.StringIO(), clock=FakeClock())
    assert reporter._ticker is not None and reporter._ticker.is_alive()
    reporter.close()
    assert not reporter._ticker.is_alive()


def test_ci_is_recognised_as_ci_tools_set_it() -> None:
    assert in_ci({"CI": "true"}) and in_ci({"CI": "1"}) and in_ci({"CI": "TRUE"})
    assert not in_ci({}) and not in_ci({"CI": "false"}) and not in_ci({"CI": ""})


def test_the_terminal_bar_advances_per_finished_change_and_names_what_runs() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    reporter = RichReporter(3, console=console)
    try:
        reporter(start(MACHINE))
        assert reporter.completed == 0
        assert reporter.description == f"[bold]Creating[/] {MACHINE}"
        reporter(start("resource_pool.quota", "update"))
        assert reporter.description == f"[bold]Creating[/] {MACHINE} and 1 more"
        reporter(done(MACHINE))
        assert reporter.completed == 1
        assert reporter.description == "[bold]Updating[/] resource_pool.quota"
        reporter({"type": "failed", "address": "resource_pool.quota", "action": "update",
                  "elapsed": 1.0, "error": "quota exceeded"})  # fmt: skip
        reporter({"type": "skipped", "address": "subject_policy.team", "because": "x"})
        assert reporter.completed == 3
        assert reporter.description == "[bold]Applying[/]"
    finally:
        reporter.close()
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert f"{MACHINE}: Created" in printed and "quota exceeded" in printed


def test_markup_in_an_address_is_shown_not_obeyed() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    reporter = RichReporter(1, console=console)
    try:
        reporter(start("resource_pool.[red]x[/red]"))
        assert reporter.description == "[bold]Creating[/] resource_pool.\\[red]x\\[/red]"
    finally:
        reporter.close()


def test_changes_reporting_at_once_share_one_reporter_and_all_stop(
    capsys: pytest.CaptureFixture[str],
) -> None:
    view = ApplyView(as_json=False)
    ready = threading.Barrier(16)

    def report(n: int) -> None:
        ready.wait()
        view.event(start(f"resource_pool.p{n}"))

    threads = [threading.Thread(target=report, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    view.close()
    assert not [t for t in threading.enumerate() if t.name == "heartbeat"]
    assert len(capsys.readouterr().out.splitlines()) == 16
