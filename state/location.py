"""Where a state is: a backend and its settings, from the Cluster or from a URL, and opening it.

URLs (for ``state migrate --to`` / ``--from``)::

    sqlite:///abs/path/state.db, or a plain path      the embedded backend
    postgresql://user:pass@host:port/db?schema=NAME    PostgreSQL (schema default "poolform")
    s3://bucket/prefix?region=R&endpoint=URL&lease=30  S3 (prefix default "poolform")

A PostgreSQL location with no connection string uses ``POOLFORM_PG_URL``, or else libpq's own
environment (PGHOST, PGUSER, PGPASSWORD, ...). An S3 location with no endpoint uses boto3's own
configuration (AWS_ENDPOINT_URL, profiles, ...). Nothing here prints a password.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from state.errors import StateError
from state.locking import Clock, Sleep
from state.protocol import StateBackend
from state.s3_lease import LEASE_HIGH, LEASE_LOW

__all__ = ["Location", "location_from_url", "open_location"]

PG_URL_VARIABLE = "POOLFORM_PG_URL"


@dataclass(frozen=True)
class Location:
    """One state's place. ``dsn`` may hold a password: never show it; show ``describe()``."""

    backend: str  # sqlite | postgres | s3
    path: Path | None = None
    dsn: str = field(default="", repr=False)
    schema: str = "poolform"
    bucket: str = ""
    prefix: str = "poolform"
    region: str | None = None
    endpoint: str | None = None
    lease_seconds: float = 30.0

    def describe(self) -> str:
        if self.backend == "sqlite":
            return str(self.path)
        if self.backend == "postgres":
            from state.postgres import describe_dsn

            return f"{describe_dsn(self.dsn)[0]} (schema {self.schema})"
        return f"s3://{self.bucket}/{self.prefix}"


def _postgres(url: str) -> Location:
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), "poolform")
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    return Location("postgres", dsn=urlunsplit(parts._replace(query=rest)), schema=schema)


def _s3(url: str) -> Location:
    parts = urlsplit(url)
    if not parts.netloc:
        raise StateError(f"{url!r}: an S3 state URL is s3://BUCKET/PREFIX")
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    _refuse_odd_s3_parts(url, parts.fragment, pairs)
    query = dict(pairs)
    try:
        lease = float(query.get("lease", "30"))
    except ValueError:
        lease = math.nan
    # As the Cluster's lease_seconds: a lease of NaN, 0 or a negative length would never run
    # out (a dead holder's lock kept for good) or run out at once (two holders).
    if not LEASE_LOW <= lease <= LEASE_HIGH:
        raise StateError(
            f"{url!r}: lease must be a number of seconds from {LEASE_LOW:g} to {LEASE_HIGH:g}"
        )
    return Location(
        "s3",
        bucket=parts.netloc,
        prefix=parts.path.strip("/") or "poolform",
        region=query.get("region"),
        endpoint=query.get("endpoint"),
        lease_seconds=lease,
    )


S3_PARAMETERS = ("region", "endpoint", "lease")


def _refuse_odd_s3_parts(url: str, fragment: str, pairs: list[tuple[str, str]]) -> None:
    """What the URL says but would not be used: a state copied somewhere else than the user
    meant, and the Cluster then pointed at a place that holds nothing. `?regoin=eu-west-1` was
    dropped (the SDK's default region used), `?region=` read as none, and `#` cut the prefix
    (`s3://b/team#2` copied to `team`)."""
    from schemas.text import did_you_mean

    if fragment or url.endswith("#"):
        raise StateError(
            f"{url!r}: `#` ends the prefix of an S3 state URL (the rest would be dropped); "
            "choose a prefix without it"
        )
    for name, value in pairs:
        if name not in S3_PARAMETERS:
            close = did_you_mean(name, S3_PARAMETERS)
            raise StateError(
                f"{url!r}: unknown parameter {name!r} (an S3 state URL takes "
                f"{', '.join(S3_PARAMETERS)}){'; ' + close if close else ''}"
            )
        if not value.strip():
            raise StateError(f"{url!r}: parameter {name!r} is empty")
    names = [name for name, _ in pairs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise StateError(f"{url!r}: parameter {twice[0]!r} is given twice")


def location_from_url(url: str, base: Path | None = None) -> Location:
    """The Location a ``state migrate`` URL names (a relative path is under ``base``)."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    try:
        if scheme in ("postgresql", "postgres"):
            return _postgres(url)
        if scheme == "s3":
            return _s3(url)
    except ValueError as exc:  # urlsplit: a bracket left open, a port that is no number
        # The URL is not repeated: a PostgreSQL one may hold a password.
        raise StateError(
            f"the {scheme}:// URL does not parse ({exc}; not shown: it may hold a password)"
        ) from None
    if scheme in ("sqlite", "file"):
        url = url.split("://", 1)[1]
    elif scheme:
        raise StateError(
            f"{url.split('://', 1)[0]}://: not a state URL (sqlite path, postgresql://, s3://)"
        )
    path = Path(url)
    return Location("sqlite", path=path if path.is_absolute() or base is None else base / path)


_ENV = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


def postgres_dsn(configured: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """The connection string: the Cluster's ``dsn`` (``${env:NAME}`` resolved), else
    POOLFORM_PG_URL, else "" (libpq reads PGHOST, PGUSER, PGPASSWORD... itself)."""
    if configured:

        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in environ:
                raise StateError(f"state.dsn: environment variable {name} is not set")
            return environ[name]

        return _ENV.sub(value, configured)
    return environ.get(PG_URL_VARIABLE, "")


def open_location(
    location: Location,
    *,
    directory: str = "",
    clock: Clock = time.monotonic,
    sleep: Sleep = time.sleep,
) -> StateBackend:
    """The backend at ``location`` (opening creates nothing)."""
    if location.backend == "sqlite":
        from state.sqlite import SqliteStateBackend

        assert location.path is not None
        return SqliteStateBackend(location.path, directory=directory, clock=clock, sleep=sleep)
    if location.backend == "postgres":
        from state.postgres import PostgresBackend

        return PostgresBackend(
            location.dsn, schema=location.schema, directory=directory, clock=clock, sleep=sleep
        )
    if location.backend == "s3":
        from state.s3 import S3Backend

        return S3Backend(
            location.bucket,
            location.prefix,
            region=location.region,
            endpoint_url=location.endpoint,
            directory=directory,
            lease_seconds=location.lease_seconds,
            clock=clock,
            sleep=sleep,
        )
    raise StateError(f"unknown state backend {location.backend!r}")
