"""`state rm` on GCP: templates and groups cannot be re-tagged, so the provider records them as
forgotten and `list` leaves them out; `import` at the same address takes them back, and
refuses them anywhere else."""

from __future__ import annotations

import pytest

from providers.gcp import GcpProvider
from providers.protocol import (
    TAG_ADDRESS,
    TAG_LINEAGE,
    TAG_TOKEN,
    ErrorKind,
    ProviderError,
    ResourceRef,
)
from tests.gcp.conftest import LINEAGE, machine_type


def test_a_forgotten_group_is_listed_no_more_and_can_be_imported_back(
    provider: GcpProvider,
) -> None:
    spec = machine_type()
    made = provider.create(spec)
    other = provider.create(machine_type("spot-a100", market="SPOT", token="token-2"))
    provider.forget(spec.address, spec.resource_type, made.provider_ids)
    assert [o.provider_ids for o in provider.list(LINEAGE)] == [other.provider_ids]
    ref = ResourceRef(spec.address, spec.resource_type, made.provider_ids)
    assert provider.read([ref])  # still there: only poolform let it go

    tags = {TAG_LINEAGE: LINEAGE, TAG_ADDRESS: spec.address, TAG_TOKEN: "import"}
    with pytest.raises(ProviderError) as elsewhere:
        provider.import_resource(
            "machine_pool.demo.machine_type.x", "machine_type", made.provider_ids["group"],
            {**tags, TAG_ADDRESS: "machine_pool.demo.machine_type.x"},
        )  # fmt: skip
    assert elsewhere.value.kind is ErrorKind.PERMANENT
    back = provider.import_resource(
        spec.address, spec.resource_type, made.provider_ids["group"], tags
    )
    assert back.provider_ids == made.provider_ids
    assert len(provider.list(LINEAGE)) == 2


def test_forgetting_what_is_gone_is_not_found(provider: GcpProvider) -> None:
    spec = machine_type()
    made = provider.create(spec)
    provider.delete(spec.address, spec.resource_type, made.provider_ids, lineage=LINEAGE)
    with pytest.raises(ProviderError) as caught:
        provider.forget(spec.address, spec.resource_type, made.provider_ids)
    assert caught.value.kind is ErrorKind.NOT_FOUND
