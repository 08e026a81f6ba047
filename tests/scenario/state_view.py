"""Recorded state as a user reads it: through `poolform state pull`, never the backend's own
files, so the scenario tests run unchanged on every state backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from providers.local.admin import list_instances
from tests.scenario.installed import poolform


def pulled(directory: Path) -> dict[str, Any] | None:
    """The `state pull` document, or None when the configuration has no state yet."""
    result = poolform("state", "pull", "--chdir", directory)
    if result.returncode != 0 and "no state" in result.stderr:
        return None
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def serial_of(directory: Path) -> int:
    document = pulled(directory)
    return 0 if document is None else int(document["serial"])


def recorded_addresses(directory: Path) -> list[str]:
    document = pulled(directory)
    return [] if document is None else sorted(r["address"] for r in document["resources"])


def untracked_instances(directory: Path) -> list[str]:
    """Running instances of the local provider whose group no recorded resource owns."""
    document = pulled(directory) or {"resources": []}
    groups = {
        str(value)
        for resource in document["resources"]
        for value in resource["provider_ids"].values()
    }
    return [
        i["id"] for i in list_instances(directory / ".poolform") if str(i["group"]) not in groups
    ]
