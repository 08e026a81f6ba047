"""The collector pause: nothing collected inside; with `keep`, what was built is frozen after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from reconciler.gcpause import collector_paused


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.enable()


def test_the_collector_is_off_inside_and_back_on_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def _scanned(objects: list[list[int]]) -> int:
    """How many of `objects` a collection would still look at."""
    ids = {id(x) for x in objects}
    return sum(1 for x in gc.get_objects() if id(x) in ids)


def test_without_keep_what_was_built_is_scanned_again() -> None:
    with collector_paused():
        built = [[n] for n in range(1000)]  # lists: always tracked
    assert _scanned(built) == len(built)


def test_keep_freezes_what_was_built_so_later_scans_skip_it() -> None:
    with collector_paused(keep=True):
        built = [[n] for n in range(1000)]  # lists: always tracked
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(built)
    assert _scanned(built) == 0


def test_a_failure_inside_freezes_nothing_and_turns_the_collector_back_on() -> None:
    with pytest.raises(RuntimeError), collector_paused(keep=True):
        raise RuntimeError("boom")
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_nested_pause_leaves_the_collector_off_for_the_outer_one() -> None:
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
