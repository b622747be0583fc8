"""canal-json -> X -> decode, under hypothesis: every column comes back exactly (as the
canonical text the tables are written from) or its loss was reported
(:class:`anycdc.formats.fidelity.LossReport`), and so does every op."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from anycdc.changelog import value_text
from anycdc.event import ChangeEvent, Op
from anycdc.formats import format_class, format_ids, get_format
from anycdc.formats.fidelity import LossReport
from tests.strategies import st_row_event
from tests.unit.formats.test_canal import CANAL_TYPES, ROW_OPS, canal, vendor_column

TARGETS = [f for f in format_ids() if format_class(f).can_encode and f != "drs-mongo-json"]
"""Every target convert offers but drs-mongo-json (documents: canal rows are no MongoDB
documents; its own round trip is in tests/unit/formats/test_drs_mongo.py)."""

EVENTS = st_row_event("canal-json", CANAL_TYPES, ops=ROW_OPS, column=vendor_column(canal))


def _texts(image: Any) -> dict[str, str | None]:
    return {name: value_text(value) for name, value in (image or {}).items()}


def _same(want: str | None, got: str | None) -> bool:
    """The same canonical text, or the same number in another rendering (``1e+16`` and
    ``10000000000000000``: what a table casts from either is equal)."""
    if want == got:
        return True
    try:
        return want is not None and got is not None and Decimal(want) == Decimal(got)
    except ArithmeticError:
        return False


@pytest.mark.parametrize("target", TARGETS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=EVENTS)
def test_what_comes_back_is_exact_or_reported(target: str, event: ChangeEvent) -> None:
    [message] = canal.encode(event)
    [source] = canal.decode(message)  # what convert reads
    encoder = get_format(target)
    report = LossReport(target)
    back: list[ChangeEvent] = []
    for value in encoder.encode(source):
        back.extend(encoder.decode(value, encoder.encode_key(source)))
    report.check(source)
    [decoded] = back
    table = source.qualified_table
    if decoded.op is not source.op:
        assert source.op is Op.SNAPSHOT and report.lost(table), (source.op, decoded.op)
    for image_name in ("before", "after"):
        want, got = _texts(getattr(source, image_name)), _texts(getattr(decoded, image_name))
        if image_name == "before" and not got and decoded.op is not Op.DELETE:
            continue  # a format that sends no before image of updates says so by its kind
        for column, text in want.items():
            if not _same(text, got.get(column)):
                assert report.lost(f"{table}.{column}"), (image_name, column, text, got.get(column))


FLOAT_ROW = (
    b'{"database":"shop","table":"orders","type":"INSERT","isDdl":false,"sql":"",'
    b'"data":[{"id":"1","f":"5.18"}],"old":null,"pkNames":["id"],'
    b'"mysqlType":{"id":"int","f":"float"},"sqlType":{"id":4,"f":7},"es":1,"ts":2,"id":3}'
)


def test_a_float_an_avro_float_cannot_hold_is_reported_and_its_key_written() -> None:
    [source] = canal.decode(FLOAT_ROW)
    encoder = get_format("debezium-avro")
    report = LossReport("debezium-avro")
    [value] = encoder.encode(source)
    report.check(source)
    [back] = encoder.decode(value, encoder.encode_key(source))
    assert back.after is not None and back.after["f"] != 5.18
    assert report.lines() == [
        "debezium-avro cannot carry a FLOAT that a 32-bit float does not hold: "
        "shop.orders.f comes back as the nearest 32-bit float"
    ]
    assert back.key == ("id",)  # the Kafka key convert writes names the row's key
