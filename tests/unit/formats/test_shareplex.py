"""SharePlex JSON (shareplex-json): round trips, seed quirks, errors, detection."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError, OptionError
from anycdc.event import ChangeEvent, Op, Position
from anycdc.formats import detect, get_format
from anycdc.formats.shareplex import SharePlexJson
from tests.cases import foreign_json_messages, iter_cases
from tests.strategies import GARBAGE, IDENT, UNICODE_TEXT, st_decimal

FMT = SharePlexJson()
FULL = SharePlexJson({"full_key_image": "true"})
CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def decode(message: Any, fmt: SharePlexJson = FMT) -> list[ChangeEvent]:
    return fmt.decode(json.dumps(message) if not isinstance(message, str) else message)


def one(message: Any, fmt: SharePlexJson = FMT) -> ChangeEvent:
    [event] = decode(message, fmt)
    return event


# --------------------------------------------------------------------------- round trip
# SharePlex JSON carries no types: values keep their JSON types (ints, exact decimals, text)
JSON_VALUES = st.one_of(
    st.none(),
    st.integers(-(2**70), 2**70),
    st_decimal(30, 6),
    UNICODE_TEXT,
)


@st.composite
def st_shareplex_event(draw: st.DrawFn, full_key: bool) -> ChangeEvent:
    names = draw(st.lists(IDENT, min_size=1, max_size=6, unique=True))
    row = {name: draw(JSON_VALUES) for name in names}
    op = draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE, Op.TRUNCATE, "split"]))
    seq = draw(st.none() | st.integers(1, 10**6))
    common: dict[str, Any] = {
        "format": "shareplex-json",
        "schema": draw(IDENT),
        "table": draw(IDENT),
        "ts_ms": draw(st.integers(0, 2**33)) * 1000,  # meta.time has second precision
        "position": draw(st.none() | st.integers(0, 2**63 - 1).map(lambda n: Position((n,)))),
        "tx": draw(st.none() | st.from_regex(r"\d{1,3}\.\d{1,3}\.\d{1,9}", fullmatch=True)),
        "row_id": draw(st.none() | st.from_regex(r"[A-Za-z0-9+/]{18}", fullmatch=True)),
        "extra": {} if seq is None else {"seq": seq},
    }
    if common["position"] is not None and seq is not None:
        common["position"] = Position((common["position"].parts[0], seq))
    if op == "split":
        half = draw(st.sampled_from(["before", "after"]))
        # a split half is written as `data` alone: nothing says it is the whole row
        return ChangeEvent(op=Op.UPDATE, split=half, partial=(half,), **{half: row}, **common)
    if op is Op.INSERT:
        return ChangeEvent(op=op, after=row, **common)
    if op is Op.DELETE:
        return ChangeEvent(op=op, before=row, **common)
    if op is Op.TRUNCATE:
        return ChangeEvent(op=op, **common)
    after = {**row, **{name: draw(JSON_VALUES) for name in draw(st.sets(st.sampled_from(names)))}}
    partial = () if full_key else ("before", "after")
    return ChangeEvent(op=Op.UPDATE, before=row, after=after, partial=partial, **common)


@given(st_shareplex_event(full_key=False))
def test_round_trip(event: ChangeEvent) -> None:
    [message] = FMT.encode(event)
    assert FMT.decode(message) == [event]


@given(st_shareplex_event(full_key=True))
def test_round_trip_full_key_image(event: ChangeEvent) -> None:
    [message] = FULL.encode(event)
    assert FULL.decode(message) == [event]


# --------------------------------------------------------------------------- seed quirks
DTS_UPDATE = {
    "meta": {"time": "2017-06-16T15:38:13", "userid": 84, "op": "upd", "table": "CL_BIZ1.MIO_LOG"},
    "data": {"CNTR_NO": "1171201606"},
    "key": {
        "MIO_LOG_ID": "32537893",
        "PLNMIO_REC_ID": "31557806",
        "POL_CODE": None,
        "CNTR_TYPE": None,
        "CNTR_NO": "1171201606syui26",
    },
}


def test_update_data_holds_changed_columns_and_key_the_row_before() -> None:
    event = one(DTS_UPDATE)
    assert event.op is Op.UPDATE
    assert event.before == DTS_UPDATE["key"]
    assert event.after == {**DTS_UPDATE["key"], "CNTR_NO": "1171201606"}
    # one message cannot prove that `key` is the whole row (SharePlex may send key columns only)
    assert event.partial == ("before", "after")
    assert FULL.decode(json.dumps(DTS_UPDATE))[0].partial == ()


def test_update_without_key_has_only_a_partial_after_image() -> None:
    event = one({"meta": {"op": "upd"}, "data": {"SAL": 3}})
    assert event.before is None
    assert event.after == {"SAL": 3}
    assert event.partial == ("after",)


def test_insert_and_delete_data_is_the_whole_row() -> None:
    row = {"ID": 1, "NAME": "x"}
    assert one({"meta": {"op": "ins"}, "data": row}).after == row
    deleted = one({"meta": {"op": "del"}, "data": row})
    assert deleted.op is Op.DELETE and deleted.before == row and deleted.after is None
    assert deleted.partial == ()


@pytest.mark.parametrize(
    ("code", "op", "split"),
    [
        ("ins", Op.INSERT, None),
        ("upd", Op.UPDATE, None),
        ("del", Op.DELETE, None),
        ("INSERT", Op.INSERT, None),
        ("UPDATE", Op.UPDATE, None),
        ("DELETE", Op.DELETE, None),
        ("UPDATE BEFORE", Op.UPDATE, "before"),
        ("UPDATE AFTER", Op.UPDATE, "after"),
        ("TRUNCATE", Op.TRUNCATE, None),
        ("DROP COLUMN", Op.DDL, None),
    ],
)
def test_dts_and_oms_op_codes(code: str, op: Op, split: str | None) -> None:
    event = one({"meta": {"op": code, "table": "HR.EMP"}, "data": {"ID": 1}})
    assert (event.op, event.split) == (op, split)
    if split is not None:
        assert getattr(event, split) == {"ID": 1}
        assert event.partial == (split,)


def test_drop_column_is_ddl_without_statement() -> None:
    event = one({"meta": {"op": "DROP COLUMN", "table": "HR.EMP"}, "data": {"BONUS": None}})
    assert event.op is Op.DDL and event.ddl is None
    assert event.extra["op"] == "DROP COLUMN" and event.extra["data"] == {"BONUS": None}
    [message] = FMT.encode(event)
    assert json.loads(message)["meta"]["op"] == "DROP COLUMN"


def test_meta_fields() -> None:
    event = one(
        {
            "meta": {
                "time": "2017-06-16T14:24:34",
                "userid": 84,
                "op": "ins",
                "scn": "14589063118712",
                "rowid": "AAATGpAAIAAItcIAAA",
                "trans": "7.0.411499",
                "seq": 1,
                "size": 11,
                "table": "CL_BIZ1.MIO_LOG",
                "idx": "1/11",
                "posttime": "2017-06-16T14:33:52",
            },
            "data": {"MIO_LOG_ID": "32539737"},
        }
    )
    assert (event.schema, event.table, event.database) == ("CL_BIZ1", "MIO_LOG", None)
    assert event.ts_ms == 1497623074000  # 2017-06-16T14:24:34 UTC
    assert event.position == Position((14589063118712, 1))
    assert event.tx == "7.0.411499"
    assert event.row_id == "AAATGpAAIAAItcIAAA"
    assert event.key is None  # a DTS rowid is an Oracle ROWID: it names no key
    assert event.columns is None
    assert dict(event.extra) == {
        "userid": 84, "seq": 1, "size": 11, "idx": "1/11", "posttime": "2017-06-16T14:33:52"
    }  # fmt: skip


def test_time_is_utc_with_or_without_zone_suffix() -> None:
    plain = one({"meta": {"op": "ins", "time": "2020-01-02T03:04:05"}, "data": {}})
    zulu = one({"meta": {"op": "ins", "time": "2020-01-02T03:04:05Z"}, "data": {}})
    assert plain.ts_ms == zulu.ts_ms == 1577934245000


def test_position_is_numeric_and_scn_null_means_none() -> None:
    def position(scn: Any, seq: Any = None) -> Position | None:
        meta = {"op": "ins", "scn": scn} if seq is None else {"op": "ins", "scn": scn, "seq": seq}
        return one({"meta": meta, "data": {}}).position

    assert position("9", 10) < position("10", 1)  # type: ignore[operator]
    assert position("100", 9) < position("100", 10)  # type: ignore[operator]
    assert position(14589063118712) == Position((14589063118712,))
    assert position("null") is None
    # no scn: trans (an Oracle transaction id) does not order transactions
    assert (
        one({"meta": {"op": "ins", "trans": "7.0.411499", "seq": 1}, "data": {}}).position is None
    )


def test_oms_rowid_key_count_names_the_key_when_the_update_key_matches() -> None:
    meta = {"op": "upd", "table": "shop.orders", "rowid": "shop.orders-3\u0001129"}
    event = one({"meta": meta, "data": {"note": "x"}, "key": {"id": 3, "no": 129}})
    assert event.key == ("id", "no")
    # the seed's OMS update: 2 key values but 18 columns in `key` -> unknown
    whole = {f"col{i}": i for i in range(18)}
    assert one({"meta": meta, "data": {"note": "x"}, "key": whole}).key is None
    # a configured key always wins
    configured = SharePlexJson({"primary_key": "no"})
    assert one({"meta": meta, "data": {}, "key": {"id": 3, "no": 129}}, configured).key == ("no",)


def test_unquoted_oms_numbers_stay_exact() -> None:
    text = '{"meta":{"op":"ins"},"data":{"u":10223372036854775806,"d":9.99E-308,"f":1.2222}}'
    after = FMT.decode(text)[0].after
    assert after is not None
    assert after["u"] == 10223372036854775806 and isinstance(after["u"], int)
    assert after["d"] == Decimal("9.99E-308") and str(after["d"]) == "9.99E-308"
    assert after["f"] == Decimal("1.2222")


def test_seed_examples_cut_short_are_errors() -> None:
    for case in iter_cases("shareplex-json"):
        if case.name in ("seed_dts_update", "seed_dts_delete", "corpus_aliyun_dts_update_elided"):
            with pytest.raises(DecodeError, match=r"^shareplex-json: \$: invalid JSON"):
                FMT.decode(case.messages()[0])


# --------------------------------------------------------------------------- encoder
def test_encoder_writes_changed_columns_and_the_whole_before_image() -> None:
    event = ChangeEvent(
        op=Op.UPDATE,
        format="shareplex-json",
        schema="HR",
        table="EMP",
        before={"ID": 1, "SAL": Decimal("1.50"), "NOTE": "a"},
        after={"ID": 1, "SAL": Decimal("2.50"), "NOTE": "a"},
        ts_ms=1497627493000,
        position=Position((14589063118712,)),
        tx="7.0.411499",
    )
    [message] = FMT.encode(event)
    assert message == (
        b'{"meta":{"time":"2017-06-16T15:38:13","op":"upd","scn":"14589063118712",'
        b'"trans":"7.0.411499","table":"HR.EMP"},"data":{"SAL":2.50},'
        b'"key":{"ID":1,"SAL":1.50,"NOTE":"a"}}'
    )


def test_encoder_renders_values_the_oceanbase_way() -> None:
    import datetime as dt

    event = ChangeEvent(
        op=Op.INSERT,
        format="shareplex-json",
        table="T",
        after={"b": True, "bin": b"hello world", "d": dt.date(2020, 11, 25),
               "ts": dt.datetime(2020, 11, 25, 0, 1, 2, 12345)},
    )  # fmt: skip
    [message] = FMT.encode(event)
    assert json.loads(message)["data"] == {
        "b": 1, "bin": "aGVsbG8gd29ybGQ=", "d": "2020-11-25", "ts": "2020-11-25 00:01:02.012345"
    }  # fmt: skip


@pytest.mark.parametrize("op", [Op.HEARTBEAT, Op.BEGIN, Op.COMMIT])
def test_encoder_refuses_what_sharePlex_cannot_say(op: Op) -> None:
    with pytest.raises(EncodeError, match=r"^shareplex-json: cannot encode"):
        FMT.encode(ChangeEvent(op=op, format="shareplex-json"))
    with pytest.raises(EncodeError):
        FMT.encode(ChangeEvent(op=Op.DDL, format="shareplex-json", ddl="ALTER TABLE t ADD c INT"))


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"data": {}}, "shareplex-json: $: missing required field 'meta'"),
        ({"meta": []}, "shareplex-json: $.meta: expected object, got array"),
        ({"meta": {"op": 1}}, "shareplex-json: $.meta.op: expected string, got integer"),
        ({"meta": {"op": "XYZ"}, "data": {}}, "shareplex-json: $.meta.op: unknown op 'XYZ'"),
        ({"meta": {"op": "ins"}}, "shareplex-json: $: missing 'data' when 'op' is 'ins'"),
        ({"meta": {"op": "upd"}, "data": {}, "key": 1}, "shareplex-json: $.key: expected object"),
        ({"meta": {"op": "ins", "scn": "0x1F"}, "data": {}}, "shareplex-json: $.meta.scn:"),
        ({"meta": {"op": "ins", "seq": 1e999999}, "data": {}}, "shareplex-json: $.meta.seq:"),
        ({"meta": {"op": "ins", "time": "nope"}, "data": {}}, "shareplex-json: $.meta.time:"),
        ({"meta": {"op": "ins", "table": []}, "data": {}}, "shareplex-json: $.meta.table:"),
    ],
)
def test_errors_name_the_format_and_path(message: Any, error: str) -> None:
    text = json.dumps(message).replace("Infinity", "1e999999")
    with pytest.raises(DecodeError) as info:
        FMT.decode(text)
    assert str(info.value).startswith(error)


def test_bad_option_is_refused() -> None:
    with pytest.raises(OptionError, match="full_key_image"):
        SharePlexJson({"full_key_image": "maybe"})


META_KEYS = st.sampled_from(
    ["time", "userid", "op", "scn", "rowid", "trans", "seq", "size", "table", "idx", "posttime"]
)
OPS = st.sampled_from(["ins", "upd", "del", "TRUNCATE", "DROP COLUMN", "UPDATE BEFORE", "x"])


@given(
    st.fixed_dictionaries(
        {"meta": st.dictionaries(META_KEYS, GARBAGE | OPS, max_size=11)},
        optional={"data": GARBAGE, "key": GARBAGE},
    )
)
def test_garbage_gives_events_or_decode_errors(message: dict[str, Any]) -> None:
    try:
        FMT.decode_object(message)
    except DecodeError as exc:
        assert exc.format_id == "shareplex-json"


# --------------------------------------------------------------------------- detection
def test_golden_messages_are_detected_as_shareplex() -> None:
    for case in iter_cases("shareplex-json"):
        for message in case.messages():
            try:
                parsed = json.loads(message or b"")
            except ValueError:
                continue
            assert SharePlexJson.sniff(parsed) >= 0.5, case.id
            assert detect(message).format == "shareplex-json", case.id


def _other_corpus_messages() -> list[Any]:
    """Every JSON message of the corpus and of the other formats' golden cases."""
    return foreign_json_messages(("shareplex-json",), ("shareplex_docs",))


OTHER_SHAPES = [
    {"allMetaData": {"db": "t.d"}, "prevStruct": None, "recordType": "INSERT", "postStruct": {}},
    {"database": "d", "table": "t", "type": "INSERT", "data": [{"id": "1"}], "old": None},
    {"schema": {"dataColumn": []}, "payload": {"op": "INSERT"}, "version": "1.0.0"},
    {"before": None, "after": {"id": 1}, "op": "c", "source": {}},
    {"meta": "not an object", "data": {}},
]


def test_other_formats_score_low() -> None:
    for message in [*_other_corpus_messages(), *OTHER_SHAPES]:
        assert SharePlexJson.sniff(message) < 0.5, message


def test_sniff_never_raises_on_odd_shapes() -> None:
    for message in [None, 1, "x", [], {"meta": {"op": None}}, {"meta": {"op": ["ins"]}}]:
        assert 0.0 <= SharePlexJson.sniff(message) < 0.5
    assert get_format("shareplex-json").id == "shareplex-json"
