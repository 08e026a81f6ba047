"""Commands run on a configuration never applied (a first run, or a directory given by
mistake). `apply --refresh-only` said "Nothing to accept" and `destroy` said there were no
changes, but both left a `.poolform/` behind: the local cloud's database and its workers
directory, made by opening the provider. Reading a state that does not exist creates nothing
(README, "Damage is never a fresh start"), as `plan`, `plan --refresh-only`, `plan --destroy`
and `drift` already did; now neither opens a provider when no create ever started."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

COMMANDS = {
    "apply --refresh-only": ["apply", "--refresh-only", "--auto-approve"],
    "apply --refresh-only --json": ["apply", "--refresh-only", "--auto-approve", "--json"],
    "destroy": ["destroy", "--auto-approve"],
    "destroy --json": ["destroy", "--auto-approve", "--json"],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_configuration_never_applied_is_left_as_it_was(
    pf: Pf, quick: Path, command: list[str]
) -> None:
    result = pf(command[0], quick, *command[1:])
    assert result.returncode == 0, result.stderr
    assert not (quick / ".poolform").exists()
