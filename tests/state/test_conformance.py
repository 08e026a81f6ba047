"""The state backend contract, one suite run on every backend: SQLite, PostgreSQL and S3.

Each test gets a fresh, empty place for a state (a new file, PostgreSQL schema or S3 prefix)
and opens backends on it as separate commands would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from state import (
    ControlObject,
    DamagedRecords,
    HistoryEntry,
    LineageMismatch,
    LockLost,
    LockMismatch,
    ResourceNotFound,
    ResourceRecord,
    SerialConflict,
    StateBackend,
    StateError,
    StateLocked,
    StateSnapshot,
    lock_state,
)
from tests.state.services import BUCKET, FAKE_AWS, drop_schema, new_schema, pg_url

REPO = Path(__file__).resolve().parents[2]

HOLD_LOCK = """
import sys
from state.location import location_from_url, open_location
backend = open_location(location_from_url(sys.argv[1]))
info = backend.lock("apply", who="ci@runner")
print(info.lock_id, flush=True)
sys.stdin.readline()
"""


@dataclass
class Place:
    """Where one test's state lives, and how to open backends on it."""

    kind: str
    url: str
    opener: Callable[..., StateBackend]
    damage: Callable[[str], None]
    env: dict[str, str] = field(default_factory=dict)
    opened: list[StateBackend] = field(default_factory=list)

    def open(self, **options: Any) -> StateBackend:
        backend = self.opener(**options)
        self.opened.append(backend)
        return backend


def sqlite_place(tmp_path: Path) -> Place:
    from state import SqliteStateBackend

    path = tmp_path / "cfg" / ".poolform" / "state.db"

    def damage(address: str) -> None:
        import sqlite3

        with sqlite3.connect(path) as db:
            db.execute(
                "UPDATE resources SET attributes = '{\"n\": 9}' WHERE address = ?", (address,)
            )

    def opener(**options: Any) -> StateBackend:
        options.pop("wall", None)
        return SqliteStateBackend(path, **options)

    return Place("sqlite", str(path), opener, damage)


def postgres_place(url: str, schema: str) -> Place:
    from state.postgres import PostgresBackend

    def damage(address: str) -> None:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                f'UPDATE "{schema}".resources SET attributes = \'{{"n": 9}}\' WHERE address = %s',
                (address,),
            )

    def opener(**options: Any) -> StateBackend:
        options.pop("wall", None)
        return PostgresBackend(url, schema=schema, **options)

    separator = "&" if "?" in url else "?"
    return Place("postgres", f"{url}{separator}schema={schema}", opener, damage)


def s3_place(endpoint: str, prefix: str) -> Place:
    import boto3

    from state.s3 import S3Backend

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")

    def damage(address: str) -> None:
        listed = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/lineages/")
        for item in listed.get("Contents", []):
            body = json.loads(client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read())
            record = body.get("record") or body.get("resources", {}).get(address)
            if record and record.get("address") == address:
                record["attributes"] = '{"n": 9}'
                client.put_object(Bucket=BUCKET, Key=item["Key"], Body=json.dumps(body).encode())

    def opener(**options: Any) -> StateBackend:
        options.setdefault("renew", False)
        return S3Backend(BUCKET, prefix, endpoint_url=endpoint, lease_seconds=5, **options)

    url = f"s3://{BUCKET}/{prefix}?endpoint={endpoint}&lease=5"
    return Place("s3", url, opener, damage, env=dict(FAKE_AWS))


