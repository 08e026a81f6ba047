"""Where a configuration's state lives, and opening it. The one place backends are chosen."""

from __future__ import annotations

from pathlib import Path

from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from state import StateBackend
from state.sqlite import SqliteStateBackend, default_state_path


def state_path(configuration: Configuration) -> Path:
    settings = configuration.cluster.state
    if settings.path:
        path = Path(settings.path)
        return path if path.is_absolute() else configuration.directory / path
    return default_state_path(configuration.directory)


def open_state(configuration: Configuration) -> StateBackend:
    """The configuration's state backend: SQLite beside it unless the Cluster names another."""
    settings = configuration.cluster.state
    if settings.backend == "sqlite":
        return SqliteStateBackend(state_path(configuration))
    raise PoolformError(
        f"the {settings.backend} state backend is not available in this version",
        hint="use the default sqlite backend (remove `state.backend` from the Cluster)",
    )
