"""The lineage check: a state is refused when the provider holds its addresses under another."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from state import ResourceRecord, StateSnapshot
from state.lineage import ForeignState, check_lineage, foreign_lineages

OURS = "11111111-1111-4111-8111-111111111111"
THEIRS = "22222222-2222-4222-8222-222222222222"
THIRD = "33333333-3333-4333-8333-333333333333"


@dataclass(frozen=True)
class Seen:
    address: str
    lineage: str | None
    tags: Mapping[str, str] = field(init=False)

    def __post_init__(self) -> None:
        tags = {"poolform:lineage": self.lineage} if self.lineage else {}
        object.__setattr__(self, "tags", tags)


def state(*addresses: str, lineage: str = OURS) -> StateSnapshot:
    return StateSnapshot.from_records(
        lineage, len(addresses), [ResourceRecord(a, "resource_pool") for a in addresses]
    )


@pytest.mark.parametrize(
    ("snapshot", "observed", "declared", "expected"),
    [
        (state("rp.a"), [Seen("rp.a", OURS)], (), []),
        (state("rp.a"), [Seen("rp.a", THEIRS)], (), [THEIRS]),
        # a new, empty state beside resources a lost state made at the declared addresses
        (state(), [Seen("rp.a", THEIRS), Seen("rp.b", THEIRS)], ("rp.a", "rp.b"), [THEIRS]),
        # another configuration's objects at other addresses are none of this state's business
        (state("rp.a"), [Seen("rp.other", THEIRS)], ("rp.a",), []),
        # untagged objects (made outside poolform) carry no lineage
        (state("rp.a"), [Seen("rp.a", None)], (), []),
        (state("rp.a", "rp.b"), [Seen("rp.b", THIRD), Seen("rp.a", THEIRS)], (), [THEIRS, THIRD]),
    ],
    ids=["same", "copied state", "lost state", "elsewhere", "untagged", "two foreign"],
)
def test_foreign_lineages(
    snapshot: StateSnapshot, observed: list[Seen], declared: tuple[str, ...], expected: list[str]
) -> None:
    assert foreign_lineages(snapshot, observed, declared) == expected


def test_the_refusal_names_both_lineages_and_the_addresses() -> None:
    with pytest.raises(ForeignState) as caught:
        check_lineage(state(), [Seen("rp.a", THEIRS)], ("rp.a",))
    message = str(caught.value)
    assert OURS in message and THEIRS in message and "rp.a" in message
    assert caught.value.foreign == [THEIRS]
    check_lineage(state("rp.a"), [Seen("rp.a", OURS)])  # no refusal
