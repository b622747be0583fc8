"""drs-avro: schema-driven decoding, its options, DRS value renderings, malformed Avro."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError, OptionError
from anycdc.event import ChangeEvent, Op, Position
from anycdc.formats import format_class, get_format
from anycdc.formats.drs_avro import DEFAULT_FIELDS, DrsAvro
from anycdc.values import BINARY, STRING, TIMESTAMP, TIMESTAMPTZ

CASES = Path(__file__).parents[2] / "cases" / "drs-avro"
RECORD_AVSC = CASES / "drs_record.avsc"
TYPED_AVSC = CASES / "drs_typed.avsc"


def _parsed(path: Path) -> Any:
    schema = fastavro.parse_schema(json.loads(path.read_text()))
    return schema[-1] if isinstance(schema, list) else schema


RECORD_SCHEMA = _parsed(RECORD_AVSC)
FMT = DrsAvro({"schema": str(RECORD_AVSC)})


def write(record: dict[str, Any], schema: Any = RECORD_SCHEMA) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, record)
    return out.getvalue()


def drs(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": 27677, "es": 1624614713000, "ts": 1625058726990, "dbType": None,
        "database": "test01", "schema": None, "table": "t", "type": "INSERT", "opType": None,
        "isDdl": False, "sql": "", "pkNames": ["id"], "mysqlType": {"id": "int"},
        "columnType": None, "sqlType": {"id": 4}, "data": [{"id": "1"}], "old": None,
        "jobId": None, "shardId": None, "identifier": None, "eventId": None,
    }  # fmt: skip
    base.update(fields)
    return base


def decode(**fields: Any) -> list[ChangeEvent]:
    return FMT.decode(write(drs(**fields)))


# --------------------------------------------------------------------------- configuration
def test_schema_option_is_required() -> None:
    with pytest.raises(OptionError, match="drs-avro: option schema is required"):
        DrsAvro()


def test_unreadable_or_invalid_schema_is_an_option_error(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="cannot read"):
        DrsAvro({"schema": str(tmp_path / "missing.avsc")})
    bad = tmp_path / "bad.avsc"
    bad.write_text("{not json")
    with pytest.raises(OptionError, match="not JSON"):
        DrsAvro({"schema": str(bad)})
    bad.write_text('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "nope"}]}')
    with pytest.raises(OptionError, match="invalid Avro schema"):
        DrsAvro({"schema": str(bad)})
    with pytest.raises(OptionError, match="invalid Avro schema"):
        DrsAvro({"schema": str(RECORD_AVSC), "record": "no.such.Record"})


def test_relative_schema_path_resolves_against_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "r.avsc").write_text(RECORD_AVSC.read_text())
    monkeypatch.chdir(tmp_path)
    [event] = DrsAvro({"schema": "r.avsc"}).decode(write(drs()))
    assert event.after == {"id": 1}


def test_inline_schema_and_record_choice() -> None:
    fmt = DrsAvro({"schema": RECORD_AVSC.read_text(), "record": "anycdc.tests.drs.Record"})
    assert fmt.decode(write(drs()))[0].after == {"id": 1}


def test_unknown_option_and_bad_op_codes() -> None:
    with pytest.raises(OptionError, match="unknown option"):
        DrsAvro({"schema": str(RECORD_AVSC), "nope": "1"})
    with pytest.raises(OptionError, match="op_codes: expected CODE=OPERATION"):
        DrsAvro({"schema": str(RECORD_AVSC), "op_codes": "u=UPSERT"})


def test_every_option_is_documented() -> None:
    specs = {spec.name: spec for spec in DrsAvro.option_specs()}
    for name in (*DEFAULT_FIELDS, "schema", "record", "op_codes", "primary_key", "timezone"):
        assert specs[name].help, name
    assert specs["op_field"].default == "type" and specs["after_field"].default == "data"


def test_class_flags() -> None:
    cls = format_class("drs-avro")
    assert cls is DrsAvro and cls.binary and not cls.detectable and not cls.can_encode
    assert DrsAvro.sniff(write(drs())) == 0.0
    with pytest.raises(EncodeError):
        FMT.encode(ChangeEvent(op=Op.INSERT, format="drs-avro"))
    assert get_format("drs-avro", {"schema": str(RECORD_AVSC)}).id == "drs-avro"


# --------------------------------------------------------------------------- DRS semantics
def test_update_pairs_old_and_data_rows() -> None:
    events = decode(
        type="UPDATE",
        data=[{"id": "2"}, {"id": "4"}],
        old=[{"id": "1"}, {"id": "3"}],
    )
    assert [(e.before, e.after) for e in events] == [
        ({"id": 1}, {"id": 2}),
        ({"id": 3}, {"id": 4}),
    ]
    assert all(e.position == Position((27677,)) and e.ts_ms == 1624614713000 for e in events)


def test_update_row_count_mismatch_is_an_error() -> None:
    with pytest.raises(DecodeError, match=r"^drs-avro: \$\.old: 1 before rows for 2 after rows"):
        decode(type="UPDATE", data=[{"id": "2"}, {"id": "4"}], old=[{"id": "1"}])


def test_delete_row_from_old_or_from_data() -> None:
    [json_style] = decode(type="DELETE", data=None, old=[{"id": "5"}])
    [json_c_style] = decode(type="DELETE", data=[{"id": "5"}], old=None)
    assert json_style.before == json_c_style.before == {"id": 5}
    assert json_style.after is None and json_c_style.after is None


def test_init_is_snapshot_and_init_ddl_is_ddl() -> None:
    [row] = decode(type="INIT")
    assert row.op is Op.SNAPSHOT and row.after == {"id": 1}
    [ddl] = decode(type="INIT_DDL", isDdl=True, sql="CREATE TABLE t (id int)", data=None)
    assert ddl.op is Op.DDL and ddl.ddl == "CREATE TABLE t (id int)" and ddl.columns is None


def test_empty_data_gives_no_events() -> None:
    assert decode(data=[]) == []


def test_full_load_identifiers_go_to_extra() -> None:
    [event] = decode(type="INIT", jobId="j", shardId="", eventId="e", dbType="MySQL")
    assert event.extra == {"jobId": "j", "eventId": "e", "dbType": "MySQL"}


def test_drs_value_renderings() -> None:
    types = {
        "id": "int", "b": "varbinary", "e": "binary", "h": "bytea", "ts": "timestamp",
        "dt": "datetime", "f": "float", "d": "double", "n": "decimal", "bits": "bit",
        "flag": "boolean", "od": "date",
    }  # fmt: skip
    row = {
        "id": "1", "b": "[106, 103, -1]", "e": "[]", "h": "\\x6162", "ts": "1624614713.201",
        "dt": "2021-06-25 17:51:53", "f": "10357.0", "d": "1.2510357E7", "n": "9874510357.10",
        "bits": "101", "flag": "false", "od": "2021-06-25 17:51:53",
    }  # fmt: skip
    [event] = decode(mysqlType=types, sqlType=None, data=[row])
    assert event.after == {
        "id": 1, "b": b"jg\xff", "e": b"", "h": b"ab",
        "ts": dt.datetime(2021, 6, 25, 9, 51, 53, 201000, tzinfo=dt.UTC),
        "dt": dt.datetime(2021, 6, 25, 17, 51, 53), "f": 10357.0, "d": 12510357.0,
        "n": Decimal("9874510357.10"), "bits": "101", "flag": False,
        "od": dt.datetime(2021, 6, 25, 17, 51, 53),
    }  # fmt: skip
    assert event.columns is not None
    assert event.columns["ts"].type == TIMESTAMPTZ  # epoch text: an instant
    assert event.columns["dt"].type == TIMESTAMP
    assert event.columns["bits"].type == STRING and event.columns["b"].type == BINARY
    assert event.columns["od"].type == TIMESTAMP  # an Oracle DATE with a time of day
    assert event.invalid == ()


def test_datetime_text_timestamp_stays_naive_or_takes_the_timezone_option() -> None:
    data = [{"id": "1", "ts": "2021-06-25 17:51:53"}]
    [event] = decode(mysqlType={"id": "int", "ts": "timestamp"}, sqlType=None, data=data)
    assert event.after is not None and event.after["ts"] == dt.datetime(2021, 6, 25, 17, 51, 53)
    fmt = DrsAvro({"schema": str(RECORD_AVSC), "timezone": "Asia/Shanghai"})
    msg = write(drs(mysqlType={"id": "int", "ts": "timestamp"}, sqlType=None, data=data))
    [event] = fmt.decode(msg)
    assert event.after is not None and event.after["ts"].utcoffset() == dt.timedelta(hours=8)


def test_invalid_values_are_kept_and_listed() -> None:
    data = [{"id": "x1", "n": "1.5", "d": "0000-00-00 00:00:00"}]
    [event] = decode(mysqlType={"id": "int", "n": "tinyint", "d": "datetime"}, data=data)
    assert event.after == {"id": "x1", "n": "1.5", "d": "0000-00-00 00:00:00"}
    assert event.invalid == ("id", "n", "d")


def test_sql_type_codes_type_columns_without_names() -> None:
    [event] = decode(mysqlType=None, sqlType={"id": 4, "v": 12}, data=[{"id": "3", "v": "x"}])
    assert event.after == {"id": 3, "v": "x"}
    assert event.columns is not None and event.columns["id"].vendor_code == 4
    assert event.columns["id"].vendor_type is None


def test_no_types_at_all_keeps_values_as_sent() -> None:
    [event] = decode(mysqlType=None, sqlType=None, data=[{"id": "3"}])
    assert event.columns is None and event.after == {"id": "3"}


def test_column_type_field_of_the_gaussdb_flavour() -> None:
    [event] = decode(
        mysqlType=None,
        columnType={"id": "integer", "at": "timestamp with time zone"},
        sqlType={"id": 1, "at": 999},  # not java.sql.Types in this flavour
        data=[{"id": "3", "at": "2021-12-16 12:31:49.344365+08"}],
    )
    assert event.after is not None and event.after["id"] == 3
    assert event.after["at"].utcoffset() == dt.timedelta(hours=8)
    assert event.columns is not None and event.columns["id"].vendor_code == 1


def test_key_and_table_names_kept_as_sent() -> None:
    [event] = decode(table="test ", pkNames=None)
    assert event.table == "test " and event.key is None
    [event] = DrsAvro({"schema": str(RECORD_AVSC), "primary_key": "id"}).decode(
        write(drs(pkNames=None))
    )
    assert event.key == ("id",)


def test_empty_database_is_none() -> None:
    [event] = decode(database="")
    assert event.database is None


# --------------------------------------------------------------------------- other schemas
def test_typed_record_images_with_logical_types() -> None:
    schema = _parsed(TYPED_AVSC)
    options = json.loads((CASES / "typed_update.options.json").read_text())
    fmt = DrsAvro(options)
    row = {
        "id": 9, "amount": Decimal("12.30"), "paid_at": None, "due": dt.date(2020, 2, 29),
        "note": "n", "blob": b"\x00", "ratio": None, "active": None,
    }  # fmt: skip
    msg = write(
        {"op": "c", "seq": 5, "source": {"db": "d", "tbl": "t", "commitMs": 7, "xid": None},
         "keys": ["id"], "before": None, "after": row},
        schema,
    )  # fmt: skip
    [event] = fmt.decode(msg)
    assert event.op is Op.INSERT and event.after == row
    assert event.database == "d" and event.table == "t" and event.ts_ms == 7
    assert event.columns is not None and str(event.columns["amount"].type) == "decimal(12,2)"
    assert event.tx is None and event.extra == {}


def test_is_ddl_flag_without_op_and_missing_op() -> None:
    schema = {
        "type": "record", "name": "R",
        "fields": [{"name": "type", "type": ["null", "string"]},
                   {"name": "isDdl", "type": "boolean"}, {"name": "sql", "type": "string"}],
    }  # fmt: skip
    fmt = DrsAvro({"schema": json.dumps(schema)})
    parsed = fastavro.parse_schema(schema)
    [event] = fmt.decode(write({"type": None, "isDdl": True, "sql": "DROP TABLE t"}, parsed))
    assert event.op is Op.DDL and event.ddl == "DROP TABLE t"
    with pytest.raises(DecodeError, match=r"^drs-avro: \$\.type: missing operation field"):
        fmt.decode(write({"type": None, "isDdl": False, "sql": ""}, parsed))


def test_wrongly_typed_fields_are_errors() -> None:
    schema = {
        "type": "record", "name": "R",
        "fields": [{"name": "type", "type": "string"}, {"name": "id", "type": "string"},
                   {"name": "data", "type": "string"}, {"name": "pkNames", "type": "long"}],
    }  # fmt: skip
    fmt = DrsAvro({"schema": json.dumps(schema)})
    parsed = fastavro.parse_schema(schema)
    with pytest.raises(DecodeError, match=r"^drs-avro: \$\.id: expected integer"):
        fmt.decode(write({"type": "INSERT", "id": "x", "data": "", "pkNames": 1}, parsed))
    with pytest.raises(DecodeError, match=r"^drs-avro: \$\.pkNames: expected array"):
        fmt.decode(write({"type": "INSERT", "id": "1", "data": "", "pkNames": 1}, parsed))


# --------------------------------------------------------------------------- malformed Avro
def test_malformed_messages_name_the_field() -> None:
    message = write(drs())
    with pytest.raises(DecodeError, match=r"^drs-avro: \$\.\w+.*does not fit the configured"):
        FMT.decode(message[:20])
    with pytest.raises(DecodeError, match=r"^drs-avro: \$: .*bytes left after the value"):
        FMT.decode(message + b"\x00")


@settings(max_examples=300)
@given(st.binary(max_size=300))
def test_random_bytes_never_crash(data: bytes) -> None:
    try:
        FMT.decode(data)
    except DecodeError as exc:
        assert exc.format_id == "drs-avro"


def test_mutated_messages_never_crash() -> None:
    rng = random.Random(11)
    base = write(drs(type="UPDATE", old=[{"id": "0"}], mysqlType={"id": "int", "v": "varchar"}))
    for _ in range(2000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            FMT.decode(bytes(data))
        except DecodeError:
            pass


def test_pickles_with_its_schema(tmp_path: Path) -> None:
    import pickle

    path = tmp_path / "r.avsc"
    path.write_text(RECORD_AVSC.read_text())
    fmt = DrsAvro({"schema": str(path), "timezone": "Asia/Shanghai"})
    path.unlink()  # an executor does not have the file
    clone = pickle.loads(pickle.dumps(fmt))
    message = write(drs())
    assert clone.decode(message) == fmt.decode(message)
    assert clone.options.timezone == fmt.options.timezone
