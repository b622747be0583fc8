"""Every format pickles (Spark ships decoders to its workers) and its clone decodes alike."""

from __future__ import annotations

import pickle

import pytest

from anycdc.bench.decode import SKIP, messages
from anycdc.event import event_to_dict
from anycdc.formats import format_ids, get_format

ROUND_TRIPPED = sorted(set(format_ids()) - SKIP - {"debezium-avro"})


@pytest.mark.parametrize("format_id", ROUND_TRIPPED)
def test_a_pickled_format_decodes_as_the_original(format_id: str) -> None:
    original = get_format(format_id, {"primary_key": "id"})
    data = messages(format_id, 20)
    assert data, f"{format_id}: the bench encodes no message"
    for message in data[:5]:
        original.decode(message)  # fill the memos the pickle must not carry
    clone = pickle.loads(pickle.dumps(original))
    assert type(clone) is type(original)
    assert clone.options.primary_key == ("id",)
    for message in data:
        assert [event_to_dict(e) for e in clone.decode(message)] == [
            event_to_dict(e) for e in original.decode(message)
        ]
