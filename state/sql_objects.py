"""The control-plane objects' table, one implementation for the two SQL states.

SQLite and PostgreSQL keep resource pools, policies and compute configs of the AWS and GCP
providers in the same `objects` table with the same columns and the same rules (a create
carrying a token already recorded returns the recorded object: that is how a retried apply
finds what it made). The backends differ only in the placeholder, the table's qualified name
and how they open a transaction, which they give through the four members below.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar

from state.model import ControlObject
from state.records import decode_object, encode_object

__all__ = ["SqlObjectTable"]

COLUMNS = ("id", "address", "lineage", "resource_type", "attributes", "tags", "token")
_SELECT = ", ".join(COLUMNS)
_CHUNK = 500  # ids per IN (...): far below either database's limit on parameters


class SqlObjectTable:
    """Mixed into a SQL state backend; the backend supplies what differs."""

    _mark: ClassVar[str]  # the DB-API placeholder: "?" (sqlite3) or "%s" (psycopg)

    def exists(self) -> bool:
        raise NotImplementedError

    def _objects_table(self) -> str:
        """The table's name as SQL (schema-qualified where there are schemas)."""
        raise NotImplementedError

    def _objects_read(self) -> AbstractContextManager[Any]:
        """A transaction that reads (a connection whose `execute` returns a cursor)."""
        raise NotImplementedError

    def _objects_write(self) -> AbstractContextManager[Any]:
        """A transaction that writes, creating the state first when there is none."""
        raise NotImplementedError

    def _objects(self, where: str, params: Sequence[Any]) -> list[ControlObject]:
        if not self.exists():
            return []
        with self._objects_read() as conn:
            rows = conn.execute(f"SELECT {_SELECT} FROM {self._objects_table()} {where}", params)
            return [decode_object(*row) for row in rows.fetchall()]

    def list_objects(self, lineage: str) -> list[ControlObject]:
        return self._objects(f"WHERE lineage = {self._mark} ORDER BY id", (lineage,))

    def all_objects(self) -> list[ControlObject]:
        return self._objects("ORDER BY id", ())

    def get_objects(self, object_ids: Sequence[str]) -> list[ControlObject]:
        ids = list(dict.fromkeys(object_ids))
        found: list[ControlObject] = []
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            marks = ", ".join([self._mark] * len(chunk))
            found += self._objects(f"WHERE id IN ({marks}) ORDER BY id", chunk)
        return sorted(found, key=lambda obj: obj.object_id)

    def _insert_object(self, conn: Any, obj: ControlObject) -> None:
        """Insert inside the caller's transaction (also `adopt`'s, when a state is copied)."""
        attributes, tags = encode_object(obj)
        marks = ", ".join([self._mark] * len(COLUMNS))
        conn.execute(
            f"INSERT INTO {self._objects_table()} ({_SELECT}) VALUES ({marks})",
            (obj.object_id, obj.address, obj.lineage, obj.resource_type, attributes, tags,
             obj.token),
        )  # fmt: skip

    def put_object(self, obj: ControlObject, *, replaces: str | None = None) -> ControlObject:
        table, mark = self._objects_table(), self._mark
        with self._objects_write() as conn:
            if obj.token:
                row = conn.execute(
                    f"SELECT {_SELECT} FROM {table} WHERE token = {mark}", (obj.token,)
                ).fetchone()
                if row is not None:
                    return decode_object(*row)
            self._insert_object(conn, obj)
            if replaces:
                conn.execute(f"DELETE FROM {table} WHERE id = {mark}", (replaces,))
        return obj

    def _change_object(self, object_id: str, changes: dict[str, str]) -> ControlObject | None:
        if not self.exists():
            return None
        table, mark = self._objects_table(), self._mark
        sets = ", ".join(f"{column} = {mark}" for column in changes)
        with self._objects_write() as conn:
            changed = conn.execute(
                f"UPDATE {table} SET {sets} WHERE id = {mark}", (*changes.values(), object_id)
            )
            if changed.rowcount == 0:
                return None
            row = conn.execute(f"SELECT {_SELECT} FROM {table} WHERE id = {mark}", (object_id,))
            return decode_object(*row.fetchone())

    def update_object(self, object_id: str, attributes: dict[str, Any]) -> ControlObject | None:
        text, _ = encode_object(ControlObject(object_id, "", "", "", attributes))
        return self._change_object(object_id, {"attributes": text})

    def retag_object(
        self, object_id: str, address: str, lineage: str, tags: dict[str, str]
    ) -> ControlObject | None:
        _, text = encode_object(ControlObject(object_id, address, lineage, "", {}, tags))
        return self._change_object(object_id, {"address": address, "lineage": lineage,
                                                "tags": text})  # fmt: skip

    def delete_object(self, object_id: str) -> bool:
        if not self.exists():
            return False
        with self._objects_write() as conn:
            gone = conn.execute(
                f"DELETE FROM {self._objects_table()} WHERE id = {self._mark}", (object_id,)
            )
            return bool(gone.rowcount > 0)
