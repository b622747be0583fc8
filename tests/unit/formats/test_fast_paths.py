"""Fast paths give exactly what the reference decoders give.

A format with a fast path (``Format.fast_path``) decodes the common message with
typed msgspec decoding and falls back to its reference decoder
(:meth:`Format.decode_slow`) for anything else. These tests decode the same
messages both ways and compare ``repr`` of the results (types, key order, decimal
exponents and time zones included) or the error: golden messages, the benchmark's
messages, field-by-field and value-by-value mutations of them, byte-level damage,
and hypothesis-built rows of mixed valid and invalid texts. They also check that
the fast path really takes the common messages (a fast path that always falls
back would pass the comparisons and be slow).
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import string
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anycdc.bench.decode import messages as bench_messages
from anycdc.formats import format_class, get_format
from anycdc.formats.base import NAIVE_DATETIME, NO_FLOAT, FastColumn, FastRows, Format, lax_int
from anycdc.formats.canal.fast import naive_iso
from anycdc.values import parse_bool, parse_date, parse_datetime, parse_decimal
from tests.cases import iter_cases

FAST_FORMATS = [
    "canal-json", "dts-canal-json", "drs-json", "drs-json-c", "oms-json", "oms-extend-json",
    "dataworks-json", "dataworks2-json", "shareplex-json",
]  # fmt: skip
OPTION_VARIANTS: dict[str, list[dict[str, str]]] = {
    "canal-json": [{}, {"timezone": "Asia/Shanghai"}, {"binary": "base64"}, {"primary_key": "id"}],
    "dts-canal-json": [{}, {"legacy": "true"}, {"timezone": "UTC"}],
    "drs-json": [{}, {"timezone": "Asia/Shanghai"}, {"primary_key": "id"}],
    "drs-json-c": [{}, {"timezone": "UTC"}],
    "oms-json": [{}, {"primary_key": "id"}],
    "oms-extend-json": [{}, {"timezone": "Asia/Shanghai"}],
    "dataworks-json": [{}, {"primary_key": "id"}, {"timezone": "UTC"}],
    "dataworks2-json": [{}, {"primary_key": "id"}, {"timezone": "Asia/Shanghai"}],
    "shareplex-json": [{}, {"full_key_image": "true"}, {"primary_key": "id"}],
}

# values put into rows: valid and invalid renderings of every type, and oddities
TEXTS: list[Any] = [
    None, "", " ", "0", "1", "-1", "-0", "+1", " 1", "1 ", "01", "1_000", "\u0663", "1.0", "1.5",
    "1e3", "1E2", "9007199254740993.0", "1.0000000000000000001", "NaN", "Infinity", "-0.00",
    "0.99", " 1.5 ", "\u20001.5", "1.", ".5", "sNaN", "127", "128", "-129", "32767", "32768",
    "2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "18446744073709551615", "18446744073709551616", "9" * 30, "9" * 5000, "true", "false", "TRUE",
    "t", "yes", "null", "NULL", "2024-01-01 00:00:01", "2024-01-01T00:00:01", "2024-01-01t00:00:01",
    "2024-01-01 00:00:01.5", "2024-01-01 00:00:01.123456", "2024-01-01 00:00:01.1234567",
    "2024-01-01 00:00:01.9999995", "0000-00-00 00:00:00", "2024-02-30 00:00:00", "2024-01-01 24:00:00",
    "2024-01-01 00:00", "2024-01-01", "20240101", "20240101T000001", "2024-01-01 00:00:01Z",
    "2024-01-01 00:00:01+08:00", "2024-01-01 00:00:01 Asia/Shanghai", " 2024-01-01 00:00:01",
    "1700000000", "1700000000.5", "00:00:01", "25:00:00", "AAEC", "0x0102", "[106, 103]",
    'a"b', "a\\b", "a\nb", "\u00e9t\u00e9", "\ud83d\ude00", '","', '"-0"', 1, 1.5, -0.0, 2**64, True,
    [], {},
]  # fmt: skip
TYPE_NAMES: list[Any] = [
    "bigint", "bigint unsigned", "int", "smallint", "tinyint", "tinyint(1)", "bit(1)", "bit(8)",
    "serial", "decimal(10,2)", "float", "double", "varchar(8)", "text", "json", "blob", "date",
    "time", "datetime", "timestamp", "enum('a')", "nosuchtype", "", None, 5,
]  # fmt: skip
OMS_TYPE_NAMES: list[Any] = [
    "TINYINT", "INT64", "BIGINT", "BIGINT UNSIGNED", "BOOL", "BOOLEAN", "DECIMAL", "FLOAT",
    "VARCHAR", "BLOB", "DATE", "TIME", "DATETIME", "TIMESTAMP", "ZONED_DATETIME", "NUMBER",
    "INTERVAL_DAY_TO_SECOND", "TIMESTAMP WITH TIME ZONE",
]  # fmt: skip
SAMPLE = 8
REPLACEMENTS: list[Any] = [None, True, 0, -1, 2**70, 1.5, "x", "", [], {}, [{}], {"a": []}]


def outcome(fmt: Format, slow: bool, message: bytes | None) -> str:
    """``repr`` of the events, or the error's type and text."""
    try:
        events = fmt.decode_slow(message) if slow else fmt.decode(message)
    except Exception as exc:  # every error must be the same error
        return f"{type(exc).__name__}: {exc}"
    return repr(events)


