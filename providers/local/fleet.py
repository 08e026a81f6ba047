"""Instance groups of the local cloud: create, resize, roll over, heal.

Every call that launches holds the launch lock (shared) from before it counts what to launch
until its instances are recorded, so housekeeping (providers/local/upkeep.py) never mistakes a
worker that is still booting for one a dead process left, and never heals a group that a change
is filling already.

A call carrying an idempotency token finds what an earlier call with that token made, finished
or not: a finished create or replace by its recorded result, a replace killed half-way by the
new group it had made (tagged with the token), which it adopts and goes on rolling into.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from providers.protocol import ErrorKind, Observed, ProviderError, ResourceSpec, RollingSpec
from providers.shapes import Shape, sensitive_template_fields

from . import workers
from .sealed import holds, seal_fields
from .settings import Knobs
from .store import LocalCloud, dumps, new_id
from .upkeep import LaunchLock, sweep
from .views import observe_one

InstanceIds = list[str]
Emit = Callable[..., None]


def not_found(address: str, ids: Mapping[str, str]) -> ProviderError:
    shown = ", ".join(f"{k} {v}" for k, v in sorted(ids.items())) or "no recorded ids"
    return ProviderError(ErrorKind.NOT_FOUND, f"{shown}: not found", address=address)


class Fleet:
    def __init__(self, cloud: LocalCloud, knobs: Knobs, config_dir: Path, emit: Emit):
        self.cloud = cloud
        self.knobs = knobs
        self.config_dir = config_dir
        self.emit = emit
        self.lock = LaunchLock(cloud.state_dir)

    # -- instances -----------------------------------------------------------------------------

    def boot(self, spec: ResourceSpec, shape: Shape, count: int) -> dict[str, Path]:
        """Directories (and, for workers, a finished `setup`) for instances not yet recorded."""
        if count <= 0:
            return {}
        with self.cloud.read() as conn:  # fail fast, before any setup runs
            self.cloud.check_capacity(conn, shape.instance_type, shape.market, count)
        dirs = {i: Path(self.cloud.workdir(i)) for i in (new_id("i") for _ in range(count))}
        try:
            for directory in dirs.values():
                workers.prepare(directory, shape.group_config, self.config_dir)
            workers.run_setups(
                dirs, shape.setup, shape.env, self.knobs.setup_timeout, spec.address,
                secrets=shape.sensitive,
            )  # fmt: skip
        except BaseException:
            workers.remove(dirs)
            raise
        return dirs

    def launch(self, spec: ResourceSpec, shape: Shape, group_id: str, count: int) -> InstanceIds:
        dirs = self.boot(spec, shape, count)
        if not dirs:
            return []
        try:
            with self.cloud.write() as conn:
                group = self.cloud.group(conn, group_id)
                if group is None:
                    raise not_found(spec.address, {"group": group_id})
                launch_type, market = self._launch_shape(conn, group, shape)
                self.cloud.launch(conn, group_id, list(dirs), launch_type, market, spec.tags())
        except BaseException:
            workers.remove(dirs)
            raise
        self.emit("launch", address=spec.address, group=group_id, instances=list(dirs))
        return list(dirs)

    def _launch_shape(
        self, conn: sqlite3.Connection, group: sqlite3.Row, shape: Shape | None
    ) -> tuple[str, str]:
        """A group launches from its template as it is now (a hand-made change included)."""
        template = self.cloud.template(conn, group["template_id"])
        if template is not None:
            return template["instance_type"], template["market_type"]
        if shape is not None:
            return shape.instance_type, shape.market
        config = json_config(group)
        return str(config["instance_type"]), str(config["market_type"])

    def terminate(self, address: str, group_id: str, instance_ids: InstanceIds) -> None:
        if not instance_ids:
            return
        with self.cloud.write() as conn:
            self.cloud.terminate(conn, instance_ids)
        self.cleanup(instance_ids)
        self.emit("terminate", address=address, group=group_id, instances=instance_ids)

    def cleanup(self, instance_ids: InstanceIds) -> None:
        """Remove the directories of terminated workers, but not of one that held a job: the
        job runs on there until the scheduler, seeing its worker gone at its next cycle, stops
        it and queues it again (a directory deleted under it would fail it on its next file
        access instead, for no fault of its own). The scheduler's busy marks remove the
        directory once they no longer name the worker (inventory.mark_busy); sweeps leave it
        until then."""
        kept = self.cloud.held_a_job(instance_ids)
        workers.remove([Path(self.cloud.workdir(i)) for i in instance_ids if i not in kept])

    # -- groups --------------------------------------------------------------------------------

    def insert_group(self, conn: sqlite3.Connection, spec: ResourceSpec, shape: Shape) -> str:
        tags = dumps(spec.tags())
        template_id = None
        if shape.template_config is not None:
            template_id = new_id("lt")
            conn.execute(
                "INSERT INTO templates (id, address, lineage, instance_type, market_type,"
                " config, version, tags) VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
                (template_id, spec.address, spec.lineage, shape.instance_type, shape.market,
                 dumps(seal_fields(shape.template_config, sensitive_template_fields())), tags),
            )  # fmt: skip
        group_id = new_id(shape.prefix)
        conn.execute(
            "INSERT INTO groups (id, address, lineage, resource_type, template_id, min_size,"
            " max_size, desired, config, tags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (group_id, spec.address, spec.lineage, spec.resource_type, template_id,
             shape.min_size, shape.max_size, shape.desired, dumps(shape.group_config), tags),
        )  # fmt: skip
        return group_id

    def _made_with(self, spec: ResourceSpec, shape: Shape) -> sqlite3.Row | None:
        """The group a killed call with this token made, when it is what `shape` asks for;
        one made for another declaration (changed since) is discarded, never adopted."""
        with self.cloud.write() as conn:
            made = self.cloud.group_made_with(conn, spec.token)
            if made is None or self._is_shaped(conn, made, shape):
                return made
            doomed = self.cloud.delete_group(conn, made["id"])
            conn.execute("DELETE FROM templates WHERE id = ?", (made["template_id"],))
            conn.execute("DELETE FROM rolls WHERE group_id = ?", (made["id"],))
        self.cleanup(doomed)
        self.emit("discard", address=spec.address, group=made["id"], terminated=doomed)
        return None

    def _is_shaped(self, conn: sqlite3.Connection, group: sqlite3.Row, shape: Shape) -> bool:
        if shape.template_config is None:
            return bool(group["config"] == dumps(shape.group_config))
        template = self.cloud.template(conn, group["template_id"])
        if template is None:
            return False
        if (template["instance_type"], template["market_type"]) != (
            shape.instance_type,
            shape.market,
        ):
            return False
        kept = json.loads(template["config"])
        sealed = sensitive_template_fields()
        for key, value in shape.template_config.items():
            if key in sealed:
                if not holds(kept.get(key), value):
                    return False
            elif (kept.get(key) or None) != (value or None):
                return False
        return True

    def create(self, spec: ResourceSpec, shape: Shape) -> Observed:
        with self.lock.launching():
            half_made = self._made_with(spec, shape)
            if half_made is not None:  # a replace with this token was killed: take its group
                return self._adopt(spec, shape, half_made)
            dirs = self.boot(spec, shape, shape.desired)
            try:
                with self.cloud.write() as conn:
                    found = self.cloud.token_result(conn, spec.token)  # a concurrent twin won
                    if found is not None:
                        workers.remove(dirs)
                        return found
                    group_id = self.insert_group(conn, spec, shape)
                    self.cloud.launch(
                        conn, group_id, list(dirs), shape.instance_type, shape.market, spec.tags()
                    )
                    observed = observe_one(conn, group_id)
                    self.cloud.record_token(conn, spec.token, observed)
            except BaseException:
                workers.remove(dirs)
                raise
        self.emit("create", address=spec.address, ids=dict(observed.provider_ids))
        self.emit("launch", address=spec.address, group=group_id, instances=list(dirs))
        return observed

    def _adopt(self, spec: ResourceSpec, shape: Shape, group: sqlite3.Row) -> Observed:
        """Fill the group an interrupted call made up to what it wanted, and record the token."""
        group_id = group["id"]
        target = min(max(int(group["desired"]), shape.min_size), shape.max_size)
        self.launch(spec, shape, group_id, target - int(group["running"]))
        with self.cloud.write() as conn:
            found = self.cloud.token_result(conn, spec.token)
            if found is not None:
                return found
            conn.execute("DELETE FROM rolls WHERE group_id = ?", (group_id,))
            observed = observe_one(conn, group_id)
            self.cloud.record_token(conn, spec.token, observed)
        self.emit("adopt", address=spec.address, ids=dict(observed.provider_ids))
        return observed

    def resize(self, spec: ResourceSpec, shape: Shape, ids: Mapping[str, str]) -> Observed:
        """New bounds; apply provisions the warm count, terminating idle instances first.

        Busy instances stay (the scheduler owns what runs) unless above the new maximum. An
        update that changes nothing heals: the group gets back to the count it wants."""
        group_id = ids.get("group", "")
        with self.lock.launching():
            with self.cloud.write() as conn:
                group = self.cloud.group(conn, group_id)
                if group is None:
                    raise not_found(spec.address, ids)
                busy = group["running"] - group["idle"]
                target = min(max(shape.desired, busy), shape.max_size)
                declared = (shape.min_size, shape.max_size, dumps(shape.group_config))
                if declared == (group["min_size"], group["max_size"], group["config"]):
                    target = min(max(int(group["desired"]), shape.min_size), shape.max_size)
                conn.execute(
                    "UPDATE groups SET min_size = ?, max_size = ?, desired = ?, config = ?"
                    " WHERE id = ?",
                    (shape.min_size, shape.max_size, target, dumps(shape.group_config), group_id),
                )
                running = [r["id"] for r in self.cloud.running(conn, group_id)]
                doomed = running[: max(0, len(running) - target)]
                self.cloud.terminate(conn, doomed)
            if doomed:
                self.cleanup(doomed)
                self.emit("terminate", address=spec.address, group=group_id, instances=doomed)
            self.launch(spec, shape, group_id, target - len(running))
        with self.cloud.read() as conn:
            return observe_one(conn, group_id)

    def roll(
        self, spec: ResourceSpec, shape: Shape, ids: Mapping[str, str], rolling: RollingSpec
    ) -> Observed:
        """A new template and group; instances move over in batches, idle old ones first.

        How many the new group should end with is kept beside it (`rolls`) until the roll ends,
        so a roll resumed after a crash aims at the same count, whatever the old group has left.
        """
        old_id = ids.get("group", "")
        with self.lock.launching():
            new_group, target = self._new_group(spec, shape, old_id, ids)
            batch, index = max(1, rolling.batch_size), 0
            while True:
                with self.cloud.read() as conn:
                    olds = [r["id"] for r in self.cloud.running(conn, old_id)] if old_id else []
                    have = len(self.cloud.running(conn, new_group))
                count, doomed = min(batch, max(0, target - have)), olds[:batch]
                if count <= 0 and not doomed:
                    break
                if rolling.destroy_first:
                    self.terminate(spec.address, old_id, doomed)
                new = self.launch(spec, shape, new_group, count)
                if not rolling.destroy_first:
                    self.terminate(spec.address, old_id, doomed)
                self.emit(
                    "batch", address=spec.address, index=index, launched=new, terminated=doomed
                )
                index += 1
            with self.cloud.write() as conn:
                old = self.cloud.group(conn, old_id) if old_id else None
                leftover = self.cloud.delete_group(conn, old_id) if old is not None else []
                conn.execute("DELETE FROM templates WHERE id = ?", (ids.get("template", ""),))
                conn.execute("DELETE FROM rolls WHERE group_id = ?", (new_group,))
                observed = observe_one(conn, new_group)
                self.cloud.record_token(conn, spec.token, observed)
        self.cleanup(leftover)
        return observed

    def _new_group(
        self, spec: ResourceSpec, shape: Shape, old_id: str, ids: Mapping[str, str]
    ) -> tuple[str, int]:
        """The group this roll fills, made now or adopted from a killed run, and its target."""
        made = self._made_with(spec, shape)
        with self.cloud.write() as conn:
            if made is not None:
                row = conn.execute(
                    "SELECT target FROM rolls WHERE group_id = ?", (made["id"],)
                ).fetchone()
                target = int(row["target"]) if row else int(made["desired"])
                self.emit("adopt", address=spec.address, group=made["id"], replacing=dict(ids))
                return made["id"], min(max(target, shape.min_size), shape.max_size)
            old = self.cloud.group(conn, old_id) if old_id else None
            running = int(old["running"]) if old is not None else 0
            target = min(max(running, shape.min_size), shape.max_size)
            group_id = self.insert_group(conn, spec, shape)
            conn.execute("UPDATE groups SET desired = ? WHERE id = ?", (target, group_id))
            conn.execute("INSERT INTO rolls (group_id, target) VALUES (?, ?)", (group_id, target))
        self.emit("create", address=spec.address, group=group_id, replacing=dict(ids))
        return group_id, target

    # -- housekeeping --------------------------------------------------------------------------

    def heal(self, rows: list[sqlite3.Row]) -> bool:
        """Launch what machine-type groups miss (no setup to run, nothing the cloud lacks).
        False when there was nothing to do, or a launch in flight made it wait its turn."""
        short = [r for r in rows if r["resource_type"] == "machine_type" and _short(r)]
        if not short:
            return False
        with self.lock.housekeeping() as free:
            if not free:
                return False
            healed = False
            for row in short:
                healed |= self._heal_group(row["id"])
            return healed

    def _heal_group(self, group_id: str) -> bool:
        with self.cloud.read() as conn:
            group = self.cloud.group(conn, group_id)
            if group is None or group["id"] in _rolling(conn) or not _short(group):
                return False
            count = int(group["desired"]) - int(group["running"])
            launch_type, market = self._launch_shape(conn, group, None)
            try:  # before a directory per instance: a count set by hand may be huge
                self.cloud.check_capacity(conn, launch_type, market, count)
            except ProviderError:  # no capacity: the group stays short, and drift says so
                return False
        ids = [new_id("i") for _ in range(count)]
        dirs = [Path(self.cloud.workdir(i)) for i in ids]
        try:
            for directory in dirs:
                workers.prepare(directory, {}, self.config_dir)
            with self.cloud.write() as conn:
                tags: dict[str, str] = json.loads(group["tags"])
                self.cloud.launch(conn, group_id, ids, launch_type, market, tags)
        except ProviderError:  # no capacity: the group stays short, and drift says so
            workers.remove(dirs)
            return False
        except BaseException:
            workers.remove(dirs)
            raise
        self.emit("heal", address=group["address"], group=group_id, instances=ids)
        return True

    def sweep(self) -> list[str] | None:
        """End and remove what killed launches left; None when a launch is in flight."""
        with self.lock.housekeeping() as free:
            if not free:
                return None
            with self.cloud.read() as conn:
                # A worker terminated while the scheduler marked it busy keeps its directory
                # for the job still running there: the scheduler stops that job (SIGTERM, then
                # SIGKILL after its grace) and its marks remove the directory. Swept, the job
                # (whose environment names the worker) was killed at once by the next apply.
                owned = {
                    r["id"]
                    for r in conn.execute(
                        "SELECT id FROM instances WHERE state = 'running'"
                        " OR (state = 'terminated' AND idle = 0)"
                    )
                }
            swept = sweep(self.cloud.workers_dir, owned)
        if swept:
            self.emit("sweep", instances=swept)
        return swept


def _short(group: sqlite3.Row) -> bool:
    return int(group["running"]) < int(group["desired"])


def _rolling(conn: sqlite3.Connection) -> set[str]:
    return {r["group_id"] for r in conn.execute("SELECT group_id FROM rolls")}


def json_config(group: sqlite3.Row) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(group["config"])
    return config
