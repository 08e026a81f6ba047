"""The stateful properties of test_properties.py again, with room held against starvation
after a single bypass: the bound then binds in almost every run, where every work-conservation
failure the random search has found so far came from (see test_property_examples.py)."""

from __future__ import annotations

from hypothesis import settings

from tests.scheduler.test_properties import RANDOM_SEARCH, Scheduling


class TightBypass(Scheduling):
    def __init__(self) -> None:
        super().__init__(max_bypass=1)


TightBypass.TestCase.settings = settings(
    max_examples=20, stateful_step_count=50, deadline=None, derandomize=not RANDOM_SEARCH
)
TestTightBypass = TightBypass.TestCase