def assert_same(fmt: Format, message: bytes | None) -> None:
    assert outcome(fmt, False, message) == outcome(fmt, True, message), message


def fast_takes(fmt: Format, message: bytes) -> bool:
    try:
        fmt.decode_fast(message)
    except Exception:
        return False
    return True


def golden(format_id: str) -> list[tuple[dict[str, str], bytes]]:
    out = []
    for case in iter_cases(format_id):
        for message in case.messages():
            if message is not None:
                out.append((case.options, message))
    return out


def dump(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def paths(obj: Any, path: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    if depth > 4:
        return
    items = (
        obj.items()
        if isinstance(obj, dict)
        else enumerate(obj[:2])
        if isinstance(obj, list)
        else ()
    )
    for key, value in items:
        yield (*path, key)
        yield from paths(value, (*path, key), depth + 1)


def replaced(obj: Any, path: tuple[Any, ...], value: Any, remove: bool = False) -> Any:
    clone = copy.deepcopy(obj)
    parent = clone
    for step in path[:-1]:
        parent = parent[step]
    if remove:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return clone


def row_paths(obj: Any) -> list[tuple[Any, ...]]:
    """Paths of the flat objects (rows, type maps) of a message."""
    out = []
    for path in paths(obj):
        value = obj
        for step in path:
            value = value[step]
        if (
            isinstance(value, dict)
            and value
            and all(not isinstance(v, (dict, list)) for v in value.values())
        ):
            out.append(path)
    return out


def mutations(obj: Any) -> Iterator[Callable[[], bytes]]:
    """Field removals and replacements, every odd text in every row value, type names
    (each built when called: callers sample them)."""
    for path in paths(obj):
        yield lambda path=path: dump(replaced(obj, path, None, remove=True))
        for value in REPLACEMENTS:
            yield lambda path=path, value=value: dump(replaced(obj, path, value))
    for rpath in row_paths(obj):
        row = obj
        for step in rpath:
            row = row[step]
        typed = rpath[-1] == "mysqlType" or "schemaType" in row or set(row) == {"name", "type"}
        pool = TYPE_NAMES + OMS_TYPE_NAMES if typed else TEXTS
        for key in list(row):
            for value in pool:
                yield lambda rpath=rpath, key=key, value=value: dump(
                    replaced(obj, (*rpath, key), value)
                )
        for other in (
            dict(reversed(list(row.items()))),
            {**row, "zz_extra": "1"},
            {**row, "\u00e9": "1"},
            dict(list(row.items())[1:]),
        ):
            yield lambda rpath=rpath, other=other: dump(replaced(obj, rpath, other))


def byte_damage(raw: bytes) -> Iterator[bytes]:
    yield raw + b" "
    yield raw[:-1]
    yield raw.replace(b'":', b'" :', 1)
    yield raw.replace(b'":"', b'": "')
    yield raw.replace(b",", b",\n")
    if raw.startswith(b"{"):
        yield b'{"zz":1,' + raw[1:]
        yield b'{"zz":"\xff",' + raw[1:]
        first = raw.find(b",", 1)
        yield raw[:first] + b"," + raw[1:first] + raw[first:]  # a repeated first key
    at = raw.find(b'":"')
    if at > 0:
        yield raw[: at + 3] + b"\xff" + raw[at + 3 :]
        yield raw[: at + 3] + b"\\u00e9\\\\" + raw[at + 3 :]
        yield raw[: at + 3] + b"\\u006eull" + raw[at + 3 :]


# --------------------------------------------------------------------------- differential
@pytest.mark.parametrize("format_id", FAST_FORMATS)
def test_golden_messages_same_both_ways(format_id: str) -> None:
    for options, message in golden(format_id):
        for extra in OPTION_VARIANTS[format_id]:
            assert_same(get_format(format_id, {**options, **extra}), message)


@pytest.mark.parametrize("format_id", FAST_FORMATS)
def test_mutated_messages_same_both_ways(format_id: str) -> None:
    fmt = get_format(format_id)
    zoned = get_format(format_id, {"timezone": "Asia/Shanghai"})
    golden_messages = [m for _, m in golden(format_id)]
    bases = golden_messages[:: max(1, len(golden_messages) // 16)] + bench_messages(format_id, 4)
    checked = 0
    for raw in bases:
        for damaged in byte_damage(raw):
            assert_same(fmt, damaged)
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        # a fixed sample of each message's mutations (all of them take minutes)
        for index, build in enumerate(mutations(obj)):
            if index % SAMPLE == 0:
                assert_same(fmt, build())
                checked += 1
            elif index % (SAMPLE * 7) == 3:
                assert_same(zoned, build())
    assert checked > 1000


@pytest.mark.parametrize("format_id", FAST_FORMATS)
def test_benchmark_messages_take_the_fast_path(format_id: str) -> None:
    fmt = get_format(format_id)
    for message in bench_messages(format_id, 300):
        assert fast_takes(fmt, message), message
        assert_same(fmt, message)


@pytest.mark.parametrize("format_id", FAST_FORMATS)
def test_golden_row_changes_take_the_fast_path(format_id: str) -> None:
    """Ordinary Canal row changes of the corpus (quoted values, an ``id``) go fast."""
    fmt = get_format(format_id)
    taken = [m for options, m in golden(format_id) if not options and fast_takes(fmt, m)]
    least = {"canal-json": 100, "dts-canal-json": 5, "drs-json": 5, "drs-json-c": 2}
    assert len(taken) >= least.get(format_id, 3)


def test_an_odd_boolean_in_old_is_a_refusal() -> None:
    """``old``'s values are typed one by one: a boolean text Canal never writes is refused
    (the reference path marks it invalid), not a failed fast path (a dead letter)."""
    message = dump({
        "data": [{"a": "1", "b": "0"}], "database": "d", "es": 1, "id": 3, "isDdl": False,
        "mysqlType": {"a": "int", "b": "bit(1)"}, "old": [{"b": "-1"}], "pkNames": ["a"],
        "sql": "", "sqlType": None, "table": "t", "ts": 2, "type": "UPDATE",
    })  # fmt: skip
    fmt = get_format("canal-json")
    assert_same(fmt, message)
    [event] = fmt.decode(message)
    assert event.invalid == ("b",)


def test_fast_path_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = get_format("canal-json")
    [message] = bench_messages("canal-json", 1)

    def refuse(value: bytes) -> Any:
        raise AssertionError("the fast path was used")

    monkeypatch.setattr(fmt, "decode_fast", refuse)
    fmt.fast_path = False
    assert fmt.decode(message) == fmt.decode_slow(message)


# a Canal message with a table of random columns and random texts in its rows
COLUMN_TYPES = st.sampled_from(TYPE_NAMES[:-3])
ROW_TEXTS = st.one_of(
    st.sampled_from(TEXTS),
    st.integers(-(2**70), 2**70).map(str),
    st.decimals(allow_nan=True, places=None).map(str),
    st.datetimes().map(lambda d: d.isoformat(sep=" ")),
    st.datetimes(timezones=st.sampled_from([dt.UTC, dt.timezone(dt.timedelta(hours=8))])).map(str),
    st.text(max_size=8),
)


@st.composite
def canal_messages(draw: st.DrawFn) -> bytes:
    names = draw(st.lists(st.text(string.ascii_lowercase + "_\u00e9", min_size=1, max_size=6),
                          min_size=1, max_size=6, unique=True))  # fmt: skip
    types = {name: draw(COLUMN_TYPES) for name in names}
    rows = [{name: draw(ROW_TEXTS) for name in names} for _ in range(draw(st.integers(1, 3)))]
    kind = draw(st.sampled_from(["INSERT", "UPDATE", "DELETE", "INIT"]))
    old = None
    if kind == "UPDATE" and draw(st.booleans()):
        old = [
            {name: draw(ROW_TEXTS) for name in names[: draw(st.integers(0, len(names)))]}
            for _ in rows
        ]
    return dump({
        "data": rows, "database": "d", "es": 1, "id": draw(st.integers(0, 5)), "isDdl": False,
        "mysqlType": types, "old": old, "pkNames": names[:1], "sql": "", "sqlType": None,
        "table": "t", "ts": 2, "type": kind,
    })  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    canal_messages(), st.sampled_from(["canal-json", "dts-canal-json", "drs-json", "drs-json-c"])
)
def test_random_rows_same_both_ways(message: bytes, format_id: str) -> None:
    assert_same(get_format(format_id), message)


# --------------------------------------------------------------------------- what the fast path relies on
def test_decimal_strips_whitespace_as_parse_decimal() -> None:
    """The fast path calls ``Decimal(text)``; the reference ``Decimal(text.strip())``."""
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if not chr(c).strip()]
    for space in spaces:
        for text in (space + "1.5", "2" + space, space + "-0" + space):
            try:
                fast: Any = repr(Decimal(text))
            except InvalidOperation:
                fast = "error"
            try:
                slow: Any = repr(parse_decimal(text))
            except ValueError:
                slow = "error"
            assert fast == slow, repr(text)


def test_msgspec_lax_integers_refuse_float_forms() -> None:
    decode = msgspec.json.Decoder(tuple[lax_int(-(2**63), 2**63 - 1)], strict=False).decode
    assert decode(b'["12"]') == (12,)
    for text in ("1.0", "1e3", "NaN", "9007199254740993.0", "null", " 1", "+1", "01"):
        with pytest.raises(msgspec.ValidationError):
            decode(('["' + text + '"]').encode())
    assert NO_FLOAT is not float


def test_msgspec_quirks_the_fast_path_closes_are_still_there() -> None:
    """If msgspec stops rounding datetimes or reading "-0" as 0, these traps are no longer
    needed (they stay correct either way); this test says when they change."""
    decimal = msgspec.json.Decoder(tuple[Decimal], strict=False).decode
    assert str(decimal(b'["-0"]')[0]) in ("0", "-0")
    stamp = msgspec.json.Decoder(tuple[dt.datetime], strict=False).decode
    assert stamp(b'["2024-01-01t00:00:01"]')[0] == dt.datetime(2024, 1, 1, 0, 0, 1)


def test_every_fast_format_is_registered() -> None:
    for format_id in FAST_FORMATS:
        assert format_class(format_id).fast_path


# every text the batch typing accepts must be typed as the reference parsers type it
LAX_ALPHABET = "0123456789-+.eE: Tt_ZzNnAaIiFfUuLlSsRr\t/,x\u0663\u2000"
LAX_SEEDS = ["2024-01-31 23:59:58.123456", "1999-12-31T00:00:00", "2024-02-29", "-0", "0.99",
             "123456789012345678901", "true", "false", "1", "0", "NaN", "1e5"]  # fmt: skip


@st.composite
def lax_texts(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(st.text(LAX_ALPHABET, max_size=12))
    chars = list(draw(st.sampled_from(LAX_SEEDS)))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(chars)))
        action = draw(st.sampled_from(["set", "insert", "delete"]))
        if action == "insert" or not chars:
            chars.insert(at, draw(st.sampled_from(LAX_ALPHABET)))
        elif action == "set":
            chars[min(at, len(chars) - 1)] = draw(st.sampled_from(LAX_ALPHABET))
        else:
            del chars[min(at, len(chars) - 1)]
    return "".join(chars)


def _reference_int(text: str) -> int:
    value = int(text)
    if not -(2**63) <= value <= 2**63 - 1:
        raise ValueError(text)
    return value


LAX_COLUMNS: dict[str, tuple[Any, Any]] = {
    "i": (lax_int(-(2**63), 2**63 - 1), _reference_int),
    "d": (Decimal, parse_decimal),
    "b": (bool, parse_bool),
    "day": (dt.date, parse_date),
    "ts": (NAIVE_DATETIME, lambda text: naive_iso(text)),
    "ts2": (NAIVE_DATETIME, lambda text: parse_datetime(text)),
}


LAX_ROWS = FastRows(
    {
        name: FastColumn(ref, lax, iso=lax is NAIVE_DATETIME)
        for name, (lax, ref) in LAX_COLUMNS.items()
    }
)


@settings(max_examples=600, deadline=None)
@given(lax_texts())
def test_batch_typing_agrees_with_the_reference_parsers(text: str) -> None:
    rows = LAX_ROWS
    for name, (_, reference) in LAX_COLUMNS.items():
        row: dict[str, Any] = dict.fromkeys(LAX_COLUMNS)
        row[name] = text
        try:
            fast = rows.type_row(row)[name]
        except Exception:
            continue  # refused: the reference decoder decides
        assert repr(fast) == repr(reference(text)), (name, text)


def test_plan_builds_stop_when_tables_outnumber_the_cache() -> None:
    """Thousands of table shapes in turn: plans stop being rebuilt, results stay the same."""
    fmt = get_format("canal-json")
    fmt._plans.size = 8  # type: ignore[attr-defined]

    def message(table: int) -> bytes:
        return dump({
            "data": [{f"c{table}": "1"}], "database": "d", "es": 1, "id": 1, "isDdl": False,
            "mysqlType": {f"c{table}": "int"}, "old": None, "pkNames": None, "sql": "",
            "sqlType": None, "table": f"t{table}", "ts": 1, "type": "INSERT",
        })  # fmt: skip

    taken = 0
    for round_ in range(3):
        for table in range(200):
            taken += fast_takes(fmt, message(table))
            if table % 17 == round_:
                assert_same(fmt, message(table))
    assert 100 <= taken < 300  # the first builds, then (almost) none


# --------------------------------------------------------------------------- JSON-typed rows
# OMS DefaultExtendColumnType and DataWorks 2.0 send values as JSON numbers, strings,
# booleans: random tables of their type names with random JSON values (numbers written
# as given, so exponents, ``-0`` and long digit strings reach the decoders as sent),
# several messages through ONE decoder (plans are cached and guessed per instance).
JSON_TYPE_NAMES = [
    *OMS_TYPE_NAMES, "SMALLINT", "INT", "MEDIUMINT", "YEAR", "DOUBLE", "NUMERIC(10,4)",
    "DECIMAL(12,2)", "decimal(10,2)", "varchar(20)", "text", "json", "BIT", "BINARY_FLOAT",
    "TIMESTAMP WITH LOCAL TIME ZONE", "INTERVAL_YEAR_TO_MONTH", "GEOMETRY", "nosuchtype", "",
]  # fmt: skip
NUMBER_TEXTS = [
    "0", "-0", "-0.0", "1", "-1", "1.00", "1E2", "1e-7", "0.99", "127", "128", "-129", "255",
    "32768", "2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "18446744073709551615", "18446744073709551616", "1" + "0" * 40, "1e400", "1.5",
    "1606233662.012345", "1590315269000.123456789", "12345678901234567890.123",
]  # fmt: skip
VALUE_TEXTS = [
    None, True, False, "", " ", "1", "0", "true", "x", "null", "NaN", " 1.5", "1_000", "-0",
    "2024-01-01", " 2024-01-01", "2024-02-30", "0000-00-00", "20240101", "2024-01-01 00:00:01",
    "2024-01-01T00:00:01", "2024-01-01t00:00:01", "2024-01-01 00:00:01.5",
    "2024-01-01 00:00:01.123456", "2024-01-01 00:00:01.1234567", "0000-00-00 00:00:00",
    "2024-01-01 24:00:00", "2024-01-01 00:00", "2024-01-01 00:00:01Z",
    "2024-01-01 00:00:01 Asia/Shanghai", "2024-01-01 00:00:01+08:00", "\u0662024-01-01 00:00:01",
    "1606233662.012345", "-1.5", "00:01:02.5", "25:00:00", "AAEC", "not base64!", 'a"b', "a\\b",
    '"x":', "\u00e9t\u00e9", [], {}, [1], {"a": "b"},
]  # fmt: skip
JSON_VALUES = st.one_of(
    st.sampled_from(VALUE_TEXTS),
    st.sampled_from(NUMBER_TEXTS).map(lambda text: Number(text)),
    st.integers(-(2**70), 2**70),
    st.decimals(allow_nan=False, allow_infinity=False, places=None).map(lambda d: Number(str(d))),
    st.datetimes().map(lambda d: d.isoformat(sep=" ")),
    st.text(max_size=6),
)
COLUMN_NAMES = st.text(string.ascii_lowercase + "_\u00e9", min_size=1, max_size=5)


class Number(str):
    """A JSON number written exactly as this text."""


def dump_numbers(obj: Any) -> bytes:
    """``dump`` with :class:`Number` values written bare."""
    marks: dict[str, str] = {}

    def mark(value: Any) -> Any:
        if isinstance(value, Number):
            key = f"@@{len(marks)}@@"
            marks[key] = str(value)
            return key
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    text = dump(mark(obj)).decode("utf-8", "surrogatepass")
    for key, number in marks.items():
        text = text.replace(f'"{key}"', number)
    return text.encode("utf-8", "surrogatepass")


def fitting(type_name: str) -> st.SearchStrategy[Any]:
    """Values of the common JSON rendering of a type (most rows are then valid)."""
    name = type_name.upper()
    if ("INT" in name and "INTERVAL" not in name) or name == "YEAR":
        return st.integers(-100, 100) | st.none()
    if name.startswith(("BOOL", "BIT")):
        return st.sampled_from([0, 1, True, False, None])
    if name.startswith(("DEC", "NUM")):
        return st.decimals(allow_nan=False, allow_infinity=False, places=2).map(
            lambda d: Number(str(d))
        )
    if name == "DATE":
        return st.dates().map(dt.date.isoformat)
    if name in ("DATETIME", "TIMESTAMP WITH LOCAL TIME ZONE"):
        return st.datetimes().map(lambda d: d.isoformat(sep=" "))
    return st.text(max_size=6) | st.none()


@st.composite
def json_table(draw: st.DrawFn) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """A table (column -> type name) and rows of it, some of them damaged."""
    names = draw(st.lists(COLUMN_NAMES, min_size=1, max_size=6, unique=True))
    types = {name: draw(st.sampled_from(JSON_TYPE_NAMES)) for name in names}
    rows = []
    for _ in range(2):
        row = {
            name: draw(fitting(types[name]) if draw(st.integers(0, 4)) else JSON_VALUES)
            for name in names
        }
        damage = draw(st.sampled_from(["none"] * 6 + ["drop", "add", "reverse"]))
        if damage == "drop":
            row.pop(names[0])
        elif damage == "add":
            row["zz"] = draw(JSON_VALUES)
        elif damage == "reverse":
            row = dict(reversed(list(row.items())))
        rows.append(row)
    return types, rows


@st.composite
def oms_extend_messages(draw: st.DrawFn) -> bytes:
    types, (prev, post) = draw(json_table())
    light = {name: {"schemaType": t} for name, t in types.items()}
    other = draw(st.sampled_from(["same", "same", "reversed", "none", "one-less"]))
    prev_light = {
        "same": light, "reversed": dict(reversed(list(light.items()))), "none": None,
        "one-less": dict(list(light.items())[1:]),
    }[other]  # fmt: skip
    post["__light_type"] = light
    if prev_light is not None:
        prev["__light_type"] = prev_light
    record = draw(st.sampled_from(["INSERT", "UPDATE", "UPDATE", "DELETE", "ROW"]))
    images = {
        "INSERT": (None, post), "ROW": (None, post), "UPDATE": (prev, post), "DELETE": (prev, None)
    }[record]  # fmt: skip
    if draw(st.integers(0, 9)) == 9:
        images = (prev, post)  # an image the record type does not use
    meta: dict[str, Any] = {
        "checkpoint": draw(st.sampled_from([None, "1609344671", Number("1.50")])),
        "record_primary_key": draw(st.sampled_from([None, "", next(iter(types))])),
        "dbType": draw(st.sampled_from([None, "OB_MYSQL", "OB_ORACLE", "MYSQL", "ORACLE"])),
        "table_name": "t",
        "db": draw(st.sampled_from([None, "d", "tenant.d"])),
        "timestamp": draw(st.sampled_from([None, "1700000000"])),
        "storeDataSequence": draw(st.sampled_from([None, 7])),
    }
    if draw(st.integers(0, 3)) == 3:  # one odd metadata value
        odd = draw(st.sampled_from([5, -1, "7", "x", 1700000000, True, [], "\u00e9"]))
        meta[draw(st.sampled_from([*meta, "uniqueId", "transId", "ddlType", "other"]))] = odd
    return dump_numbers(
        {
            "allMetaData": meta,
            "prevStruct": images[0],
            "recordType": record,
            "postStruct": images[1],
        }
    )


@st.composite
def dataworks2_messages(draw: st.DrawFn) -> bytes:
    types, (before, after) = draw(json_table())
    columns = [{"name": name, "type": t} for name, t in types.items()]
    op = draw(st.sampled_from(["INSERT", "UPDATE", "UPDATE", "DELETE"]))
    images = {"INSERT": (None, after), "UPDATE": (before, after), "DELETE": (before, None)}[op]
    if draw(st.integers(0, 9)) == 9:
        images = (before, after)
    if draw(st.integers(0, 9)) == 9:
        images = (None, None)
    event_time = draw(
        st.sampled_from([1700000000000, -1, None, Number("1590315269000.123456789"), "17", True])
    )
    message: dict[str, Any] = {
        "version": "2.0",
        "schema": {
            "source": {
                "dbType": draw(st.sampled_from([None, "ob_mysql", 5])), "dbVersion": None,
                "dbName": "db", "schema": None, "table": "tab",
            },
            "column": columns,
            "pk": draw(st.sampled_from([None, [], list(types)[:1], "id"])),
        },
        "payload": {
            "before": None if images[0] is None else {"data": images[0]},
            "after": None if images[1] is None else {"data": images[1]},
            "op": op,
            "timestamp": {"eventTime": event_time} if event_time is not True else None,
            "ddl": None,
            "scn": draw(st.sampled_from(["null", "", None, "1234567", "abc", 5, "\u0663", "\u00b2"])),
        },
    }  # fmt: skip
    if draw(st.booleans()):
        message["extend"] = draw(st.sampled_from([None, {"load_fm": "x"}, {"n": Number("1.50")}]))
    return dump_numbers(message)


JSON_TYPED = {"oms-extend-json": oms_extend_messages(), "dataworks2-json": dataworks2_messages()}
JSON_OPTIONS = [{}, {"timezone": "Asia/Shanghai"}, {"primary_key": "id"}]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_json_typed_rows_same_both_ways(data: st.DataObject) -> None:
    format_id = data.draw(st.sampled_from(sorted(JSON_TYPED)))
    fmt = get_format(format_id, data.draw(st.sampled_from(JSON_OPTIONS)))
    for message in data.draw(st.lists(JSON_TYPED[format_id], min_size=1, max_size=4)):
        assert_same(fmt, message)
        assert_same(fmt, message)  # again: the plan found for it is now the last one


@pytest.mark.parametrize("format_id", sorted(JSON_TYPED))
def test_json_typed_rows_often_take_the_fast_path(format_id: str) -> None:
    """The generated messages are not all refused (else the comparisons prove little)."""
    fmt = get_format(format_id)
    examples: list[bytes] = []

    @settings(max_examples=200, deadline=None, database=None)
    @given(JSON_TYPED[format_id])
    def collect(message: bytes) -> None:
        examples.append(message)

    collect()
    taken = sum(fast_takes(fmt, message) for message in examples)
    assert taken >= len(examples) // 20


def test_oms_extend_plan_is_checked_against_the_image() -> None:
    """Two tables in turn, the same column names typed differently: each message typed by
    its own ``__light_type``, never by the previous message's plan."""
    fmt = get_format("oms-extend-json")

    def message(schema_type: str, value: Any) -> bytes:
        post = {"id": value, "__light_type": {"id": {"schemaType": schema_type}}}
        meta = {"table_name": "t", "storeDataSequence": 1}
        return dump({"allMetaData": meta, "recordType": "INSERT", "postStruct": post})

    pairs = [("INT64", 5), ("VARCHAR", "5"), ("DECIMAL", 5), ("INT64", 6), ("BOOL", 1)]
    for schema_type, value in pairs * 2:
        raw = message(schema_type, value)
        assert fast_takes(fmt, raw)
        assert_same(fmt, raw)
    [event] = fmt.decode(message("DECIMAL", 5))
    assert event.after == {"id": Decimal(5)}
    assert event.columns is not None and event.columns["id"].type.name == "decimal"


def test_oms_extend_light_type_anywhere_in_the_image() -> None:
    fmt = get_format("oms-extend-json")
    light = {"a": {"schemaType": "INT"}, "b": {"schemaType": "VARCHAR"}}
    for post in (
        {"__light_type": light, "a": 1, "b": "x"},
        {"a": 1, "__light_type": light, "b": "x"},
        {"b": "x", "a": 1, "__light_type": light},
    ):
        raw = dump({"allMetaData": {}, "recordType": "INSERT", "postStruct": post})
        assert fast_takes(fmt, raw)
        assert_same(fmt, raw)
        [event] = fmt.decode(raw)
        assert list(event.after or ()) == [k for k in post if k != "__light_type"]
        assert list(event.columns or ()) == list(event.after or ())
