"""`poolform import` on a configuration never applied: the object cannot be in a local cloud
that was never made, yet import opened the provider first, which made the cloud (an empty
`.poolform/local-cloud.db` and `workers/`) and then said the object was not found; an
undeclared address was refused after making them too. Import now opens the provider only once
the address is checked, and not at all when the local cloud holds nothing."""

from __future__ import annotations

import re
from pathlib import Path

from tests.adversarial.conftest import Pf


def test_import_on_a_configuration_never_applied_makes_nothing(pf: Pf, quick: Path) -> None:
    result = pf("import", "resource_pool.team-quota", "obj-123", "--chdir", quick)
    assert result.returncode == 1
    assert "resource_pool.team-quota: obj-123: not found" in result.stderr, result.stderr
    assert "internal error" not in result.stderr
    assert not (quick / ".poolform").exists()


def test_import_of_an_undeclared_address_makes_nothing(pf: Pf, quick: Path) -> None:
    result = pf("import", "resource_pool.nope", "obj-123", "--chdir", quick)
    assert result.returncode == 1
    assert "resource_pool.nope is not declared" in result.stderr, result.stderr
    assert not (quick / ".poolform").exists()


def test_import_takes_back_what_state_rm_forgot(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    forgot = pf("state", "rm", "resource_pool.team-quota", "--chdir", quick)
    assert forgot.returncode == 0, forgot.stderr
    (object_id,) = re.findall(r"import resource_pool\.team-quota (\S+)`", forgot.stdout)
    taken = pf("import", "resource_pool.team-quota", object_id, "--chdir", quick)
    assert taken.returncode == 0, taken.stderr
    planned = pf("plan", quick, "--detailed-exitcode")
    assert planned.returncode == 0, planned.stdout
