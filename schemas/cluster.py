"""Cluster: one per configuration; defaults for everything else (from Determined).

The provider and region every pool uses unless it names its own, the default compute (GPU) and
auxiliary (CPU) pools jobs land in when they name none, and where state is kept.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from schemas.base import NAME_PATTERN, Document, Strict
from schemas.rules import UpdateRule, spec

# What the backends can open, checked here so that `validate` names the field (plan would
# otherwise fail later with no file or line): a PostgreSQL schema poolform quotes as a plain
# identifier (state/postgres_schema.py), an S3 bucket name as botocore accepts one.
POSTGRES_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")
S3_BUCKET = re.compile(r"[A-Za-z0-9.\-_]{1,255}")


class StateBackendConfig(Strict):
    backend: Literal["sqlite", "postgres", "s3"] = "sqlite"
    path: str | None = Field(
        None, description="sqlite: the database file (default .poolform/state.db)."
    )
    dsn: str | None = spec(
        None,
        sensitive=True,
        description="postgres: connection string (default POOLFORM_PG_URL, else libpq's PG* "
        "environment).",
    )
    bucket: str | None = Field(None, description="s3: the bucket.")
    key: str | None = Field(
        None,
        description="s3: the prefix of the state's objects; postgres: the schema (default "
        "poolform for both).",
    )
    region: str | None = None
    lease_seconds: float = Field(
        30, ge=1, le=3600, description="s3: how long a lock holder's lease lasts unrenewed."
    )

    @field_validator("key")
    @classmethod
    def _key_opens(cls, value: str | None, info: ValidationInfo) -> str | None:
        backend = info.data.get("backend")
        if value is None:
            return value
        if backend == "postgres" and not POSTGRES_SCHEMA.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a PostgreSQL schema poolform can use: 1-63 lower case "
                "letters, digits and _, not starting with a digit"
            )
        if backend == "s3" and not value.strip("/"):
            raise ValueError("an S3 key prefix needs at least one character besides '/'")
        return value

    @field_validator("bucket")
    @classmethod
    def _bucket_name(cls, value: str | None) -> str | None:
        if value and not S3_BUCKET.fullmatch(value):
            raise ValueError(
                f"{value!r} is not an S3 bucket name (letters, digits, '.', '-' and '_')"
            )
        return value

    @model_validator(mode="after")
    def _complete(self) -> StateBackendConfig:
        if self.backend == "s3" and not self.bucket:
            raise ValueError("the s3 backend needs `bucket`")
        return self


class Cluster(Document):
    kind: Literal["Cluster"] = "Cluster"
    provider: Literal["local", "aws", "gcp"] = spec("local", update=UpdateRule.IN_PLACE)
    region: str | None = spec(None, update=UpdateRule.IN_PLACE)
    default_compute_pool: str | None = Field(
        None, pattern=NAME_PATTERN, description="For jobs that need GPUs."
    )
    default_aux_pool: str | None = Field(
        None, pattern=NAME_PATTERN, description="For CPU-only jobs."
    )
    state: StateBackendConfig = Field(default_factory=StateBackendConfig)
    provider_settings: dict[str, Any] = Field(
        default_factory=dict,
        description="Provider knobs, e.g. the local provider's latency_ms, fault_rate, capacity.",
    )

    def references(self) -> list[tuple[tuple[str | int, ...], str, str]]:
        refs: list[tuple[tuple[str | int, ...], str, str]] = []
        if self.default_compute_pool:
            refs.append((("default_compute_pool",), "pool", self.default_compute_pool))
        if self.default_aux_pool:
            refs.append((("default_aux_pool",), "pool", self.default_aux_pool))
        return refs
