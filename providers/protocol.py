"""The Provider protocol: how the applier and refresh talk to a cloud.

Small on purpose: a batched `list` of what poolform created (found by tags, not one call per
resource), and `create` / `update` / `replace` / `delete` of one managed resource. Every error
is one of four kinds the applier knows how to handle; SDK errors are translated into them at
each provider's boundary, never above it.
"""

from __future__ import annotations

import builtins
import contextlib
import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

# Tags every resource poolform creates carries, so a resource created just before a crash is
# found and adopted by the next plan.
TAG_LINEAGE = "poolform:lineage"
TAG_ADDRESS = "poolform:address"
TAG_TOKEN = "poolform:token"


class ErrorKind(enum.StrEnum):
    RETRYABLE = "retryable"  # throttling, 5xx, timeouts: try again with backoff
    CAPACITY = "capacity"  # insufficient capacity / quota / spot unavailable
    NOT_FOUND = "not_found"
    PERMANENT = "permanent"  # invalid request, permissions: stop


class ProviderError(Exception):
    """`retried`: a retryable error the provider's own request layer already retried until its
    budget ran out; nothing above retries it again (see providers/retry.py). `retry_after`: the
    server's Retry-After header as sent (seconds or an HTTP date), which the retry policy
    waits for instead of its own backoff."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        address: str | None = None,
        retried: bool = False,
        retry_after: str | None = None,
    ):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.address = address
        self.retried = retried
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f"{self.address}: " if self.address else ""
        return f"{where}{self.message}"  # the kind is for code, never for people


@contextlib.contextmanager
def half_done(what: str) -> Iterator[None]:
    """A provider error raised inside, of the same kind, saying how far a replacement got: the
    cloud's words alone ("Quota exceeded") hide that a group is already gone, made, or
    launching from a new template."""
    try:
        yield
    except ProviderError as error:
        raise ProviderError(
            error.kind,
            f"replacement half done: {what}: {error.message}; `poolform plan` shows what is "
            "left to do",
            address=error.address,
            retried=error.retried,
        ) from error


@dataclass(frozen=True)
class ResourceSpec:
    """One managed resource as apply wants it. Sensitive values are resolved (clear text):
    a spec lives only in memory for the duration of one provider call."""

    address: str
    resource_type: str  # machine_type, worker_pool, compute_config, resource_pool, subject_policy
    attributes: Mapping[str, Any]
    lineage: str
    token: str  # idempotency token: a retried or resumed create never makes a second copy

    def tags(self) -> dict[str, str]:
        return {TAG_LINEAGE: self.lineage, TAG_ADDRESS: self.address, TAG_TOKEN: self.token}


@dataclass(frozen=True)
class RollingSpec:
    batch_size: int
    destroy_first: bool  # capacity reservations cannot hold old and new at once


@dataclass(frozen=True)
class Observed:
    """What exists in the cloud for one managed resource.

    `attributes` use the vocabulary of providers/observable.py, the same for every provider, so
    drift compares them with what state records without knowing which cloud reported them."""

    address: str
    resource_type: str
    provider_ids: Mapping[str, str]
    attributes: Mapping[str, Any] = field(default_factory=dict)  # as the provider reports them
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ResourceRef:
    """A recorded resource by its provider ids: what `read` is asked for."""

    address: str
    resource_type: str
    provider_ids: Mapping[str, str]


class Provider(Protocol):
    """Implementations are held to this protocol by the type checker where they are registered
    (providers/registry.py), not at run time."""

    def list(self, lineage: str) -> list[Observed]:
        """Everything tagged with this state's lineage, in a few paginated calls."""
        ...

    def list_at(self, addresses: Sequence[str]) -> builtins.list[Observed]:
        """Every poolform-tagged object at these addresses, whatever lineage it carries (the
        lineage check: state/lineage.py), in a few batched calls, never one per address.
        Only `address` and `tags` need be filled in. Control-plane objects a cloud keeps in
        the state backend belong to that state and are not listed."""
        ...

    def read(self, refs: Sequence[ResourceRef]) -> builtins.list[Observed]:
        """Only these resources, by id, batched (a saved plan's apply re-reads what it touches).
        A ref that no longer exists is simply absent from the result."""
        ...

    def create(self, spec: ResourceSpec) -> Observed:
        """Create the resource; with a token already used, return what that call created."""
        ...

    def update(self, spec: ResourceSpec, ids: Mapping[str, str]) -> Observed:
        """Change in place (resize, metadata)."""
        ...

    def replace(self, spec: ResourceSpec, ids: Mapping[str, str], rolling: RollingSpec) -> Observed:
        """Recreate: a new template and instances rolled over in batches, idle ones first."""
        ...

    def delete(
        self, address: str, resource_type: str, ids: Mapping[str, str], *, lineage: str
    ) -> None:
        """Delete; raises NOT_FOUND when it is already gone (the applier treats that as done).
        PERMANENT, deleting nothing, when what the ids name is not this lineage's `address`
        (providers/ownership.py: check_deletable): the ids come from a record, which may be
        stale or edited, and a delete must never reach an object that is not this resource."""
        ...

    def import_resource(
        self, address: str, resource_type: str, provider_id: str, tags: Mapping[str, str]
    ) -> Observed:
        """Take an existing resource under management (`poolform import`): find it by its id
        and tag it as this state's, so refresh finds it from now on. NOT_FOUND if absent."""
        ...

    def forget(self, address: str, resource_type: str, ids: Mapping[str, str]) -> None:
        """Stop marking a resource as poolform's (`poolform state rm`), leaving it running:
        remove poolform's tags, or, where the cloud cannot re-tag it, record it as forgotten so
        `list` never reports it again. NOT_FOUND if it is already gone."""
        ...

    def close(self) -> None: ...
