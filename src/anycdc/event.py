"""The canonical change event: what every format decodes to and encodes from.

A :class:`ChangeEvent` is immutable and fully typed. Its JSON form (one event
per line; :func:`event_to_json` / :func:`event_from_json`) is a contract used
by the CLI, the golden tests and the pipeline's changelog.

>>> from anycdc.values import INT64, LogicalType
>>> e = ChangeEvent(
...     op=Op.INSERT, format="canal-json", database="shop", table="orders", key=("id",),
...     after={"id": 1, "total": Decimal("12.50")},
...     columns={"id": Column(INT64, "bigint", -5), "total": Column(LogicalType.parse("decimal(10,2)"))},
...     position=Position((58,)),
... )
>>> event_to_json(e)[:68]
'{"op":"insert","format":"canal-json","database":"shop","schema":null'
>>> event_from_json(event_to_json(e)) == e
True
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from enum import StrEnum
from typing import Any, Final

import msgspec

from anycdc.values import (
    UNKNOWN,
    LogicalType,
    format_datetime,
    format_time,
    parse_iso_datetime,
)


class Op(StrEnum):
    """What happened at the source."""

    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"
    SNAPSHOT = "snapshot"  # a full-load row; applied as an upsert
    TRUNCATE = "truncate"
    DDL = "ddl"
    HEARTBEAT = "heartbeat"
    BEGIN = "begin"
    COMMIT = "commit"


ROW_OPS: Final = frozenset({Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT})
"""The ops whose events carry images: row changes (the one definition of this set)."""
CONTROL_OPS: Final = frozenset({Op.HEARTBEAT, Op.BEGIN, Op.COMMIT})
"""Records that carry no change of a table: they move the stream's clock, never a row."""
TABLE_OPS: Final = ROW_OPS | {Op.TRUNCATE, Op.DDL}
"""What the pipeline applies to a table (every other op is :data:`CONTROL_OPS`)."""
TX_TABLE_EVENTS: Final = "tx_table_events"
"""The key of a COMMIT event's :attr:`ChangeEvent.extra` that says how many row events its
transaction had per table (the table's name as the source names it, e.g. ``inventory.orders``
-> count), where the format says so (Debezium's ``data_collections``). A read's cut holds the
transaction back until that many of its rows are in (a COMMIT may be read ahead of them)."""


class Position(msgspec.Struct, frozen=True, order=True, gc=False):
    # gc=False (as ChangeEvent): not tracked by the cycle collector, a cheaper build per event;
    # safe because neither can be part of a reference cycle (they hold values, never events)
    """An ordering key from the vendor's sequence fields, compared part by part as integers.

    Formats turn their sequence fields into non-negative integers (hex LSNs,
    binlog file numbers, ``seconds:increment`` pairs ...), so a position never
    compares as a plain string. Positions are comparable within one source only.

    >>> Position((9, 10)) > Position((9, 9)) and Position((10,)) > Position((9, 99))
    True
    >>> Position((12, 3)).sort_key() < Position((100, 0)).sort_key()
    True
    """

    parts: tuple[int, ...]

    def sort_key(self) -> str:
        """A string whose byte order equals this position's order (for SQL engines).

        Each part is written as its digit count (two digits) then its digits,
        so shorter numbers sort first.
        """
        return ".".join(f"{len(str(p)):02d}{p}" for p in self.parts)

    @classmethod
    def from_sort_key(cls, key: str) -> Position:
        return cls(tuple(int(part[2:]) for part in key.split(".")) if key else ())

    def __str__(self) -> str:
        return ":".join(str(p) for p in self.parts)


class Column(msgspec.Struct, frozen=True):
    """A column's logical type and what the vendor called it."""

    type: LogicalType = UNKNOWN
    vendor_type: str | None = None
    vendor_code: int | None = None


Image = Mapping[str, Any]


