"""The pip command that adds an optional extra (aws, gcp, postgres) to this poolform.

Installed from a checkout with `pip install -e .` (as the README starts), poolform must get the
extra from that checkout: `pip install 'poolform[aws]'` would fetch a release of that name from
the package index and install it over the checkout, or fail where there is none. Here, under
providers/, as the provider registry is where a missing cloud SDK is met first; the checks and
the CLI name the extras too."""

from __future__ import annotations

import shlex
from pathlib import Path

# The directory that holds the `providers` package: a checkout's root when poolform runs from
# its source (an editable install), site-packages for a release.
INSTALLED_AT = Path(__file__).resolve().parent.parent


def install_command(extra: str, *, installed_at: Path = INSTALLED_AT) -> str:
    """`pip install -e 'CHECKOUT[extra]'` when poolform runs from a checkout, else the
    release's `pip install 'poolform[extra]'`."""
    if _is_checkout(installed_at):
        return f"pip install -e {shlex.quote(f'{installed_at}[{extra}]')}"
    return f"pip install 'poolform[{extra}]'"


def _is_checkout(directory: Path) -> bool:
    """poolform's own source tree: its pyproject.toml names the project poolform."""
    import tomllib  # only when a message needs it: ~10 ms, more than validating a small file

    try:
        with (directory / "pyproject.toml").open("rb") as file:
            project = tomllib.load(file).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False
    return isinstance(project, dict) and project.get("name") == "poolform"
