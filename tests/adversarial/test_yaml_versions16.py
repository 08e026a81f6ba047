"""YAML 1.1 against 1.2. poolform reads YAML 1.2 (README): `name: no` is the text "no",
`gpu: 017` is 17. A file that says `%YAML 1.1` was read that way too, silently, where every
YAML 1.1 reader (PyYAML, ruamel honouring the directive) reads `name: false` and `gpu: 15`: a
review in another tool saw other capacity than poolform planned. The directive is refused now
(yaml-version, naming its line); 1.2 surprises without it are pinned as README says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

POOL = (
    "kind: ResourcePool\nname: no\ncapacity: {gpu: 017, cpu: 0o17, memory: 1e3, step_run: 0x10}\n"
)


@pytest.mark.parametrize("directive", ["%YAML 1.1", "%YAML   1.1 # old", "%YAML 1.0"])
def test_a_yaml_1_1_directive_is_refused(pf: Pf, tmp_path: Path, directive: str) -> None:
    (tmp_path / "c.yaml").write_text(f"{directive}\n---\n{POOL}")
    result = pf("validate", "--chdir", tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"c.yaml:1:1: error: `%YAML {directive.split()[1]}`: ")
    assert "poolform reads YAML 1.2" in result.stderr and "[yaml-version]" in result.stderr
    assert not (tmp_path / ".poolform").exists()


def test_a_later_documents_directive_is_found_by_its_line(pf: Pf, tmp_path: Path) -> None:
    other = POOL.replace("name: no", "name: other")
    (tmp_path / "c.yaml").write_text(f"{other}...\n%YAML 1.1\n---\n{POOL}")
    result = pf("validate", "--chdir", tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("c.yaml:5:1: error: `%YAML 1.1`")


@pytest.mark.parametrize("directive", ["", "%YAML 1.2\n---\n"])
def test_yaml_1_2_reads_as_readme_says(pf: Pf, tmp_path: Path, directive: str) -> None:
    (tmp_path / "c.yaml").write_text(directive + POOL)
    plan = pf("plan", tmp_path, "--json")
    assert plan.returncode == 0, plan.stderr
    [change] = json.loads(plan.stdout)["changes"]
    assert change["address"] == "resource_pool.no"
    assert change["after"]["capacity"] == {"gpu": 17, "cpu": 15, "memory": 1000, "step_run": 16}
