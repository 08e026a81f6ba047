"""`poolform plan` (apply, validate) in a directory with no configuration: the wrong directory,
the repository's root, a typo. It said `. has no *.yaml or *.yml files` with the hint "to
remove everything it manages, use `poolform plan --destroy` or `poolform destroy`": an empty
directory read as "delete everything", with nothing even recorded. It now says no
configuration was found there and only where to look; nothing is made. A directory emptied
while its state records resources is refused as before, its hint leading with restoring the
files, destroy named last and only as the deliberate way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest


@pytest.mark.parametrize(
    "command", [["plan"], ["plan", "--json"], ["apply", "--auto-approve"], ["validate"]]
)
@pytest.mark.parametrize("files", [{}, {"a.yaml": "", "b.yml": "---\n# only a comment\n"}])
def test_a_directory_with_no_configuration_says_so_and_never_suggests_destroy(
    pf: Pf, tmp_path: Path, command: list[str], files: dict[str, str]
) -> None:
    directory = tmp_path / "repo"
    directory.mkdir()
    for name, text in files.items():
        (directory / name).write_text(text)
    result = pf(*command, "--chdir", directory)
    assert result.returncode == 1
    told = json.loads(result.stdout)["error"]["message"] if "--json" in command else result.stderr
    for text in (told, result.stderr):
        assert "error: no configuration found: " in text
        assert "destroy" not in text
        assert "point poolform at the directory that holds the configuration" in text
    assert sorted(p.name for p in directory.iterdir()) == sorted(files)  # nothing made


def test_an_emptied_directory_with_a_state_leads_with_restoring_the_files(
    pf: Pf, quick: Path
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    for path in quick.glob("*.yaml"):
        path.unlink()
    before = tree_digest(quick)
    for command in (["plan"], ["apply", "--auto-approve"]):
        result = pf(*command, "--chdir", quick)
        assert result.returncode == 1
        assert "refusing to plan their deletion" in result.stderr
        hint = result.stderr.split("hint: ", 1)[1]
        assert hint.startswith("if its files were moved or deleted by mistake, restore them")
        assert "only to delete those resources, `poolform destroy" in hint
    assert tree_digest(quick) == before
