"""Names, labels and descriptions: how a GCP resource says which poolform resource it is.

GCP labels allow only lowercase `[a-z0-9_-]`, at most 63 characters, and instance group
managers and autoscalers have no labels at all. So:

- names are deterministic: `pf-<lineage hash>-<slug of the address>-<address hash>-<token hash>`,
  at most 58 characters (a group's name is its instances' base name, and GCE appends `-xxxx`).
  A retried create computes the same names, gets 409 alreadyExists and reads back what the
  first attempt made; the lineage hash prefix lets one `name eq "pf-<hash>-.*"` filter list
  every template, group and autoscaler of a state in one call per resource type;
- templates put `poolform-lineage` (and an informational `poolform-address`) into
  `properties.labels`, which GCE copies onto every instance: instances are listed by label;
- every template and group keeps the full tags (poolform:lineage, poolform:address,
  poolform:token) as JSON in its `description`, set at insert and never changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from providers.protocol import TAG_ADDRESS, TAG_LINEAGE, TAG_TOKEN

LABEL_LINEAGE = "poolform-lineage"
LABEL_ADDRESS = "poolform-address"
MAX_NAME = 58  # 63 minus the `-xxxx` GCE appends to a group's base instance name
_SLUG_MAX = MAX_NAME - len("pf-") - 8 - 1 - 1 - 6 - 1 - 6  # pf-<8>-<slug>-<6>-<6>


def _hash(text: str, size: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:size]


def lineage_prefix(lineage: str) -> str:
    return f"pf-{_hash(lineage, 8)}-"


def name_filter(lineage: str) -> str:
    """A Compute list filter matching every name made for this lineage (RE2, whole name)."""
    return f'name eq "{lineage_prefix(lineage)}.*"'


def address_filter(addresses: list[str]) -> str:
    """A Compute list filter matching every name made for these addresses, in any lineage."""
    hashes = "|".join(sorted({_hash(a, 6) for a in addresses}))
    return f'name eq "pf-[0-9a-f]{{8}}-.*-({hashes})-[0-9a-f]{{6}}"'


def label_filter(lineage: str) -> str:
    return f'labels.{LABEL_LINEAGE} = "{label_value(lineage)}"'


def resource_name(lineage: str, address: str, token: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", address.rsplit(".", 1)[-1].lower()).strip("-")
    slug = slug[:_SLUG_MAX].strip("-") or "r"
    name = f"{lineage_prefix(lineage)}{slug}-{_hash(address, 6)}-{_hash(token, 6)}"
    assert len(name) <= MAX_NAME and re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name), name
    return name


def label_value(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "-", text.lower())[:63]


def labels_for(lineage: str, address: str) -> dict[str, str]:
    return {LABEL_LINEAGE: label_value(lineage), LABEL_ADDRESS: label_value(address)}


def group_of_instance(instance_name: str) -> str:
    """The group that made an instance: GCE names them `<base instance name>-xxxx`."""
    return instance_name.rsplit("-", 1)[0]


def describe(tags: Mapping[str, str], **extra: Any) -> str:
    return json.dumps({**tags, **extra}, sort_keys=True, separators=(",", ":"))


def parse_description(text: str | None) -> dict[str, Any]:
    """The JSON a poolform resource carries in its description; {} for anything else."""
    try:
        data = json.loads(text or "")
    except (ValueError, RecursionError):  # free text anyone may write: nesting poolform never
        return {}
    return data if isinstance(data, dict) and TAG_LINEAGE in data else {}


def tags_of(description: Mapping[str, Any]) -> dict[str, str]:
    return {
        k: str(description[k]) for k in (TAG_LINEAGE, TAG_ADDRESS, TAG_TOKEN) if k in description
    }


def last_segment(url_or_name: str) -> str:
    """`.../zones/us-central1-a` -> `us-central1-a`; a bare name stays as it is."""
    return url_or_name.rstrip("/").rsplit("/", 1)[-1]
