"""Import: take an existing cloud resource under management at an address of the
configuration, recording it in state (the next plan shows how it differs)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from providers.protocol import TAG_ADDRESS, TAG_LINEAGE, TAG_TOKEN
from reconciler.errors import PoolformError
from reconciler.plan.expand import expand
from reconciler.usecases.common import environment_values, load_directory
from reconciler.workspace import hold_lock, open_provider, open_state, secret_salt
from state import ResourceRecord


@dataclass(frozen=True)
class ImportedResource:
    address: str
    provider_ids: Mapping[str, str]


def recorded_attributes(
    desired: dict[str, Any], observed: dict[str, Any], resource_type: str
) -> dict[str, Any]:
    """What state records for an imported resource: the configuration's shape, with what the
    provider reports laid over it, so the next plan shows how reality differs."""
    if resource_type not in ("machine_type", "worker_pool"):
        return {key: observed.get(key, value) for key, value in desired.items()}
    attributes: dict[str, Any] = json.loads(json.dumps(desired))
    if resource_type == "machine_type":
        template = attributes["launch_templates"][0]
        for key in ("instance_type", "market_type"):
            if key in observed:
                template[key] = observed[key]
        for key in ("min_size", "max_size"):
            if key in observed:
                attributes[key] = observed[key]
    return attributes


def import_resource(
    directory: Path,
    address: str,
    provider_id: str,
    *,
    environ: Mapping[str, str],
    lock_timeout: float = 0.0,
) -> ImportedResource:
    """Record the resource the provider knows as `provider_id` at `address`, tagging it as
    this state's so refresh finds it from now on."""
    configuration = load_directory(directory, "import")
    backend = open_state(configuration)
    provider = open_provider(configuration)
    try:
        with hold_lock(backend, "import", lock_timeout, configuration):
            snapshot = backend.read()
            salt = secret_salt(configuration, snapshot.lineage)
            environment = environment_values(configuration, environ)
            desired = expand(configuration, salt, environment=environment).get(address)
            if desired is None:
                raise PoolformError(
                    f"{address} is not declared in {directory}",
                    hint="declare it first; `poolform plan` lists addresses",
                )
            if address in snapshot:
                raise PoolformError(
                    f"{address} is already managed", hint="`poolform state rm` it first"
                )
            tags = {
                TAG_LINEAGE: snapshot.lineage,
                TAG_ADDRESS: address,
                TAG_TOKEN: f"import-{provider_id}",
            }
            observed = provider.import_resource(address, desired.resource_type, provider_id, tags)
            attributes = recorded_attributes(
                desired.attributes, dict(observed.attributes), desired.resource_type
            )
            backend.write_resource(
                ResourceRecord(
                    address,
                    desired.resource_type,
                    attributes,
                    dict(observed.provider_ids),
                    desired.dependencies,
                ),
                expected_lineage=snapshot.lineage,
            )
    finally:
        provider.close()
        backend.close()
    return ImportedResource(address, dict(observed.provider_ids))
