"""Control-plane resources kept in the state backend, for clouds that have no such objects.

Resource pools, subject policies and compute configs are poolform's own objects, not AWS's or
GCP's. The AWS and GCP providers keep them in the state backend's control-plane store
(``state.protocol.ControlPlaneStore``), so every runner sharing the backend sees the same ones;
this adapter gives that store the provider methods for them.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Callable, Mapping, Sequence

from providers.protocol import (
    ErrorKind,
    Observed,
    ProviderError,
    ResourceRef,
    ResourceSpec,
    RollingSpec,
)
from state.model import ControlObject
from state.protocol import ControlPlaneStore

__all__ = ["StoredControlPlane"]


def _observed(obj: ControlObject) -> Observed:
    return Observed(
        obj.address, obj.resource_type, {"object": obj.object_id}, obj.attributes, obj.tags
    )


def _not_found(address: str, ids: Mapping[str, str]) -> ProviderError:
    shown = ", ".join(f"{k} {v}" for k, v in sorted(ids.items())) or "no recorded ids"
    return ProviderError(ErrorKind.NOT_FOUND, f"{shown}: not found", address=address)


class StoredControlPlane:
    """Provider methods for control-plane resources over a ControlPlaneStore. ``close`` closes
    the store only when this adapter was given it to own."""

    def __init__(
        self, store: ControlPlaneStore, *, on_close: Callable[[], None] | None = None
    ) -> None:
        self.store = store
        self._on_close = on_close

    def list(self, lineage: str) -> builtins.list[Observed]:
        return [_observed(o) for o in self.store.list_objects(lineage)]

    def read(self, refs: Sequence[ResourceRef]) -> builtins.list[Observed]:
        ids = [r.provider_ids["object"] for r in refs if r.provider_ids.get("object")]
        return [_observed(o) for o in self.store.get_objects(ids)] if ids else []

    def _new(self, spec: ResourceSpec, replaces: str | None) -> Observed:
        made = ControlObject(
            object_id=f"obj-{uuid.uuid4().hex[:17]}",
            address=spec.address,
            lineage=spec.lineage,
            resource_type=spec.resource_type,
            attributes=dict(spec.attributes),
            tags=spec.tags(),
            token=spec.token,
        )
        return _observed(self.store.put_object(made, replaces=replaces))

    def create(self, spec: ResourceSpec) -> Observed:
        return self._new(spec, None)

    def update(self, spec: ResourceSpec, ids: Mapping[str, str]) -> Observed:
        updated = self.store.update_object(ids.get("object", ""), dict(spec.attributes))
        if updated is None:
            raise _not_found(spec.address, ids)
        return _observed(updated)

    def replace(self, spec: ResourceSpec, ids: Mapping[str, str], rolling: RollingSpec) -> Observed:
        return self._new(spec, ids.get("object"))

    def delete(self, address: str, resource_type: str, ids: Mapping[str, str]) -> None:
        if not self.store.delete_object(ids.get("object", "")):
            raise _not_found(address, ids)

    def import_resource(
        self, address: str, resource_type: str, provider_id: str, tags: Mapping[str, str]
    ) -> Observed:
        lineage = tags.get("poolform:lineage", "")
        found = self.store.retag_object(provider_id, address, lineage, dict(tags))
        if found is None:
            raise _not_found(address, {"object": provider_id})
        return _observed(found)

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()
