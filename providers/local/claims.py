"""Taking a resource of the local cloud under management (`import`) and letting it go
(`forget`, for `state rm`): its rows' lineage and poolform tags, in one transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from providers.ownership import check_importable, without_poolform_tags
from providers.protocol import TAG_LINEAGE, Observed

from .fleet import not_found
from .store import LocalCloud, dumps
from .views import observe_object, observe_one

# The rows a group resource spans: the group, its template, its running instances.
_GROUP_ROWS = ("groups", "templates")


def _tags(row: sqlite3.Row) -> dict[str, str]:
    tags: dict[str, str] = json.loads(row["tags"])
    return tags


def _claim(conn: sqlite3.Connection, table: str, row_id: str, address: str, tags: str) -> None:
    lineage = json.loads(tags).get(TAG_LINEAGE, "")
    conn.execute(
        f"UPDATE {table} SET address = ?, lineage = ?, tags = ? WHERE id = ?",
        (address, lineage, tags, row_id),
    )


def _merged(row: sqlite3.Row, tags: Mapping[str, str]) -> str:
    return dumps({**without_poolform_tags(_tags(row)), **tags})


def import_resource(
    cloud: LocalCloud,
    conn: sqlite3.Connection,
    address: str,
    resource_type: str,
    provider_id: str,
    tags: Mapping[str, str],
) -> Observed:
    lineage = tags.get(TAG_LINEAGE, "")
    obj = cloud.object(conn, provider_id)
    row = obj if obj is not None else cloud.group(conn, provider_id)
    if row is None:
        key = "object" if provider_id.startswith("obj-") else "group"
        raise not_found(address, {key: provider_id})
    check_importable(
        address,
        resource_type,
        provider_id,
        actual_type=row["resource_type"],
        tags=_tags(row) if row["lineage"] else {},
        lineage=lineage,
    )
    if obj is not None:
        _claim(conn, "objects", provider_id, address, _merged(row, tags))
        updated = cloud.object(conn, provider_id)
        assert updated is not None  # just updated in this transaction
        return observe_object(updated)
    _claim(conn, "groups", provider_id, address, _merged(row, tags))
    template = cloud.template(conn, row["template_id"])
    if template is not None:
        _claim(conn, "templates", template["id"], address, _merged(template, tags))
    for instance in cloud.running(conn, provider_id):
        conn.execute(
            "UPDATE instances SET tags = ? WHERE id = ?", (_merged(instance, tags), instance["id"])
        )
    cloud.remember(conn, [provider_id])
    return observe_one(conn, provider_id)


def forget(
    cloud: LocalCloud, conn: sqlite3.Connection, address: str, ids: Mapping[str, str]
) -> None:
    """Strip poolform's tags and lineage from everything the ids name; NOT_FOUND if nothing."""
    found = False
    if ids.get("object") and cloud.object(conn, ids["object"]) is not None:
        cloud.untag(conn, "objects", ids["object"])
        found = True
    group = cloud.group(conn, ids.get("group", "")) if ids.get("group") else None
    if group is not None:
        cloud.untag(conn, "groups", group["id"])
        for instance in cloud.running(conn, group["id"]):
            cloud.untag(conn, "instances", instance["id"])
        found = True
    for template_id in {ids.get("template"), group["template_id"] if group else None} - {None}:
        if cloud.template(conn, template_id) is not None:
            cloud.untag(conn, "templates", str(template_id))
            found = True
    if not found:
        raise not_found(address, ids)
