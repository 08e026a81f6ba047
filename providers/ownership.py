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


def is_ours(tags: Mapping[str, str], *, lineage: str, address: str) -> bool:
    """Whether the object's poolform tags name this state's `address`."""
    return tags.get(TAG_LINEAGE) == lineage and tags.get(TAG_ADDRESS) == address


def check_deletable(
    address: str, shown: str, *, tags: Mapping[str, str], lineage: str, forgotten: bool = False
) -> None:
    """PERMANENT unless the object is this state's `address`, as its tags say: a delete goes
    by the ids the state records, and a record edited, pushed or left stale may name an object
    that is not this resource's (another state's, one `state rm` let go, one made by hand).

    `shown`: the object as the message names it ("group asg-1"); `forgotten`: the provider
    noted that `state rm` let it go (a cloud that cannot remove its tags)."""
    if is_ours(tags, lineage=lineage, address=address) and not forgotten:
        return
    owner, named = tags.get(TAG_LINEAGE), tags.get(TAG_ADDRESS)
    if forgotten:
        whose = "`state rm` let it go"
    elif not owner:
        whose = "it carries no poolform tags (made by hand, or let go by `state rm`)"
    elif owner != lineage:
        whose = (
            f"it is another poolform state's (lineage {owner}{f', as {named}' if named else ''})"
        )
    else:
        whose = f"it is this state's {named or 'object at no address'}, not {address}"
    raise ProviderError(
        ErrorKind.PERMANENT,
        f"refusing to delete {shown}: the state records it here, but {whose}; nothing was "
        f"deleted (if the record is wrong, `poolform state rm {address}` drops it and leaves "
        "the object alone)",
        address=address,
    )
