"""A row change that names no table is a dead letter, never a changelog row.

The pipeline routes every row change (insert, update, delete, snapshot, truncate) to its
table; one without a table name would be written to the changelog and then neither
applied nor dead-lettered. :class:`~anycdc.decoding.MessageDecoder` (every consumer's
decoder) refuses it in one place, with the format, the path of the field that should
name the table (:meth:`~anycdc.formats.base.Format.table_path`), and the reason. Formats
still decode such a message as it is (the name marked absent): the rule is the
pipeline's, for every format alike.
"""

from __future__ import annotations

import pytest

from anycdc.decoding import MessageDecoder
from anycdc.errors import DecodeError
from anycdc.event import ChangeEvent, Op
from anycdc.formats import format_class, format_ids, get_format
from anycdc.formats.base import NAMED_OPS
from tests.cases import iter_cases

# formats whose decoder needs a schema source: their table rule is the JSON sibling's
NEEDS_OPTIONS = {"drs-avro", "debezium-avro"}
FORMATS = [f for f in format_ids() if f not in NEEDS_OPTIONS]
TABLE_PATHS = {
    "canal-json": "$.table",
    "dts-canal-json": "$.table",
    "drs-json": "$.table",
    "drs-json-c": "$.table",
    "maxwell-json": "$.table",
    "ogg-json": "$.table",
    "aws-dms-json": "$.metadata.table-name",
    "canonical-json": "$.table",
    "shareplex-json": "$.meta.table",
    "oms-json": "$.allMetaData.table_name",
    "oms-extend-json": "$.allMetaData.table_name",
    "dataworks-json": "$.schema.source.tableName",
    "dataworks2-json": "$.schema.source.table",
    "drs-mongo-json": "$.coll",
    "dts-avro": "$.objectName",
    "debezium-json": "$..source.table",
}
# a format whose encoder writes no unnamed message of its own: a message by hand
UNNAMED_BY_HAND: dict[str, list[bytes]] = {
    "ogg-json": [
        b'{"table":"","op_type":"I","op_ts":"2024-01-01 00:00:00.000000","after":{"ID":1}}',
        b'{"op_type":"I","op_ts":"2024-01-01 00:00:00.000000","after":{"ID":1}}',
    ],
}


def _row_event(format_id: str) -> ChangeEvent:
    """The first named insert among the format's golden cases (without options)."""
    fmt = get_format(format_id)
    for case in iter_cases(format_id):
        if case.options or case.key is not None:
            continue
        for message in case.messages():
            try:
                events = fmt.decode(message)
            except DecodeError:
                continue
            for event in events:
                if event.op is Op.INSERT and event.table and not _mongo(event):
                    return event
    raise AssertionError(f"{format_id}: no named insert among its golden cases")


def _mongo(event: ChangeEvent) -> bool:
    return event.extra.get("connector") == "mongodb"


def _unnamed_messages(format_id: str) -> list[bytes]:
    if format_id in UNNAMED_BY_HAND:
        return UNNAMED_BY_HAND[format_id]
    fmt = get_format(format_id)
    event = _row_event(format_id)
    return [fmt.encode(event.with_changes(table=table))[0] for table in ("", None)]


def test_every_format_names_where_its_table_is() -> None:
    assert set(TABLE_PATHS) == set(FORMATS)


@pytest.mark.parametrize("format_id", FORMATS)
def test_a_row_change_without_a_table_name_is_a_decode_error(format_id: str) -> None:
    fmt = get_format(format_id)
    for message in _unnamed_messages(format_id):
        [event] = fmt.decode(message)  # the format decodes what the message says ...
        assert event.op in NAMED_OPS and not event.table, message
        for decoder in (MessageDecoder(format_id), MessageDecoder("auto")):
            with pytest.raises(DecodeError) as caught:  # ... the pipeline takes no such row
                decoder.decode(message)
            error = caught.value  # (auto: DTS' Canal without its certain keys is Canal's)
            assert error.format_id == format_id or decoder.format_id == "auto"
            assert error.path == TABLE_PATHS[error.format_id]
            assert error.reason == (
                f"missing or empty table name: a row change ({event.op.value}) must name its table"
            )


@pytest.mark.parametrize("format_id", [f for f in FORMATS if f not in UNNAMED_BY_HAND])
def test_the_same_message_with_its_table_decodes(format_id: str) -> None:
    event = _row_event(format_id)
    [message] = get_format(format_id).encode(event)
    _, events = MessageDecoder(format_id).decode(message)
    assert [e.table for e in events] == [event.table]


def test_a_truncate_without_a_table_name_is_a_decode_error() -> None:
    message = (
        b'{"data":null,"database":"shop","es":1,"id":7,"isDdl":false,"mysqlType":null,'
        b'"old":null,"pkNames":null,"sql":"TRUNCATE TABLE t","sqlType":null,"table":"",'
        b'"ts":2,"type":"TRUNCATE"}'
    )
    with pytest.raises(DecodeError, match=r"^canal-json: \$\.table: .*\(truncate\)"):
        MessageDecoder("canal-json").decode(message)


def test_events_that_are_no_row_change_need_no_table() -> None:
    # a TiCDC watermark names no table; a database's DDL names none either
    watermark = (
        b'{"id":0,"database":"","table":"","pkNames":null,"isDdl":false,'
        b'"type":"TIDB_WATERMARK","es":1668067205238,"ts":1668067206650,"sql":"",'
        b'"sqlType":null,"mysqlType":null,"data":null,"old":null,'
        b'"_tidb":{"watermarkTs":437216920779964416}}'
    )
    ddl = b'{"type":"database-create","database":"shop","ts":1700000000000,"sql":"CREATE DATABASE shop"}'
    assert [e.op for e in MessageDecoder("canal-json").decode(watermark)[1]] == [Op.HEARTBEAT]
    assert [e.op for e in MessageDecoder("maxwell-json").decode(ddl)[1]] == [Op.DDL]


def test_named_ops_are_the_row_changes_and_truncate() -> None:
    assert NAMED_OPS == {Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT, Op.TRUNCATE}
    assert all(format_class(f).table_field.startswith("$") for f in format_ids())


def test_debezium_mongodb_names_its_collection() -> None:
    event = ChangeEvent(op=Op.INSERT, format="debezium-json", extra={"connector": "mongodb"})
    assert get_format("debezium-json").table_path(event) == "$..source.collection"
