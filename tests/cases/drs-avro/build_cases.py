"""Rebuild the ``.avro`` inputs of the drs-avro golden cases (run from the repo root).

    .venv/bin/python tests/cases/drs-avro/build_cases.py

DRS's own Avro schema (record.rar) is not public, so ``drs_record.avsc`` here is
modelled on the DRS JSON record of seed 002, and the ``seed_*`` messages carry
seed 002's JSON examples VERBATIM (values, names, ids, times) in that schema,
serialized by ``fastavro.schemaless_writer``. ``typed_*`` use ``drs_typed.avsc``,
a differently shaped record with typed row records, to exercise the field
options. ``malformed_*`` are damaged bytes. The expected files come from the
decoder and were reviewed by hand (see README.md).
"""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro

HERE = Path(__file__).parent

C12 = (
    "[106, 103, 111, 106, 103, 111, 105, 100, 115, 106, 103, 111, 106, 111, 115, 111, 103, 57, "
    "51, 52, 48, 57, 52, 51, 48, 57, 116, 106, 104, 114, 103, 106, 101, 119, 57, 116, 117, 48, "
    "57, 51, 52, 48, 116, 101, 114, 111, 101, 106, 103, 57, 56, 51, 48, 52, 105, 101, 117, 114, "
    "103, 57, 101, 119, 117, 114, 103, 48, 119, 101, 117, 116, 57, 114, 48, 52, 117, 48, 57, "
    "53, 116, 117, 51, 48, 57, 50, 117, 116, 48, 57, 51, 117, 116, 48, 119, 57, 101]"
)
C14 = (
    "[106, 103, 111, 106, 103, 111, 105, 100, 115, 106, 103, 111, 106, 111, 115, 111, 103, 57, "
    "51, 52, 48, 57, 52, 51, 48, 57, 116, 106, 104, 114, 103, 106, 101, 119, 57, 116, 117, 48, "
    "57, 51, 52, 48, 116, 101, 114, 111, 101, 106, 103, 57, 56, 51, 48, 52, 105, 55, 57, 56, "
    "52, 54, 53, 52, 54, 54, 54, 49, 52, 54, 53, 33, 64, 35, 36, 37, 94, 42, 40, 41, 95, 41, "
    "43, 95, 43, 124, 125, 34, 63, 62, 58, 58, 101, 117, 114, 103, 57, 101, 119, 117, 114, "
    "103, 48, 119, 101, 117, 116, 57, 114, 48, 52, 117, 48, 57, 53, 116, 117, 51, 48, 57, 50, "
    "117, 116, 48, 57, 51, 117, 116, 48, 119, 57, 101]"
)
MYSQL_TYPE = {
    "c11": "binary", "c10": "varchar", "c13": "text", "c12": "varbinary", "c14": "blob",
    "c1": "varchar", "c2": "varbinary", "c3": "int", "c4": "datetime", "c5": "timestamp",
    "c6": "char", "c7": "float", "c8": "double", "c9": "decimal", "id": "int",
}  # fmt: skip
SQL_TYPE = {
    "c11": -2, "c10": 12, "c13": -1, "c12": -3, "c14": 2004, "c1": 12, "c2": -3, "c3": 4,
    "c4": 94, "c5": 93, "c6": 1, "c7": 6, "c8": 8, "c9": 3, "id": 4,
}  # fmt: skip


def _row(c13: str, row_id: str) -> dict[str, str]:
    return {
        "c11": "[]",
        "c10": "华为云huaweicloud",
        "c13": c13,
        "c12": C12,
        "c14": C14,
        "c1": "cf3f70a7-7565-44b0-ae3c-83bec549ea8e:104",
        "c2": "[]",
        "c3": "103",
        "c4": "2021-06-25 17:51:53",
        "c5": "1624614713.201",
        "c6": "!@#$%90weurtg103",
        "c7": "10357.0",
        "c8": "1.2510357E7",
        "c9": "9874510357",
        "id": row_id,
    }


LONG_C13 = (
    "asfiajhfiaf939-0239uoituqorjoqirfoidjfqrniowejoiwqjroqwjrowqjojoiqgoiegnkjgoi23roiugouofdug9"
    "u90weurtg103"
)


def _drs(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": 27677,
        "es": 1624614713000,
        "ts": 1625058726990,
        "dbType": None,
        "database": "test01",
        "schema": None,
        "table": "test",
        "type": "INSERT",
        "opType": None,
        "isDdl": False,
        "sql": "",
        "pkNames": None,
        "mysqlType": None,
        "columnType": None,
        "sqlType": None,
        "data": None,
        "old": None,
        "jobId": None,
        "shardId": None,
        "identifier": None,
        "eventId": None,
    }
    base.update(fields)
    return base


