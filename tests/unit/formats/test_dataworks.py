"""DataWorks JSON (``dataworks-json``) and DataWorks 2.0 JSON (``dataworks2-json``).

Round trips under hypothesis, one test per quirk of FORMATS.md sections 1 and 7,
the Paimon "aliyun" corpus, error paths, detection and a fuzz of each decoder.
"""

from __future__ import annotations

import copy
import datetime as dt
import doctest
import json
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError, OptionError
from anycdc.event import ChangeEvent, Column, Op, Position, event_to_json
from anycdc.formats import REGISTRY, format_class, get_format
from anycdc.formats import dataworks as dataworks_module
from anycdc.formats.base import Format, parse_json
from anycdc.formats.dataworks import v2 as dataworks2_module
from anycdc.formats.dataworks.format import DataWorksJson
from anycdc.formats.dataworks.v2 import DataWorks2Json
from anycdc.formats.dataworks.wire import ROW_ID_COLUMN
from anycdc.pairing import SplitUpdatePairer
from anycdc.values import (
    BINARY,
    BOOLEAN,
    DATE,
    DECIMAL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    INTEGER,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    UNKNOWN,
    LogicalType,
)
from tests.cases import CASES_DIR, iter_cases
from tests.strategies import st_row_event

DW = "dataworks-json"
DW2 = "dataworks2-json"
DW_CASES = CASES_DIR / DW
DW2_CASES = CASES_DIR / DW2
ALIYUN_CORPUS = Path(__file__).parents[2] / "corpus" / "paimon_kafka" / "aliyun"


def _case(folder: Path, name: str) -> bytes:
    return (folder / name).read_bytes()


def _one(fmt: Format, message: bytes | str) -> ChangeEvent:
    events = fmt.decode(message)
    assert len(events) == 1
    return events[0]


def _dw_message(op: str, **payload: Any) -> bytes:
    """A DataWorks JSON message of table shop.orders (id LONG key, name STRING)."""
    body: dict[str, Any] = {
        "before": None,
        "after": None,
        "sequenceId": "7",
        "timestamp": {"eventTime": 1700000000000},
        "op": op,
        "ddl": None,
    }
    body.update(payload)
    return json.dumps(
        {
            "schema": {
                "dataColumn": [{"name": "id", "type": "LONG"}, {"name": "name", "type": "STRING"}],
                "primaryKey": ["id"],
                "source": {"dbType": "MySQL", "dbName": "shop", "tableName": "orders"},
            },
            "payload": body,
            "version": "0.0.1",
        }
    ).encode()


def _dw2_message(op: str, columns: list[dict[str, str]] | None = None, **payload: Any) -> bytes:
    body: dict[str, Any] = {
        "before": None,
        "after": None,
        "op": op,
        "timestamp": {"eventTime": 1700000000000},
        "ddl": None,
        "scn": "null",
    }
    body.update(payload)
    return json.dumps(
        {
            "version": "2.0",
            "schema": {
                "source": {"dbType": "ob_mysql", "dbName": "db", "schema": None, "table": "t"},
                "column": columns
                if columns is not None
                else [{"name": "id", "type": "BIGINT"}, {"name": "name", "type": "VARCHAR"}],
                "pk": ["id"],
            },
            "payload": body,
        }
    ).encode()


# --------------------------------------------------------------------------- round trips
DW_NAMES = {
    INT64: "LONG",
    STRING: "STRING",
    BOOLEAN: "BOOLEAN",
    BINARY: "BYTES",
    DECIMAL: "DOUBLE",
    TIMESTAMPTZ: "DATE",
}
DW2_NAMES = {
    INT8: "TINYINT",
    INT16: "SMALLINT",
    INT32: "INT",
    INT64: "INT64",
    INTEGER: "BIGINT",
    FLOAT32: "FLOAT",
    FLOAT64: "DOUBLE",
    BOOLEAN: "BOOLEAN",
    STRING: "VARCHAR",
    BINARY: "BLOB",
    DECIMAL: "DECIMAL",
    DATE: "DATE",
    TIME: "TIME",
    TIMESTAMP: "DATETIME",
    TIMESTAMPTZ: "ZONED_DATETIME",
}


def _dw_column(ltype: LogicalType) -> Column:
    return Column(ltype, DW_NAMES[ltype])


def _dw2_column(ltype: LogicalType) -> Column:
    return Column(ltype, DW2_NAMES[ltype])


