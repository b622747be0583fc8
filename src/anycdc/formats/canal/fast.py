"""The fast path's pieces (the hooks are :class:`~anycdc.formats.canal.family.CanalFamily`'s):
the envelope Struct, fast value conversions and the plan per type map."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

import msgspec

from anycdc.event import Op
from anycdc.formats.base import (
    NULL_RAW,
    FastRows,
    NotFast,
)
from anycdc.formats.canal.types import FlatSchema
from anycdc.formats.canal.wire import F_TIDB, OPS, ROW_TYPES

# --------------------------------------------------------------------------- fast path
# ``decode`` first tries a fast path for the common message, a row change typed by
# ``mysqlType``/``sqlType``: msgspec decodes the envelope into a Struct that keeps the
# type maps and the row arrays as raw bytes; the type maps' bytes are the cache key
# of a plan whose :class:`~anycdc.formats.base.FastRows` decodes the rows (text
# values, keys checked against the schema) and types each row's non-text values in
# one msgspec call. Anything else (another field, a value the fast conversions
# refuse, a partial row, an untyped column, a type map that is not an object, ...)
# raises and the message goes through the reference decoder
# (:meth:`Format.decode_slow`), so the result is the same; tests compare the two on
# fuzzed messages (tests/unit/formats/test_fast_paths.py).


class _FlatMessage(msgspec.Struct, forbid_unknown_fields=True):
    """The fields of a flat message the fast path reads (any other field: slow path,
    so nothing in a message goes unread or unchecked by the fast path)."""

    # field names are the wire names
    type: Any = None
    data: msgspec.Raw = NULL_RAW
    old: msgspec.Raw = NULL_RAW
    database: Any = None
    table: Any = None
    es: Any = None
    ts: Any = None
    id: Any = msgspec.UNSET
    isDdl: Any = None
    isHeartbeat: Any = None
    gtid: Any = None
    sql: Any = None
    pkNames: list[str] | None = None
    mysqlType: msgspec.Raw = NULL_RAW
    sqlType: msgspec.Raw = NULL_RAW
    serverId: Any = None
    dataSourceName: Any = None
    tidb: Any = msgspec.field(default=None, name=F_TIDB)


# float_hook as :func:`anycdc.formats.base.parse_json`: the Any fields hold what it gives
FLAT_DECODER: Final = msgspec.json.Decoder(_FlatMessage, float_hook=Decimal)
ROW_KINDS: Final[Mapping[str, Op]] = {kind: OPS[kind] for kind in ROW_TYPES}
# text Canal writes for booleans, each mapped to what :func:`parse_bool` gives
BOOL_TEXT: Final[Mapping[str, bool]] = {
    "1": True, "0": False, "true": True, "false": False, "True": True, "False": False,
    "TRUE": True, "FALSE": False,
}  # fmt: skip
_FROM_ISO: Final = dt.datetime.fromisoformat


def naive_iso(raw: str) -> dt.datetime:
    """What :func:`_timestamp_parser` gives without a zone option, for the values it hands
    to ``fromisoformat`` (an aware result widens the column there: not here)."""
    if len(raw) > 18 and raw[4] == "-" and raw[10] in " T":
        value = _FROM_ISO(raw)
        if value.tzinfo is None:
            return value
    raise NotFast


def checked_int(low: int, high: int) -> Callable[[str], int]:
    """``int(text)`` (the slow parser's first try) within a range (else: slow path)."""

    def parse(raw: str) -> int:
        value = int(raw)
        if low <= value <= high:
            return value
        raise NotFast

    return parse


@dataclass(frozen=True, slots=True)
class FlatPlan:
    """A schema and how the fast path types its rows."""

    schema: FlatSchema
    rows: FastRows  # decodes and types rows
    width: int  # columns of a whole row
    zoned: bool  # timestamps get the ``timezone`` option: widen columns as the slow path


def fast_names(
    database: Any, table: Any, ts_ms: Any, serial: Any, is_ddl: Any
) -> tuple[str | None, str | None, int | None]:
    """The fast path's reading of the less common header values (as the slow path reads
    them), or NotFast for anything it leaves to the slow path."""
    if is_ddl is not False and is_ddl is not None:
        raise NotFast
    if not (type(serial) is int and serial >= 0) and serial is not None:
        raise NotFast  # no ``id`` (OMS: position from es/ts, base64 binary) and oddities
    if type(ts_ms) is not int and ts_ms is not None:
        raise NotFast
    out: list[str | None] = []
    for name in (database, table):
        if name is not None and type(name) is not str:
            raise NotFast
        out.append(name or None)  # "" is no name, as in the slow path
    return out[0], out[1], ts_ms


def cache_items(value: Any) -> Any:
    """A schema cache key of a type map: its items in order (the column order) with the
    type of each value (``4`` and ``4.0``, ``1`` and ``true`` compare equal but do not
    make the same schema), so a message's schema never depends on earlier messages."""
    if isinstance(value, dict):
        return tuple((name, type(item), item) for name, item in value.items())
    return (type(value), value)
