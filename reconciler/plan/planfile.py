"""Saved plans (`plan -out FILE`): the plan plus what it was computed from, sealed by a checksum.

Applying a saved plan is safe only against the configuration and state it was made from. The
file records the configuration digest and the state's lineage and serial; `check_saved_plan`
refuses it when any moved on, and re-plans to prove the steps were not edited (plans are
deterministic, so an untouched plan re-computes byte for byte). It also carries what to re-read
before applying (reread.py): the objects the plan touches, by id, with their fingerprints.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.errors import PoolformError
from reconciler.plan.model import Plan
from reconciler.plan.reread import Reread

MAGIC = "poolform-plan"
VERSION = 2  # 2: the objects to re-read before applying


@dataclass(frozen=True)
class SavedPlan:
    plan: Plan
    directory: Path  # the configuration directory, as given when planning
    rereads: Reread | None  # None: planned with --no-refresh, nothing to re-read


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def write_plan(plan: Plan, path: Path, directory: Path, rereads: Reread | None = None) -> None:
    """Save `plan` with the configuration directory as given: relative paths stay relative, so
    CI can plan and apply from the same checkout root in different jobs."""
    body = plan.to_json()
    reread = rereads.to_json() if rereads is not None else None
    checksum = hashlib.sha256(_canonical([str(directory), body, reread])).hexdigest()
    envelope = {
        "kind": MAGIC,
        "version": VERSION,
        "checksum": checksum,
        "directory": str(directory),
        "plan": body,
        "rereads": reread,
    }
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(envelope, handle, indent=1, sort_keys=True)
        handle.write("\n")
    os.replace(tmp, path)


def is_plan_file(path: Path) -> bool:
    """Whether `path` is meant as a plan file: a JSON object naming itself a poolform plan
    (damage is found by `read_plan`). A configuration's YAML file is not one."""
    try:
        head = path.read_bytes()
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and f'"{MAGIC}"'.encode() in head


def read_plan(path: Path) -> SavedPlan:
    """The saved plan and the configuration directory it was made from."""
    try:
        envelope = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PoolformError(f"{path} is not a readable plan file: {exc}") from None
    if not isinstance(envelope, dict) or envelope.get("kind") != MAGIC:
        raise PoolformError(
            f"{path} is not a poolform plan file", hint="create one with `poolform plan -out FILE`"
        )
    if envelope.get("version") != VERSION:
        raise PoolformError(
            f"{path} is plan format {envelope.get('version')}; this poolform reads {VERSION}"
        )
    body = envelope.get("plan")
    if not isinstance(body, dict):
        raise PoolformError(f"{path} holds no plan")
    directory = str(envelope.get("directory", "."))
    reread = envelope.get("rereads")
    if hashlib.sha256(_canonical([directory, body, reread])).hexdigest() != envelope.get(
        "checksum"
    ):
        raise PoolformError(
            f"{path} was modified after it was saved (checksum mismatch); refusing to use it",
            hint="run `poolform plan -out FILE` again",
        )
    try:
        rereads = Reread.from_json(reread) if isinstance(reread, list) else None
        return SavedPlan(Plan.from_json(body), Path(directory), rereads)
    except (KeyError, TypeError, ValueError, AssertionError) as exc:
        raise PoolformError(f"{path} is not a valid plan: {exc}") from None


def check_saved_plan(
    saved: Plan, config_digest: str, lineage: str, serial: int, replanned: Plan
) -> None:
    """Refuse a saved plan that no longer describes what apply would do."""
    check_saved_origin(saved, config_digest, lineage, serial)
    if _canonical(saved.to_json()) != _canonical(replanned.to_json()):
        raise PoolformError(
            "the saved plan's steps differ from what this configuration and state produce; "
            "it was edited or made by another poolform version",
            hint="run `poolform plan -out FILE` again",
        )


def check_saved_origin(saved: Plan, config_digest: str, lineage: str, serial: int) -> None:
    """Refuse a saved plan made from another state or configuration than the current ones."""
    if saved.lineage != lineage:
        raise PoolformError(
            f"this plan was made for a different state (lineage {saved.lineage}, this state is {lineage})",
            hint="plan against this configuration's state and apply that plan",
        )
    if saved.serial != serial:
        raise PoolformError(
            f"the state changed since this plan was made (serial {saved.serial}, now {serial}); "
            "the plan is stale",
            hint="run `poolform plan -out FILE` again and review the new plan",
        )
    if saved.config_digest != config_digest:
        raise PoolformError(
            "the configuration changed since this plan was made; the plan is stale",
            hint="run `poolform plan -out FILE` again and review the new plan",
        )
