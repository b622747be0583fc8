"""Rebuild the ``.avro`` inputs of the dts-avro golden cases (run from the repo root).

    .venv/bin/python tests/cases/dts-avro/build_cases.py

No real DTS Avro message is public (tests/corpus/dts_lioroger/NOTES.md), so the
inputs are built here, two ways:

* ``seed_*``: canonical events mirroring the changes seed 001 documents (its
  Canal JSON examples of ``dbname.tablename`` and SharePlex examples of
  ``CL_BIZ1.MIO_LOG``, which DTS describes for the same data), written by the
  anycdc ENCODER;
* ``writer_*``: Record dicts written here by hand, serialized by
  ``fastavro.schemaless_writer`` directly with the published schema, so that the
  decoder is checked against an independent writer, covering every value branch.

The ``.expected.jsonl`` files are NOT written here: they come from the decoder
and were reviewed by hand (see README.md).
"""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro

from anycdc.event import ChangeEvent, Op, Position
from anycdc.formats.dts_avro.encode import mysql_column
from anycdc.formats.dts_avro.format import DtsAvro
from anycdc.values import INT64, STRING, TIMESTAMP, LogicalType

HERE = Path(__file__).parent
SCHEMA = Path("tests/corpus/dts_lioroger/Record.avsc")
NS = "com.alibaba.dts.formats.avro."


def _writer_schema() -> Any:
    named: dict[str, Any] = {}
    fastavro.parse_schema(json.loads(SCHEMA.read_text()), named_schemas=named)
    return fastavro.parse_schema(named[NS + "Record"], named_schemas=named)


def _v(kind: str, **payload: Any) -> tuple[str, dict[str, Any]]:
    return NS + kind, payload


def _int(text: str, precision: int = 11) -> Any:
    return _v("Integer", precision=precision, value=text)


def _chars(text: str, charset: str = "utf8mb4", encoding: str = "utf-8") -> Any:
    return _v("Character", charset=charset, value=text.encode(encoding))


def _datetime(**parts: int | None) -> Any:
    full = dict.fromkeys(("year", "month", "day", "hour", "minute", "second", "millis"))
    full.update(parts)
    return _v("DateTime", **full)


NONE = (NS + "EmptyObject", "NONE")
NULL = (NS + "EmptyObject", "NULL")


def _record(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "version": 0,
        "id": 58,
        "sourceTimestamp": 1600161894,
        "sourcePosition": "72469@78",
        "safeSourcePosition": "72000@78",
        "sourceTxid": "0",
        "source": {"sourceType": "MySQL", "version": "5.7.34-log"},
        "operation": "INSERT",
        "objectName": "dbname.tablename",
        "processTimestamps": None,
        "tags": {
            "pk_uk_info": '{"PRIMARY":["id"]}',
            "thread_id": "1234",
            "readerThroughoutTime": "1600161894771",
            "metaVersion": "827",
            "server_id": "2413839166",
        },
        "fields": None,
        "beforeImages": None,
        "afterImages": None,
        "bornTimestamp": 0,
    }
    base.update(fields)
    return base


