"""SIGTERM during `apply --json`: what a cancelled CI job (GitLab, a runner's timeout) or a
stopped container sends. Python's default ended the process at once: the changes in flight
were made but never recorded nor reported (a `start` with no end, no `error` event), and the
state lock was left for the next command to take over. SIGTERM now ends apply as Ctrl-C does:
every change started is finished, recorded and reported, the stream ends with an `error`
event, exit 143 (128 + SIGTERM; Ctrl-C exits 130), and the lock is released."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.adversarial.test_apply_json_errors6 import stream
from tests.scenario.forty import write_forty
from tests.scenario.installed import poolform, start
from tests.scenario.state_view import recorded_addresses


def test_sigterm_ends_apply_as_ctrl_c_does(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=300)  # each change still runs when the signal lands
    process = start("apply", directory, "--json", "--auto-approve")
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    rest = process.stdout.read()
    assert process.wait(timeout=120) == 143, process.stderr.read()
    err = process.stderr.read()

    events = stream(first + rest)
    started = {e["address"] for e in events if e["type"] == "start"}
    done = {e["address"] for e in events if e["type"] == "done"}
    assert started and started == {e["address"] for e in events if e["type"] in ("done", "failed")}
    assert set(recorded_addresses(directory)) == done
    assert events[-1]["type"] == "error" and events[-1]["exit_code"] == 143
    assert "error: interrupted" in err and "Traceback" not in err
    after = poolform("plan", directory)
    assert after.returncode == 0, after.stderr
    assert "Took over the state lock" not in after.stderr  # released, not left behind
