"""The provider a configuration names, and the local provider's cloud kept beside the state."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from providers.protocol import Provider
from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from reconciler.workspace.location import open_state, state_path
from state import StateBackend
from state.location import Location
from state.sqlite import default_state_path


def local_cloud_dir(location: Location, configuration: Configuration) -> Path:
    """Where the local provider keeps its cloud while the state is at `location`: beside a
    SQLite state, else in the configuration's default state directory (as open_provider),
    links resolved (a link to the state file is that state)."""
    if location.backend == "sqlite" and location.path is not None:
        return Path(location.path).resolve().parent
    return default_state_path(Path(configuration.directory).resolve()).parent


def refuse_leaving_the_local_cloud(
    configuration: Configuration, source: Location, target: Location
) -> None:
    """PoolformError when moving a local-provider state from `source` to `target` would leave
    its cloud behind: with the state at `target`, the provider would open a new, empty cloud
    beside it and plan every recorded resource again, while the old ones keep running."""
    from providers.local.admin import holdings

    if configuration.cluster.provider != "local":
        return
    here, there = local_cloud_dir(source, configuration), local_cloud_dir(target, configuration)
    if here == there or not holdings(here):
        return
    raise PoolformError(
        f"the local provider's cloud is in {here}, beside the state: with the state at "
        f"{target.describe()} it would be looked for in {there}, and every resource would be "
        "planned again in a new, empty cloud while the ones in "
        f"{here} keep running",
        hint=f"keep the state in {here} (a SQLite path there), where the cloud is",
    )


def local_cloud_absent(configuration: Configuration) -> bool:
    """True when the provider is the local one and its cloud was never made where
    open_provider would open it (opening it makes its files)."""
    return (
        configuration.cluster.provider == "local"
        and not (state_path(configuration).parent / "local-cloud.db").is_file()
    )


def local_cloud_empty(configuration: Configuration) -> bool:
    """True when the provider is the local one and its cloud (where open_provider opens it)
    holds no group or object, or is not there at all: nothing can be found in it, and opening
    it would make its files for nothing."""
    if configuration.cluster.provider != "local":
        return False
    from providers.local.admin import holdings

    return holdings(state_path(configuration).parent) == 0


def open_provider(configuration: Configuration, backend: StateBackend | None = None) -> Provider:
    """The Cluster's provider (local by default), imported only now. AWS and GCP keep their
    control-plane objects in the state backend: ``backend`` when given (a command that writes
    passes the one it holds the lock on), else one opened here and closed with the provider."""
    from providers.registry import get_provider

    cluster = configuration.cluster
    control = None
    if cluster.provider in ("aws", "gcp"):
        from providers.control_plane import StoredControlPlane

        store = backend if backend is not None else open_state(configuration)
        _adopt_embedded_objects(state_path(configuration).parent, store)
        control = StoredControlPlane(store, on_close=None if backend is not None else store.close)
    return get_provider(
        cluster.provider,
        cluster.provider_settings,
        state_path(configuration).parent,
        region=cluster.region,
        control=control,
    )


def _adopt_embedded_objects(state_dir: Path, store: StateBackend) -> None:
    """Before the backend kept them, the AWS and GCP providers kept control-plane objects in the
    local cloud database beside the state: bring them over once, so none is planned again."""
    import json
    import sqlite3

    from state import ControlObject

    embedded = state_dir / "local-cloud.db"
    if not embedded.exists() or not store.exists() or store.all_objects():
        return
    try:
        # mode=rw with query_only, not mode=ro, which leaves the WAL files it makes behind
        with closing(sqlite3.connect(f"file:{embedded}?mode=rw", uri=True)) as db:
            db.execute("PRAGMA query_only=ON")
            rows = db.execute(
                "SELECT id, address, lineage, resource_type, attributes, tags FROM objects"
            ).fetchall()
    except sqlite3.Error:
        return  # no objects table: nothing was kept there
    for object_id, address, lineage, resource_type, attributes, tags in rows:
        store.put_object(
            ControlObject(
                object_id, address, lineage, resource_type, json.loads(attributes), json.loads(tags)
            )
        )