def writer_records() -> dict[str, dict[str, Any]]:
    """Hand-written Records, one case each."""
    every_fields = [
        {"name": "id", "dataTypeNumber": 8},  # LONGLONG
        {"name": "tiny", "dataTypeNumber": 1},  # TINY
        {"name": "name", "dataTypeNumber": 253},  # VAR_STRING utf8mb4
        {"name": "name_gbk", "dataTypeNumber": 254},  # STRING gbk
        {"name": "name_latin1", "dataTypeNumber": 253},  # latin1 (cp1252 in MySQL)
        {"name": "code", "dataTypeNumber": 254},  # BINARY(4): charset binary
        {"name": "price", "dataTypeNumber": 246},  # NEWDECIMAL
        {"name": "ratio", "dataTypeNumber": 5},  # DOUBLE
        {"name": "ratio4", "dataTypeNumber": 4},  # FLOAT
        {"name": "created", "dataTypeNumber": 12},  # DATETIME(6)
        {"name": "day", "dataTypeNumber": 10},  # DATE
        {"name": "at", "dataTypeNumber": 11},  # TIME
        {"name": "yr", "dataTypeNumber": 13},  # YEAR
        {"name": "updated", "dataTypeNumber": 7},  # TIMESTAMP(3)
        {"name": "doc", "dataTypeNumber": 245},  # JSON
        {"name": "color", "dataTypeNumber": 247},  # ENUM
        {"name": "tags", "dataTypeNumber": 248},  # SET
        {"name": "body", "dataTypeNumber": 252},  # BLOB
        {"name": "note", "dataTypeNumber": 252},  # TEXT (a BLOB-family code, sent as text)
        {"name": "flags", "dataTypeNumber": 16},  # BIT(8)
        {"name": "geo", "dataTypeNumber": 255},  # GEOMETRY as WKB
        {"name": "geo_text", "dataTypeNumber": 255},  # GEOMETRY as WKT
        {"name": "gone", "dataTypeNumber": 253},  # NULL
    ]
    every_values = [
        _int("500000287", 20),
        _int("-128", 4),
        _chars("华为云 huaweicloud"),
        _chars("阿里云", "gbk", "gbk"),
        _chars("café €", "latin1", "cp1252"),
        _chars("\x00\x01\xfe\xff", "binary", "latin-1"),
        _v("Decimal", value="9874510357.0100", precision=20, scale=4),
        _v("Float", value=12510357.0, precision=22, scale=-1),
        _v("Float", value=10357.0, precision=12, scale=-1),
        _datetime(year=2021, month=6, day=25, hour=17, minute=51, second=53, millis=123456),
        _datetime(year=2021, month=6, day=25),
        _datetime(hour=17, minute=51, second=53, millis=5),
        _datetime(year=2021),
        _v("Timestamp", timestamp=1624614713, millis=201000),
        _v("TextObject", type="JSON", value='{"key1": "value1", "n": 1.50}'),
        _v("TextObject", type="ENUM", value="red"),
        _v("TextObject", type="SET", value="a,b"),
        _v("BinaryObject", type="BLOB", value=b"jgojgoidsjg"),
        _chars("plain text in a TEXT column"),
        _int("5", 8),
        _v(
            "BinaryGeometry",
            type="POINT",
            value=bytes.fromhex("0101000000000000000000f03f0000000000000040"),
        ),
        _v("TextGeometry", type="POINT", value="POINT(1 2)"),
        None,
    ]
    return {
        "writer_insert_every_branch": _record(
            id=1001, fields=every_fields, afterImages=every_values, bornTimestamp=1600161894123
        ),
        "writer_update_unsigned_widening": _record(
            id=1002,
            operation="UPDATE",
            objectName="dbname.counters",
            fields=[
                {"name": "id", "dataTypeNumber": 8},  # BIGINT UNSIGNED
                {"name": "hits", "dataTypeNumber": 3},  # INT UNSIGNED
                {"name": "small", "dataTypeNumber": 2},  # SMALLINT UNSIGNED
            ],
            beforeImages=[_int("10223372036854775806", 20), _int("4294967295", 10), _int("1")],
            afterImages=[_int("10223372036854775806", 20), _int("4294967295", 10), _int("65535")],
        ),
        "writer_update_none_partial": _record(
            id=1003,
            operation="UPDATE",
            sourceTimestamp=1497623893,
            fields=[
                {"name": "id", "dataTypeNumber": 8},
                {"name": "shipping_type", "dataTypeNumber": 253},
                {"name": "remark", "dataTypeNumber": 253},
            ],
            beforeImages=[_int("500000287", 20), _chars("aaa"), NONE],
            afterImages=[_int("500000287", 20), NULL, NONE],
        ),
        "writer_insert_invalid_dates": _record(
            id=1004,
            objectName="dbname.legacy",
            fields=[
                {"name": "id", "dataTypeNumber": 3},
                {"name": "created", "dataTypeNumber": 12},
                {"name": "day", "dataTypeNumber": 10},
                {"name": "span", "dataTypeNumber": 11},
                {"name": "span_neg", "dataTypeNumber": 11},
            ],
            afterImages=[
                _int("7"),
                _datetime(year=0, month=0, day=0, hour=0, minute=0, second=0, millis=0),
                _datetime(year=2021, month=2, day=30),
                _datetime(hour=838, minute=59, second=59, millis=0),
                _datetime(hour=-838, minute=-59, second=-59, millis=0),
            ],
        ),
        "writer_delete": _record(
            id=1005,
            operation="DELETE",
            sourcePosition="800@65",
            sourceTxid="8735",
            fields=[
                {"name": "id", "dataTypeNumber": 8},
                {"name": "shipping_type", "dataTypeNumber": 253},
            ],
            beforeImages=[_int("500000287", 20), _chars("aaa")],
        ),
        "writer_init_snapshot": _record(
            id=1006,
            operation="INIT",
            sourcePosition="",
            safeSourcePosition="",
            sourceTxid="",
            fields=[
                {"name": "id", "dataTypeNumber": 8},
                {"name": "shipping_type", "dataTypeNumber": 253},
            ],
            afterImages=[_int("500000288", 20), _chars("bbb")],
        ),
        "writer_ddl": _record(
            id=1007,
            operation="DDL",
            tags={"thread_id": "1234", "metaVersion": "828"},
            afterImages="ALTER TABLE `tablename` ADD COLUMN `remark` varchar(64) NULL",
        ),
        "writer_ddl_create_database": _record(
            id=1008,
            operation="DDL",
            objectName="newdb",
            tags={},
            afterImages="CREATE DATABASE `newdb`",
        ),
        "writer_begin": _record(
            id=1009, operation="BEGIN", objectName=None, tags={}, sourceTxid="8736"
        ),
        "writer_commit": _record(
            id=1010, operation="COMMIT", objectName=None, tags={}, sourceTxid="8736"
        ),
        "writer_heartbeat": _record(
            id=1011,
            operation="HEARTBEAT",
            objectName=None,
            tags={},
            sourcePosition="72500@78",
            sourceTxid="",
        ),
        "writer_checkpoint_marker": _record(
            id=1012, operation="CHECKPOINT", objectName=None, tags={}, sourceTxid=""
        ),
        "writer_rollback_marker": _record(
            id=1013, operation="ROLLBACK", objectName=None, tags={}, sourceTxid="8737"
        ),
        "writer_command_unsupported": _record(
            id=1014, operation="COMMAND", objectName="0", tags={}, sourceTxid=""
        ),
        "writer_escaped_dot_names": _record(
            id=1015,
            objectName="my\\u002Edb.order\\u002Eitems",
            fields=[{"name": "id", "dataTypeNumber": 3}],
            afterImages=[_int("1")],
        ),
        "writer_oracle_shareplex_mio_log": _record(
            # mirrors seed 001's SharePlex insert of CL_BIZ1.MIO_LOG (scn, trans) as DTS
            # would carry it from an Oracle source; Oracle dataTypeNumber is not interpreted
            id=1016,
            sourceTimestamp=1497623074,
            sourcePosition="14589063118712",
            safeSourcePosition="14589063118700",
            sourceTxid="7.0.411499",
            source={"sourceType": "Oracle", "version": "11.2.0.4"},
            objectName="CL_BIZ1.MIO_LOG",
            tags={"pk_uk_info": '{"PRIMARY":["MIO_LOG_ID"]}'},
            fields=[
                {"name": "MIO_LOG_ID", "dataTypeNumber": 2},
                {"name": "CNTR_NO", "dataTypeNumber": 1},
                {"name": "POL_CODE", "dataTypeNumber": 1},
                {"name": "AMOUNT", "dataTypeNumber": 2},
                {"name": "CREATED", "dataTypeNumber": 180},
                {"name": "CREATED_TZ", "dataTypeNumber": 181},
            ],
            afterImages=[
                _v("Decimal", value="32539737", precision=0, scale=0),
                _chars("1171201606syui26", "AL32UTF8"),
                None,
                _v("Decimal", value="1024.50", precision=12, scale=2),
                _datetime(year=2017, month=6, day=16, hour=14, minute=24, second=34, millis=0),
                _v(
                    "TimestampWithTimeZone",
                    value=dict(
                        year=2017, month=6, day=16, hour=14, minute=24, second=34, millis=500000
                    ),
                    timezone="+08:00",
                ),
            ],
        ),
        "writer_postgresql_three_part_name": _record(
            id=1017,
            sourcePosition="16/B374D848",
            sourceTxid="5821",
            source={"sourceType": "PostgreSQL", "version": "13.4"},
            objectName="database01.schema01.table01",
            tags={"pk_uk_info": '{"PRIMARY":["id"],"uk_email":["email"]}'},
            fields=[
                {"name": "id", "dataTypeNumber": 20},
                {"name": "email", "dataTypeNumber": 1043},
                {"name": "seen", "dataTypeNumber": 1184},
                {"name": "payload", "dataTypeNumber": 17},
            ],
            afterImages=[
                _int("12", 19),
                _chars("a@b.c", "UTF8"),
                _v(
                    "TimestampWithTimeZone",
                    value=dict(
                        year=2021, month=12, day=16, hour=12, minute=31, second=49, millis=344365
                    ),
                    timezone="Asia/Shanghai",
                ),
                _v("BinaryObject", type="BYTEA", value=b"bytea_data"),
            ],
        ),
        "writer_bad_pk_uk_info": _record(
            id=1018,
            tags={"pk_uk_info": "{PRIMARY:[id]"},
            fields=[{"name": "id", "dataTypeNumber": 8}],
            afterImages=[_int("1")],
        ),
    }


