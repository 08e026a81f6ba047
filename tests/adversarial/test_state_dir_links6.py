"""A configuration whose `.poolform` is a dangling or looping symbolic link (a volume not
mounted, a link to a directory deleted since). Every command that takes the state lock tried
to make the directory 100 times and then said the lock file "keeps disappearing". Now it says
what is wrong, naming the link and where it points (exit 1), and makes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

LINKS = {"dangling": "{tmp}/unmounted/volume", "looping": ".poolform"}
COMMANDS = {"plan": ["plan"], "apply": ["apply", "--auto-approve"], "drift": ["drift"]}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
@pytest.mark.parametrize("target", LINKS.values(), ids=LINKS.keys())
def test_a_state_directory_link_to_nowhere_is_named(
    pf: Pf, quick: Path, tmp_path: Path, target: str, command: list[str]
) -> None:
    link = quick / ".poolform"
    pointed = target.format(tmp=tmp_path)
    link.symlink_to(pointed)

    result = pf(command[0], quick, *command[1:])

    assert result.returncode == 1, result.stdout
    assert f"{link}: it is a symbolic link to {pointed}, which does not exist" in result.stderr
    assert "keeps disappearing" not in result.stderr
    assert link.is_symlink() and not link.exists() and not (tmp_path / "unmounted").exists()
