"""A SQLite database kept beside the state, made private to its owner.

The mode is changed only where it differs: a private database on a read-only file or mount is
read as it is, and its writes are refused, each with SQLite's own error.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


def owner_only(database: Path) -> None:
    """Mode 0600 for the database and its WAL companions that exist; OSError (naming the
    file) when one cannot be made so."""
    for suffix in ("", "-wal", "-shm"):
        name = f"{database}{suffix}"
        with contextlib.suppress(FileNotFoundError):
            if stat.S_IMODE(os.stat(name).st_mode) != 0o600:
                os.chmod(name, 0o600)
