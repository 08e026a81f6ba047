"""LocalProvider: the embedded default, a simulated cloud in `local-cloud.db` beside the state.

A machine type is a launch template plus an instance group bounded [min_size, max_size] with
the warm count launched; a worker pool is a group of real workers (their `setup` runs as a
process); control-plane resources are stored objects. Injected latency and faults happen at the
start of a call, before any change, so retrying an injected error is always safe.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import random as _random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from providers.ownership import check_deletable
from providers.protocol import (
    TAG_ADDRESS,
    TAG_LINEAGE,
    ErrorKind,
    Observed,
    ProviderError,
    ResourceRef,
    ResourceSpec,
    RollingSpec,
)
from providers.shapes import CONTROL_PLANE_TYPES, GROUP_TYPES, shape_of

from . import claims
from .fleet import Fleet, not_found
from .settings import Knobs
from .store import GROUPS_WITH_COUNTS, LocalCloud, dumps, new_id
from .views import list_at_addresses, list_lineage, observe_object, read_refs

Event = dict[str, Any]


class LocalProvider:
    name = "local"

    def __init__(
        self,
        settings: Mapping[str, Any] | None = None,
        state_dir: Path | str = ".poolform",
        *,
        region: str | None = None,  # the local cloud has one region
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] | None = None,
        on_event: Callable[[Event], None] | None = None,
        environ: Mapping[str, str] | None = None,
    ):
        self.knobs = Knobs.parse(settings or {}, os.environ if environ is None else environ)
        self.state_dir = Path(state_dir)
        self.config_dir = self.state_dir.resolve().parent
        self.cloud = LocalCloud(self.state_dir, capacity=self.knobs.limit)
        self.fleet = Fleet(self.cloud, self.knobs, self.config_dir, self._emit)
        self._tended = False
        self.on_event = on_event
        self._sleep = sleep
        self._random = random or _random.Random(self.knobs.seed).random
        self._random_lock = threading.Lock()

    # -- the protocol --------------------------------------------------------------------------

    def list(self, lineage: str) -> list[Observed]:
        with self._call(None):
            with self.cloud.read() as conn:
                rows = conn.execute(GROUPS_WITH_COUNTS + " WHERE g.lineage = ?", (lineage,))
                groups = rows.fetchall()
            if self.fleet.heal(groups):  # the cloud's control loop, run now (see upkeep.py)
                with self.cloud.read() as conn:
                    rows = conn.execute(GROUPS_WITH_COUNTS + " WHERE g.lineage = ?", (lineage,))
                    groups = rows.fetchall()
            with self.cloud.read() as conn:
                return list_lineage(conn, lineage, groups)

    def list_at(self, addresses: Sequence[str]) -> builtins.list[Observed]:
        with self._call(None), self.cloud.read() as conn:
            return list_at_addresses(conn, addresses)

    def read(self, refs: Sequence[ResourceRef]) -> builtins.list[Observed]:
        with self._call(None):
            with self.cloud.read() as conn:
                found = read_refs(conn, refs)
            healing = [o.provider_ids["group"] for o in found if _short(o)]
            if healing:
                with self.cloud.read() as conn:
                    rows = [self.cloud.group(conn, g) for g in healing]
                if self.fleet.heal([r for r in rows if r is not None]):
                    with self.cloud.read() as conn:
                        found = read_refs(conn, refs)
            return found

    def create(self, spec: ResourceSpec) -> Observed:
        with self._call(spec.address, launches=spec.resource_type in GROUP_TYPES):
            found = self._made_with(spec.token)
            if found is not None:
                return found
            if spec.resource_type in CONTROL_PLANE_TYPES:
                return self._replace_object(spec, None)
            self._tend()
            return self.fleet.create(spec, shape_of(spec))

    def update(self, spec: ResourceSpec, ids: Mapping[str, str]) -> Observed:
        with self._call(spec.address, launches=spec.resource_type in GROUP_TYPES):
            if spec.resource_type in CONTROL_PLANE_TYPES:
                return self._update_object(spec, ids)
            self._tend()
            return self.fleet.resize(spec, shape_of(spec), ids)

    def replace(self, spec: ResourceSpec, ids: Mapping[str, str], rolling: RollingSpec) -> Observed:
        with self._call(spec.address, launches=spec.resource_type in GROUP_TYPES):
            found = self._made_with(spec.token)
            if found is not None:
                return found
            if spec.resource_type in CONTROL_PLANE_TYPES:
                return self._replace_object(spec, ids.get("object"))
            self._tend()
            return self.fleet.roll(spec, shape_of(spec), ids, rolling)

    def delete(
        self, address: str, resource_type: str, ids: Mapping[str, str], *, lineage: str
    ) -> None:
        with self._call(address):
            self._tend()
            if resource_type in CONTROL_PLANE_TYPES:
                with self.cloud.write() as conn:
                    found = self.cloud.object(conn, ids.get("object"))
                    if found is None:
                        raise not_found(address, ids)
                    _check_ours(address, f"object {found['id']}", found, lineage)
                    conn.execute("DELETE FROM objects WHERE id = ?", (found["id"],))
                return
            with self.cloud.write() as conn:
                group = self.cloud.group(conn, ids.get("group", ""))
                template = self.cloud.template(conn, ids.get("template"))
                if group is None and template is None:
                    raise not_found(address, ids)
                # The resource is its group's (with none left, its template's): whose it is
                # decides; of its parts, only ours go.
                if group is not None:
                    _check_ours(address, f"group {group['id']}", group, lineage)
                elif template is not None:
                    _check_ours(address, f"template {template['id']}", template, lineage)
                doomed = self.cloud.delete_group(conn, group["id"]) if group else []
                if template is not None and _ours(template, lineage, address):
                    conn.execute("DELETE FROM templates WHERE id = ?", (template["id"],))
                if group is not None:
                    conn.execute("DELETE FROM rolls WHERE group_id = ?", (group["id"],))
            self.fleet.cleanup(doomed)
            self._emit("delete", address=address, ids=dict(ids), terminated=doomed)

    def import_resource(
        self, address: str, resource_type: str, provider_id: str, tags: Mapping[str, str]
    ) -> Observed:
        with self._call(address), self.cloud.write() as conn:
            return claims.import_resource(
                self.cloud, conn, address, resource_type, provider_id, tags
            )

    def forget(self, address: str, resource_type: str, ids: Mapping[str, str]) -> None:
        with self._call(address), self.cloud.write() as conn:
            claims.forget(self.cloud, conn, address, ids)
        self._emit("forget", address=address, ids=dict(ids))

    def record_forgotten(self, address: str, provider_ids: Mapping[str, str]) -> None:
        """For a cloud whose resources cannot be re-tagged: remember that `state rm` let them
        go, so its `list` leaves them out (see `forgotten`)."""
        with self._call(address), self.cloud.write() as conn:
            self.cloud.record_forgotten(conn, sorted(set(provider_ids.values())), address)

    def forgotten(self) -> set[str]:
        """Provider ids `state rm` let go (`record_forgotten`)."""
        with self._call(None), self.cloud.read() as conn:
            return self.cloud.forgotten(conn)

    def remember(self, provider_ids: Mapping[str, str]) -> None:
        """Take forgotten ids back (an import)."""
        with self._call(None), self.cloud.write() as conn:
            self.cloud.remember(conn, sorted(set(provider_ids.values())))

    def close(self) -> None:
        self.cloud.close()

    def _tend(self) -> None:
        """Once per provider, at its first change: sweep what killed launches left and heal
        the groups that need it (a change in flight elsewhere postpones it to the next call)."""
        if self._tended:
            return
        if self.fleet.sweep() is None:
            return
        self._tended = True
        with self.cloud.read() as conn:
            groups = conn.execute(GROUPS_WITH_COUNTS).fetchall()
        self.fleet.heal(groups)

    def _made_with(self, token: str) -> Observed | None:
        """What an earlier call with this idempotency token made, if one finished."""
        with self.cloud.read() as conn:
            return self.cloud.token_result(conn, token)

    # -- calls, faults, events -----------------------------------------------------------------

    @contextlib.contextmanager
    def _call(self, address: str | None, *, launches: bool = False) -> Iterator[None]:
        try:
            if self.knobs.latency_ms:
                self._sleep(self.knobs.latency_ms / 1000.0)
            if self.knobs.fault_rate and self._roll_dice() < self.knobs.fault_rate:
                raise ProviderError(ErrorKind.RETRYABLE, "injected fault (throttled)")
            rate = self.knobs.capacity_error_rate
            if launches and rate and self._roll_dice() < rate:
                raise ProviderError(ErrorKind.CAPACITY, "injected capacity error (no capacity)")
            yield
        except ProviderError as error:
            error.address = error.address or address
            raise
        except sqlite3.OperationalError as error:
            raise ProviderError(
                _database_error_kind(error),
                f"local cloud database {self.cloud.path}: {error}",
                address=address,
            ) from error

    def _roll_dice(self) -> float:
        with self._random_lock:
            return self._random()

    def _emit(self, event: str, **data: Any) -> None:
        if self.on_event is not None:
            self.on_event({"event": event, **data})

    # -- control-plane objects -----------------------------------------------------------------

    def _replace_object(self, spec: ResourceSpec, old_id: str | None) -> Observed:
        with self.cloud.write() as conn:
            found = self.cloud.token_result(conn, spec.token)
            if found is not None:
                return found
            object_id = new_id("obj")
            conn.execute(
                "INSERT INTO objects (id, address, lineage, resource_type, attributes, tags)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (object_id, spec.address, spec.lineage, spec.resource_type,
                 dumps(dict(spec.attributes)), dumps(spec.tags())),
            )  # fmt: skip
            if old_id:
                conn.execute("DELETE FROM objects WHERE id = ?", (old_id,))
            observed = observe_object(self.cloud.object(conn, object_id))  # type: ignore[arg-type]
            self.cloud.record_token(conn, spec.token, observed)
        self._emit("create", address=spec.address, ids=dict(observed.provider_ids))
        return observed

    def _update_object(self, spec: ResourceSpec, ids: Mapping[str, str]) -> Observed:
        with self.cloud.write() as conn:
            row = self.cloud.object(conn, ids.get("object"))
            if row is None:
                raise not_found(spec.address, ids)
            conn.execute(
                "UPDATE objects SET attributes = ? WHERE id = ?",
                (dumps(dict(spec.attributes)), row["id"]),
            )
            updated = self.cloud.object(conn, row["id"])
        assert updated is not None
        return observe_object(updated)


# SQLite's primary result codes that no retry can clear: a read-only file or mount, no
# permission, a file that cannot be opened. Anything else (busy past the timeout, a full
# disk, an I/O error) may pass, and is retried.
_PERMANENT_SQLITE_CODES = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH, sqlite3.SQLITE_CANTOPEN}
)


def _database_error_kind(error: sqlite3.OperationalError) -> ErrorKind:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _PERMANENT_SQLITE_CODES:
        return ErrorKind.PERMANENT
    return ErrorKind.RETRYABLE


def _short(observed: Observed) -> bool:
    """A machine type's group running fewer than it wants (what healing fixes)."""
    attributes = observed.attributes
    return (
        observed.resource_type == "machine_type"
        and "group" in observed.provider_ids
        and int(attributes.get("running") or 0) < int(attributes.get("desired") or 0)
    )


def _ours(row: sqlite3.Row, lineage: str, address: str) -> bool:
    return bool(row["lineage"] == lineage and row["address"] == address)


def _check_ours(address: str, shown: str, row: sqlite3.Row, lineage: str) -> None:
    tags = {TAG_LINEAGE: row["lineage"], TAG_ADDRESS: row["address"]} if row["lineage"] else {}
    check_deletable(address, shown, tags=tags, lineage=lineage)
