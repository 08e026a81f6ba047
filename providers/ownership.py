"""Whose a cloud resource is, as its tags say: what `poolform import` and `state rm` check.

Every provider reads the tags its own way; the rule is the same everywhere. A resource can be
imported at an address when it is of that address's type and no poolform state claims it, or
when this state's tags already name that very address (a copy no record accounts for).
"""

from __future__ import annotations

from collections.abc import Mapping

from providers.protocol import TAG_ADDRESS, TAG_LINEAGE, ErrorKind, ProviderError

TAG_PREFIX = "poolform:"


def words(resource_type: str) -> str:
    return resource_type.replace("_", " ")


def without_poolform_tags(tags: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in tags.items() if not k.startswith(TAG_PREFIX)}


def check_importable(
    address: str,
    resource_type: str,
    provider_id: str,
    *,
    actual_type: str | None,
    tags: Mapping[str, str],
    lineage: str,
) -> None:
    """PERMANENT unless `provider_id` may be recorded at `address` of this state.

    `actual_type`: the resource type the object is, when the provider can tell (None: any of
    the types it could hold)."""

    def refuse(message: str) -> ProviderError:
        return ProviderError(ErrorKind.PERMANENT, message, address=address)

    if actual_type is not None and actual_type != resource_type:
        raise refuse(
            f"{provider_id} is a {words(actual_type)}, not a {words(resource_type)}: "
            f"it cannot be imported at {address}"
        )
    owner, named = tags.get(TAG_LINEAGE), tags.get(TAG_ADDRESS)
    if owner and owner != lineage:
        raise refuse(
            f"{provider_id} is managed by another poolform state (lineage {owner}"
            f"{f', as {named}' if named else ''}); run `poolform state rm` there first"
        )
    if owner and named and named != address:
        raise refuse(
            f"{provider_id} belongs to this state's {named}, not {address}: import it there, "
            f"or run `poolform state rm {named}` first to move it"
        )
