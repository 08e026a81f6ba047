"""`apply --json` and Ctrl-C, as a program reading the event stream meets them.

- An apply refused before it started (an invalid configuration, a stale saved plan, no
  --auto-approve) printed nothing on stdout: the reader got no line at all, only stderr meant
  for people. It now gets one `error` event (the message, the exit code, an invalid
  configuration's diagnostics), following the events schema.
- Ctrl-C during an apply: the changes in flight finished and were recorded, but their `done`
  was never printed (a `start` with no end), the stream just stopped; and a Ctrl-C landing
  while the walker started a thread left that change running unwatched while the provider
  was closed under it (about one run in ten ended in a segmentation fault, exit -11). Now
  every `start` has its end, every recorded change was reported done, the stream ends with
  an `error` event (exit code 130), and the process exits 130.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.adversarial.conftest import Pf
from tests.scenario.forty import write_forty
from tests.scenario.installed import start
from tests.scenario.state_view import recorded_addresses

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "reconciler" / "apply" / "events.schema.json").read_text())


def stream(stdout: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in stdout.splitlines()]
    for event in events:
        jsonschema.validate(event, SCHEMA)
    return events


def only_error(stdout: str) -> dict[str, Any]:
    (event,) = stream(stdout)
    assert event["type"] == "error", event
    assert event["exit_code"] == 1
    return event


def test_an_invalid_configuration_is_one_error_event_with_its_diagnostics(
    pf: Pf, quick: Path
) -> None:
    (quick / "resource-pool.yaml").write_text(
        "kind: ResourcePool\nname: team-quota\ncapacity: {gpu: x}\n"
    )
    refused = pf("apply", quick, "--json", "--auto-approve")
    assert refused.returncode == 1
    event = only_error(refused.stdout)
    assert event["operation"] == "apply" and event["message"] in refused.stderr
    (diagnostic,) = [d for d in event["diagnostics"] if d["severity"] == "error"]
    assert diagnostic["file"].endswith("resource-pool.yaml") and diagnostic["line"] == 3
    assert not (quick / ".poolform").exists()  # nothing made


def test_a_stale_saved_plan_is_one_error_event(pf: Pf, quick: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "p.plan"
    assert pf("plan", quick, "-out", plan_file).returncode == 0
    assert (
        pf("apply", quick, "--auto-approve", "--target", "resource_pool.team-quota").returncode == 0
    )

    refused = pf("apply", plan_file, "--json")
    assert refused.returncode == 1
    event = only_error(refused.stdout)
    assert "nothing was applied" in event["message"] and event["diagnostics"] == []


@pytest.mark.parametrize("after", [0.0, 0.5])
def test_ctrl_c_reports_the_end_of_every_change_it_started(tmp_path: Path, after: float) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=300)  # each change still runs when the signal lands
    process = start("apply", directory, "--json", "--auto-approve")
    assert process.stdout is not None
    first = process.stdout.readline()
    time.sleep(after)
    process.send_signal(signal.SIGINT)
    rest = process.stdout.read()  # what the pipe's buffer holds past the first line too
    assert process.stderr is not None and process.wait(timeout=120) is not None
    err = process.stderr.read()

    assert process.returncode == 130, err
    events = stream(first + rest)
    started = {e["address"] for e in events if e["type"] == "start"}
    ended = {e["address"] for e in events if e["type"] in ("done", "failed")}
    done = {e["address"] for e in events if e["type"] == "done"}
    assert started and started == ended
    assert set(recorded_addresses(directory)) == done
    assert events[-1]["type"] == "error" and events[-1]["exit_code"] == 130
    assert "error: interrupted" in err and "Traceback" not in err