DW_EVENTS = st_row_event(DW, list(DW_NAMES), column=_dw_column, millis_only=True)


def _assert_same(decoded: list[ChangeEvent], original: ChangeEvent) -> None:
    assert decoded == [original]
    assert [event_to_json(e) for e in decoded] == [event_to_json(original)]


@given(DW_EVENTS)
def test_dataworks_round_trip_single_mode(event: ChangeEvent) -> None:
    fmt = DataWorksJson()
    messages = fmt.encode(event)
    assert len(messages) == 1
    _assert_same(fmt.decode(messages[0]), event)


@given(DW_EVENTS)
def test_dataworks_round_trip_split_mode(event: ChangeEvent) -> None:
    fmt = DataWorksJson({"split_update": "true"})
    messages = fmt.encode(event)
    assert len(messages) == (2 if event.op is Op.UPDATE else 1)
    halves = [e for m in messages for e in fmt.decode(m)]
    if event.op is Op.UPDATE:
        assert [h.split for h in halves] == ["before", "after"]
        assert halves[0].after is None and halves[1].before is None
        assert halves[0].position == halves[1].position == event.position
    _assert_same(list(SplitUpdatePairer().pair_all(halves)), event)


@st.composite
def _dw2_events(draw: st.DrawFn) -> ChangeEvent:
    event = draw(st_row_event(DW2, list(DW2_NAMES), column=_dw2_column))
    assert event.ts_ms is not None
    nanos = draw(st.integers(0, 10**9 - 1))
    scn = draw(st.none() | st.integers(0, 2**63))
    if scn is None:
        return event.with_changes(position=Position((event.ts_ms, nanos)))
    return event.with_changes(position=Position((event.ts_ms, nanos, scn)), extra={"scn": str(scn)})


@given(_dw2_events())
def test_dataworks2_round_trip(event: ChangeEvent) -> None:
    fmt = DataWorks2Json()
    messages = fmt.encode(event)
    assert len(messages) == 1
    _assert_same(fmt.decode(messages[0]), event)


@given(
    st.datetimes(
        min_value=dt.datetime(1971, 1, 1),
        max_value=dt.datetime(2200, 1, 1),
        timezones=st.sampled_from(
            [dt.UTC, ZoneInfo("Asia/Shanghai"), dt.timezone(dt.timedelta(hours=-5, minutes=-30))]
        ),
        allow_imaginary=False,
    ).map(lambda d: d.replace(fold=0)),
    st.sampled_from(["ZONED_DATETIME", "TIMESTAMP"]),
)
def test_dataworks2_round_trip_zoned_values(value: dt.datetime, vendor: str) -> None:
    """ZONED_DATETIME keeps the zone id (or offset); TIMESTAMP keeps the instant.

    Wall time + zone id text cannot tell the two readings of a repeated hour
    apart (``fold``), as in OMS's own rendering: values use ``fold=0``.
    """
    fmt = DataWorks2Json()
    event = ChangeEvent(
        op=Op.INSERT,
        format=DW2,
        database="db",
        table="t",
        key=("id",),
        after={"id": 1, "v": value},
        columns={"id": Column(INT64, "INT64"), "v": Column(TIMESTAMPTZ, vendor)},
        ts_ms=1,
        position=Position((1, 0)),
    )
    [decoded] = fmt.decode(fmt.encode(event)[0])
    assert decoded.after is not None
    got = decoded.after["v"]
    # compare instants: Python never calls a repeated-hour time equal to another zone's
    assert got.timestamp() == value.timestamp()
    if vendor == "ZONED_DATETIME":
        assert decoded == event
        assert got.utcoffset() == value.utcoffset()
        if isinstance(value.tzinfo, ZoneInfo):
            assert got.tzinfo == value.tzinfo
    else:
        assert got.tzinfo is dt.UTC
        assert decoded.with_changes(after=event.after) == event


def _golden_events(fmt_id: str) -> list[tuple[str, dict[str, str], ChangeEvent]]:
    out: list[tuple[str, dict[str, str], ChangeEvent]] = []
    for case in iter_cases(fmt_id):
        fmt = get_format(fmt_id, case.options)
        for message in case.messages():
            try:
                events = fmt.decode(message)
            except DecodeError:
                continue
            out.extend((case.id, case.options, e) for e in events)
    return out


GOLDEN_EVENTS = _golden_events(DW) + _golden_events(DW2)