@pytest.fixture(params=["sqlite", "postgres", "s3"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Place]:
    made: Place
    if request.param == "sqlite":
        made = sqlite_place(tmp_path)
    elif request.param == "postgres":
        url, schema = pg_url(), new_schema()
        made = postgres_place(url, schema)
        request.addfinalizer(lambda: drop_schema(url, schema))
    else:
        endpoint = request.getfixturevalue("s3_endpoint")
        made = s3_place(endpoint, f"t-{uuid.uuid4().hex[:12]}")
    yield made
    for backend in made.opened:
        try:
            held = backend.current_lock()
            if held is not None and held.pid == os.getpid():
                backend.unlock(held.lock_id)
        except StateError:
            pass  # closed by the test
        backend.close()


def record(address: str, **attrs: object) -> ResourceRecord:
    return ResourceRecord(address, "machine_pool", dict(attrs), {"template": "lt-1"})


def obj(object_id: str, address: str, lineage: str, token: str = "") -> ControlObject:
    return ControlObject(
        object_id, address, lineage, "resource_pool", {"gpu": 8}, {"t": "v"}, token
    )


# -- absent states and lineage ------------------------------------------------------------


def test_an_absent_state_reads_empty_and_the_first_write_creates_it(place: Place) -> None:
    first = place.open()
    assert not first.exists()
    empty = first.read()
    assert (empty.serial, len(empty), len(empty.lineage)) == (0, 0, 36)
    assert first.history() == [] and first.list_objects(empty.lineage) == []
    salt = first.salt(empty.lineage)
    assert not place.open().exists()  # reading and the salt created nothing
    assert first.write_resource(record("a"), expected_lineage=empty.lineage) == 1
    again = place.open()
    assert again.exists() and again.read().lineage == empty.lineage
    assert again.salt(empty.lineage) == salt
    with pytest.raises(LineageMismatch):
        again.salt("0" * 36)


def test_serial_rises_by_exactly_one_per_write(place: Place) -> None:
    backend = place.open()
    lineage = backend.read().lineage
    assert backend.write_resource(record("a", n=1), expected_lineage=lineage) == 1
    assert backend.write_resource(record("b"), expected_lineage=lineage) == 2
    assert backend.write_resource(record("a", n=2), expected_lineage=lineage) == 3
    assert backend.delete_resource("b", expected_lineage=lineage) == 4
    snap = place.open().read()
    assert snap.serial == 4 and snap.addresses() == ["a"] and snap.get("a") == record("a", n=2)
    with pytest.raises(ResourceNotFound):
        backend.delete_resource("b", expected_lineage=lineage)
    with pytest.raises(LineageMismatch):
        backend.write_resource(record("c"), expected_lineage="other")
    with pytest.raises(StateError, match="JSON"):
        backend.write_resource(record("c", bad={1, 2}), expected_lineage=lineage)
    assert place.open().read().serial == 4  # failed writes change nothing


def test_records_round_trip_in_address_order(place: Place) -> None:
    backend = place.open()
    lineage = backend.read().lineage
    full = ResourceRecord(
        address="machine_pool.demo.machine_type.reserved-a100",
        resource_type="machine_pool.machine_type",
        attributes={"zones": ["us-east-1a"], "warm": 2, "ratio": 0.5, "name": "Größe", "x": None},
        provider_ids={"launch_template": "lt-123", "group": "asg-9"},
        dependencies=("cluster.main", "resource_pool.gpu"),
        tainted=True,
        schema_version=3,
    )
    for rec in (record("z.last"), full, record("a.first")):
        backend.write_resource(rec, expected_lineage=lineage)
    snap = place.open().read()
    assert snap.get(full.address) == full
    assert [r.address for r in snap] == sorted([full.address, "z.last", "a.first"])


def test_a_records_place_round_trips_and_one_without_reads_as_unknown(place: Place) -> None:
    """Where the cloud holds a resource (state/model.py): kept by every backend, through a
    single write and a whole-state replace alike; no place reads back as ""."""
    backend = place.open()
    lineage = backend.read().lineage
    placed = replace(record("m.placed"), place="region us-east-1")
    backend.write_resource(placed, expected_lineage=lineage)
    backend.write_resource(record("m.unplaced"), expected_lineage=lineage)
    snap = place.open().read()
    assert snap.get("m.placed") == placed and snap.get("m.unplaced") == record("m.unplaced")
    assert snap.get("m.placed").provider_ids == {"template": "lt-1"}  # type: ignore[union-attr]
    backend.replace_all(StateSnapshot(lineage, snap.serial + 1, snap.resources), force=False)
    assert place.open().read().get("m.placed") == placed


def test_intents_are_kept_and_a_resumed_create_reuses_the_token(place: Place) -> None:
    backend = place.open()
    lineage = backend.read().lineage
    first = backend.record_intent("machine_pool.a", "token-1")
    assert backend.record_intent("machine_pool.a", "token-2") == first
    backend.record_intent("machine_pool.b", "token-b")
    snap = place.open().read()
    assert snap.serial == 0 and snap.intents["machine_pool.a"].token == "token-1"
    backend.write_resource(record("machine_pool.a"), expected_lineage=lineage)
    backend.clear_intent("machine_pool.b")
    backend.clear_intent("machine_pool.none")
    assert dict(place.open().read().intents) == {}


def test_history_is_appended_in_order(place: Place) -> None:
    backend = place.open()
    entries = [
        HistoryEntry("2024-01-01T00:00:00+00:00", "alice", "sha256:1", 3, "ok", 3),
        HistoryEntry("2024-01-02T00:00:00+00:00", "bob", "sha256:2", 1, "failed", 4),
    ]
    for entry in entries:
        backend.append_history(entry)
    assert place.open().history() == entries


def test_replace_all_refuses_another_lineage_or_an_older_serial_unless_forced(
    place: Place,
) -> None:
    backend = place.open()
    lineage = backend.read().lineage
    backend.write_resource(record("a"), expected_lineage=lineage)
    backend.write_resource(record("b"), expected_lineage=lineage)
    foreign = StateSnapshot.from_records(str(uuid.uuid4()), 7, [record("x")])
    with pytest.raises(LineageMismatch):
        backend.replace_all(foreign)
    with pytest.raises(SerialConflict):
        backend.replace_all(StateSnapshot.from_records(lineage, 1, [record("c")]))
    assert backend.replace_all(StateSnapshot.from_records(lineage, 2, [record("c")])) == 3
    assert place.open().read().addresses() == ["c"]
    assert backend.replace_all(foreign, force=True) == 8
    snap = place.open().read()
    assert (snap.lineage, snap.serial, snap.addresses()) == (foreign.lineage, 8, ["x"])


def test_threads_share_one_backend(place: Place) -> None:
    backend = place.open()
    lineage = backend.read().lineage
    backend.write_resource(record("first"), expected_lineage=lineage)

    def work(n: int) -> None:
        for i in range(5):
            backend.write_resource(record(f"t{n}.{i}"), expected_lineage=lineage)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = place.open().read()
    assert snap.serial == 21 and len(snap) == 21


# -- control-plane objects ------------------------------------------------------------------


def test_control_plane_objects(place: Place) -> None:
    backend = place.open()
    lineage = backend.read().lineage
    made = backend.put_object(obj("obj-1", "resource_pool.a", lineage, token="tok-1"))
    again = backend.put_object(obj("obj-2", "resource_pool.a", lineage, token="tok-1"))
    assert again == made  # a retried create finds what the first made
    backend.put_object(obj("obj-3", "resource_pool.b", "other-lineage"))
    reader = place.open()
    assert [o.object_id for o in reader.list_objects(lineage)] == ["obj-1"]
    assert [o.object_id for o in reader.get_objects(["obj-3", "obj-9", "obj-1"])] == [
        "obj-1",
        "obj-3",
    ]
    updated = backend.update_object("obj-1", {"gpu": 16})
    assert updated is not None and updated.attributes == {"gpu": 16}
    retagged = backend.retag_object("obj-3", "resource_pool.c", lineage, {"k": "v"})
    assert retagged is not None and (retagged.address, retagged.lineage) == (
        "resource_pool.c",
        lineage,
    )
    replaced = backend.put_object(
        obj("obj-4", "resource_pool.a", lineage, "tok-4"), replaces="obj-1"
    )
    assert replaced.object_id == "obj-4"
    assert backend.update_object("obj-missing", {}) is None
    assert backend.delete_object("obj-3") and not backend.delete_object("obj-3")
    assert [o.object_id for o in place.open().all_objects()] == ["obj-4"]
    assert place.open().read().serial == 0  # objects do not move the serial


# -- whole copies ---------------------------------------------------------------------------


def test_adopt_copies_a_whole_state_and_refuses_to_overwrite_one(place: Place) -> None:
    snapshot = StateSnapshot.from_records(str(uuid.uuid4()), 41, [record("a", n=1)])
    history = [HistoryEntry("t", "u", "h", 1, "ok", 41)]
    objects = [obj("obj-1", "resource_pool.a", snapshot.lineage, "tok")]
    place.open().adopt(snapshot, salt="s" * 64, history=history, objects=objects)
    copy = place.open()
    assert copy.read() == snapshot
    assert copy.salt(snapshot.lineage) == "s" * 64
    assert copy.history() == history and copy.all_objects() == objects
    with pytest.raises(StateError, match="exists"):
        copy.adopt(snapshot, salt="x", history=(), objects=())


def test_a_moved_state_says_where_it_went(place: Place) -> None:
    backend = place.open()
    backend.write_resource(record("a"), expected_lineage=backend.read().lineage)
    backend.mark_moved("postgresql://team@db:5432/state (schema poolform)")
    with pytest.raises(StateError, match="was moved to postgresql://team@db:5432/state"):
        place.open().read()


# -- damaged records ------------------------------------------------------------------------


def test_one_damaged_record_is_named_and_can_be_dropped(place: Place) -> None:
    backend = place.open()
    lineage = backend.read().lineage
    for name in ("a", "b", "c"):
        backend.write_resource(record(name, n=1), expected_lineage=lineage)
    backend.close()
    place.damage("b")
    reader = place.open()
    with pytest.raises(DamagedRecords) as caught:
        reader.read()
    assert "b" in caught.value.damaged and "state rm b" in str(caught.value)
    salvaged = reader.read_salvaged()
    assert salvaged.addresses() == ["a", "c"] and list(salvaged.damaged) == ["b"]
    reader.delete_resource("b", expected_lineage=lineage)
    assert place.open().read().addresses() == ["a", "c"]


# -- the lock -------------------------------------------------------------------------------


def test_a_second_locker_is_refused_naming_the_holder(place: Place) -> None:
    holder, other = place.open(), place.open()
    holder.write_resource(record("a"), expected_lineage=holder.read().lineage)
    info = holder.lock("apply", who="alice@laptop")
    assert other.current_lock() is not None
    with pytest.raises(StateLocked) as caught:
        other.lock("plan")
    assert caught.value.holder.lock_id == info.lock_id
    for part in ("alice@laptop", info.lock_id, "'apply'"):
        assert part in str(caught.value)
    with pytest.raises(LockMismatch):
        holder.unlock("not-the-id")
    holder.unlock(info.lock_id)
    assert other.current_lock() is None
    taken = other.lock("plan")
    assert taken.notice == ""  # released properly: no takeover
    other.unlock(taken.lock_id)


def test_a_holder_whose_lock_was_broken_finds_out_before_it_changes_anything(
    place: Place,
) -> None:
    """`confirm_held`, run before each change to the cloud: quiet while the lock is this
    process's; LockLost once a `force-unlock` broke it (SQLite refuses to break a live
    holder's, so its holder never loses it)."""
    holder = place.open()
    holder.write_resource(record("a"), expected_lineage=holder.read().lineage)
    holder.confirm_held()  # no lock taken: nothing to confirm
    info = holder.lock("apply")
    holder.confirm_held()
    if place.kind == "sqlite":
        with pytest.raises(StateError):
            place.open().force_unlock(info.lock_id)
        holder.confirm_held()
        holder.unlock(info.lock_id)
        return
    place.open().force_unlock(info.lock_id)
    with pytest.raises(LockLost):
        holder.confirm_held()


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_lock_state_releases_on_every_exit(place: Place, error: BaseException) -> None:
    backend = place.open()
    with lock_state(backend, "apply") as info:
        assert backend.current_lock() == info
    assert place.open().current_lock() is None
    with pytest.raises(type(error)), lock_state(backend, "apply"):
        raise error
    assert place.open().current_lock() is None


def test_a_sigkilled_holder_frees_the_lock_and_the_next_taker_says_so(place: Place) -> None:
    seed = place.open()
    seed.write_resource(record("a"), expected_lineage=seed.read().lineage)
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, place.url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **place.env, "PYTHONPATH": str(REPO)},
    )
    try:
        assert child.stdout is not None
        lock_id = child.stdout.readline().strip()
        assert lock_id, "the holder did not take the lock"
        with pytest.raises(StateLocked, match="ci@runner"):
            place.open().lock("apply")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    # S3 waits out the lease: here on a clock moved past it, instead of real seconds.
    later = place.open(wall=lambda: time.time() + 60)
    taken = later.lock("apply", timeout=30)
    assert taken.lock_id != lock_id and taken.pid == os.getpid()
    assert "Took over the state lock of 'apply' by ci@runner" in taken.notice
    assert f"pid {child.pid}" in taken.notice
    later.write_resource(record("b"), expected_lineage=later.read().lineage)
    later.unlock(taken.lock_id)
    assert place.open().read().serial == 2
