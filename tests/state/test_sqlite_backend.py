"""The embedded SQLite state backend: serials, lineage, modes, locking, crash safety."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from state import (
    HistoryEntry,
    LineageMismatch,
    LockInfo,
    LockMismatch,
    ResourceRecord,
    SerialConflict,
    SqliteStateBackend,
    StateLocked,
    StateSnapshot,
    lock_is_stale,
    lock_state,
)

REPO = Path(__file__).resolve().parents[2]

HOLD_LOCK = """
import sys
from state import SqliteStateBackend
backend = SqliteStateBackend(sys.argv[1])
info = backend.lock("apply", who="ci@runner")
print(info.lock_id, flush=True)
sys.stdin.readline()
backend.unlock(info.lock_id)
print("released", flush=True)
"""

WRITE_FOREVER = """
import sys
from state import ResourceRecord, SqliteStateBackend
backend = SqliteStateBackend(sys.argv[1])
lineage = backend.read().lineage
print("ready", flush=True)
i = 0
while True:
    i += 1
    deps = (f"machine_pool.p{i - 1:06d}",) if i > 1 else ()
    attrs = {"i": i, "payload": "x" * 2000, "nested": {"list": list(range(50))}}
    record = ResourceRecord(f"machine_pool.p{i:06d}", "machine_pool", attrs, {"id": f"i-{i}"}, deps)
    backend.write_resource(record, expected_lineage=lineage)
