"""What every document shares: `kind`, `name`, unknown fields rejected, immutable once loaded."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

NAME_PATTERN = r"^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$"
# A machine type ends its address (machine_pool.<pool>.machine_type.<machine type>): without
# dots it is the last segment, so the pool is everything before `.machine_type.` and no two
# (pool, machine type) pairs can share an address, whatever dots pool names hold.
MACHINE_TYPE_PATTERN = r"^[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?$"
# A resource key: `gpu`, `cpu`, `memory`, `step_run` or a custom key pools and policies share.
RESOURCE_KEY_PATTERN = r"^[a-z][a-z0-9_.-]{0,62}$"
PATTERN_MEANINGS = {
    NAME_PATTERN: "a name is 1-63 lower case letters, digits, '.', '_' or '-', "
    "starting and ending with a letter or digit",
    MACHINE_TYPE_PATTERN: "a machine type is 1-63 lower case letters, digits, '_' or '-', "
    "starting and ending with a letter or digit (no '.': it ends the address "
    "machine_pool.<pool>.machine_type.<machine type>)",
    RESOURCE_KEY_PATTERN: "a resource key is 1-63 lower case letters, digits, '.', '_' or '-', "
    "starting with a letter (gpu, cpu, memory, step_run or a custom key)",
}


ResourceKey = Annotated[str, StringConstraints(pattern=RESOURCE_KEY_PATTERN)]


class Strict(BaseModel):
    """Base for every nested object: unknown fields are errors, values are frozen."""

    # strict: YAML already gives typed values; lax coercion would take `size: true` as 1.
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, strict=True, defer_build=True
    )

    # Hints for fields that are deliberately absent (e.g. `run` on a pool), shown with the
    # unknown-field error.
    field_hints: ClassVar[dict[str, str]] = {}


class Document(Strict):
    """A top-level YAML document."""

    kind: str
    name: str = Field(
        pattern=NAME_PATTERN,
        description="Unique among documents of this kind; lower case, digits, '.', '_' and '-'.",
    )

    # Kinds that are not reconciled (a Job is submitted to the scheduler, not declared).
    declarative: ClassVar[bool] = True

    def always_replace_reason(self) -> str | None:
        """Why any change to this object forces replacement, if it does (e.g. SkyPilot's
        workers with file mounts are recreated on every update)."""
        return None

    def references(self) -> list[tuple[tuple[str | int, ...], str, str]]:
        """(field path, referenced kind family, referenced name) for every reference it holds."""
        return []

    def attributes(self) -> dict[str, Any]:
        """The object's attributes as plain data, the form state and diffs use."""
        return self.model_dump(mode="json", exclude={"kind", "name"}, by_alias=True)
