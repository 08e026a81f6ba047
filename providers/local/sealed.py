"""Sensitive values in the local cloud's database: kept as salted hashes, never in clear.

A launch template keeps each sensitive field (`user_data`) as {"sha256": ..., "salt": ...}, and
beside it the hash of the value poolform last wrote (`applied`). It reports the field only when
the two differ (someone changed it behind poolform's back), as an opaque marker naming the hash:
drift then sees a value that is not the recorded one, `apply --refresh-only` records the marker
(by its salted hash, like any sensitive value), and the next replacement writes the declared
value again. While the field is as poolform wrote it, it is left out, and a key a provider leaves
out is never drift.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from typing import Any

APPLIED = "applied"  # the hashes of what poolform last wrote, beside the current ones
MARKER = "changed outside poolform: sha256 "


def digest(value: str, salt: str) -> str:
    return hashlib.sha256(f"{salt}\0{value}".encode()).hexdigest()


def seal(value: Any, salt: str | None = None) -> dict[str, str] | None:
    """None stays None (nothing to hide); anything else becomes its salted hash."""
    if value is None:
        return None
    salt = salt or secrets.token_hex(16)
    return {"sha256": digest(str(value), salt), "salt": salt}


def salt_of(sealed: Any) -> str | None:
    return str(sealed["salt"]) if isinstance(sealed, Mapping) and "salt" in sealed else None


def seal_fields(config: Mapping[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """`config` with `fields` sealed, and what was written kept as the applied hashes."""
    sealed = dict(config)
    for key in fields:
        sealed[key] = seal(config.get(key))
    sealed[APPLIED] = {key: sealed[key] for key in fields}
    return sealed


def reseal(config: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A hand change of one sealed field: hashed with the field's salt, so setting the value
    poolform wrote compares equal again."""
    changed = dict(config)
    current = config.get(key)
    applied = (config.get(APPLIED) or {}).get(key)
    changed[key] = seal(value, salt_of(current) or salt_of(applied))
    return changed


def reported(config: Mapping[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """What a template reports of its sealed fields: only the ones changed by hand."""
    applied = config.get(APPLIED) or {}
    shown: dict[str, Any] = {}
    for key in fields:
        current = config.get(key)
        if key in applied and _same(current, applied[key]):
            continue
        if key not in applied and not isinstance(current, Mapping):
            shown[key] = current  # written before values were sealed: as it was kept
            continue
        shown[key] = None if current is None else f"{MARKER}{current['sha256'][:16]}"
    return shown


def holds(sealed: Any, value: Any) -> bool:
    """Whether a sealed field keeps `value` (both None counts)."""
    if sealed is None or value is None:
        return sealed is None and value is None
    if not isinstance(sealed, Mapping):
        return bool(sealed == value)  # written before values were sealed
    return bool(sealed.get("sha256") == digest(str(value), str(sealed.get("salt"))))


def _same(left: Any, right: Any) -> bool:
    if left is None or right is None:
        return left is None and right is None
    return bool(left.get("sha256") == right.get("sha256"))