def drs_records() -> dict[str, dict[str, Any]]:
    """Seed 002's DRS JSON examples, field for field, in the modelled Avro record."""
    return {
        "seed_update_mysql": _drs(
            table="test ",  # the trailing space is in the seed
            type="UPDATE",
            mysqlType=MYSQL_TYPE,
            sqlType=SQL_TYPE,
            data=[_row(LONG_C13, "104")],
            old=[_row("asfiajhfiaf939-0239", "103")],
            pkNames=["id"],
        ),
        "seed_init_row": _drs(
            type="INIT",
            jobId="e28c0c1e-e3ab-4f6c-bbc2-69c28670deec",
            shardId="c66c15af-747b-4bd6-9b5d-de2e8e38f935",
            identifier="1",
            eventId="mysql-bin.000065:800;2bf665dc-f8e2-11eb-bcfd-6c4b90b9d8b3:1-251167",
            mysqlType=MYSQL_TYPE,
            sqlType=SQL_TYPE,
            data=[_row(LONG_C13, "104")],
            pkNames=["id"],
        ),
        "seed_init_ddl": _drs(
            id=0,
            es=1733998006282,
            ts=1733998006282,
            type="INIT_DDL",
            isDdl=True,
            jobId="e28c0c1e-e3ab-4f6c-bbc2-69c28670deec",
            eventId="",
            sql=(
                "CREATE TABLE `test` ( `id` int(11) NOT NULL AUTO_INCREMENT, `c1` varchar(255)"
                " DEFAULT NULL, `c2` blob, `c3` longblob, `c4` bit(2) DEFAULT NULL, `c5`"
                " binary(255) DEFAULT NULL, `c6` varchar(255) DEFAULT NULL, PRIMARY KEY (`id`))"
                " ENGINE InnoDB AUTO_INCREMENT DEFAULT CHARSET utf8"
            ),
        ),
        "seed_gaussdb_update": _drs(
            id=332,
            es=1639626187000,
            ts=1639629261915,
            dbType="GaussDB Primary/Standby",
            database="database01",
            schema="schema01",
            table="table01",
            type="UPDATE",
            opType="UPDATE",
            columnType={
                "timestamp_column": "timestamp without time zone",
                "tstzrange_column": "tstzrange",
                "int4range_column": "int4range",
                "char_column": "character",
                "jsonb_column": "json",
                "boolean_column": "boolean",
                "bit_column": "bit",
                "smallint_column": "smallint",
                "bytea_column": "bytea",
            },
            sqlType={
                "timestamp_column": 16,
                "tstzrange_column": 46,
                "int4range_column": 42,
                "char_column": 9,
                "jsonb_column": 22,
                "boolean_column": 8,
                "bit_column": 20,
                "smallint_column": 2,
                "bytea_column": 15,
            },
            data=[
                {
                    "timestamp_column": "2021-12-16 12:31:49.344365",
                    "tstzrange_column": '("2010-01-01 14:30:00+08","2010-01-01 15:30:00+08")',
                    "int4range_column": "[11,20)",
                    "char_column": "g",
                    "jsonb_column": '{"key1": "value1", "key2": "value2"}',
                    "boolean_column": "false",
                    "bit_column": "1",
                    "smallint_column": "12",
                    "bytea_column": "62797465615f64617461",
                }
            ],
            old=[
                {
                    "timestamp_column": "2014-07-02 06:14:00.742",
                    "tstzrange_column": '("2010-01-01 14:30:00+08","2010-01-01 15:30:00+08")',
                    "int4range_column": "[11,20)",
                    "char_column": "g",
                    "jsonb_column": '{"key1": "value1", "key2": "value2"}',
                    "boolean_column": "true",
                    "bit_column": "1",
                    "smallint_column": "12",
                    "bytea_column": "62797465615f64617461",
                }
            ],
        ),
        "delete_two_rows": _drs(
            id=27680,
            type="DELETE",
            mysqlType={"id": "int", "c1": "varchar"},
            sqlType={"id": 4, "c1": 12},
            old=[{"id": "104", "c1": "a"}, {"id": "105", "c1": None}],
            pkNames=["id"],
        ),
    }


def typed_records() -> dict[str, dict[str, Any]]:
    row_before = {
        "id": 7,
        "amount": Decimal("1024.50"),
        "paid_at": dt.datetime(2021, 6, 25, 9, 51, 53, 201000, tzinfo=dt.UTC),
        "due": dt.date(2021, 7, 1),
        "note": "华为云",
        "blob": b"\x00\x01",
        "ratio": 0.5,
        "active": True,
    }
    return {
        "typed_update": {
            "op": "u",
            "seq": 90001,
            "source": {"db": "shop", "tbl": "payments", "commitMs": 1624614713201, "xid": "tx-9"},
            "keys": ["id"],
            "before": row_before,
            "after": {**row_before, "amount": Decimal("-3.07"), "note": None, "active": False},
        },
        "typed_unknown_op": {
            "op": "MERGE",
            "seq": 90002,
            "source": {"db": "shop", "tbl": "payments", "commitMs": 1624614713201, "xid": None},
            "keys": ["id"],
            "before": None,
            "after": None,
        },
    }


def _write(schema_file: str, records: dict[str, dict[str, Any]]) -> None:
    schema = fastavro.parse_schema(json.loads((HERE / schema_file).read_text()))
    if isinstance(schema, list):
        schema = schema[-1]
    for name, record in records.items():
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, record)
        (HERE / f"{name}.avro").write_bytes(out.getvalue())


def main() -> None:
    _write("drs_record.avsc", drs_records())
    _write("drs_typed.avsc", typed_records())
    whole = (HERE / "seed_update_mysql.avro").read_bytes()
    (HERE / "malformed_truncated.avro").write_bytes(whole[: len(whole) // 2])
    # a record whose six trailing unions (data, old, jobId, shardId, identifier, eventId)
    # are all null (index byte 0x00); the index of `data` becomes 5 (zig-zag 0x0a)
    _write("drs_record.avsc", {"malformed_union_index": _drs(type="INSERT")})
    bad = bytearray((HERE / "malformed_union_index.avro").read_bytes())
    assert bad[-6:] == b"\x00" * 6
    bad[-6] = 0x0A
    (HERE / "malformed_union_index.avro").write_bytes(bytes(bad))


if __name__ == "__main__":
    main()
