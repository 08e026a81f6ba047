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
from pathlib import Path

from providers.ownership import check_deletable
from providers.protocol import (
    TAG_ADDRESS,
    TAG_LINEAGE,
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

# Ids of cloud resources `state rm` let go on a cloud whose labels are fixed once made (GCP)
# are kept as objects of this lineage, which no state ever has (states have UUID lineages).
FORGOTTEN_LINEAGE = "poolform:forgotten"
FORGOTTEN_TYPE = "forgotten"


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

    def delete(
        self, address: str, resource_type: str, ids: Mapping[str, str], *, lineage: str
    ) -> None:
        object_id = ids.get("object", "")
        for found in self.store.get_objects([object_id] if object_id else []):
            check_deletable(
                address, f"object {object_id}", lineage=lineage,
                tags={TAG_LINEAGE: found.lineage, TAG_ADDRESS: found.address},
            )  # fmt: skip
        if not self.store.delete_object(object_id):
            raise _not_found(address, ids)

    def import_resource(
        self, address: str, resource_type: str, provider_id: str, tags: Mapping[str, str]
    ) -> Observed:
        lineage = tags.get("poolform:lineage", "")
        found = self.store.retag_object(provider_id, address, lineage, dict(tags))
        if found is None:
            raise _not_found(address, {"object": provider_id})
        return _observed(found)

    def forget(self, address: str, resource_type: str, ids: Mapping[str, str]) -> None:
        """`state rm`: the object stays, but no lineage claims it (`import` takes it back)."""
        if self.store.retag_object(ids.get("object", ""), address, "", {}) is None:
            raise _not_found(address, ids)

    def record_forgotten(self, address: str, provider_ids: Mapping[str, str]) -> None:
        """Remember cloud resources `state rm` let go, for clouds that cannot re-tag them."""
        for provider_id in sorted(set(provider_ids.values())):
            self.store.put_object(
                ControlObject(
                    object_id=_forgotten_id(provider_id),
                    address=address,
                    lineage=FORGOTTEN_LINEAGE,
                    resource_type=FORGOTTEN_TYPE,
                    attributes={"provider_id": provider_id},
                    token=_forgotten_id(provider_id),
                )
            )

    def forgotten(self) -> set[str]:
        """Provider ids `record_forgotten` noted and no import took back."""
        return {
            str(o.attributes.get("provider_id", ""))
            for o in self.store.list_objects(FORGOTTEN_LINEAGE)
        }

    def remember(self, provider_ids: Mapping[str, str]) -> None:
        """Take forgotten ids back (an import)."""
        for provider_id in set(provider_ids.values()):
            self.store.delete_object(_forgotten_id(provider_id))

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()

    @classmethod
    def beside(cls, state_dir: Path) -> StoredControlPlane:
        """Over the SQLite state in ``state_dir``, for a provider made without a backend (a
        library caller or a test); the poolform commands always pass the one they hold."""
        from state.sqlite import DEFAULT_STATE_FILE, SqliteStore

        store = SqliteStore(state_dir / DEFAULT_STATE_FILE)
        return cls(store, on_close=store.close)


def _forgotten_id(provider_id: str) -> str:
    return f"forgotten-{provider_id}"
