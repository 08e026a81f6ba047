"""Benchmark the scheduler's leader takeover on PostgreSQL: how long after kill -9 of the leading
`poolform scheduler run` a standby holds the leader lock (the target: within 5 s).

    POOLFORM_TEST_PG_URL=postgresql://... python bench/bench_takeover.py [--rounds 10]

A configuration with one local worker pool is applied in a temporary directory, its state (and
so the scheduler's store) in a fresh schema of that database; two schedulers run on it, the
leader is killed, the time until the other holds the lock is taken, a new standby is started,
and so on. The leader is read from PostgreSQL's own lock table, not from anything poolform
prints. Figures on stdout.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psycopg

from reconciler.scheduler.postgres_store import PostgresStore

CONFIG = """kind: Cluster
name: bench
provider: local
state: {{backend: postgres, dsn: '${{env:POOLFORM_TEST_PG_URL}}', key: {schema}}}
---
kind: WorkerPool
name: w
pool:
  workers: 2
resources:
  instance_type: c5.xlarge
"""


def poolform() -> list[str]:
    beside = Path(sys.executable).parent / "poolform"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "reconciler.cli.main"]


def leader_pid(url: str, schema: str, key: int) -> int | None:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            f'SELECT l.pid FROM "{schema}".sched_leader l JOIN pg_locks k ON k.pid = l.session'
            " AND k.locktype = 'advisory' AND k.granted AND k.classid = %s AND k.objid = %s",
            ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF),
        ).fetchone()
    return None if row is None else int(row[0])


def wait_for(what: str, condition: Callable[[], bool], deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise SystemExit(f"timed out waiting until {what}")
        time.sleep(0.005)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    url = os.environ.get("POOLFORM_TEST_PG_URL")
    if not url:
        raise SystemExit("set POOLFORM_TEST_PG_URL to a PostgreSQL database to use")
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    root = Path(tempfile.mkdtemp(prefix="poolform-takeover-"))
    directory = root / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG.format(schema=schema))
    env = {**os.environ, "NO_COLOR": "1"}
    subprocess.run([*poolform(), "apply", str(directory), "--auto-approve"], check=True,
                   capture_output=True, env=env)  # fmt: skip
    store = PostgresStore(url, schema=schema)
    key = store.leader_key
    store.close()

    def scheduler() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [*poolform(), "scheduler", "run", "--chdir", str(directory)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
        )  # fmt: skip

    times: list[float] = []
    leader = scheduler()
    try:
        wait_for("the first scheduler leads", lambda: leader_pid(url, schema, key) == leader.pid)
        for _ in range(args.rounds):
            standby = scheduler()
            assert standby.stderr is not None
            line = standby.stderr.readline().decode()  # blocks until it says it stands by
            assert "standing by" in line, line
            killed = time.monotonic()
            leader.send_signal(signal.SIGKILL)
            leader.wait()
            pid = standby.pid
            wait_for("the standby leads", lambda: leader_pid(url, schema, key) == pid)  # noqa: B023
            times.append(time.monotonic() - killed)
            leader = standby
    finally:
        leader.send_signal(signal.SIGTERM)
        leader.wait(timeout=30)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        shutil.rmtree(root, ignore_errors=True)
    print(f"leader takeover after kill -9, {len(times)} rounds (standby polls every 0.5 s):")
    print("  " + " ".join(f"{t:.2f}" for t in times))
    print(f"  median {statistics.median(times):.2f} s, max {max(times):.2f} s (target < 5 s)")


if __name__ == "__main__":
    main()
