"""The change time of Debezium connectors before 0.10, which had no ``source.ts_ms``.

MySQL's source block had ``ts_sec`` (seconds), PostgreSQL's ``ts_usec`` (microseconds:
``debezium-connector-postgres`` ``SourceInfo.TIMESTAMP_USEC_KEY``). The event's
``ts_ms`` is that time in milliseconds, floored as Debezium floors ``ts_us`` into
``ts_ms``; ``source.ts_ms`` wins when a message has both.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from anycdc.errors import DecodeError
from anycdc.formats import get_format


def _payload(source: dict[str, Any]) -> bytes:
    base = {"version": "0.9.5.Final", "connector": "postgresql", "name": "db", "db": "inventory",
            "schema": "public", "table": "t", "txId": 7, "lsn": 100, "snapshot": False}  # fmt: skip
    message = {"before": None, "after": {"id": 1}, "source": {**base, **source}, "op": "c",
               "ts_ms": 1559033999999}  # fmt: skip
    return json.dumps(message).encode()


@pytest.mark.parametrize(
    ("source", "ts_ms"),
    [
        ({"ts_usec": 1559033904863123}, 1559033904863),
        ({"ts_usec": "1559033904863999"}, 1559033904863),  # a digit string, as other fields
        ({"ts_usec": 1559033905000000}, 1559033905000),
        ({"ts_usec": 0}, 0),
        ({"ts_usec": -1}, -1),  # floored: a microsecond before the epoch is in ms -1
        ({"ts_sec": 1559033904}, 1559033904000),
        ({"ts_ms": 1559033904001, "ts_usec": 1559033904863123}, 1559033904001),
        ({"ts_usec": None}, None),
        ({}, None),  # never the envelope's ts_ms: that is the connector's processing time
    ],
)
def test_legacy_time_fields(source: dict[str, Any], ts_ms: int | None) -> None:
    (event,) = get_format("debezium-json").decode(_payload(source))
    assert event.ts_ms == ts_ms


def test_a_ts_usec_that_is_no_integer_is_an_error_at_its_path() -> None:
    with pytest.raises(DecodeError, match=r"source\.ts_usec"):
        get_format("debezium-json").decode(_payload({"ts_usec": "soon"}))
