"""`list_at` on GCP (the fake Compute API): every poolform group and template at the asked
addresses, whatever the lineage, found by the address hash in their names; a forgotten group is
not listed."""

from __future__ import annotations

from providers.gcp import GcpProvider
from providers.protocol import TAG_LINEAGE
from tests.gcp.conftest import LINEAGE, machine_type


def test_list_at_finds_the_address_in_every_lineage(provider: GcpProvider) -> None:
    ours = machine_type()
    theirs = machine_type(lineage="another-lineage", token="token-2")
    elsewhere = machine_type("spot-a100", market="SPOT", token="token-3")
    for spec in (ours, theirs, elsewhere):
        provider.create(spec)
    found = provider.list_at([ours.address, "machine_pool.demo.machine_type.none"])
    assert {o.address for o in found} == {ours.address}
    assert {o.tags[TAG_LINEAGE] for o in found} == {LINEAGE, "another-lineage"}
    assert {"group", "template"} <= {kind for o in found for kind in o.provider_ids}


def test_a_forgotten_group_is_not_listed_at_its_address(provider: GcpProvider) -> None:
    spec = machine_type()
    made = provider.create(spec)
    provider.forget(spec.address, spec.resource_type, made.provider_ids)
    found = provider.list_at([spec.address])
    assert made.provider_ids["group"] not in {o.provider_ids.get("group") for o in found}
