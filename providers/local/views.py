"""Database rows as the `Observed` values the reconciler sees."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from providers.protocol import Observed, ResourceRef
from providers.shapes import sensitive_template_fields

from .sealed import reported
from .store import GROUPS_WITH_COUNTS, LocalCloud

# What a worker pool's group reports of its configuration (secrets only by name).
WORKER_FIELDS = ("setup", "workdir", "file_mounts", "envs", "secret_names")


def observe_group(group: sqlite3.Row, template: sqlite3.Row | None) -> Observed:
    config: dict[str, Any] = json.loads(group["config"])
    attributes: dict[str, Any] = {
        "min_size": group["min_size"],
        "max_size": group["max_size"],
        "desired": group["desired"],
        "running": group["running"],
        "idle": group["idle"],
    }
    ids = {"group": group["id"]}
    if group["resource_type"] == "worker_pool":
        attributes["heals"] = False  # its setup needs secrets the cloud never keeps: see upkeep
        attributes["instance_type"] = config["instance_type"]
        attributes["market_type"] = config["market_type"]
        attributes.update({key: config.get(key) for key in WORKER_FIELDS})
    if template is not None:
        ids["template"] = template["id"]
        attributes.update(_template_attributes(template))
    return Observed(
        group["address"], group["resource_type"], ids, attributes, json.loads(group["tags"])
    )


def observe_template(template: sqlite3.Row) -> Observed:
    """A launch template whose group is gone (deleted behind poolform's back)."""
    return Observed(
        template["address"],
        "machine_type",
        {"template": template["id"]},
        _template_attributes(template),
        json.loads(template["tags"]),
    )


def observe_object(row: sqlite3.Row) -> Observed:
    return Observed(
        row["address"],
        row["resource_type"],
        {"object": row["id"]},
        json.loads(row["attributes"]),
        json.loads(row["tags"]),
    )


def _template_attributes(template: sqlite3.Row) -> dict[str, Any]:
    config = json.loads(template["config"])
    return {
        "instance_type": template["instance_type"],
        "market_type": template["market_type"],
        "advanced_instance_config": config.get("advanced_instance_config") or {},
        "zones": config.get("zones") or [],
        **reported(config, sensitive_template_fields()),
        "template_version": template["version"],
    }


def observe_one(conn: sqlite3.Connection, group_id: str) -> Observed:
    group = LocalCloud.group(conn, group_id)
    assert group is not None, group_id
    return observe_group(group, LocalCloud.template(conn, group["template_id"]))


def list_lineage(
    conn: sqlite3.Connection, lineage: str, groups: Sequence[sqlite3.Row] | None = None
) -> list[Observed]:
    """Everything tagged with `lineage`: one query per table, whatever the count. `groups`:
    the lineage's groups with counts, when the caller has read them already."""
    templates = {
        row["id"]: row
        for row in conn.execute("SELECT * FROM templates WHERE lineage = ?", (lineage,))
    }
    result: list[Observed] = []
    used: set[str] = set()
    if groups is None:
        groups = conn.execute(GROUPS_WITH_COUNTS + " WHERE g.lineage = ?", (lineage,)).fetchall()
    for group in groups:
        template = templates.get(group["template_id"]) if group["template_id"] else None
        if template is not None:
            used.add(template["id"])
        result.append(observe_group(group, template))
    result.extend(observe_template(t) for tid, t in templates.items() if tid not in used)
    result.extend(
        observe_object(row)
        for row in conn.execute("SELECT * FROM objects WHERE lineage = ?", (lineage,))
    )
    return sorted(result, key=lambda o: (o.address, sorted(o.provider_ids.items())))


def list_at_addresses(conn: sqlite3.Connection, addresses: Sequence[str]) -> list[Observed]:
    """Every tagged row at these addresses, whatever its lineage (a forgotten one has none):
    only address, type, ids and tags, one query per table."""
    found: list[Observed] = []
    wanted = sorted(set(addresses))
    for table, kind in (("groups", None), ("templates", "machine_type"), ("objects", None)):
        for start in range(0, len(wanted), 500):  # SQLite's bound on parameters
            chunk = wanted[start : start + 500]
            query = (
                f"SELECT id, address, {'resource_type' if kind is None else '?'} AS type, tags"
                f" FROM {table} WHERE lineage != '' AND address IN ({', '.join('?' * len(chunk))})"
            )
            params = ([] if kind is None else [kind]) + chunk
            found.extend(
                Observed(r["address"], r["type"], {table[:-1]: r["id"]}, {}, json.loads(r["tags"]))
                for r in conn.execute(query, params)
            )
    return sorted(found, key=lambda o: (o.address, sorted(o.provider_ids.items())))


def read_refs(conn: sqlite3.Connection, refs: Sequence[ResourceRef]) -> list[Observed]:
    """These resources only, by id: one query per table, whatever the count."""
    group_ids = [r.provider_ids["group"] for r in refs if "group" in r.provider_ids]
    object_ids = [r.provider_ids["object"] for r in refs if "object" in r.provider_ids]
    loose = [
        r.provider_ids["template"]
        for r in refs
        if "template" in r.provider_ids and "group" not in r.provider_ids
    ]
    result: list[Observed] = []
    for group in _rows(conn, GROUPS_WITH_COUNTS + " WHERE g.id IN ({})", group_ids):
        result.append(observe_group(group, LocalCloud.template(conn, group["template_id"])))
    result.extend(
        observe_template(t) for t in _rows(conn, "SELECT * FROM templates WHERE id IN ({})", loose)
    )
    result.extend(
        observe_object(o) for o in _rows(conn, "SELECT * FROM objects WHERE id IN ({})", object_ids)
    )
    return sorted(result, key=lambda o: (o.address, sorted(o.provider_ids.items())))


def _rows(conn: sqlite3.Connection, query: str, ids: list[str]) -> list[sqlite3.Row]:
    if not ids:
        return []
    return conn.execute(query.format(", ".join("?" * len(ids))), ids).fetchall()
