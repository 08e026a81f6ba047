"""Changes to the simulated cloud made behind poolform's back, for drift and recovery demos.

Used by the `poolform local` admin command. None of these take poolform's state lock or touch
the state: they change only the cloud, exactly as someone with a cloud console would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from providers.catalog import CATALOG, MARKETS
from providers.protocol import ErrorKind, ProviderError
from providers.shapes import sensitive_template_fields

from . import workers
from .sealed import reseal
from .store import LocalCloud, dumps


def _cloud(state_dir: Path | str) -> LocalCloud:
    return LocalCloud(Path(state_dir), create=False)  # a console edits a cloud; it makes none


def list_instances(
    state_dir: Path | str, *, address: str | None = None, include_terminated: bool = False
) -> list[dict[str, Any]]:
    """Instances with their group's address, newest first."""
    query = (
        "SELECT i.*, g.address AS group_address FROM instances i"
        " LEFT JOIN groups g ON g.id = i.group_id WHERE (? OR i.state = 'running')"
    )
    with _cloud(state_dir).read() as conn:
        rows = conn.execute(query + " ORDER BY i.launched_at DESC, i.id", (include_terminated,))
        result = []
        for row in rows:
            tags = json.loads(row["tags"])
            where = row["group_address"] or tags.get("poolform:address")
            if address is not None and where != address:
                continue
            result.append(
                {
                    "id": row["id"],
                    "group": row["group_id"],
                    "address": where,
                    "instance_type": row["instance_type"],
                    "market_type": row["market_type"],
                    "state": row["state"],
                    "idle": bool(row["idle"]),
                    "launched_at": row["launched_at"],
                    "workdir": row["workdir"],
                    "tags": tags,
                }
            )
    return result


def terminate_instance(state_dir: Path | str, instance_id: str) -> dict[str, Any]:
    cloud = _cloud(state_dir)
    with cloud.write() as conn:
        row = conn.execute(
            "SELECT * FROM instances WHERE id = ? AND state = 'running'", (instance_id,)
        ).fetchone()
        if row is None:
            raise ProviderError(ErrorKind.NOT_FOUND, f"no running instance {instance_id}")
        cloud.terminate(conn, [instance_id])
    workers.remove([Path(cloud.workdir(instance_id))])
    return {"id": instance_id, "group": row["group_id"], "state": "terminated"}


def change_template(
    state_dir: Path | str,
    address: str,
    instance_type: str | None = None,
    market_type: str | None = None,
    **config: Any,
) -> dict[str, Any]:
    """Edit the launch template at `address` in place (a new version); running instances keep
    their type, as in a real cloud. `config` may set advanced_instance_config, zones, user_data."""
    if instance_type is not None and instance_type not in CATALOG:
        raise ProviderError(ErrorKind.PERMANENT, f"unknown instance type {instance_type!r}")
    if market_type is not None and market_type not in MARKETS:
        raise ProviderError(ErrorKind.PERMANENT, f"unknown market type {market_type!r}")
    with _cloud(state_dir).write() as conn:
        row = conn.execute(
            "SELECT * FROM templates WHERE address = ? ORDER BY rowid DESC LIMIT 1", (address,)
        ).fetchone()
        if row is None:
            raise ProviderError(ErrorKind.NOT_FOUND, f"no launch template for {address}")
        merged = json.loads(row["config"])
        sealed = sensitive_template_fields()
        for key, value in config.items():
            merged = reseal(merged, key, value) if key in sealed else {**merged, key: value}
        conn.execute(
            "UPDATE templates SET instance_type = ?, market_type = ?, config = ?,"
            " version = version + 1 WHERE id = ?",
            (instance_type or row["instance_type"], market_type or row["market_type"],
             dumps(merged), row["id"]),
        )  # fmt: skip
        version = row["version"] + 1
    return {"template": row["id"], "address": address, "version": version}


def delete_group(state_dir: Path | str, address: str) -> dict[str, Any]:
    """Delete the instance group(s) at `address`, terminating their instances; the launch
    template stays behind, as it would in a cloud console."""
    cloud = _cloud(state_dir)
    with cloud.write() as conn:
        groups = [
            r["id"] for r in conn.execute("SELECT id FROM groups WHERE address = ?", (address,))
        ]
        if not groups:
            raise ProviderError(ErrorKind.NOT_FOUND, f"no instance group for {address}")
        terminated = [i for group in groups for i in cloud.delete_group(conn, group)]
    workers.remove([Path(cloud.workdir(i)) for i in terminated])
    return {"groups": groups, "terminated": terminated}