@pytest.mark.parametrize("fmt_id", [DW, DW2])
@pytest.mark.parametrize("split_update", ["false", "true"])
def test_every_golden_event_re_encodes_faithfully(fmt_id: str, split_update: str) -> None:
    """decode(encode(e)) == e for every decodable golden message of the format.

    Skipped: columns of unknown type without a vendor name (the encoder gives
    them a type inferred from the value, on purpose).
    """
    checked = 0
    for case_id, options, event in GOLDEN_EVENTS:
        if event.format != fmt_id:
            continue
        if any(c == Column(UNKNOWN) for c in (event.columns or {}).values()):
            continue
        extra = {"split_update": split_update} if fmt_id == DW else {}
        fmt = get_format(fmt_id, {**options, **extra})
        decoded = [e for m in fmt.encode(event) for e in fmt.decode(m)]
        paired = list(SplitUpdatePairer().pair_all(decoded))
        assert [event_to_json(e) for e in paired] == [event_to_json(event)], case_id
        checked += 1
    assert checked >= 20


# --------------------------------------------------------------------------- DataWorks quirks
def test_update_befor_is_spelled_without_e() -> None:
    fmt = DataWorksJson()
    half = _one(fmt, _dw_message("UPDATE_BEFOR", before={"dataColumn": {"id": 1, "name": "a"}}))
    assert (half.op, half.split, half.after) == (Op.UPDATE, "before", None)
    with pytest.raises(
        DecodeError, match=r"dataworks-json: \$\.payload\.op: unknown op 'UPDATE_BEFORE'"
    ):
        fmt.decode(_dw_message("UPDATE_BEFORE", before={"dataColumn": {"id": 1}}))


def test_split_halves_pair_into_the_single_mode_update() -> None:
    fmt = DataWorksJson()
    before = _one(fmt, _case(DW_CASES, "seed_update_split_before.json"))
    after = _one(fmt, _case(DW_CASES, "seed_update_split_after.json"))
    single = _one(fmt, _case(DW_CASES, "seed_update_single.json"))
    assert (before.split, after.split, single.split) == ("before", "after", None)
    assert before.position == after.position == single.position == Position((1620457642589000001,))
    assert before.after is None and after.before is None
    assert list(SplitUpdatePairer().pair_all([before, after])) == [single]
    assert single.before is not None and single.after is not None
    assert (single.before["sex"], single.after["sex"]) == ("man", "woman")


def test_update_after_without_before_is_the_after_half() -> None:
    fmt = DataWorksJson()
    half = _one(fmt, _dw_message("UPDATE_AFTER", after={"dataColumn": {"id": 1, "name": "b"}}))
    assert (half.op, half.split, half.before) == (Op.UPDATE, "after", None)


def test_types_date_is_an_utc_instant_double_is_exact_bytes_base64() -> None:
    fmt = DataWorksJson()
    event = _one(fmt, _case(DW_CASES, "synthetic_types.jsonl").splitlines()[0])
    assert event.columns is not None and event.after is not None
    assert event.columns["created"] == Column(TIMESTAMPTZ, "DATE")
    assert event.after["created"] == dt.datetime(2020, 5, 24, 10, 14, 29, 123000, tzinfo=dt.UTC)
    assert event.after["birthday"] == dt.datetime(1969, 12, 31, tzinfo=dt.UTC)
    assert event.columns["price"] == Column(DECIMAL, "DOUBLE")
    assert str(event.after["price"]) == "12.50"
    assert str(event.after["ratio"]) == "0.333333"  # DOUBLE sent as text stays exact
    assert event.after["big"] == Decimal("1.7976931348623157E308")
    assert event.after["bin"] == b"hello world"
    assert event.after["flag"] is True
    assert event.after["id"] == 2**63 - 1
    assert event.columns["geo"] == Column(UNKNOWN, "GEOMETRY")
    assert event.columns["undeclared"] == Column(UNKNOWN)
    assert event.after["undeclared"] == Decimal("42.0")


def test_invalid_values_are_kept_as_sent_and_listed() -> None:
    event = _one(DataWorksJson(), _case(DW_CASES, "synthetic_types.jsonl").splitlines()[1])
    assert event.after is not None
    assert event.invalid == ("id", "flag", "price", "created", "bin", "name")
    assert event.after["bin"] == "[base64 string]"
    assert event.after["id"] == 2**63


