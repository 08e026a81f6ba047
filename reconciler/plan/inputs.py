"""What planning takes besides the configuration: a refreshed snapshot.

The refresh step (reconciler/drift/refresh.py) reads the provider, matches what it reports
against state and finds drift; the planner needs only its results, as data:
- the records with every drifted attribute set to reality, so a plan diffs against what is
  really there and shows the change that restores the declaration;
- what refresh matched: records gone from the provider, creates an interrupted apply left to
  adopt, tagged copies nobody records (plan/refresh.py);
- which attributes of which address changed outside poolform, for the reasons plans give.
Without a refresh (`--no-refresh`), the records are planned against as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from reconciler.plan.refresh import RefreshResult
from state import StateSnapshot


@dataclass(frozen=True)
class RefreshedSnapshot:
    snapshot: StateSnapshot  # the records, drifted attributes set to reality (deleted ones kept)
    found: RefreshResult = field(default_factory=RefreshResult)
    drifted: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # address -> attributes
    # Of those, the ones with no place in the record (a worker pool's chosen instance type):
    # a diff of the records cannot show them, only a replace restores them.
    unplaced: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def unrefreshed(cls, snapshot: StateSnapshot) -> RefreshedSnapshot:
        """The records as they are: planning with `--no-refresh`."""
        return cls(snapshot)
