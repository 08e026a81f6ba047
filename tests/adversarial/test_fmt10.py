"""`poolform fmt FILE` of a file that is not a configuration file. Any text reads as YAML (a
Dockerfile or a requirements.txt is one plain scalar, a package.json one flow mapping), so fmt
"laid it out": `FROM x\\nRUN a` became `FROM x RUN a\\n...`, two requirements one line, and
said so with exit 0. As `terraform fmt` does with a file that is not .tf, fmt now refuses a
FILE not named *.yaml or *.yml (exit 1) and leaves it alone; a directory's own *.yaml/*.yml
files are formatted as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

NOT_YAML = {
    "Dockerfile": "FROM python:3.11\nRUN pip install poolform\n",
    "requirements.txt": "numpy\npandas\n",
    "package.json": '{\n    "name": "x",\n    "private": true\n}\n',
}


@pytest.mark.parametrize("name", sorted(NOT_YAML))
@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
def test_fmt_of_a_file_that_is_not_yaml_leaves_it_alone(
    pf: Pf, tmp_path: Path, name: str, check: bool
) -> None:
    path = tmp_path / name
    path.write_text(NOT_YAML[name])
    result = pf("fmt", path, *(["--check"] if check else []))
    assert result.returncode == 1, result.stdout
    assert f"{name} is not a *.yaml or *.yml file" in result.stderr
    assert result.stdout == ""
    assert path.read_text() == NOT_YAML[name]


def test_a_yaml_file_given_on_its_own_is_still_formatted(pf: Pf, tmp_path: Path) -> None:
    path = tmp_path / "pool.yml"
    path.write_text("kind: ResourcePool\nname: a\ncapacity:\n    gpu: 4\n")
    result = pf("fmt", path)
    assert result.returncode == 0, result.stderr
    assert path.read_text() == "kind: ResourcePool\nname: a\ncapacity:\n  gpu: 4\n"


def test_a_missing_file_is_still_said_to_be_missing(pf: Pf, tmp_path: Path) -> None:
    result = pf("fmt", tmp_path / "gone")
    assert result.returncode == 1 and "gone does not exist" in result.stderr
