"""The source products' stories, end to end: the installed `poolform`, real job processes.

- SkyPilot: a 10-job batch on a 3-worker pool, every rank once, never more than 3 at once.
- ZenML: a non-preemptible step on reserved capacity is never evicted; a preemptible burst
  borrows idle reserved capacity, and is preempted and requeued when the owner returns.
- Determined: jobs naming no pool go to the default compute or auxiliary pool; a GPU job aimed
  at the CPU pool is rejected at submit with its reason.
"""

from __future__ import annotations

import re
import signal
import stat
from pathlib import Path

from tests.scenario.installed import poolform
from tests.scheduler.scenario import (
    EXAMPLES,
    TERMINAL,
    applied_copy,
    as_json,
    cycle_until,
    jobs,
    ok,
    scheduler_loop,
    statuses,
    wait_until,
)

COUNTING_JOB = """kind: Job
name: counted
pool: gpu-pool
envs:
  COUNTER: {counter}
run: |
  exec 9>>"$COUNTER.lock"
  flock 9; n=$(( $(cat "$COUNTER" 2>/dev/null || echo 0) + 1 )); echo $n > "$COUNTER"
  echo "$n" >> "$COUNTER.trace"; flock -u 9
  sleep 0.2
  flock 9; echo $(( $(cat "$COUNTER") - 1 )) > "$COUNTER"; flock -u 9
"""


def test_skypilot_batch_runs_every_rank_once_on_three_reused_workers(tmp_path: Path) -> None:
    directory = applied_copy(EXAMPLES / "skypilot", tmp_path / "skypilot")
    batch = EXAMPLES / "skypilot" / "jobs" / "batch-job.yaml"
    submitted = as_json("jobs", "submit", batch, "--pool", "gpu-pool", "--num-jobs", "10",
                        "--chdir", directory)["jobs"]  # fmt: skip
    assert [j["rank"] for j in submitted] == list(range(10))
    assert {j["status"] for j in submitted} == {"queued"}
    counted = tmp_path / "counted.yaml"
    counted.write_text(COUNTING_JOB.format(counter=tmp_path / "running"))
    ok("jobs", "submit", counted, "--num-jobs", "6", "--chdir", directory)

    loop = scheduler_loop(directory)
    try:
        wait_until("all 16 jobs ended", lambda: set(statuses(directory).values()) <= TERMINAL)
    finally:
        loop.send_signal(signal.SIGTERM)
        assert loop.wait(timeout=30) == 0, loop.communicate()

    final = jobs(directory)
    assert {j["status"] for j in final.values()} == {"succeeded"}
    ranks: list[int] = []
    for job in submitted:
        log = (directory / ".poolform" / "jobs" / str(job["id"]) / "output.log").read_text()
        ranks += [int(r) for r in re.findall(r"^Job rank: (\d+) out of 10$", log, re.M)]
    assert sorted(ranks) == list(range(10))
    first = ok("jobs", "logs", submitted[0]["id"], "--chdir", directory)
    assert first.startswith("Job rank: 0 out of 10\nProcessing prompts from 0 to 100\n")
    trace = [int(n) for n in (tmp_path / "running.trace").read_text().split()]
    assert len(trace) == 6 and max(trace) <= 3
    assert len({j["worker"] for j in final.values()}) == 3  # the same three workers, reused


def _blocking_job(path: Path, name: str, subject: str, gpu: int, release: Path, *,
                  preemptible: bool, retries: int = 0) -> Path:  # fmt: skip
    path.write_text(
        f"kind: Job\nname: {name}\nsubject: {subject}\npreemptible: {str(preemptible).lower()}\n"
        f"retries: {retries}\nresources:\n  gpu: {gpu}\n  cpu: 1\n  memory: 2GB\n"
        f"run: |\n  while [ ! -e {release} ]; do sleep 0.05; done\n  echo done\n"
    )
    return path