class ChangeEvent(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One change at the source, in vendor-neutral form (a frozen msgspec Struct: cheap to build).

    Images are plain dicts by speed, and read-only by contract: decoders hand
    each event fresh dicts and nothing downstream mutates them.

    ``before``/``after`` map column names to typed values (see
    :mod:`anycdc.values`). ``partial`` names the images that lack columns the
    format did not send (e.g. SharePlex update data); their missing columns are
    the table's other columns. ``split`` marks one half of a split update
    (DataWorks UPDATE_BEFOR/UPDATE_AFTER) decoded alone. ``invalid`` names
    columns whose value is kept as the vendor's text because it is not a
    valid value of its type (``0000-00-00 00:00:00``). ``patch`` holds MongoDB
    update operators (``$set``/``$unset``) to apply to the stored document.
    """

    op: Op
    format: str
    database: str | None = None
    schema: str | None = None
    table: str | None = None
    key: tuple[str, ...] | None = None
    before: Image | None = None
    after: Image | None = None
    columns: Mapping[str, Column] | None = None
    ts_ms: int | None = None
    position: Position | None = None
    tx: str | None = None
    ddl: str | None = None
    partial: tuple[str, ...] = ()
    split: str | None = None
    invalid: tuple[str, ...] = ()
    patch: Mapping[str, Any] | None = None
    row_id: str | None = None
    extra: Mapping[str, Any] = msgspec.field(default_factory=dict)

    @property
    def qualified_table(self) -> str:
        """``database.schema.table`` with the parts the format has."""
        return ".".join(p for p in (self.database, self.schema, self.table) if p)

    @property
    def image(self) -> Image | None:
        """The row as it is after the change (before image for deletes)."""
        return self.before if self.op is Op.DELETE else self.after

    def key_values(self) -> tuple[Any, ...] | None:
        """The primary-key values of the row this event touches, when known."""
        row = self.image if self.image is not None else self.before
        if not self.key or row is None:
            return None
        return tuple(row.get(k) for k in self.key)

    def with_changes(self, **changes: Any) -> ChangeEvent:
        """A copy with some fields replaced (events are immutable)."""
        return msgspec.structs.replace(self, **changes)


# --------------------------------------------------------------------------- JSON form
_KEYS: Final = (
    "op", "format", "database", "schema", "table", "key", "before", "after",
    "columns", "ts_ms", "position", "tx", "ddl", "partial",
)  # fmt: skip
_OPTIONAL_KEYS: Final = ("split", "invalid", "patch", "row_id", "extra")


def value_to_json(value: Any) -> Any:
    """A typed value as a JSON-ready value (decimals and big numbers stay exact)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime):
        return format_datetime(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return format_time(value)
    if isinstance(value, Mapping):
        return {str(k): value_to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [value_to_json(v) for v in value]
    raise TypeError(f"no JSON form for {type(value).__name__}")


def event_to_dict(event: ChangeEvent) -> dict[str, Any]:
    """The canonical JSON object of an event (key order is part of the contract)."""
    if event.columns is None:
        # a format without types: every value keeps its JSON type (numbers stay numbers)
        unknown_as_is = set(event.before or ()) | set(event.after or ())
    else:
        unknown_as_is = {name for name, col in event.columns.items() if col.type.name == "unknown"}
    out: dict[str, Any] = {
        "op": event.op.value,
        "format": event.format,
        "database": event.database,
        "schema": event.schema,
        "table": event.table,
        "key": list(event.key) if event.key is not None else None,
        "before": _image_to_json(event.before, unknown_as_is),
        "after": _image_to_json(event.after, unknown_as_is),
        "columns": _columns_to_json(event.columns),
        "ts_ms": event.ts_ms,
        "position": list(event.position.parts) if event.position is not None else None,
        "tx": event.tx,
        "ddl": event.ddl,
        "partial": list(event.partial),
    }
    if event.split is not None:
        out["split"] = event.split
    if event.invalid:
        out["invalid"] = list(event.invalid)
    if event.patch is not None:
        out["patch"] = value_to_json(event.patch)
    if event.row_id is not None:
        out["row_id"] = event.row_id
    if event.extra:
        out["extra"] = value_to_json(event.extra)
    return out


def _image_to_json(image: Image | None, unknown_as_is: set[str]) -> dict[str, Any] | None:
    if image is None:
        return None
    return {
        name: (_number_as_is(v) if name in unknown_as_is else value_to_json(v))
        for name, v in image.items()
    }


def _number_as_is(value: Any) -> Any:
    # an ``unknown`` column keeps its JSON type: a JSON number stays a bare number
    return value if isinstance(value, Decimal) else value_to_json(value)


def _columns_to_json(columns: Mapping[str, Column] | None) -> dict[str, Any] | None:
    if columns is None:
        return None
    out: dict[str, Any] = {}
    for name, col in columns.items():
        item: dict[str, Any] = {"type": str(col.type)}
        if col.vendor_type is not None:
            item["vendor_type"] = col.vendor_type
        if col.vendor_code is not None:
            item["vendor_code"] = col.vendor_code
        out[name] = item
    return out


_ENCODER: Final = msgspec.json.Encoder(decimal_format="number")


def dumps(obj: Any) -> str:
    """Compact JSON, UTF-8 kept; a Decimal left in ``obj`` is written as a bare exact number."""
    return _ENCODER.encode(obj).decode("utf-8")


def event_to_json(event: ChangeEvent) -> str:
    """One line of canonical JSON."""
    return dumps(event_to_dict(event))


_DECODER: Final = msgspec.json.Decoder(float_hook=Decimal)


def event_from_json(text: str | bytes) -> ChangeEvent:
    """Parse one line of canonical JSON back into an event."""
    return event_from_dict(_DECODER.decode(text))


def event_from_dict(obj: Mapping[str, Any]) -> ChangeEvent:
    """Inverse of :func:`event_to_dict`: values are typed by ``columns``."""
    columns = _columns_from_json(obj.get("columns"))
    invalid = tuple(obj.get("invalid") or ())
    key = obj.get("key")
    position = obj.get("position")
    return ChangeEvent(
        op=Op(obj["op"]),
        format=obj["format"],
        database=obj.get("database"),
        schema=obj.get("schema"),
        table=obj.get("table"),
        key=tuple(key) if key is not None else None,
        before=_image_from_json(obj.get("before"), columns, invalid),
        after=_image_from_json(obj.get("after"), columns, invalid),
        columns=columns,
        ts_ms=obj.get("ts_ms"),
        position=Position(tuple(int(p) for p in position)) if position is not None else None,
        tx=obj.get("tx"),
        ddl=obj.get("ddl"),
        partial=tuple(obj.get("partial") or ()),
        split=obj.get("split"),
        invalid=invalid,
        patch=obj.get("patch"),
        row_id=obj.get("row_id"),
        extra=obj.get("extra") or {},
    )


def _columns_from_json(raw: Mapping[str, Any] | None) -> dict[str, Column] | None:
    if raw is None:
        return None
    return {
        name: Column(
            LogicalType.parse(spec["type"]), spec.get("vendor_type"), spec.get("vendor_code")
        )
        for name, spec in raw.items()
    }


def _image_from_json(
    raw: Mapping[str, Any] | None, columns: Mapping[str, Column] | None, invalid: Iterable[str]
) -> dict[str, Any] | None:
    if raw is None:
        return None
    bad = set(invalid)
    cols = columns or {}
    return {
        name: (
            v if name in bad else value_from_json(v, cols[name].type if name in cols else UNKNOWN)
        )
        for name, v in raw.items()
    }


def value_from_json(value: Any, ltype: LogicalType) -> Any:
    """A canonical JSON value back to its typed Python value."""
    if value is None:
        return None
    name = ltype.name
    if name == "decimal":
        return Decimal(value) if isinstance(value, str) else Decimal(str(value))
    if name in ("float32", "float64"):
        return float(value)
    if name == "binary":
        return base64.b64decode(value)
    if name == "date":
        return dt.date.fromisoformat(value)
    if name == "time":
        return dt.time.fromisoformat(value)
    if name in ("timestamp", "timestamptz"):
        return parse_iso_datetime(value)
    return value
