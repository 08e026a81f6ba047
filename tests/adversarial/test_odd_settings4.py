"""The local provider's knobs given odd numbers, from the environment (where no YAML loader
refuses NaN) or from `provider_settings`: NaN, infinities and numbers past anything a setting
means are a clear error naming the setting, never an internal error, and change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest


@pytest.mark.parametrize(
    ("variable", "value", "setting"),
    [
        ("POOLFORM_LOCAL_LATENCY_MS", "nan", "latency_ms"),
        ("POOLFORM_LOCAL_LATENCY_MS", "1e400", "latency_ms"),
        ("POOLFORM_LOCAL_LATENCY_MS", "1e300", "latency_ms"),
        ("POOLFORM_LOCAL_SETUP_TIMEOUT", "NaN", "setup_timeout"),
        ("POOLFORM_LOCAL_CAPACITY", '{"m5.large": {"SPOT": 1e400}}', "capacity"),
        ("POOLFORM_LOCAL_CAPACITY", '{"m5.large": {"SPOT": NaN}}', "capacity"),
        ("POOLFORM_LOCAL_SEED", "1" * 40, "seed"),
    ],
)
def test_an_odd_number_in_the_environment_is_named_and_changes_nothing(
    pf: Pf, quick: Path, variable: str, value: str, setting: str
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    (quick / "worker-pool.yaml").write_text(
        (quick / "worker-pool.yaml").read_text().replace("workers: 2", "workers: 3")
    )
    before = tree_digest(quick)
    for command in (["plan", quick], ["apply", quick, "--auto-approve"], ["drift", quick]):
        result = pf(*command, env={variable: value})
        assert result.returncode == 1, result.stdout
        assert result.stderr.startswith("error: local provider settings: ")
        assert setting in result.stderr
        assert "internal error" not in result.stderr
    assert tree_digest(quick) == before


@pytest.mark.parametrize(
    ("setting", "value"), [("latency_ms", "1e300"), ("setup_timeout", "1e20"), ("seed", "1e30")]
)
def test_a_number_past_any_meaning_in_provider_settings_is_a_located_error(
    pf: Pf, quick: Path, setting: str, value: str
) -> None:
    cluster = quick / "cluster.yaml"
    cluster.write_text(cluster.read_text() + f"provider_settings:\n  {setting}: {value}\n")
    line = len(cluster.read_text().splitlines())
    before = tree_digest(quick)
    checked = pf("validate", quick)
    assert checked.returncode == 1
    said = checked.stdout + checked.stderr
    assert f"cluster.yaml:{line}:" in said and setting in said and "[provider-settings]" in said
    assert pf("apply", quick, "--auto-approve").returncode == 1
    assert tree_digest(quick) == before
