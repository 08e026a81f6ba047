"""Where a configuration's state lives, and opening it and its provider: the I/O edge the use
cases stand on. The one place backends are chosen.

location.py: where the state is and opening it; local_cloud.py: the provider, and the local
provider's cloud beside the state; state_lock.py: the state lock around a read, and the
refusal when another run holds it.
"""

from __future__ import annotations

from reconciler.workspace.local_cloud import (
    local_cloud_absent,
    local_cloud_dir,
    local_cloud_empty,
    open_provider,
    refuse_leaving_the_local_cloud,
)
from reconciler.workspace.location import (
    nothing_carries,
    open_state,
    pin_state,
    secret_salt,
    state_location,
    state_path,
)
from reconciler.workspace.state_lock import (
    READ_ONLY_OPERATIONS,
    changing_run_warning,
    hold_lock,
    locked_error,
    read_state,
    read_state_for_reading,
    read_state_unlocked,
)

__all__ = [
    "READ_ONLY_OPERATIONS",
    "changing_run_warning",
    "hold_lock",
    "local_cloud_absent",
    "local_cloud_dir",
    "local_cloud_empty",
    "locked_error",
    "nothing_carries",
    "open_provider",
    "open_state",
    "pin_state",
    "read_state",
    "read_state_for_reading",
    "read_state_unlocked",
    "refuse_leaving_the_local_cloud",
    "secret_salt",
    "state_location",
    "state_path",
]
