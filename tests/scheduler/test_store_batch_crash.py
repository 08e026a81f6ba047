"""A scheduler killed with kill -9 in the middle of a batched commit (every change of the cycle
sent, the history written, the transaction not yet committed) leaves the store as it was
before the commit, on SQLite and PostgreSQL: the next scheduler decides again from there."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.scheduler.model import Decisions
from reconciler.scheduler.postgres_store import PostgresStore
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import SchedulerStore
from tests.scheduler.scenario import wait_until
from tests.scheduler.test_postgres_store import GRACE, NOW, admitted, new_jobs
from tests.scheduler.test_store_batch import SHORT, everything

# The child: opens the store, stops for good once its commit has written everything but not
# committed (it tells the test by creating `marker`), and is killed there.
CHILD = """
import json, sys, time
from pathlib import Path
from reconciler.scheduler import postgres_writes, sqlite_writes
from reconciler.scheduler.model import Admit, Decisions, Preempt, Reject
from reconciler.scheduler.reasons import ReasonCode, reason

kind, where, schema, marker, ids = sys.argv[1:6]
jobs = json.loads(ids)
writes = sqlite_writes.Writes if kind == "sqlite" else postgres_writes.Writes
real = writes.flush

def stall(self):
    real(self)
    Path(marker).touch()
    time.sleep(120)

writes.flush = stall
if kind == "sqlite":
    from reconciler.scheduler.sqlite_store import SqliteStore
    store = SqliteStore(where)
else:
    from reconciler.scheduler.postgres_store import PostgresStore
    store = PostgresStore(where, schema=schema)
short = reason(ReasonCode.WAITING_FOR_CAPACITY, pool="dc", deficit={"gpu": 1000})
decisions = Decisions(
    9, 1,
    admits=tuple(Admit(j, "dc", "dc/ml", (("gpu", 1000),), 5) for j in jobs[10:20]),
    preempts=(Preempt(jobs[20], tuple(jobs[:5]), "dc", "priority"),),
    rejects=(Reject(jobs[21], reason(ReasonCode.INFEASIBLE, when="", closest="dc")),),
    claims={jobs[20]: 2000.0},
)
store.commit(decisions, {j: short for j in jobs[22:]}, 1001.0, 30.0)
"""


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_kill_9_in_the_middle_of_a_batched_commit_leaves_the_store_as_before(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    schema = ""
    if kind == "sqlite":
        where = str(tmp_path / "scheduler.db")
        store: SchedulerStore = SqliteStore(where)
    else:
        where, schema = request.getfixturevalue("pg_schema")
        store = PostgresStore(where, schema=schema)
    jobs = [j.id for j in store.submit(new_jobs(60), NOW)]
    admitted(store, *jobs[:10])
    before = everything(store)
    marker = tmp_path / "all-written"

    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, kind, where, schema, str(marker), json.dumps(jobs)]
    )
    try:
        wait_until("the child's commit has written everything", marker.exists)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()

    assert child.returncode == -signal.SIGKILL
    assert everything(store) == before
    # and the store takes the next commit (no lock is left behind)
    store.commit(Decisions(10, 1), {jobs[30]: SHORT}, NOW + 2, GRACE)
    assert store.last_cycle() == 10
    store.close()
