"""The jobs, pools and scheduler commands as a user meets them: bad job files, rejections,
cancelling, following logs, the grace period, one scheduler at a time, and the JSON contract."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import jsonschema

from tests.scenario.installed import poolform_command, start
from tests.scheduler.scenario import SCHEMA, cycle_until, ok, statuses, wait_until

CONFIG = """kind: Cluster
name: cmds
provider: local
default_aux_pool: w
---
kind: WorkerPool
name: w
pool:
  workers: 1
resources:
  instance_type: c5.xlarge
---
kind: ResourcePool
name: licenses
capacity:
  seat: 1
"""


def _applied(tmp_path: Path) -> Path:
    directory = tmp_path / "cmds"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    ok("apply", directory, "--auto-approve")
    return directory


def _job(tmp_path: Path, name: str, run: str, extra: str = "") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"kind: Job\nname: {name}\n{extra}run: |\n  {run}\n")
    return path


def test_bad_job_files_say_where_and_record_nothing(run, tmp_path: Path) -> None:
    directory = _applied(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Job\nname: bad\nresources:\n  gpus: 1\nrun: echo\n")
    result = run("jobs", "submit", bad, "--chdir", directory)
    assert result.code == 1
    assert "bad.yaml:4:3: error: unknown field `gpus` in JobResources" in result.err
    assert "did you mean `gpu`?" in result.err
    setup = _job(tmp_path, "setup", "echo", "setup: pip install x\n")
    result = run("jobs", "submit", setup, "--chdir", directory)
    assert result.code == 1 and "put it in the pool's setup" in result.err
    assert json.loads(run("jobs", "list", "--json", "--chdir", directory).out) == {"jobs": []}


def test_a_gpu_job_on_a_cpu_worker_pool_is_rejected_and_recorded(run, tmp_path: Path) -> None:
    directory = _applied(tmp_path)
    gpu = _job(tmp_path, "gpu", "nvidia-smi", "resources:\n  accelerators: H100:1\n")
    result = run("jobs", "submit", gpu, "--pool", "w", "--json", "--chdir", directory)
    assert result.code == 1
    printed = json.loads(result.out)
    jsonschema.validate(printed, SCHEMA)
    assert printed["jobs"][0]["status"] == "rejected"
    assert "gpu 1 needed, one worker has 0" not in result.err  # a c5.xlarge has no GPU at all
    assert "pool w: gpu 1 needed, the pool has none" in result.err
    listed = json.loads(
        run("jobs", "list", "--status", "rejected", "--json", "--chdir", directory).out
    )
    assert listed["jobs"][0]["reason"]["code"] == "infeasible"
    unknown = run("jobs", "submit", gpu, "--pool", "ww", "--chdir", directory)
    assert unknown.code == 1 and "no pool named ww is applied (did you mean `w`?)" in unknown.err


def test_cancel_queued_at_once_running_after_sigterm_and_a_whole_pool(tmp_path: Path) -> None:
    directory = _applied(tmp_path)
    forever = _job(tmp_path, "forever", "sleep 600")
    ids = [j["id"] for j in json.loads(ok("jobs", "submit", forever, "--num-jobs", "3",
                                          "--json", "--chdir", directory))["jobs"]]  # fmt: skip
    cycle_until(directory, "one runs", lambda: statuses(directory)[ids[0]] == "running")
    assert "Cancelled 1 queued job(s): 3" in ok("jobs", "cancel", ids[2], "--chdir", directory)
    assert statuses(directory)[ids[2]] == "cancelled"
    assert "Stopping 1 running job(s)" in ok("jobs", "cancel", "--pool", "w", "--chdir", directory)
    assert statuses(directory)[ids[1]] == "cancelled"  # queued: at once
    cycle_until(
        directory, "the running one ends", lambda: statuses(directory)[ids[0]] == "cancelled"
    )
    again = ok("jobs", "cancel", ids[0], "--chdir", directory)
    assert "already ended" in again


def test_a_job_that_ignores_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    directory = _applied(tmp_path)
    stubborn = _job(tmp_path, "stubborn", "trap '' TERM; while true; do sleep 0.05; done")
    [job] = json.loads(ok("jobs", "submit", stubborn, "--json", "--chdir", directory))["jobs"]
    cycle_until(directory, "it runs", lambda: statuses(directory)[job["id"]] == "running")
    ok("jobs", "cancel", job["id"], "--grace", "0s", "--chdir", directory)
    cycle_until(directory, "it is killed", lambda: statuses(directory)[job["id"]] == "cancelled")
    story = json.loads(ok("jobs", "show", job["id"], "--json", "--chdir", directory))
    assert story["status"] == "cancelled"


def test_logs_follow_streams_until_the_job_ends(tmp_path: Path) -> None:
    directory = _applied(tmp_path)
    release = tmp_path / "release"
    talker = _job(tmp_path, "talker",
                  f"echo first; while [ ! -e {release} ]; do sleep 0.05; done; echo last")  # fmt: skip
    [job] = json.loads(ok("jobs", "submit", talker, "--json", "--chdir", directory))["jobs"]
    cycle_until(directory, "it runs", lambda: statuses(directory)[job["id"]] == "running")
    follower = subprocess.Popen(
        [*poolform_command(), "jobs", "logs", str(job["id"]), "--follow", "--chdir", str(directory)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert follower.stdout is not None
    assert follower.stdout.readline() == "first\n"  # streamed while the job still runs
    release.touch()
    cycle_until(directory, "it ends", lambda: statuses(directory)[job["id"]] == "succeeded")
    rest, _ = follower.communicate(timeout=60)
    assert rest == "last\n" and follower.returncode == 0


def test_one_scheduler_at_a_time(tmp_path: Path) -> None:
    directory = _applied(tmp_path)
    loop = start("scheduler", "run", "--interval", "0.05", "--chdir", directory)
    try:
        lock = directory / ".poolform" / "scheduler.lock"
        wait_until("the loop holds its lock", lambda: lock.exists() and lock.read_text() != "")
        second = subprocess.run(
            [*poolform_command(), "scheduler", "run", "--once", "--chdir", str(directory)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert second.returncode == 1
        assert (
            f"another scheduler is running for this configuration (pid {loop.pid})" in second.stderr
        )
    finally:
        loop.send_signal(signal.SIGTERM)
        assert loop.wait(timeout=30) == 0


def test_pools_status_shows_usage_and_workers(run, tmp_path: Path) -> None:
    directory = _applied(tmp_path)
    licensed = _job(tmp_path, "licensed", "sleep 600", "resources:\n  custom:\n    seat: 1\n")
    ok("jobs", "submit", licensed, "--pool", "licenses", "--num-jobs", "2", "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    result = run("pools", "status", "licenses", "--json", "--chdir", directory)
    data = json.loads(result.out)
    jsonschema.validate(data, SCHEMA)
    [pool] = data["pools"]
    assert pool["keys"] == [{"key": "seat", "capacity": 1, "reserved": 0, "used": 1,
                             "borrowed": 0, "queued": 1}]  # fmt: skip
    text = run("pools", "status", "--chdir", directory).out
    assert "licenses (resource pool): 1 running, 1 queued" in text
    assert "w (worker pool): 0 running, 0 queued" in text
    ok("jobs", "cancel", "--pool", "licenses", "--grace", "0s", "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
