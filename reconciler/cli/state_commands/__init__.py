"""state list|show|rm|pull|push|migrate, force-unlock: looking at and repairing recorded state.

These commands work around a damaged record: they name it on stderr and go on with the rest,
and `state rm` drops it. (plan and apply refuse to run over one: see state.DamagedRecords.)
The `state` group and what its commands share are in shared.py; each module beside it adds
its commands to the group as it is imported.
"""

from __future__ import annotations

from reconciler.cli.state_commands import migrate, push, records
from reconciler.cli.state_commands.shared import state
from reconciler.cli.state_commands.unlock import force_unlock

__all__ = ["force_unlock", "migrate", "push", "records", "state"]