"""


def spawn(code: str, db: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", code, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def record(address: str, **attrs: object) -> ResourceRecord:
    return ResourceRecord(address, "machine_pool", dict(attrs), {"template": "lt-1"})


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "cfg" / ".poolform" / "state.db"


@pytest.fixture
def backend(db: Path) -> Iterator[SqliteStateBackend]:
    b = SqliteStateBackend(db)
    yield b
    b.close()


def test_files_are_private(tmp_path: Path) -> None:
    db = tmp_path / "conf" / ".poolform" / "state.db"
    old = os.umask(0)
    try:
        with SqliteStateBackend(db) as b:
            b.write_resource(record("a"), expected_lineage=b.read().lineage)
            files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
            assert all(f.exists() for f in files)
            for f in files:
                assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
            assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    finally:
        os.umask(old)


def test_second_lock_names_the_holder(db: Path, backend: SqliteStateBackend) -> None:
    info = backend.lock("apply", who="alice@laptop")
    assert backend.current_lock() == info
    with SqliteStateBackend(db) as other, pytest.raises(StateLocked) as caught:
        other.lock("plan")
    holder = caught.value.holder
    assert holder == info and holder.pid == os.getpid()
    message = str(caught.value)
    for part in ("alice@laptop", info.lock_id, "'apply'", socket.gethostname(), info.created):
        assert part in message
    assert not lock_is_stale(holder)


def test_unlock_releases(backend: SqliteStateBackend) -> None:
    info = backend.lock("apply")
    with pytest.raises(LockMismatch):
        backend.unlock("not-the-id")
    backend.unlock(info.lock_id)
    assert backend.current_lock() is None
    backend.unlock(info.lock_id)  # idempotent
    with pytest.raises(LockMismatch):
        backend.force_unlock(info.lock_id)
    second = backend.lock("apply")
    assert second.lock_id != info.lock_id


def test_lock_across_processes(db: Path, backend: SqliteStateBackend) -> None:
    child = spawn(HOLD_LOCK, db)
    try:
        assert child.stdout is not None and child.stdin is not None
        lock_id = child.stdout.readline().strip()
        with pytest.raises(StateLocked) as caught:
            backend.lock("apply")
        assert caught.value.holder.pid == child.pid
        assert caught.value.holder.lock_id == lock_id
        assert "ci@runner" in str(caught.value)
        child.stdin.write("\n")
        child.stdin.flush()
        info = backend.lock("apply", timeout=5)  # waits for the other process to release
        assert info.pid == os.getpid()
        assert child.stdout.readline().strip() == "released"
    finally:
        child.kill()
        child.wait()


def test_a_sigkilled_holders_lock_is_taken_over_at_once_with_a_notice(
    db: Path, backend: SqliteStateBackend
) -> None:
    backend.write_resource(record("a"), expected_lineage=backend.read().lineage)
    child = spawn(HOLD_LOCK, db)
    assert child.stdout is not None
    lock_id = child.stdout.readline().strip()
    held = backend.current_lock()
    assert held is not None and held.lock_id == lock_id and held.pid == child.pid
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert backend.current_lock() is None  # the kernel dropped the dead holder's flock
    taken = backend.lock("apply")  # no force-unlock, no wait
    assert taken.pid == os.getpid()
    assert "Took over the state lock of 'apply' by ci@runner" in taken.notice
    assert f"pid {child.pid}" in taken.notice and "ended without releasing it" in taken.notice
    with sqlite3.connect(db) as raw:  # the row names the new holder
        assert raw.execute("SELECT lock_id FROM lock").fetchall() == [(taken.lock_id,)]
    backend.unlock(taken.lock_id)
    again = backend.lock("apply")
    assert again.notice == ""  # a lock released properly is no takeover


def test_force_unlock_refuses_a_live_local_holder(db: Path, backend: SqliteStateBackend) -> None:
    child = spawn(HOLD_LOCK, db)
    try:
        assert child.stdout is not None
        lock_id = child.stdout.readline().strip()
        with pytest.raises(LockMismatch, match="running process"):
            backend.force_unlock(lock_id)
        with pytest.raises(StateLocked):
            backend.lock("apply")
    finally:
        child.kill()
        child.wait()


def test_lock_is_stale_only_for_dead_local_pids() -> None:
    base = LockInfo("id", "apply", "a@b", os.getpid(), socket.gethostname(), "now")
    assert not lock_is_stale(base)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = LockInfo("id", "apply", "a@b", child.pid, socket.gethostname(), "now")
    assert lock_is_stale(dead)
    assert not lock_is_stale(LockInfo("id", "apply", "a@b", child.pid, "elsewhere", "now"))


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_lock_state_releases_on_every_exit(
    backend: SqliteStateBackend, error: BaseException
) -> None:
    with lock_state(backend, "apply") as info:
        assert backend.current_lock() == info
    assert backend.current_lock() is None
    with pytest.raises(type(error)), lock_state(backend, "apply", timeout=0):
        raise error
    assert backend.current_lock() is None


def test_replace_all_refuses_foreign_lineage(backend: SqliteStateBackend) -> None:
    lineage = backend.read().lineage
    backend.write_resource(record("a"), expected_lineage=lineage)
    backend.write_resource(record("b"), expected_lineage=lineage)
    foreign = StateSnapshot.from_records("0" * 36, 7, [record("x")])
    with pytest.raises(LineageMismatch):
        backend.replace_all(foreign)
    with pytest.raises(SerialConflict):
        backend.replace_all(StateSnapshot.from_records(lineage, 1, [record("c")]))
    assert backend.read().addresses() == ["a", "b"]
    assert backend.replace_all(StateSnapshot.from_records(lineage, 2, [record("c")])) == 3
    assert backend.read().addresses() == ["c"]
    assert backend.replace_all(foreign, force=True) == 8
    snap = backend.read()
    assert (snap.lineage, snap.serial, snap.addresses()) == ("0" * 36, 8, ["x"])


def test_intents_round_trip(backend: SqliteStateBackend) -> None:
    lineage = backend.read().lineage
    first = backend.record_intent("machine_pool.a", "token-1")
    assert backend.record_intent("machine_pool.a", "token-2") == first  # resume reuses the token
    backend.record_intent("machine_pool.b", "token-b")
    snap = backend.read()
    assert snap.serial == 0 and snap.intents["machine_pool.a"].token == "token-1"
    backend.write_resource(record("machine_pool.a"), expected_lineage=lineage)
    backend.clear_intent("machine_pool.b")
    backend.clear_intent("machine_pool.none")
    assert dict(backend.read().intents) == {}


def test_history_append_and_list(backend: SqliteStateBackend) -> None:
    entries = [
        HistoryEntry("2024-01-01T00:00:00+00:00", "alice", "sha256:1", 3, "success", 3),
        HistoryEntry("2024-01-02T00:00:00+00:00", "bob", "sha256:2", 1, "failed", 4),
    ]
    for entry in entries:
        backend.append_history(entry)
    assert backend.history() == entries


def test_threads_share_one_backend(backend: SqliteStateBackend) -> None:
    lineage = backend.read().lineage

    def work(n: int) -> None:
        for i in range(10):
            backend.write_resource(record(f"t{n}.{i}"), expected_lineage=lineage)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = backend.read()
    assert snap.serial == 40 and len(snap) == 40


def test_ten_thousand_records_round_trip_and_one_write_touches_one_row(
    backend: SqliteStateBackend,
) -> None:
    # Speed is measured in bench/ (bench_state.py), not asserted here.
    lineage = backend.read().lineage
    records = [record(f"machine_pool.p{i:05d}", warm=i, zones=["a", "b"]) for i in range(10_000)]
    backend.replace_all(StateSnapshot.from_records(lineage, 0, records))
    snap = backend.read()
    assert len(snap) == 10_000 and snap.get("machine_pool.p09999") == records[-1]
    serial = backend.write_resource(
        record("machine_pool.p00000", warm=-1), expected_lineage=lineage
    )
    after = backend.read()
    assert after.serial == serial == snap.serial + 1
    assert after.get("machine_pool.p00001") == snap.get("machine_pool.p00001")


def test_sigkill_during_writes_leaves_a_consistent_database(db: Path) -> None:
    child = spawn(WRITE_FOREVER, db)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = raw.execute("SELECT address, updated_serial FROM resources").fetchall()
    with SqliteStateBackend(db) as b:
        snap = b.read()
    assert snap.serial > 0 and len(snap) == snap.serial
    assert sorted(serial for _, serial in rows) == list(range(1, snap.serial + 1))
    for i, rec in enumerate(snap, start=1):
        assert rec.address == f"machine_pool.p{i:06d}"
        assert rec.attributes == {
            "i": i,
            "payload": "x" * 2000,
            "nested": {"list": list(range(50))},
        }
        assert rec.provider_ids == {"id": f"i-{i}"}
        assert rec.dependencies == ((f"machine_pool.p{i - 1:06d}",) if i > 1 else ())


def test_the_stale_lock_hint_names_the_configuration_directory() -> None:
    from state import describe_lock

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = LockInfo("id-7", "apply", "a@b", child.pid, socket.gethostname(), "now")
    assert "run `poolform force-unlock id-7 --chdir /srv/capacity`" in describe_lock(
        dead, directory="/srv/capacity"
    )
    assert "force-unlock id-7`" in describe_lock(dead)
