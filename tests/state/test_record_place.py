"""A record's place (where the cloud holds it) is stored in its provider_ids text under a
reserved key, so no backend needs a new column and a record without one is stored exactly as
before, checksum included: a state written by an older poolform reads the same, and so does
one it reads after a newer poolform wrote only place-less records."""

from __future__ import annotations

from dataclasses import replace

import pytest

from state import ResourceRecord, StateError
from state.jsonformat import record_from_dict, record_to_dict
from state.records import decode_record, encode_record

RECORD = ResourceRecord("machine_pool.a.machine_type.b", "machine_type", {"n": 1}, {"group": "g"})


def test_a_record_without_a_place_is_stored_byte_for_byte_as_before() -> None:
    stored = encode_record(RECORD)
    assert stored.provider_ids == '{"group":"g"}'
    assert stored.checksum == "3b7c201eb328890ed9372e93b62824a9"  # what main wrote for it
    assert decode_record(stored) == RECORD and decode_record(stored).place == ""


def test_a_place_round_trips_and_stays_out_of_the_ids() -> None:
    placed = replace(RECORD, place="project p, region r")
    stored = encode_record(placed)
    assert '"@place":"project p, region r"' in stored.provider_ids
    back = decode_record(stored)
    assert back == placed and back.provider_ids == {"group": "g"}


def test_pull_and_push_carry_the_place_and_omit_an_unknown_one() -> None:
    placed = replace(RECORD, place="region us-east-1")
    assert record_to_dict(placed)["place"] == "region us-east-1"
    assert "place" not in record_to_dict(RECORD)
    assert record_from_dict(record_to_dict(placed)) == placed
    assert record_from_dict(record_to_dict(RECORD)) == RECORD


def test_the_reserved_id_kind_is_refused() -> None:
    with pytest.raises(StateError, match="'@place' is reserved"):
        encode_record(replace(RECORD, provider_ids={"@place": "x"}))
    doc = {**record_to_dict(RECORD), "provider_ids": {"@place": "x"}}
    with pytest.raises(StateError, match="reserved"):
        record_from_dict(doc)
    with pytest.raises(StateError, match="place must be a string"):
        record_from_dict({**record_to_dict(RECORD), "place": 3})