def test_corpus_double_as_text_keeps_its_scale() -> None:
    event = _one(DataWorksJson(), _case(DW_CASES, "corpus_paimon_aliyun_event_delete.json"))
    assert event.before is not None
    assert isinstance(event.before["val"], Decimal)
    assert str(event.before["val"]) == "1.100000"


def test_sequence_id_is_the_position_and_minus_one_is_none() -> None:
    fmt = DataWorksJson()
    event = _one(fmt, _case(DW_CASES, "seed_insert_no_pk.json"))
    assert event.position == Position((1620457642589000000,))
    full_load = _one(fmt, _case(DW_CASES, "corpus_paimon_aliyun_event_insert.json"))
    assert (full_load.position, full_load.ts_ms) == (None, None)  # sequenceId "-1", eventTime -1
    with pytest.raises(DecodeError, match=r"\$\.payload\.sequenceId: expected a digit string"):
        fmt.decode(_dw_message("INSERT", after={"dataColumn": {"id": 1}}, sequenceId="XXX"))


def test_row_id_column_of_tables_without_key_is_kept_and_key_is_none() -> None:
    message = _case(DW_CASES, "seed_insert_no_pk.json")
    event = _one(DataWorksJson(), message)
    assert event.key is None
    assert event.after is not None and event.columns is not None
    assert event.after[ROW_ID_COLUMN] == 15
    assert event.columns[ROW_ID_COLUMN] == Column(INT64, "LONG")
    keyed = _one(DataWorksJson({"primary_key": ROW_ID_COLUMN}), message)
    assert keyed.key == (ROW_ID_COLUMN,)
    assert keyed.key_values() == (15,)


def test_oracle_rowid_is_a_column_and_scn_goes_to_extra() -> None:
    fmt = DataWorksJson()
    first, second, delete = (
        _one(fmt, line) for line in _case(DW_CASES, "synthetic_oracle.jsonl").splitlines()
    )
    assert first.before is not None and first.columns is not None
    assert first.before["rowid"] == "AAIUMPAAFAACxExAAE"
    assert first.columns["rowid"] == Column(STRING, "STRING")
    assert first.row_id is None
    assert (first.database, first.schema, first.table) == ("ORCL", "SCOTT", "EMP")
    assert first.extra["scn"] == "2837461" and delete.extra["scn"] == "2837470"
    assert first.position == second.position


def test_heartbeat_has_only_a_timestamp() -> None:
    event = _one(DataWorksJson(), _case(DW_CASES, "seed_heartbeat.json"))
    assert event == ChangeEvent(op=Op.HEARTBEAT, format=DW, ts_ms=1620457659000)


def test_ddl_text_from_payload_ddl_and_ddl_meta_ignored() -> None:
    fmt = DataWorksJson()
    ddl = {"text": "ALTER TABLE orders ADD COLUMN note varchar(20)", "ddlMeta": "rO0ABQ=="}
    event = _one(fmt, _dw_message("ALTER", ddl=ddl))
    assert (event.op, event.ddl) == (Op.DDL, ddl["text"])
    assert event.extra == {"db_type": "MySQL", "vendor_op": "ALTER"}
    assert "rO0ABQ==" not in event_to_json(event)


@pytest.mark.parametrize(
    "code,op,vendor_op",
    [
        ("TRANSACTION_BEGIN", Op.BEGIN, None),
        ("TRANSACTION_END", Op.COMMIT, None),
        ("XACOMMIT", Op.COMMIT, "XACOMMIT"),
        ("GTID", Op.HEARTBEAT, "GTID"),
        ("XAROLLBACK", Op.HEARTBEAT, "XAROLLBACK"),
        ("MHEARTBEAT", Op.HEARTBEAT, None),  # DataWorks JSON only
        ("HEARTBEAT", Op.HEARTBEAT, None),  # DataWorks 2.0 only
        ("TRUNCATE", Op.TRUNCATE, None),
        ("CREATE", Op.DDL, "CREATE"),
        ("ALTER", Op.DDL, "ALTER"),
        ("ERASE", Op.DDL, "ERASE"),
        ("QUERY", Op.DDL, "QUERY"),
        ("RENAME", Op.DDL, "RENAME"),
        ("CINDEX", Op.DDL, "CINDEX"),
        ("DINDEX", Op.DDL, "DINDEX"),
    ],
)
def test_marker_and_ddl_codes(code: str, op: Op, vendor_op: str | None) -> None:
    pairs = [(DataWorksJson(), _dw_message(code)), (DataWorks2Json(), _dw2_message(code))]
    checked = 0
    for fmt, message in pairs:
        if code not in fmt.ops:
            with pytest.raises(DecodeError, match="unknown op"):
                fmt.decode(message)
            continue
        checked += 1
        event = _one(fmt, message)
        assert event.op is op
        assert event.extra.get("vendor_op") == vendor_op
        assert event.before is None and event.after is None
        # and the encoder writes the same code back
        assert json.loads(fmt.encode(event)[0])["payload"]["op"] == code
    assert checked >= 1


