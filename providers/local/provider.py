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

from providers.protocol import (
    ErrorKind,
    Observed,
    ProviderError,
    ResourceRef,
    ResourceSpec,
    RollingSpec,
)
from providers.shapes import CONTROL_PLANE_TYPES, GROUP_TYPES, Shape, shape_of

from . import workers
from .settings import Knobs
from .store import LocalCloud, dumps, new_id
from .views import list_lineage, observe_object, observe_one, read_refs

Event = dict[str, Any]
InstanceIds = list[str]  # (`list` is a method name inside the class)


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
        self.on_event = on_event
        self._sleep = sleep
        self._random = random or _random.Random(self.knobs.seed).random
        self._random_lock = threading.Lock()

    # -- the protocol --------------------------------------------------------------------------

    def list(self, lineage: str) -> list[Observed]:
        with self._call(None), self.cloud.read() as conn:
            return list_lineage(conn, lineage)

    def read(self, refs: Sequence[ResourceRef]) -> builtins.list[Observed]:
        with self._call(None), self.cloud.read() as conn:
            return read_refs(conn, refs)

    def create(self, spec: ResourceSpec) -> Observed:
        with self._call(spec.address, launches=spec.resource_type in GROUP_TYPES):
            found = self._made_with(spec.token)
            if found is not None:
                return found
            if spec.resource_type in CONTROL_PLANE_TYPES:
                return self._replace_object(spec, None)
            shape = shape_of(spec)
            return self._create_group(spec, shape, shape.desired)

    def update(self, spec: ResourceSpec, ids: Mapping[str, str]) -> Observed:
        with self._call(spec.address, launches=spec.resource_type in GROUP_TYPES):
            if spec.resource_type in CONTROL_PLANE_TYPES:
                return self._update_object(spec, ids)
            return self._resize(spec, shape_of(spec), ids)

    def replace(self, spec: ResourceSpec, ids: Mapping[str, str], rolling: RollingSpec) -> Observed:
        with self._call(spec.address, launches=spec.resource_type in GROUP_TYPES):
            found = self._made_with(spec.token)
            if found is not None:
                return found
            if spec.resource_type in CONTROL_PLANE_TYPES:
                return self._replace_object(spec, ids.get("object"))
            return self._roll(spec, shape_of(spec), ids, rolling)

    def delete(self, address: str, resource_type: str, ids: Mapping[str, str]) -> None:
        with self._call(address):
            if resource_type in CONTROL_PLANE_TYPES:
                with self.cloud.write() as conn:
                    gone = conn.execute("DELETE FROM objects WHERE id = ?", (ids.get("object"),))
                    if gone.rowcount == 0:
                        raise _not_found(address, ids)
                return
            with self.cloud.write() as conn:
                group = self.cloud.group(conn, ids.get("group", ""))
                template = self.cloud.template(conn, ids.get("template"))
                if group is None and template is None:
                    raise _not_found(address, ids)
                doomed = self.cloud.delete_group(conn, group["id"]) if group else []
                if template is not None:
                    conn.execute("DELETE FROM templates WHERE id = ?", (template["id"],))
            self._cleanup(doomed)
            self._emit("delete", address=address, ids=dict(ids), terminated=doomed)

    def import_resource(
        self, address: str, resource_type: str, provider_id: str, tags: Mapping[str, str]
    ) -> Observed:
        lineage = tags.get("poolform:lineage", "")
        with self._call(address), self.cloud.write() as conn:
            if resource_type in CONTROL_PLANE_TYPES:
                row = self.cloud.object(conn, provider_id)
                if row is None:
                    raise _not_found(address, {"object": provider_id})
                conn.execute(
                    "UPDATE objects SET address = ?, lineage = ?, tags = ? WHERE id = ?",
                    (address, lineage, dumps(dict(tags)), provider_id),
                )
                updated = self.cloud.object(conn, provider_id)
                assert updated is not None  # just updated in this transaction
                return observe_object(updated)
            group = self.cloud.group(conn, provider_id)
            if group is None:
                raise _not_found(address, {"group": provider_id})
            conn.execute(
                "UPDATE groups SET address = ?, lineage = ?, tags = ? WHERE id = ?",
                (address, lineage, dumps(dict(tags)), provider_id),
            )
            conn.execute(
                "UPDATE templates SET address = ?, lineage = ?, tags = ? WHERE id = ?",
                (address, lineage, dumps(dict(tags)), group["template_id"]),
            )
            conn.execute(
                "UPDATE instances SET tags = ? WHERE group_id = ? AND state = 'running'",
                (dumps(dict(tags)), provider_id),
            )
            return observe_one(conn, provider_id)

    def close(self) -> None:
        self.cloud.close()

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
        except sqlite3.OperationalError as error:  # locked past the busy timeout, disk full
            raise ProviderError(
                ErrorKind.RETRYABLE, f"local cloud database: {error}", address=address
            ) from error

    def _roll_dice(self) -> float:
        with self._random_lock:
            return self._random()

    def _emit(self, event: str, **data: Any) -> None:
        if self.on_event is not None:
            self.on_event({"event": event, **data})

    # -- instances -----------------------------------------------------------------------------

    def _boot(self, spec: ResourceSpec, shape: Shape, count: int) -> dict[str, Path]:
        """Directories (and, for workers, a finished `setup`) for instances not yet recorded."""
        if count <= 0:
            return {}
        with self.cloud.read() as conn:  # fail fast, before any setup runs
            self.cloud.check_capacity(conn, shape.instance_type, shape.market, count)
        dirs = {i: Path(self.cloud.workdir(i)) for i in (new_id("i") for _ in range(count))}
        try:
            for directory in dirs.values():
                workers.prepare(directory, shape.group_config, self.config_dir)
            workers.run_setups(dirs, shape.setup, shape.env, self.knobs.setup_timeout, spec.address)
        except BaseException:
            workers.remove(dirs)
            raise
        return dirs

    def _launch(self, spec: ResourceSpec, shape: Shape, group_id: str, count: int) -> InstanceIds:
        dirs = self._boot(spec, shape, count)
        if not dirs:
            return []
        try:
            with self.cloud.write() as conn:
                group = self.cloud.group(conn, group_id)
                if group is None:
                    raise _not_found(spec.address, {"group": group_id})
                launch_type, market = self._launch_shape(conn, group, shape)
                self.cloud.launch(conn, group_id, list(dirs), launch_type, market, spec.tags())
        except BaseException:
            workers.remove(dirs)
            raise
        self._emit("launch", address=spec.address, group=group_id, instances=list(dirs))
        return list(dirs)

    def _launch_shape(
        self, conn: sqlite3.Connection, group: sqlite3.Row, shape: Shape
    ) -> tuple[str, str]:
        """A group launches from its template as it is now (a hand-made change included)."""
        template = self.cloud.template(conn, group["template_id"])
        if template is None:
            return shape.instance_type, shape.market
        return template["instance_type"], template["market_type"]

    def _terminate(self, address: str, group_id: str, instance_ids: InstanceIds) -> None:
        if not instance_ids:
            return
        with self.cloud.write() as conn:
            self.cloud.terminate(conn, instance_ids)
        self._cleanup(instance_ids)
        self._emit("terminate", address=address, group=group_id, instances=instance_ids)

    def _cleanup(self, instance_ids: InstanceIds) -> None:
        workers.remove([Path(self.cloud.workdir(i)) for i in instance_ids])

    # -- groups --------------------------------------------------------------------------------

    def _insert_group(self, conn: sqlite3.Connection, spec: ResourceSpec, shape: Shape) -> str:
        tags = dumps(spec.tags())
        template_id = None
        if shape.template_config is not None:
            template_id = new_id("lt")
            conn.execute(
                "INSERT INTO templates (id, address, lineage, instance_type, market_type,"
                " config, version, tags) VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
                (template_id, spec.address, spec.lineage, shape.instance_type, shape.market,
                 dumps(shape.template_config), tags),
            )  # fmt: skip
        group_id = new_id(shape.prefix)
        conn.execute(
            "INSERT INTO groups (id, address, lineage, resource_type, template_id, min_size,"
            " max_size, desired, config, tags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (group_id, spec.address, spec.lineage, spec.resource_type, template_id,
             shape.min_size, shape.max_size, shape.desired, dumps(shape.group_config), tags),
        )  # fmt: skip
        return group_id

    def _create_group(self, spec: ResourceSpec, shape: Shape, count: int) -> Observed:
        dirs = self._boot(spec, shape, count)
        try:
            with self.cloud.write() as conn:
                found = self.cloud.token_result(conn, spec.token)  # a concurrent twin won
                if found is not None:
                    workers.remove(dirs)
                    return found
                group_id = self._insert_group(conn, spec, shape)
                self.cloud.launch(
                    conn, group_id, list(dirs), shape.instance_type, shape.market, spec.tags()
                )
                observed = observe_one(conn, group_id)
                self.cloud.record_token(conn, spec.token, observed)
        except BaseException:
            workers.remove(dirs)
            raise
        self._emit("create", address=spec.address, ids=dict(observed.provider_ids))
        self._emit("launch", address=spec.address, group=group_id, instances=list(dirs))
        return observed

    def _resize(self, spec: ResourceSpec, shape: Shape, ids: Mapping[str, str]) -> Observed:
        """New bounds; apply provisions the warm count, terminating idle instances first.

        Busy instances stay (the scheduler owns what runs) unless above the new maximum."""
        group_id = ids.get("group", "")
        with self.cloud.write() as conn:
            group = self.cloud.group(conn, group_id)
            if group is None:
                raise _not_found(spec.address, ids)
            busy = group["running"] - group["idle"]
            target = min(max(shape.desired, busy), shape.max_size)
            conn.execute(
                "UPDATE groups SET min_size = ?, max_size = ?, desired = ?, config = ?"
                " WHERE id = ?",
                (shape.min_size, shape.max_size, target, dumps(shape.group_config), group_id),
            )
            running = [r["id"] for r in self.cloud.running(conn, group_id)]
            doomed = running[: max(0, len(running) - target)]
            self.cloud.terminate(conn, doomed)
        if doomed:
            self._cleanup(doomed)
            self._emit("terminate", address=spec.address, group=group_id, instances=doomed)
        self._launch(spec, shape, group_id, target - len(running))
        with self.cloud.read() as conn:
            return observe_one(conn, group_id)

    def _roll(
        self, spec: ResourceSpec, shape: Shape, ids: Mapping[str, str], rolling: RollingSpec
    ) -> Observed:
        """A new template and group; instances move over in batches, idle old ones first."""
        old_id = ids.get("group", "")
        with self.cloud.read() as conn:
            old = self.cloud.group(conn, old_id)
        target = min(max(old["running"] if old else 0, shape.min_size), shape.max_size)
        with self.cloud.write() as conn:
            new_id_ = self._insert_group(conn, spec, shape)
            conn.execute("UPDATE groups SET desired = ? WHERE id = ?", (target, new_id_))
        self._emit("create", address=spec.address, group=new_id_, replacing=dict(ids))
        batch, launched, index = max(1, rolling.batch_size), 0, 0
        while True:
            with self.cloud.read() as conn:
                olds = [r["id"] for r in self.cloud.running(conn, old_id)] if old else []
            count, doomed = min(batch, target - launched), olds[:batch]
            if count <= 0 and not doomed:
                break
            if rolling.destroy_first:
                self._terminate(spec.address, old_id, doomed)
            new = self._launch(spec, shape, new_id_, count)
            if not rolling.destroy_first:
                self._terminate(spec.address, old_id, doomed)
            launched += len(new)
            self._emit("batch", address=spec.address, index=index, launched=new, terminated=doomed)
            index += 1
        with self.cloud.write() as conn:
            leftover = self.cloud.delete_group(conn, old_id) if old else []
            conn.execute("DELETE FROM templates WHERE id = ?", (ids.get("template", ""),))
            observed = observe_one(conn, new_id_)
            self.cloud.record_token(conn, spec.token, observed)
        self._cleanup(leftover)
        return observed

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
                raise _not_found(spec.address, ids)
            conn.execute(
                "UPDATE objects SET attributes = ? WHERE id = ?",
                (dumps(dict(spec.attributes)), row["id"]),
            )
            updated = self.cloud.object(conn, row["id"])
        assert updated is not None
        return observe_object(updated)


def _not_found(address: str, ids: Mapping[str, str]) -> ProviderError:
    shown = ", ".join(f"{k} {v}" for k, v in sorted(ids.items())) or "no recorded ids"
    return ProviderError(ErrorKind.NOT_FOUND, f"{shown}: not found", address=address)
