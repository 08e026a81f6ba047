"""`${env:NAME}` is poolform's one interpolation, read only as a sensitive field's whole value.
- In a sensitive field, `token-${env:A}`, `${env:A}${env:B}` or a block scalar's `${env:A}`
  with its newline were valid and kept as the literal text: the worker got `token-${env:A}`
  as its secret, and no plan ever changed with A. Now refused (env-not-read-here), naming the
  field. The state DSN, which the backend resolves inside its text, is still taken.
- A setup script's `${env:-dev}` or `${env:0:3}` (the shell's expansion of a variable named
  `env`) was refused as a poolform reference; it is left to the shell now."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

POOL = "kind: WorkerPool\nname: w\npool: {workers: 1}\nresources: {instance_type: c5.xlarge}\n"


@pytest.mark.parametrize("value", ['"token-${env:A}"', '"${env:A}${env:B}"', "|\n    ${env:A}"])
def test_a_reference_inside_other_text_of_a_secret_is_refused(
    pf: Pf, tmp_path: Path, value: str
) -> None:
    (tmp_path / "c.yaml").write_text(POOL + f"secrets:\n  T: {value}\n")
    result = pf("validate", "--chdir", tmp_path, env={"A": "1", "B": "2"})
    assert result.returncode == 1
    assert result.stderr.startswith(
        "c.yaml:6:6: error: secrets.T: `${env:NAME}` is read only as a sensitive field's "
        "whole value; inside other text it would be kept as the literal text [env-not-read-here]"
    ), result.stderr


def test_whole_references_and_the_dsn_inside_text_are_taken(pf: Pf, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "kind: Cluster\nname: c\nprovider: local\nstate: {backend: postgres, dsn: "
        '"postgresql://u:${env:PW}@h/db"}\n---\n' + POOL + 'secrets: {T: "${env:A}"}\n'
    )
    result = pf("validate", tmp_path)
    assert result.returncode == 0, result.stderr


def test_a_shell_expansion_of_a_variable_named_env_is_left_to_the_shell(
    pf: Pf, tmp_path: Path
) -> None:
    (tmp_path / "c.yaml").write_text(POOL + 'setup: |\n  echo "${env:-dev}" "${env:0:3}"\n')
    result = pf("validate", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "env-not-read-here" not in result.stderr
