"""validate checks settings as plan would use them: provider_settings by the provider's own
parser (without importing a cloud SDK), the state backend by asking which ones exist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import reconciler.checks.settings as settings_checks
from reconciler.checks import load_configuration
from reconciler.errors import ConfigurationError
from tests.conftest import EXAMPLES, ROOT


def _refusals(directory: Path) -> list[tuple[str, int, int, str]]:
    with pytest.raises(ConfigurationError) as refused:
        load_configuration(directory)
    return [
        (d.rule, d.location.line, d.location.column, d.message)
        for d in refused.value.diagnostics
        if d.location is not None
    ]


@pytest.mark.parametrize(
    ("provider", "settings", "line", "needle"),
    [
        ("aws", "  image_id: ami-1\n  max_attempts: lots\n", 7, "max_attempts must be a number"),
        ("aws", "  subnet_ids: [1, 2]\n", 6, "subnet_ids must be a list of strings"),
        ("aws", "  max_attempts: 1000000000\n", 6, "max_attempts must be between 1 and 21"),
        ("gcp", "  project: p\n  page_size: 501\n", 7, "page_size must be between 1 and 500"),
        ("gcp", "  project: p\n  retries: -1\n", 7, "retries must be between 0 and 20"),
        ("local", "  capacity: {m5.large: {RESERVED: 1}}\n", 6, "capacity market 'RESERVED'"),
    ],
)
def test_provider_settings_go_through_the_providers_own_parser(
    write, provider: str, settings: str, line: int, needle: str
) -> None:
    directory = write(
        {
            "cluster.yaml": f"kind: Cluster\nname: main\nprovider: {provider}\nregion: r1\n"
            f"provider_settings:\n{settings}"
        }
    )
    ((rule, at, _, message),) = _refusals(directory)
    assert rule == "provider-settings"
    assert at == line
    assert needle in message


@pytest.mark.parametrize(
    ("backend", "driver", "needle"),
    [
        ("postgres", "psycopg", "the postgres state backend needs psycopg, which is not installed"),
        ("s3", "boto3", "the s3 state backend needs boto3, which is not installed"),
        ("postgres", "state.postgres", "the postgres state backend is not available in this"),
    ],
)
def test_a_backend_whose_driver_is_missing_is_a_validation_error(
    write, monkeypatch: pytest.MonkeyPatch, backend: str, driver: str, needle: str
) -> None:
    installed = settings_checks._installed
    monkeypatch.setattr(settings_checks, "_installed", lambda m: m != driver and installed(m))
    directory = write(
        {
            "cluster.yaml": f"kind: Cluster\nname: main\nstate:\n  backend: {backend}\n"
            "  dsn: ${env:PG}\n  bucket: b\n"
        }
    )
    ((rule, line, column, message),) = _refusals(directory)
    assert (rule, line, column) == ("state-backend", 4, 12)
    assert needle in message


def test_the_backends_that_exist_are_asked_once_and_flip_with_the_state_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "sqlite" in settings_checks.state_backends()
    monkeypatch.setitem(settings_checks._BACKEND_MODULES, "memory", ("state.sqlite", "json"))
    monkeypatch.setitem(settings_checks._BACKEND_MODULES, "nowhere", ("state.nowhere",))
    available = settings_checks.state_backends()
    assert "memory" in available
    assert "nowhere" not in available


@pytest.mark.parametrize("example", ["anyscale-aws", "anyscale-gcp"])
def test_validate_checks_cloud_settings_without_importing_a_cloud_sdk(example: str) -> None:
    code = (
        "import sys\nfrom reconciler.cli.main import main\n"
        "assert main(['validate', sys.argv[1]]) == 0\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore')"
        " or m.startswith('google.cloud')]\n"
        "print(heavy)\nsys.exit(1 if heavy else 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(EXAMPLES / example)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