def test_versions_0_0_1_and_1_0_0_decode_alike() -> None:
    message = json.loads(_case(DW_CASES, "seed_update_single.json"))
    fmt = DataWorksJson()
    events = []
    for version in ("0.0.1", "1.0.0"):
        message["version"] = version
        events.append(_one(fmt, json.dumps(message)))
    assert events[0] == events[1]


def test_encoder_writes_the_seed_messages() -> None:
    """Re-encoding the seed's update reproduces the seed's messages (but ``systemTime``,
    the read time, which the canonical event does not keep)."""

    def without_system_time(raw: bytes) -> Any:
        obj = json.loads(raw)
        obj["payload"]["timestamp"].pop("systemTime", None)
        return obj

    single = _case(DW_CASES, "seed_update_single.json")
    event = _one(DataWorksJson(), single)
    [encoded] = DataWorksJson().encode(event)
    assert without_system_time(encoded) == without_system_time(single)
    split = DataWorksJson({"split_update": "true"}).encode(event)
    assert [without_system_time(m) for m in split] == [
        without_system_time(_case(DW_CASES, "seed_update_split_before.json")),
        without_system_time(_case(DW_CASES, "seed_update_split_after.json")),
    ]
    heartbeat = _case(DW_CASES, "seed_heartbeat.json")
    [encoded] = DataWorksJson().encode(_one(DataWorksJson(), heartbeat))
    assert encoded == json.dumps(json.loads(heartbeat), separators=(",", ":")).encode()


def test_encoder_version_option_and_option_errors() -> None:
    event = _one(DataWorksJson(), _case(DW_CASES, "seed_delete.json"))
    [encoded] = DataWorksJson({"version": "1.0.0"}).encode(event)
    assert json.loads(encoded)["version"] == "1.0.0"
    with pytest.raises(OptionError, match="split_update"):
        DataWorksJson({"split_update": "sometimes"})
    with pytest.raises(OptionError, match="version"):
        DataWorksJson({"version": "2.0"})


def test_encoder_refuses_what_sequence_id_cannot_hold() -> None:
    event = ChangeEvent(
        op=Op.INSERT, format="x", table="t", after={"id": 1}, position=Position((3, 4))
    )
    with pytest.raises(EncodeError, match="dataworks-json: cannot encode: position 3:4"):
        DataWorksJson().encode(event)


def test_encoder_types_foreign_events() -> None:
    """Logical types DataWorks lacks are written as its nearest type; untyped values by kind."""
    event = ChangeEvent(
        op=Op.INSERT,
        format="canal-json",
        table="t",
        after={
            "d": dt.date(2020, 1, 2),
            "n": dt.datetime(2020, 1, 2, 3, 4, 5),
            "f": 1.5,
            "t": dt.time(1, 2, 3),
            "u": 2**64 - 1,
            "x": Decimal("1.25"),
        },
        columns={
            "d": Column(DATE),
            "n": Column(TIMESTAMP),
            "f": Column(FLOAT64),
            "t": Column(TIME),
            "u": Column(LogicalType("uint64")),
        },
    )
    message = json.loads(DataWorksJson().encode(event)[0])
    types = {c["name"]: c["type"] for c in message["schema"]["dataColumn"]}
    assert types == {
        "d": "DATE",
        "n": "DATE",
        "f": "DOUBLE",
        "t": "STRING",
        "u": "LONG",
        "x": "DOUBLE",
    }
    assert message["payload"]["after"]["dataColumn"] == {
        "d": 1577923200000,
        "n": 1577934245000,
        "f": 1.5,
        "t": "01:02:03",
        "u": 2**64 - 1,
        "x": 1.25,
    }


