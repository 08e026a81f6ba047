"""The recorded state: immutable records and the snapshot read from a backend."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = [
    "ControlObject",
    "CreateIntent",
    "HistoryEntry",
    "LockInfo",
    "ResourceRecord",
    "StateSnapshot",
]


@dataclass(frozen=True, slots=True)
class ResourceRecord:
    """One managed resource as last applied.

    ``attributes`` must be JSON-serialisable; ``provider_ids`` maps an id kind (for example
    ``"launch_template"``) to the provider's identifier; ``dependencies`` are addresses.
    ``place`` says where the provider holds it (``"region us-east-1"``), "" when unknown (a
    record written before places were recorded, or a provider without places): a plan made
    for another place would find nothing under the ids and make the capacity again there.
    It is no attribute, so no diff ever shows it.
    """

    address: str
    resource_type: str
    attributes: dict[str, Any] = field(default_factory=dict)
    provider_ids: dict[str, str] = field(default_factory=dict)
    dependencies: tuple[str, ...] = ()
    tainted: bool = False
    schema_version: int = 1
    place: str = ""


@dataclass(frozen=True, slots=True)
class CreateIntent:
    """A create that apply started: a resumed apply reuses ``token`` as the idempotency token."""

    address: str
    token: str
    created: str


@dataclass(frozen=True, slots=True)
class LockInfo:
    """Who holds the state lock, where, since when and for which operation."""

    lock_id: str
    operation: str
    who: str
    pid: int
    host: str
    created: str
    path: str = ""
    info: str = ""
    # Not stored: one line for the user when taking the lock meant taking over from a holder
    # that died without releasing it (the CLI shows it; see state.locking.lock_state).
    notice: str = ""


@dataclass(frozen=True, slots=True)
class ControlObject:
    """A control-plane object (resource pool, subject policy, compute config) kept by the state
    backend for the clouds that have no such object of their own (AWS, GCP).

    ``token`` is the idempotency token of the call that made it: a retried create finds it.
    """

    object_id: str
    address: str
    lineage: str
    resource_type: str
    attributes: dict[str, Any] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    token: str = ""


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One line of the apply history: ``outcome`` is ``ok``, ``failed`` or ``interrupted``
    (Ctrl-C or SIGTERM stopped it), ``changes`` how many were made."""

    time: str
    user: str
    plan_hash: str
    changes: int
    outcome: str
    serial: int


@dataclass(frozen=True, slots=True)
class StateSnapshot:
    """A consistent view of the state at one serial.

    ``resources`` and ``intents`` are read-only mappings keyed by address, ordered by address.
    Iterating the snapshot yields its records in sorted address order. ``damaged`` names the
    records that could not be read (address -> what is wrong); only a salvaging read
    (``StateStore.read_salvaged``) returns any, so that state commands can show and drop them.
    """

    lineage: str
    serial: int
    resources: Mapping[str, ResourceRecord] = field(default_factory=dict)
    intents: Mapping[str, CreateIntent] = field(default_factory=dict)
    damaged: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "damaged", MappingProxyType(dict(sorted(self.damaged.items()))))
        for name in ("resources", "intents"):
            value: Mapping[str, Any] = getattr(self, name)
            wrong = next((key for key, item in value.items() if item.address != key), None)
            if wrong is not None:
                raise ValueError(f"{name}[{wrong!r}] holds the entry of {value[wrong].address!r}")
            ordered = {key: value[key] for key in sorted(value)}
            object.__setattr__(self, name, MappingProxyType(ordered))

    @classmethod
    def from_records(
        cls,
        lineage: str,
        serial: int,
        records: Iterable[ResourceRecord],
        intents: Mapping[str, CreateIntent] | None = None,
    ) -> StateSnapshot:
        """Build a snapshot from records (keyed by their address)."""
        return cls(lineage, serial, {r.address: r for r in records}, dict(intents or {}))

    def get(self, address: str) -> ResourceRecord | None:
        """The record at ``address``, or None."""
        return self.resources.get(address)

    def addresses(self) -> list[str]:
        """Every recorded address, sorted."""
        return list(self.resources)

    def __iter__(self) -> Iterator[ResourceRecord]:
        return iter(self.resources.values())

    def __len__(self) -> int:
        return len(self.resources)

    def __contains__(self, address: object) -> bool:
        return address in self.resources