def set_capacity(
    state_dir: Path | str, instance_type: str, market_type: str, limit: int | None
) -> None:
    """Cap running instances of a type and market (None: back to the provider settings), so
    spot can run out while poolform is running."""
    if market_type not in MARKETS:
        raise ProviderError(ErrorKind.PERMANENT, f"unknown market type {market_type!r}")
    with _cloud(state_dir).write() as conn:
        conn.execute(
            "DELETE FROM capacity WHERE instance_type = ? AND market_type = ?",
            (instance_type, market_type),
        )
        if limit is not None:
            conn.execute(
                "INSERT INTO capacity (instance_type, market_type, max_running) VALUES (?, ?, ?)",
                (instance_type, market_type, int(limit)),
            )


def set_idle(state_dir: Path | str, instance_id: str, idle: bool) -> None:
    """Mark an instance busy or idle (what the scheduler does when it places or ends a job)."""
    with _cloud(state_dir).write() as conn:
        updated = conn.execute(
            "UPDATE instances SET idle = ? WHERE id = ? AND state = 'running'",
            (int(idle), instance_id),
        )
        if updated.rowcount == 0:
            raise ProviderError(ErrorKind.NOT_FOUND, f"no running instance {instance_id}")


# What a cloud's API takes for a group's numbers (an Auto Scaling group's sizes are 32-bit).
MAX_GROUP_SIZE = 2**31 - 1


def _check_sizes(values: dict[str, Any]) -> None:
    """Refused as a cloud console refuses them: a negative or overlong number, bounds the
    wrong way round. A wanted count outside the bounds stays possible (drift shows it)."""
    for name, value in values.items():
        if not 0 <= int(value) <= MAX_GROUP_SIZE:
            raise ProviderError(
                ErrorKind.PERMANENT, f"{name} must be from 0 to {MAX_GROUP_SIZE}, not {value}"
            )
    if values["min_size"] > values["max_size"]:
        raise ProviderError(
            ErrorKind.PERMANENT,
            f"min_size {values['min_size']} is above max_size {values['max_size']}",
        )


def set_group_size(
    state_dir: Path | str,
    address: str,
    *,
    desired: int | None = None,
    min_size: int | None = None,
    max_size: int | None = None,
) -> dict[str, Any]:
    """Change a group's numbers by hand: `desired` as the scheduler moves it, the bounds as
    someone in a cloud console would. Only the numbers change; no instance is launched."""
    with _cloud(state_dir).write() as conn:
        row = conn.execute(
            "SELECT * FROM groups WHERE address = ? ORDER BY rowid DESC LIMIT 1", (address,)
        ).fetchone()
        if row is None:
            raise ProviderError(ErrorKind.NOT_FOUND, f"no instance group for {address}")
        values = {
            "desired": row["desired"] if desired is None else desired,
            "min_size": row["min_size"] if min_size is None else min_size,
            "max_size": row["max_size"] if max_size is None else max_size,
        }
        _check_sizes(values)
        conn.execute(
            "UPDATE groups SET desired = ?, min_size = ?, max_size = ? WHERE id = ?",
            (values["desired"], values["min_size"], values["max_size"], row["id"]),
        )
    return {"group": row["id"], "address": address, **values}


def holdings(state_dir: Path | str) -> int:
    """How many groups and objects the local cloud in `state_dir` holds, read without changing
    or creating anything (0 when there is no cloud there; 1 when it cannot be read)."""
    import contextlib
    import sqlite3

    from .store import DB_NAME

    path = Path(state_dir).absolute() / DB_NAME
    if not path.is_file():
        return 0
    try:
        # mode=rw (no file made) with query_only, not mode=ro: a read-only connection makes
        # the WAL database's -wal and -shm files and cannot remove them as it closes
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True)) as db:
            db.execute("PRAGMA query_only=ON")
            return sum(
                int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
                for table in ("groups", "objects")
            )
    except sqlite3.Error:
        return 1  # there, and not readable: taken as holding something
