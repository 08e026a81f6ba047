"""What `--target ADDR` selects.

A target is a whole address: `resource_pool.team-quota` selects that resource pool and never
`resource_pool.team-quota.archive` (names may hold dots, so a text prefix is not a boundary).
The one address that contains others is a machine pool's: `machine_pool.gpu` selects each of its
machine types, `machine_pool.gpu.machine_type.<name>`, as a Terraform module address selects
the resources inside it. The planner then adds what the selection needs (or, when destroying,
what needs it).
"""

from __future__ import annotations

MACHINE_POOL = "machine_pool."
MACHINE_TYPE = ".machine_type."


def target_matches(address: str, target: str) -> bool:
    """Whether `target` selects the resource at `address`."""
    if address == target:
        return True
    if not target.startswith(MACHINE_POOL) or MACHINE_TYPE in target:
        return False
    members = target + MACHINE_TYPE
    if not address.startswith(members):
        return False
    # The rest must be one machine type's name: a pool named `gpu.machine_type.x` is not `gpu`.
    return MACHINE_TYPE not in "." + address[len(members) :]