# --------------------------------------------------------------------------- DataWorks 2.0 quirks
def test_dataworks2_seed_column_names_do_not_match_data_keys() -> None:
    event = _one(DataWorks2Json(), _case(DW2_CASES, "seed_insert.json"))
    assert event.after is not None and event.columns is not None
    assert list(event.after) == [f"col{i}" for i in range(1, 19)]
    assert set(event.columns) == set(event.after)
    assert all(col == Column(UNKNOWN) for col in event.columns.values())
    assert event.after["col7"] == 10223372036854775806
    literal = _case(DW2_CASES, "seed_insert.json").decode().split('"col6":')[1].split(",")[0]
    assert event.after["col6"] == Decimal(literal)  # the 700-digit number stays exact
    assert event.key == ("pkName1", "pkName12")


def test_dataworks2_types_when_names_match() -> None:
    event = _one(DataWorks2Json(), _case(DW2_CASES, "synthetic_typed.jsonl").splitlines()[0])
    assert event.after is not None and event.columns is not None
    after = event.after
    assert event.columns["bigInt"] == Column(INTEGER, "BIGINT")
    assert after["bigInt"] == 10223372036854775806
    assert after["boolean"] is True
    assert after["bytes"] == b"hello world"
    assert isinstance(after["decimal"], Decimal) and after["decimal"] > 0
    assert after["localDate"] == dt.date(2020, 11, 25)
    assert after["localTime"] == dt.time(0, 1, 2)
    assert after["localDateTime"] == dt.datetime(2020, 11, 25, 0, 1, 2)
    # TIMESTAMP is epoch seconds text; ZONED_DATETIME names its zone: the same instant here
    assert after["timestamp"] == dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=dt.UTC)
    assert after["zonedDateTime"].tzinfo == ZoneInfo("Asia/Shanghai")
    assert after["zonedDateTime"] == after["timestamp"]
    assert after["intervalDayToSecond"] == "INTERVAL '3' DAY"
    assert event.columns["intervalYearToMonth"] == Column(STRING, "INTERVAL_YEAR_TO_MONTH")
    assert event.invalid == ()


def test_dataworks2_ms_ns_timestamps_position_and_scn() -> None:
    fmt = DataWorks2Json()
    event = _one(fmt, _case(DW2_CASES, "synthetic_typed.jsonl").splitlines()[1])
    assert event.ts_ms == 1590315269000
    assert event.position == Position((1590315269000, 123456789, 1234567))
    assert event.after is not None
    assert event.after["ms"] == dt.datetime(2020, 5, 24, 10, 14, 29, 123)  # ns truncated
    assert event.after["ts_ms"] == dt.datetime(2020, 5, 24, 10, 14, 29, 123, tzinfo=dt.UTC)
    assert event.after["dms"] == dt.date(2020, 11, 25)
    assert set(event.invalid) == {"d", "t", "dt", "ts", "zdt"}
    assert event.after["ts"] == "0000-00-00 00:00:00"
    no_scn = _one(fmt, _case(DW2_CASES, "seed_delete.json"))
    assert no_scn.position == Position((1647581072000, 0))  # scn "null"
    assert "scn" not in no_scn.extra


def test_dataworks2_heartbeat_is_version_payload_timestamp_op() -> None:
    message = _case(DW2_CASES, "seed_heartbeat_uncommented.json")
    event = _one(DataWorks2Json(), message)
    assert event == ChangeEvent(
        op=Op.HEARTBEAT, format=DW2, ts_ms=1620457659000, position=Position((1620457659000, 0))
    )
    assert DataWorks2Json().encode(event) == [
        json.dumps(json.loads(message), separators=(",", ":")).encode()
    ]


def test_dataworks2_encoder_writes_oms_renderings() -> None:
    line = _case(DW2_CASES, "synthetic_typed.jsonl").splitlines()[0]
    source = json.loads(line)
    [encoded] = DataWorks2Json().encode(_one(DataWorks2Json(), line))
    out = json.loads(encoded)
    assert out["schema"] == source["schema"]
    assert out["extend"] == source["extend"]
    assert out["payload"]["timestamp"] == {"eventTime": 1647581000000}
    assert out["payload"]["scn"] == "null"
    data, expected = out["payload"]["after"]["data"], source["payload"]["after"]["data"]
    # a huge DOUBLE literal comes back as the shortest text of the same double
    assert float(data.pop("float64")) == float(expected.pop("float64"))
    assert data == expected
    assert list(json.loads(encoded)) == ["version", "schema", "payload", "extend"]


def test_dataworks2_refuses_split_halves() -> None:
    half = _one(DataWorksJson(), _case(DW_CASES, "seed_update_split_before.json"))
    with pytest.raises(EncodeError, match="dataworks2-json: cannot encode: a lone before half"):
        DataWorks2Json().encode(half)


