"""Damage the team backends can suffer, each refused by name, and odd local lock files."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from state import ResourceRecord, SqliteStateBackend, StateDamaged, StateError
from state.postgres import PostgresBackend
from state.s3 import S3Backend
from tests.state.services import BUCKET, drop_schema, new_schema, pg_url


def record(address: str) -> ResourceRecord:
    return ResourceRecord(address, "resource_pool", {"gpu": 1})


@pytest.fixture
def s3_state(s3_endpoint: str) -> Iterator[tuple[str, str]]:
    prefix = f"d-{uuid.uuid4().hex[:10]}"
    backend = S3Backend(BUCKET, prefix, endpoint_url=s3_endpoint, renew=False)
    lineage = backend.read().lineage
    for name in ("a", "b"):
        backend.write_resource(record(f"resource_pool.{name}"), expected_lineage=lineage)
    backend.close()
    yield s3_endpoint, prefix


def s3_put(endpoint: str, key: str, body: bytes) -> None:
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").put_object(
        Bucket=BUCKET, Key=key, Body=body
    )


def s3_keys(endpoint: str, prefix: str) -> list[str]:
    listed = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").list_objects_v2(
        Bucket=BUCKET, Prefix=prefix
    )
    return sorted(item["Key"] for item in listed.get("Contents", []))


@pytest.mark.parametrize(
    ("what", "words"),
    [
        ("head", "head.json is damaged"),
        ("newer head", "layout version 9, newer than this poolform"),
        ("journal entry", "journal entry"),
        ("snapshot gone", "snapshot.json is missing"),
    ],
)
def test_damaged_s3_state_is_named(s3_state: tuple[str, str], what: str, words: str) -> None:
    endpoint, prefix = s3_state
    keys = s3_keys(endpoint, prefix)
    head = f"{prefix}/head.json"
    if what == "head":
        s3_put(endpoint, head, b"{not json")
    elif what == "newer head":
        s3_put(endpoint, head, json.dumps({"layout": 9, "lineage": "x"}).encode())
    elif what == "journal entry":
        entry = next(k for k in keys if "/journal/" in k)
        s3_put(endpoint, entry, b'{"seq": 1, "op": "write"}')
    else:
        snapshot = next(k for k in keys if k.endswith("snapshot.json"))
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").delete_object(
            Bucket=BUCKET, Key=snapshot
        )
    with pytest.raises(StateDamaged, match=words):
        S3Backend(BUCKET, prefix, endpoint_url=endpoint, renew=False).read()


def test_a_postgres_state_without_its_meta_row_is_damaged_not_new() -> None:
    url, schema = pg_url(), new_schema()
    try:
        backend = PostgresBackend(url, schema=schema)
        backend.write_resource(record("resource_pool.a"), expected_lineage=backend.read().lineage)
        backend.close()
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DELETE FROM "{schema}".meta')
        with pytest.raises(StateDamaged, match="meta row"):
            PostgresBackend(url, schema=schema)
    finally:
        drop_schema(url, schema)


def test_a_state_path_that_is_a_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(StateError, match="is a directory, not a database file"):
        SqliteStateBackend(tmp_path)


def test_a_lock_file_naming_no_readable_holder_is_taken_over_with_a_plain_notice(
    tmp_path: Path,
) -> None:
    db = tmp_path / ".poolform" / "state.db"
    db.parent.mkdir()
    (db.parent / "state.lock").write_text("\x00garbage{")
    with SqliteStateBackend(db) as backend:
        taken = backend.lock("apply")
        assert "named no holder poolform could read" in taken.notice
        assert "unknown" not in taken.notice
