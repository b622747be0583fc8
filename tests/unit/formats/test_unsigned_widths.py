"""One range rule for every unsigned integer width, in every format that types by SQL name.

An unsigned type is typed as the next wider logical type (``smallint unsigned`` ->
``int32``), and its values are held to the unsigned range of its own width
(:func:`anycdc.typemap.integer_range`): a negative value, or one above the width's
maximum, is invalid (kept as sent, listed in ``invalid``) at every width, as a BIGINT
UNSIGNED's -1 always was. Each format is checked on its fast path (``decode``) and its
reference path (``decode_slow``), which must agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from anycdc.event import ChangeEvent
from anycdc.formats import get_format
from anycdc.typemap import integer_range, sql_type, unsigned_range
from anycdc.values import INT16, INT32, INT64, INTEGER, STRING, UINT64, LogicalType

# column -> (MySQL type name, java.sql.Types code, logical type, unsigned maximum)
WIDTHS: dict[str, tuple[str, int, LogicalType, int]] = {
    "t": ("tinyint(3) unsigned", -6, INT16, 2**8 - 1),
    "s": ("smallint(5) unsigned", 5, INT32, 2**16 - 1),
    "m": ("mediumint(8) unsigned", 4, INT32, 2**24 - 1),
    "i": ("int(10) unsigned", 4, INT64, 2**32 - 1),
    "b": ("bigint(20) unsigned", -5, UINT64, 2**64 - 1),
}
# name -> value of every column: (label, value of a column with that maximum)
VALUES: list[tuple[str, Callable[[int], int]]] = [
    ("-1", lambda top: -1),
    ("0", lambda top: 0),
    ("max", lambda top: top),
    ("max+1", lambda top: top + 1),
]


def _canal(row: dict[str, Any]) -> dict[str, Any]:
    """A Canal flat message (every value quoted, as open-source Canal renders them)."""
    return {
        "data": [{name: str(value) for name, value in row.items()}],
        "database": "shop", "table": "u", "type": "INSERT", "isDdl": False, "es": 1, "ts": 2,
        "id": 1, "pkNames": None, "sql": "", "old": None,
        "mysqlType": {name: spec[0] for name, spec in WIDTHS.items()},
        "sqlType": {name: spec[1] for name, spec in WIDTHS.items()},
    }  # fmt: skip


def _oms(row: dict[str, Any]) -> dict[str, Any]:
    """An OMS extend-column-type message (JSON numbers, ``__light_type`` names upper case)."""
    light = {name: {"schemaType": spec[0].split("(")[0].upper() + " UNSIGNED"}
             for name, spec in WIDTHS.items()}  # fmt: skip
    return {
        "allMetaData": {
            "checkpoint": "1", "record_primary_key": "t", "source_identity": "x",
            "record_primary_value": "1", "dbType": "OB_MYSQL", "table_name": "u", "db": "t1.shop",
            "timestamp": "1", "storeDataSequence": 1, "uniqueId": "7",
        },
        "prevStruct": None, "recordType": "INSERT", "postStruct": {**row, "__light_type": light},
    }  # fmt: skip


# format -> (message of a row, the value as the message sends it)
FORMATS: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], Callable[[int], Any]]] = {
    "canal-json": (_canal, str),
    "dts-canal-json": (_canal, str),
    "drs-json": (_canal, str),  # DRS's MySQL flavour: Canal's fields
    "oms-extend-json": (_oms, int),
}


def _decode_both(format_id: str, message: dict[str, Any]) -> ChangeEvent:
    raw = json.dumps(message).encode()
    fast, slow = get_format(format_id), get_format(format_id)
    events, reference = fast.decode(raw), slow.decode_slow(raw)
    assert repr(events) == repr(reference)  # the fast path and the reference agree
    (event,) = events
    return event


@pytest.mark.parametrize("format_id", sorted(FORMATS))
@pytest.mark.parametrize(("label", "value_of"), VALUES, ids=[label for label, _ in VALUES])
def test_every_unsigned_width_holds_its_range(
    format_id: str, label: str, value_of: Callable[[int], int]
) -> None:
    build, sent = FORMATS[format_id]
    row = {name: value_of(spec[3]) for name, spec in WIDTHS.items()}
    event = _decode_both(format_id, build(row))
    assert event.after is not None
    in_range = label in ("0", "max")
    assert set(event.invalid) == (set() if in_range else set(WIDTHS))
    for name, (_, _, ltype, _) in WIDTHS.items():
        assert event.columns is not None and event.columns[name].type == ltype
        value = event.after[name]
        if in_range:
            assert value == row[name] and type(value) is int
        else:
            assert value == sent(row[name]) and type(value) is type(sent(row[name]))


def test_signed_widths_are_unchanged() -> None:
    """A signed column's range is its logical type's: -1 is a value."""
    message = _canal({name: -1 for name in WIDTHS})
    message["mysqlType"] = {name: spec[0].replace(" unsigned", "") for name, spec in WIDTHS.items()}
    event = _decode_both("canal-json", message)
    assert event.invalid == () and event.after == dict.fromkeys(WIDTHS, -1)


def test_int_unsigned_above_int64_is_invalid_not_widened() -> None:
    """Canal widens a BIGINT column to ``uint64`` by a value above the int64 maximum (OMS
    and DTS drop ``unsigned``); an INT UNSIGNED, ``int64`` too, keeps its own range."""
    event = _decode_both("canal-json", _canal({"i": 2**64 - 1}))
    assert event.invalid == ("i",) and event.columns is not None
    assert event.columns["i"].type == INT64


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tinyint unsigned", (0, 255)),
        ("TINYINT(3) UNSIGNED ZEROFILL", (0, 255)),
        ("smallint(5) unsigned", (0, 65535)),
        ("mediumint unsigned", (0, 2**24 - 1)),
        ("int(10) unsigned", (0, 2**32 - 1)),
        ("integer unsigned", (0, 2**32 - 1)),
        ("bigint(20) unsigned", (0, 2**64 - 1)),
        ("smallint", None),
        ("decimal(10,2) unsigned", None),
        ("int unsigned[]", None),
        (None, None),
    ],
)
def test_unsigned_range(name: str | None, expected: tuple[int, int] | None) -> None:
    assert unsigned_range(name) == expected


def test_integer_range_narrows_the_logical_range_only() -> None:
    assert integer_range(sql_type("smallint unsigned"), "smallint unsigned") == (0, 65535)
    assert integer_range(INT16, "smallint") == (-(2**15), 2**15 - 1)
    assert integer_range(INT16, "int unsigned") == (0, 2**15 - 1)  # a format's narrower type
    assert integer_range(INTEGER, "bigint unsigned") == (0, 2**64 - 1)
    assert integer_range(INTEGER, "bigint") is None
    assert integer_range(STRING, "int unsigned") is None