def test_zenml_reserved_step_is_never_evicted_and_the_burst_is_reclaimed(tmp_path: Path) -> None:
    directory = applied_copy(EXAMPLES / "zenml", tmp_path / "zenml")
    release = tmp_path / "release"
    step = _blocking_job(tmp_path / "step.yaml", "eval-step", "dev-stack/orchestrator", 1,
                         release, preemptible=False)  # fmt: skip
    burst = _blocking_job(tmp_path / "burst.yaml", "train-step", "prod-stack/orchestrator", 3,
                          release, preemptible=True, retries=2)  # fmt: skip
    [reserved_step] = [
        j["id"] for j in as_json("jobs", "submit", step, "--chdir", directory)["jobs"]
    ]
    bursts = [j["id"] for j in as_json("jobs", "submit", burst, "--num-jobs", "3",
                                       "--chdir", directory)["jobs"]]  # fmt: skip

    def running(ids: list[int]) -> bool:
        return all(statuses(directory)[i] == "running" for i in ids)

    cycle_until(directory, "the step and the burst run", lambda: running([reserved_step, *bursts]))
    pool = as_json("pools", "status", "datacenter-one", "--chdir", directory)["pools"][0]
    gpu = next(k for k in pool["keys"] if k["key"] == "gpu")
    assert (gpu["used"], gpu["borrowed"]) == (10, 3)  # prod holds 9 against a reservation of 6

    [owner] = [j["id"] for j in as_json("jobs", "submit", step, "--chdir", directory)["jobs"]]
    ok("scheduler", "run", "--once", "--chdir", directory)
    assert jobs(directory)[owner]["reason"]["code"] == "waiting_for_victims"
    cycle_until(directory, "the owner runs", lambda: running([owner]))

    victim = bursts[-1]  # the most recently admitted borrower
    story = as_json("jobs", "show", victim, "--chdir", directory)
    assert "preempted" in [e["code"] for e in story["history"]]
    assert story["status"] == "queued" and story["retries_left"] == 1
    assert story["reason"]["code"] in ("waiting_for_capacity", "policy_limit_reached")
    assert running([reserved_step, *bursts[:-1]])

    release.touch()
    cycle_until(
        directory, "everything ended", lambda: set(statuses(directory).values()) <= TERMINAL
    )
    assert set(statuses(directory).values()) == {"succeeded"}
    never = as_json("jobs", "show", reserved_step, "--chdir", directory)
    assert not {"preempting", "preempted"} & {e["code"] for e in never["history"]}


def test_determined_local_is_the_determined_example_on_the_local_provider() -> None:
    """examples/determined-local runs the determined example's jobs with no AWS account (its
    README says so): the same pools, defaults and jobs, only the Cluster's provider differs."""
    aws, local = EXAMPLES / "determined", EXAMPLES / "determined-local"
    for name in ("machine-pools.yaml", "jobs/experiment.yaml", "jobs/tensorboard.yaml"):
        assert (local / name).read_text() == (aws / name).read_text(), name
    assert sorted(p.name for p in (local / "jobs").iterdir()) == sorted(
        p.name for p in (aws / "jobs").iterdir()
    )
    defaults = ("default_compute_pool: aws-v100", "default_aux_pool: aws-cpu")
    for line in defaults:
        assert line in (aws / "cluster.yaml").read_text().splitlines()
        assert line in (local / "cluster.yaml").read_text().splitlines()
    assert "provider: local" in (local / "cluster.yaml").read_text().splitlines()


def test_determined_routing_and_a_gpu_job_aimed_at_a_cpu_pool(tmp_path: Path) -> None:
    directory = applied_copy(EXAMPLES / "determined-local", tmp_path / "determined")
    jobs_dir = EXAMPLES / "determined-local" / "jobs"
    [experiment] = as_json("jobs", "submit", jobs_dir / "experiment.yaml", "--chdir", directory)[
        "jobs"
    ]
    [board] = as_json("jobs", "submit", jobs_dir / "tensorboard.yaml", "--chdir", directory)["jobs"]

    refused = poolform("jobs", "submit", jobs_dir / "experiment.yaml", "--pool", "aws-cpu",
                       "--chdir", directory)  # fmt: skip
    assert refused.returncode == 1
    assert "job rejected (infeasible)" in refused.stderr
    assert "gpu 8 needed, the pool has none" in refused.stderr
    assert "could run on: aws-v100" in refused.stderr

    cycle_until(directory, "both ended", lambda: statuses(directory)[board["id"]] in TERMINAL
                and statuses(directory)[experiment["id"]] in TERMINAL)  # fmt: skip
    final = jobs(directory)
    assert (final[experiment["id"]]["pool"], final[board["id"]]["pool"]) == ("aws-v100", "aws-cpu")
    assert final[experiment["id"]]["status"] == final[board["id"]]["status"] == "succeeded"
    assert ok("jobs", "logs", experiment["id"], "--chdir", directory) == "training\n"
    job_dir = directory / ".poolform" / "jobs" / str(experiment["id"])
    assert stat.S_IMODE(job_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE((job_dir / "work").stat().st_mode) == 0o700
    assert stat.S_IMODE((job_dir / "output.log").stat().st_mode) == 0o600
