"""Whose state is this? The lineage check against what the provider holds.

A state copied from another configuration, or a new state beside resources an earlier (lost)
state made, has a lineage that does not match the poolform tags the provider reports for the
same addresses. Planning over it would create every resource again beside the running ones.
This module only decides; the use case that refreshes calls it with what the provider listed
(every poolform-tagged object at the configuration's addresses, whatever its lineage).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from state.errors import StateError
from state.model import StateSnapshot

__all__ = ["LINEAGE_TAG", "ForeignState", "Tagged", "check_lineage", "foreign_lineages"]

LINEAGE_TAG = "poolform:lineage"  # the tag every object poolform creates carries


class Tagged(Protocol):
    """What the provider reports of one object (``providers.protocol.Observed`` is one)."""

    @property
    def address(self) -> str: ...

    @property
    def tags(self) -> Mapping[str, str]: ...


class ForeignState(StateError):
    """The provider holds this configuration's resources under another lineage."""

    def __init__(
        self, lineage: str, foreign: list[str], addresses: list[str], *, new: bool = False
    ) -> None:
        self.lineage = lineage
        self.foreign = foreign
        shown = ", ".join(addresses[:5]) + (
            f" and {len(addresses) - 5} more" if len(addresses) > 5 else ""
        )
        super().__init__(
            (
                "there is no state here yet (a new one would have lineage " + lineage + ")"
                if new
                else f"this state has lineage {lineage}"
            )
            + f", but the provider holds {shown} under lineage "
            f"{', '.join(foreign)}: the state is another configuration's, or replaces a lost "
            "one, and planning over it would create these resources a second time. Use the "
            "state of lineage " + foreign[0] + " (restore it from a backup, or `poolform "
            "state migrate` it here); if it is lost for good, `state push --force` a state "
            "of that lineage and `poolform import` each resource the next plan names"
        )


def _foreign(
    snapshot: StateSnapshot, observed: Iterable[Tagged], addresses: Iterable[str]
) -> dict[str, set[str]]:
    """Foreign lineage -> the addresses it holds, among the addresses that matter here."""
    wanted = set(snapshot.resources) | set(snapshot.intents) | set(addresses)
    found: dict[str, set[str]] = {}
    for item in observed:
        theirs = item.tags.get(LINEAGE_TAG)
        if theirs and theirs != snapshot.lineage and item.address in wanted:
            found.setdefault(theirs, set()).add(item.address)
    return found


def foreign_lineages(
    snapshot: StateSnapshot, observed: Iterable[Tagged], addresses: Iterable[str] = ()
) -> list[str]:
    """The lineages, other than the snapshot's, that the provider's poolform objects carry at
    the snapshot's addresses (and at ``addresses``, e.g. the declared ones), sorted."""
    return sorted(_foreign(snapshot, observed, addresses))


def check_lineage(
    snapshot: StateSnapshot, observed: Iterable[Tagged], addresses: Iterable[str] = ()
) -> None:
    """Raise ``ForeignState`` naming both lineages when ``foreign_lineages`` finds any."""
    found = _foreign(snapshot, observed, addresses)
    if found:
        held = sorted(set().union(*found.values()))
        new = snapshot.serial == 0 and not snapshot.resources and not snapshot.intents
        raise ForeignState(snapshot.lineage, sorted(found), held, new=new)
