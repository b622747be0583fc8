"""The fast path's pieces (the hooks are :class:`~anycdc.formats.canal.family.CanalFamily`'s):
the envelope Struct, fast value conversions and the plan per type map."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

import msgspec

from anycdc.formats.base import (
    NULL_RAW,
    FastRows,
    NotFast,
)
from anycdc.formats.canal.types import FlatSchema
from anycdc.formats.canal.wire import F_TIDB, ROW_TYPES, TIDB_COMMIT_TS

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


class FlatMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The fields of a flat message the fast path reads (any other field: slow path,
    so nothing in a message goes unread or unchecked by the fast path); the slow path
    builds one of its header fields for
    :meth:`~anycdc.formats.canal.family.CanalFamily.canal_header`."""

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
FLAT_DECODER: Final = msgspec.json.Decoder(FlatMessage, float_hook=Decimal)
# text Canal writes for booleans, each mapped to what :func:`parse_bool` gives
BOOL_TEXT: Final[Mapping[str, bool]] = {
    "1": True, "0": False, "true": True, "false": False, "True": True, "False": False,
    "TRUE": True, "FALSE": False,
}  # fmt: skip
_FROM_ISO: Final = dt.datetime.fromisoformat


def bool_text(raw: str) -> bool:
    """What :func:`parse_bool` gives for the texts of :data:`BOOL_TEXT`; NotFast for any
    other (a KeyError would be no refusal: the fast path would fail the message)."""
    value = BOOL_TEXT.get(raw)
    if value is None:
        raise NotFast
    return value


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
    """A schema and how the fast path types its rows (the readers bound once, here: a
    bound method fetched per message would be built per message)."""

    schema: FlatSchema
    rows: FastRows  # decodes and types rows
    zoned: bool  # timestamps get the ``timezone`` option: widen columns as the slow path
    type_row: Callable[[dict[str, Any]], dict[str, Any]] = field(init=False)
    type_into: Callable[[Any, dict[str, Any]], dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "type_row", self.rows.type_row)
        object.__setattr__(self, "type_into", self.rows.type_into)


def fast_header(flat: FlatMessage) -> None:
    """NotFast unless ``flat``'s header is a row change the fast path hands to
    :meth:`~anycdc.formats.canal.family.CanalFamily.canal_header` (which reads the names,
    ``es`` and ``id`` as the slow path does): ``type`` a row change, ``isDdl`` false or null,
    not a heartbeat, an ``id`` field (without one, binary values are base64 in auto mode:
    OMS), TiCDC's ``_tidb`` with a ``commitTs`` only."""
    kind, is_ddl, tidb = flat.type, flat.isDdl, flat.tidb
    if type(kind) is not str or kind not in ROW_TYPES:
        raise NotFast  # not a row change (or not a string)
    if (is_ddl is not False and is_ddl is not None) or flat.isHeartbeat is True:
        raise NotFast
    if flat.id is msgspec.UNSET:
        raise NotFast
    if tidb is not None and (
        type(tidb) is not dict or len(tidb) != 1 or TIDB_COMMIT_TS not in tidb
    ):
        raise NotFast  # TiCDC: the commit TSO, nothing else (a bad TSO: the header raises)


def cache_items(value: Any) -> Any:
    """A schema cache key of a type map: its items in order (the column order) with the
    type of each value (``4`` and ``4.0``, ``1`` and ``true`` compare equal but do not
    make the same schema), so a message's schema never depends on earlier messages."""
    if isinstance(value, dict):
        return tuple((name, type(item), item) for name, item in value.items())
    return (type(value), value)