def seed_events() -> dict[str, ChangeEvent]:
    """Canonical events mirroring seed 001's Canal JSON examples, for the encoder."""
    columns = {"id": mysql_column(INT64), "shipping_type": mysql_column(STRING)}
    common: dict[str, Any] = {
        "format": "dts-avro",
        "database": "dbname",
        "table": "tablename",
        "key": ("id",),
        "columns": columns,
        "ts_ms": 1600161894000,
        "tx": "8735",
        "extra": {"sourceType": "MySQL"},
    }
    return {
        "seed_insert": ChangeEvent(
            op=Op.INSERT,
            after={"id": 500000287, "shipping_type": "aaa"},
            position=Position((78, 72469, 56)),
            **common,
        ),
        "seed_update": ChangeEvent(
            op=Op.UPDATE,
            before={"id": 500000287, "shipping_type": "aaa"},
            after={"id": 500000287, "shipping_type": None},
            position=Position((78, 72600, 57)),
            **common,
        ),
        "seed_delete": ChangeEvent(
            op=Op.DELETE,
            before={"id": 500000287, "shipping_type": None},
            position=Position((78, 72731, 58)),
            **common,
        ),
        "seed_ddl": ChangeEvent(
            op=Op.DDL,
            format="dts-avro",
            database="dbname",
            table="tablename",
            ddl="eg:createxxx",
            ts_ms=1600161894000,
            position=Position((78, 72800, 59)),
            extra={"sourceType": "MySQL"},
        ),
        "seed_snapshot_decimal": ChangeEvent(
            op=Op.SNAPSHOT,
            format="dts-avro",
            database="dbname",
            table="orders",
            key=("id",),
            columns={
                "id": mysql_column(INT64),
                "total": mysql_column(LogicalType.parse("decimal(38,10)")),
                "placed": mysql_column(TIMESTAMP),
            },
            after={
                "id": 9223372036854775807,
                "total": Decimal("1234567890123456789012345678.0123456789"),
                "placed": dt.datetime(2020, 9, 15, 9, 24, 54, 771000),
            },
            ts_ms=1600161894000,
            position=Position((78, 72900, 60)),
            extra={"sourceType": "MySQL", "bornTimestamp": 1600161894771},
        ),
    }


def main() -> None:
    schema = _writer_schema()
    for name, record in writer_records().items():
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, record)
        (HERE / f"{name}.avro").write_bytes(out.getvalue())
    encoder = DtsAvro()
    for name, event in seed_events().items():
        [message] = encoder.encode(event)
        (HERE / f"{name}.avro").write_bytes(message)


if __name__ == "__main__":
    main()
