"""Settings checked as `plan` would use them: the provider's `provider_settings`, by the
provider's own parser, and the state backend, by asking which backends this version has.

Parsers are imported lazily and never import a cloud SDK, so validate stays quick.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from reconciler.checks.common import error
from reconciler.loading.configuration import Configuration, Finding
from schemas import Cluster

# A backend exists when its module is in `state` and the driver it needs is installed. The
# one place that answers; the state package growing a backend flips it.
_BACKEND_MODULES: dict[str, tuple[str, ...]] = {
    "sqlite": ("state.sqlite",),
    "postgres": ("state.postgres", "psycopg"),
    "s3": ("state.s3", "boto3"),
}
# The pip extra that brings a backend's driver.
_BACKEND_EXTRAS = {"postgres": "postgres", "s3": "aws"}


def _installed(module: str) -> bool:
    """Whether `module` could be imported, found without importing it (nor its package:
    importing `state` to look for `state.postgres` would cost more than the whole check)."""
    top, _, rest = module.partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    if not rest:
        return True
    for location in spec.submodule_search_locations or ():
        base = Path(location, *rest.split("."))
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return False


def backend_available(name: str) -> bool:
    return name in _BACKEND_MODULES and all(map(_installed, _BACKEND_MODULES[name]))


def state_backends() -> frozenset[str]:
    """The state backends this version can open."""
    return frozenset(name for name in _BACKEND_MODULES if backend_available(name))


def _settings_module(provider: str) -> Any:
    # By name, as providers/registry.py imports providers: a settings module never imports
    # its SDK, but its package's other modules do, and the layering allows no static path
    # from the reconciler to them.
    return importlib.import_module(f"providers.{provider}.settings")


def _parse_local(settings: Mapping[str, Any], cluster: Cluster) -> object:
    return _settings_module("local").Knobs.parse(settings, {})


def _parse_aws(settings: Mapping[str, Any], cluster: Cluster) -> object:
    return _settings_module("aws").AwsSettings.parse(settings)


def _parse_gcp(settings: Mapping[str, Any], cluster: Cluster) -> object:
    return _settings_module("gcp").GcpSettings.parse(settings, cluster.region, {})


# Each parser reads the file's settings only (no environment overrides): validate checks the
# configuration, the same on every machine.
PARSERS: dict[str, Callable[[Mapping[str, Any], Cluster], object]] = {
    "local": _parse_local,
    "aws": _parse_aws,
    "gcp": _parse_gcp,
}


def _refusal(
    parse: Callable[[Mapping[str, Any], Cluster], object],
    settings: Mapping[str, Any],
    cluster: Cluster,
) -> str | None:
    from providers.protocol import ProviderError

    try:
        parse(settings, cluster)
    except ProviderError as exc:
        return exc.message
    except (
        TypeError,
        ValueError,
        AttributeError,
    ) as exc:  # a parser meeting a shape it did not expect
        return f"{cluster.provider} provider settings: {exc}"
    return None


def provider_settings_accepted(config: Configuration) -> Iterator[Finding]:
    cluster = config.cluster
    parse = PARSERS.get(cluster.provider)
    declared = config.find(Cluster, cluster.name)
    if parse is None or declared is None:
        return
    settings = cluster.provider_settings
    if not settings and cluster.provider == "local":
        return  # the local provider's defaults (and importing it costs a twentieth of a second)
    refusal = _refusal(parse, settings, cluster)
    if refusal is None:
        return
    # The setting to point at: the one whose removal makes the parser accept the rest, else
    # one the refusal names.
    without = {key: {k: v for k, v in settings.items() if k != key} for key in settings}
    culprit = next(
        (key for key in settings if _refusal(parse, without[key], cluster) is None), None
    )
    if culprit is None:
        culprit = next((key for key in settings if str(key) in refusal), None)
    path: tuple[str, ...] = ("provider_settings",) if settings else ("provider",)
    if culprit is not None:
        path = ("provider_settings", culprit)
    yield error(config, cluster, "provider-settings", refusal, *path)


def state_backend_available(config: Configuration) -> Iterator[Finding]:
    cluster = config.cluster
    declared = config.find(Cluster, cluster.name)
    if declared is None:
        return
    backend = cluster.state.backend
    if not backend_available(backend):
        missing = [m for m in _BACKEND_MODULES.get(backend, ()) if not _installed(m)]
        extra = _BACKEND_EXTRAS.get(backend)
        if missing and extra and not missing[0].startswith("state."):
            message = f"the {backend} state backend needs {missing[0]}, which is not installed"
            from providers.install import install_command

            hint = f"run `{install_command(extra)}`"
        else:
            message = f"the {backend} state backend is not available in this version"
            hint = f"available: {', '.join(sorted(state_backends()))}"
        yield error(
            config,
            cluster,
            "state-backend",
            f"{message}; plan would fail",
            "state",
            "backend",
            hint=hint,
        )