def test_dataworks2_zoneless_zoned_datetime_needs_the_timezone_option() -> None:
    columns = [{"name": "id", "type": "INT"}, {"name": "z", "type": "ZONED_DATETIME"}]
    message = _dw2_message("INSERT", columns, after={"data": {"id": 1, "z": "2020-11-25 00:01:02"}})
    plain = _one(DataWorks2Json(), message)
    assert plain.invalid == ("z",)
    zoned = _one(DataWorks2Json({"timezone": "Asia/Shanghai"}), message)
    assert zoned.after is not None
    assert zoned.after["z"] == dt.datetime(2020, 11, 25, 0, 1, 2, tzinfo=ZoneInfo("Asia/Shanghai"))


def test_dataworks2_update_without_before_and_unknown_codes() -> None:
    fmt = DataWorks2Json()
    event = _one(fmt, _dw2_message("UPDATE", after={"data": {"id": 1, "name": "x"}}))
    assert (event.op, event.before, event.split) == (Op.UPDATE, None, None)
    for code in ("UPDATE_BEFOR", "MHEARTBEAT", "update"):
        with pytest.raises(
            DecodeError, match=rf"dataworks2-json: \$\.payload\.op: unknown op '{code}'"
        ):
            fmt.decode(_dw2_message(code))


