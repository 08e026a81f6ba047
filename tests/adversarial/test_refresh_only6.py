"""`apply --refresh-only` on a configuration never applied (a first run, or a directory given by
mistake) said "Nothing to accept" but left a `.poolform/` behind: the local cloud's database
and its workers directory, made by opening the provider. Reading a state that does not exist
creates nothing (README, "Damage is never a fresh start"), as `plan --refresh-only` and `drift`
already did; now `apply --refresh-only` opens no provider when no create ever started."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf


@pytest.mark.parametrize("json", [False, True])
def test_refresh_only_of_a_configuration_never_applied_leaves_nothing(
    pf: Pf, quick: Path, json: bool
) -> None:
    accepted = pf("apply", quick, "--refresh-only", "--auto-approve", *(["--json"] if json else []))
    assert accepted.returncode == 0, accepted.stderr
    assert ("Nothing to accept" in accepted.stdout) != json
    assert not (quick / ".poolform").exists()
