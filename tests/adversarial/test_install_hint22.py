"""A missing extra (aws, gcp, postgres) is named with the pip command that adds it to the
poolform being run. The README starts with `pip install -e .` in a checkout: told to run
`pip install 'poolform[aws]'`, that user would fetch a release of that name from the package
index and install it over the checkout (or fail where the index has none). poolform running
from a checkout is told `pip install -e 'CHECKOUT[aws]'`; a release the release's extra."""

from __future__ import annotations

import shlex
from pathlib import Path

from providers.install import INSTALLED_AT, install_command
from tests.adversarial.conftest import Pf
from tests.conftest import EXAMPLES, ROOT, copy_example


def test_poolform_run_from_a_checkout_is_told_to_add_the_extra_from_that_checkout(
    tmp_path: Path,
) -> None:
    checkout = tmp_path / "my checkout"  # a space: the command must still paste as one word
    checkout.mkdir()
    (checkout / "pyproject.toml").write_text('[project]\nname = "poolform"\nversion = "0.1.0"\n')
    command = install_command("aws", installed_at=checkout)
    assert command == f"pip install -e '{checkout}[aws]'"
    assert shlex.split(command) == ["pip", "install", "-e", f"{checkout}[aws]"]


def test_a_release_is_told_the_release_s_extra(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    assert install_command("gcp", installed_at=site) == "pip install 'poolform[gcp]'"
    # Another project's tree (poolform vendored into it) is not poolform's checkout.
    (site / "pyproject.toml").write_text('[project]\nname = "platform-tools"\n')
    assert install_command("gcp", installed_at=site) == "pip install 'poolform[gcp]'"
    (site / "pyproject.toml").write_text("not toml = = =\n")
    assert install_command("gcp", installed_at=site) == "pip install 'poolform[gcp]'"


def test_the_installed_cli_names_the_checkout_it_runs_from(pf: Pf, tmp_path: Path) -> None:
    """The cloud SDK shadowed as missing, as in a venv made by the README's first command."""
    assert INSTALLED_AT == ROOT  # these tests run from the checkout (`pip install -e`)
    shadow = tmp_path / "shadow" / "botocore"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError('No module named botocore', name='botocore')\n"
    )
    configuration = copy_example(EXAMPLES / "anyscale-aws", tmp_path / "config", "*.md")
    result = pf("apply", configuration, "--auto-approve", env={"PYTHONPATH": str(shadow.parent)})
    assert result.returncode == 1
    assert f"run `pip install -e {shlex.quote(f'{ROOT}[aws]')}`" in result.stderr, result.stderr


def test_validate_names_the_checkout_for_a_state_backend_whose_driver_is_missing(
    pf: Pf, tmp_path: Path
) -> None:
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    # Not importable, nor found: validate looks for the driver without importing it.
    (shadow / "sitecustomize.py").write_text("import sys\nsys.modules['psycopg'] = None\n")
    configuration = tmp_path / "config"
    configuration.mkdir()
    (configuration / "cluster.yaml").write_text(
        "kind: Cluster\nname: team\nstate:\n  backend: postgres\n"
    )
    result = pf("validate", configuration, env={"PYTHONPATH": str(shadow)})
    assert result.returncode == 1
    assert f"run `pip install -e {shlex.quote(f'{ROOT}[postgres]')}`" in result.stderr, (
        result.stderr
    )