# --------------------------------------------------------------------------- corpus
def _paimon_records(path: Path) -> list[str]:
    """Record lines of a Paimon test resource (its license comment skipped, as Paimon does)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith(("/*", " *", " */"))]


ALIYUN_FILES = sorted(ALIYUN_CORPUS.rglob("*.txt"))
ALIYUN_EXPECTED = {
    "event-insert.txt": (Op.INSERT, False, True),
    "event-update-in-one.txt": (Op.UPDATE, True, True),
    "event-delete.txt": (Op.DELETE, True, False),
}


def test_aliyun_corpus_is_complete() -> None:
    assert {p.name for p in ALIYUN_FILES} == set(ALIYUN_EXPECTED)


@pytest.mark.parametrize("path", ALIYUN_FILES, ids=[p.name for p in ALIYUN_FILES])
def test_aliyun_corpus_decodes(path: Path) -> None:
    """Paimon's AliyunJsonRecordParserTest expectations: one record per message, the right
    kind, db bigdata_test, table sync_test_table, primary key [id]. (Paimon's event-time
    check reads ``systemTime``; our ``ts_ms`` is ``eventTime``, -1 for the full-load insert.)"""
    op, has_before, has_after = ALIYUN_EXPECTED[path.name]
    fmt = DataWorksJson()
    records = _paimon_records(path)
    assert len(records) == 1
    [event] = fmt.decode(records[0])
    assert event.op is op
    assert (event.before is not None, event.after is not None) == (has_before, has_after)
    assert event.split is None
    assert (event.database, event.table, event.key) == ("bigdata_test", "sync_test_table", ("id",))
    assert event.invalid == ()
    assert event.key_values() in ((1,), (2,))


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "fmt_id,message,expected",
    [
        (DW, b"[1]", "dataworks-json: $: expected object, got array"),
        (DW, b'{"schema":{}}', "dataworks-json: $: missing required field 'payload'"),
        (DW, b'{"payload":{"op":7}}', "dataworks-json: $.payload.op: expected string, got integer"),
        (DW, b'{"payload":{"op":"NOPE"}}', "dataworks-json: $.payload.op: unknown op 'NOPE'"),
        (
            DW,
            b'{"payload":{"op":"INSERT","after":{"dataColumn":{}}},"schema":{"dataColumn":[{"name":"id","type":"LONG"}],"primaryKey":["id",1]}}',
            "dataworks-json: $.schema.primaryKey[1]: expected string, got integer",
        ),
        (DW2, b'{"version":"2.0"}', "dataworks2-json: $: missing required field 'payload'"),
        (
            DW2,
            b'{"version":"2.0","payload":{"op":"INSERT","after":{"data":[]}}}',
            "dataworks2-json: $.payload.after.data: expected object, got array",
        ),
        (
            DW2,
            b'{"version":"2.0","payload":{"op":"HEARTBEAT","timestamp":{"eventTime":"1e3"}}}',
            "dataworks2-json: $.payload.timestamp.eventTime: "
            "expected epoch milliseconds, got '1e3'",
        ),
    ],
)
def test_errors_name_format_and_path(fmt_id: str, message: bytes, expected: str) -> None:
    with pytest.raises(DecodeError) as info:
        get_format(fmt_id).decode(message)
    assert str(info.value) == expected


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=6)
    | st.decimals(allow_nan=False, allow_infinity=False, places=3),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


def _paths(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.append((*path, key))
            out.extend(_paths(value, (*path, key)))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            out.append((*path, index))
            out.extend(_paths(value, (*path, index)))
    return out


FUZZ_SEEDS = [
    (DW, json.loads(_case(DW_CASES, "seed_update_single.json"))),
    (DW, json.loads(_case(DW_CASES, "synthetic_types.jsonl").splitlines()[0])),
    (DW2, json.loads(_case(DW2_CASES, "synthetic_typed.jsonl").splitlines()[1])),
    (DW2, json.loads(_case(DW2_CASES, "seed_format_description_repaired.json"))),
]


@given(st.sampled_from(FUZZ_SEEDS), st.data())
def test_fuzz_fields_only_decode_errors(seed: tuple[str, Any], data: st.DataObject) -> None:
    """Any field replaced by any JSON value: events or a DecodeError of the format, no crash."""
    fmt_id, original = seed
    obj = copy.deepcopy(original)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(obj)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = obj
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = data.draw(JSON_VALUES)
    fmt = get_format(fmt_id)
    try:
        events = fmt.decode_object(obj)
    except DecodeError as exc:
        assert exc.format_id == fmt_id
        return
    for event in events:
        event_to_json(event)  # every decoded event has a canonical JSON form


# --------------------------------------------------------------------------- detection
def _importable_sniffers() -> dict[str, Any]:
    out = {}
    for fmt_id in REGISTRY:
        try:
            cls = format_class(fmt_id)
        except ImportError:  # a format still being written elsewhere
            continue
        if not cls.binary:
            out[fmt_id] = cls
    return out


def _parsed_case_messages(format_ids: set[str] | None, exclude: set[str]) -> list[tuple[str, Any]]:
    out = []
    for case in iter_cases():
        if case.format_id in exclude or (format_ids and case.format_id not in format_ids):
            continue
        if case.input_path.suffix == ".avro":
            continue
        for message in case.messages():
            if message is None:
                continue
            try:
                out.append((case.id, parse_json("test", message)))
            except DecodeError:
                continue
    return out


@pytest.mark.parametrize("fmt_id", [DW, DW2])
def test_sniff_wins_on_own_cases(fmt_id: str) -> None:
    sniffers = _importable_sniffers()
    messages = _parsed_case_messages({fmt_id}, set())
    assert messages
    for case_id, obj in messages:
        scores = {fid: cls.sniff(obj) for fid, cls in sniffers.items()}
        mine = scores.pop(fmt_id)
        assert mine >= 0.5, case_id
        assert all(other < mine for other in scores.values()), (case_id, scores)


def test_sniff_is_low_on_other_formats() -> None:
    for case_id, obj in _parsed_case_messages(None, {DW, DW2}):
        assert DataWorksJson.sniff(obj) < 0.5, case_id
        assert DataWorks2Json.sniff(obj) < 0.5, case_id
    debezium_like = {
        "schema": {"type": "struct", "fields": []},
        "payload": {"before": None, "after": {"id": 1}, "op": "c", "ts_ms": 1, "source": {}},
    }
    assert DataWorksJson.sniff(debezium_like) < 0.5
    assert DataWorks2Json.sniff(debezium_like) == 0.0
    junks: list[Any] = [None, [], "x", 1, {"payload": []}, {"version": "2.0", "payload": {"op": 1}}]
    for junk in junks:
        assert DataWorksJson.sniff(junk) == 0.0
        assert DataWorks2Json.sniff(junk) == 0.0


def test_dataworks_and_dataworks2_tell_each_other_apart() -> None:
    v1 = json.loads(_case(DW_CASES, "seed_heartbeat.json"))
    v2 = json.loads(_case(DW2_CASES, "seed_heartbeat_uncommented.json"))
    assert DataWorksJson.sniff(v1) > DataWorks2Json.sniff(v1)
    assert DataWorks2Json.sniff(v2) > DataWorksJson.sniff(v2)


# --------------------------------------------------------------------------- docs
@pytest.mark.parametrize("module", [dataworks_module, dataworks2_module])
def test_module_doctests(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
