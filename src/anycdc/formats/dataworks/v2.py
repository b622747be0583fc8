"""DataWorks 2.0 JSON, as OceanBase OMS writes it to Kafka, DataHub and RocketMQ (seed 003).

::

    {"version": "2.0",
     "schema": {"source": {"dbType", "dbVersion", "dbName", "schema", "table"},
                "column": [{"name": "id", "type": "BIGINT"}, ...], "pk": ["id"]},
     "payload": {"before": {"data": {...}} | null, "after": {"data": {...}} | null,
                 "op": "INSERT" | "UPDATE" | "DELETE" | "HEARTBEAT" | ...,
                 "timestamp": {"eventTime": ms, "systemTime": ms, "checkpointTime": s},
                 "ddl": {"text": "..."} | null, "scn": "..."},
     "extend": {"load_fm": "CIBS"}}

A heartbeat is only ``{"version": "2.0", "payload": {"timestamp": {"eventTime": ms},
"op": "HEARTBEAT"}}``.

How it maps onto the canonical event:

* ``op``: ``INSERT``, ``UPDATE`` (after image required, before image when sent), ``DELETE``,
  ``HEARTBEAT``, and the markers and ddl codes of DataWorks JSON (see
  :mod:`anycdc.formats.dataworks`: ``TRANSACTION_BEGIN``/``TRANSACTION_END``/``XACOMMIT``,
  ``CREATE``/``ALTER``/``ERASE``/``QUERY``/``RENAME``/``CINDEX``/``DINDEX`` -> ddl,
  ``TRUNCATE``, ``GTID``/``XAROLLBACK`` -> heartbeat markers, the code in
  ``extra["vendor_op"]``). Anything else is ``unknown op 'XYZ'``.
* Types are OMS's: ``TINYINT`` int8, ``SMALLINT`` int16, ``INT`` int32, ``INT64`` int64,
  ``BIGINT`` **integer** (unbounded: the seed's BIGINT holds 10223372036854775806, beyond
  int64), ``FLOAT`` float32, ``DOUBLE`` float64, ``BOOLEAN`` boolean (sent as 1/0),
  ``VARCHAR`` string, ``BLOB`` binary (base64), ``DECIMAL`` decimal (exact),
  ``DATE`` date, ``TIME`` time, ``DATETIME`` timestamp (a zone id in the text is kept),
  ``TIMESTAMP`` and ``ZONED_DATETIME`` timestamptz, ``INTERVAL_DAY_TO_SECOND`` /
  ``INTERVAL_YEAR_TO_MONTH`` string (``INTERVAL '3' DAY``). Other names (the format
  description uses MySQL names such as ``varchar(20)``) go through
  :func:`anycdc.typemap.sql_type`.
* Temporal values come in three renderings and are read by their JSON type: text
  ``2020-11-25 00:01:02[.nnnnnnnnn][ zoneId]`` (OMS DATETIME/ZONED_DATETIME); a *string* of
  digits ``"1606233662.012345"`` = epoch **seconds** (OMS TIMESTAMP); a JSON *number*
  ``1590315269000.123456789`` = epoch **milliseconds** with nanoseconds (the DataWorks 2.0
  protocol). Epoch values are instants: UTC for timestamptz and date columns, and UTC wall
  time for zone-less DATETIME columns (or the ``timezone`` option's zone). A zone-less text
  in a timestamptz column is invalid unless the ``timezone`` option names its zone. Invalid
  values (``0000-00-00 00:00:00``) are kept as sent and listed in ``invalid``.
* The seed's own examples name columns ``int8``, ``int16``, ... in ``schema.column`` but send
  ``col1`` ... ``col18`` in ``data``: data keys the schema does not declare keep their values
  as sent with type ``unknown``; declared columns absent from the data are not listed.
* ``position``: the format has no sequence number. It is ``(eventTime ms, eventTime ns)``,
  plus ``scn`` as a third part when ``scn`` is a digit string (the OMS doc calls it an
  auto-increment id; the examples send the string ``"null"``). Change times tie, so two
  changes within the same nanosecond (same transaction) are not ordered. ``ts_ms`` is
  eventTime's milliseconds (``checkpointTime`` is in seconds and ``systemTime`` is the read
  time: both are ignored).
* ``extra``: ``db_type`` (``source.dbType``), ``scn`` (as sent, when not ``"null"``),
  ``extend`` (the object as sent), ``vendor_op``. ``dbVersion`` is not kept.

The encoder writes OMS's renderings (BOOLEAN 1/0, DATETIME text, TIMESTAMP epoch-seconds text,
ZONED_DATETIME text with the zone id or offset, BLOB base64, exact DECIMAL numbers),
``eventTime`` from ``ts_ms`` (with the nanoseconds and ``scn`` of a position of the shape
above; any other position is not written: the format has no place for it), ``scn`` ``"null"``
when unknown, and a bare heartbeat for a heartbeat with nothing but a time. A lone half of a
split update cannot be written (pair the halves first).

>>> fmt = DataWorks2Json()
>>> [e] = fmt.decode(b'{"version":"2.0","schema":{"source":{"dbType":"ob_mysql","dbName":"db",'
...     b'"schema":null,"table":"tab"},"column":[{"name":"id","type":"BIGINT"},{"name":"t",'
...     b'"type":"TIMESTAMP"}],"pk":["id"]},"payload":{"before":null,"after":{"data":{"id":3,'
...     b'"t":"1606233662.012345"}},"op":"INSERT","timestamp":{"eventTime":1647581000000},'
...     b'"ddl":null,"scn":"null"}}')
>>> e.op.value, e.key, e.after["t"].isoformat(), e.position
('insert', ('id',), '2020-11-24T16:01:02.012345+00:00', Position(parts=(1647581000000, 0)))
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, ClassVar, Final
from zoneinfo import ZoneInfo

from anycdc.errors import EncodeError
from anycdc.event import ChangeEvent, Column, Op, Position, dumps
from anycdc.formats.base import Capabilities, generic_parser, json_value_type
from anycdc.formats.dataworks.family import DataWorksFamily, as_sent, vendor_op
from anycdc.formats.dataworks.format import infer_type
from anycdc.formats.dataworks.wire import (
    EXTRA_DB_TYPE,
    EXTRA_EXTEND,
    EXTRA_SCN,
    EXTRA_VENDOR_OP,
    FIELD_AFTER,
    FIELD_BEFORE,
    FIELD_DB_NAME,
    FIELD_DB_TYPE,
    FIELD_DB_VERSION,
    FIELD_DDL,
    FIELD_DDL_TEXT,
    FIELD_EVENT_TIME,
    FIELD_EXTEND,
    FIELD_NAME,
    FIELD_OP,
    FIELD_PAYLOAD,
    FIELD_SCHEMA,
    FIELD_SCN,
    FIELD_SOURCE,
    FIELD_TIMESTAMP,
    FIELD_TYPE,
    FIELD_VERSION,
    NO_VALUE,
    OP_DELETE,
    OP_INSERT,
    OP_QUERY,
    OP_TRANSACTION_BEGIN,
    OP_TRANSACTION_END,
    OP_TRUNCATE,
    SHARED_OPS,
    Layout,
    Parser,
)
from anycdc.formats.events import OpRule
from anycdc.typemap import sql_type
from anycdc.values import (
    BINARY,
    BOOLEAN,
    DATE,
    DECIMAL,
    EPOCH_TEXT,
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
    LogicalType,
    epoch_seconds_text,
    format_time,
    parse_date,
    parse_datetime,
    parse_epoch_millis,
    parse_epoch_seconds,
)

# --------------------------------------------------------------------------- wire names
VERSION_2: Final = "2.0"
FIELD_COLUMN: Final = "column"
FIELD_PK: Final = "pk"
FIELD_SOURCE_SCHEMA: Final = "schema"
FIELD_SOURCE_TABLE: Final = "table"
FIELD_DATA: Final = "data"

OP_UPDATE: Final = "UPDATE"
OP_HEARTBEAT: Final = "HEARTBEAT"
SCN_NONE: Final = "null"  # what OMS writes when there is no scn

TYPE_TINYINT: Final = "TINYINT"
TYPE_SMALLINT: Final = "SMALLINT"
TYPE_INT: Final = "INT"
TYPE_INT64: Final = "INT64"
TYPE_BIGINT: Final = "BIGINT"
TYPE_FLOAT: Final = "FLOAT"
TYPE_DOUBLE: Final = "DOUBLE"
TYPE_BOOLEAN: Final = "BOOLEAN"
TYPE_VARCHAR: Final = "VARCHAR"
TYPE_BLOB: Final = "BLOB"
TYPE_DECIMAL: Final = "DECIMAL"
TYPE_DATE: Final = "DATE"
TYPE_TIME: Final = "TIME"
TYPE_DATETIME: Final = "DATETIME"
TYPE_TIMESTAMP: Final = "TIMESTAMP"
TYPE_ZONED_DATETIME: Final = "ZONED_DATETIME"
TYPE_INTERVAL_DAY_TO_SECOND: Final = "INTERVAL_DAY_TO_SECOND"
TYPE_INTERVAL_YEAR_TO_MONTH: Final = "INTERVAL_YEAR_TO_MONTH"


DATAWORKS2_OPS: Final[Mapping[str, OpRule]] = {
    **SHARED_OPS,
    OP_UPDATE: OpRule(Op.UPDATE),  # a whole update: after required, before optional
    OP_HEARTBEAT: OpRule(Op.HEARTBEAT),
}
DATAWORKS2_LAYOUT: Final = Layout(
    FIELD_COLUMN, FIELD_PK, FIELD_SOURCE_SCHEMA, FIELD_SOURCE_TABLE, FIELD_DATA
)

_OMS_TYPES: Final[Mapping[str, LogicalType]] = {
    TYPE_TINYINT: INT8,
    TYPE_SMALLINT: INT16,
    TYPE_INT: INT32,
    TYPE_INT64: INT64,
    TYPE_BIGINT: INTEGER,
    TYPE_FLOAT: FLOAT32,
    TYPE_DOUBLE: FLOAT64,
    TYPE_BOOLEAN: BOOLEAN,
    TYPE_VARCHAR: STRING,
    TYPE_BLOB: BINARY,
    TYPE_DECIMAL: DECIMAL,
    TYPE_DATE: DATE,
    TYPE_TIME: TIME,
    TYPE_DATETIME: TIMESTAMP,
    TYPE_TIMESTAMP: TIMESTAMPTZ,
    TYPE_ZONED_DATETIME: TIMESTAMPTZ,
    TYPE_INTERVAL_DAY_TO_SECOND: STRING,
    TYPE_INTERVAL_YEAR_TO_MONTH: STRING,
}
_TYPE_FOR_LOGICAL: Final[Mapping[str, str]] = {
    "int8": TYPE_TINYINT, "int16": TYPE_SMALLINT, "int32": TYPE_INT, "int64": TYPE_INT64,
    "uint64": TYPE_BIGINT, "integer": TYPE_BIGINT, "float32": TYPE_FLOAT,
    "float64": TYPE_DOUBLE, "boolean": TYPE_BOOLEAN, "string": TYPE_VARCHAR,
    "json": TYPE_VARCHAR, "binary": TYPE_BLOB, "decimal": TYPE_DECIMAL, "date": TYPE_DATE,
    "time": TYPE_TIME, "timestamp": TYPE_DATETIME, "timestamptz": TYPE_ZONED_DATETIME,
}  # fmt: skip
_MARKER_CODES: Final[Mapping[Op, str]] = {
    Op.BEGIN: OP_TRANSACTION_BEGIN,
    Op.COMMIT: OP_TRANSACTION_END,
    Op.DDL: OP_QUERY,
    Op.TRUNCATE: OP_TRUNCATE,
    Op.HEARTBEAT: OP_HEARTBEAT,
}


def _is_number(raw: Any) -> bool:
    return isinstance(raw, (int, Decimal)) and not isinstance(raw, bool)


def _parse_date(raw: Any) -> dt.date:
    """``YYYY-MM-DD``, or epoch milliseconds (a JSON number) as a UTC date."""
    if _is_number(raw):
        return parse_epoch_millis(raw).date()
    return parse_date(raw)


class DataWorks2Json(DataWorksFamily):
    """DataWorks 2.0 JSON written by OceanBase OMS."""

    id: ClassVar[str] = "dataworks2-json"
    vendor: ClassVar[str] = "OceanBase OMS"
    title: ClassVar[str] = "OMS 'Dataworks' serialization (DataWorks 2.0 JSON)"
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.FULL,
        types=Capabilities.Types.VENDOR,
        key_names=True,
        snapshots=False,
        types_detail="OMS type names (TINYINT ... ZONED_DATETIME, INTERVAL_*)",
        position="`payload.timestamp.eventTime` (ms + ns) then `payload.scn` when numeric: "
        "no sequence number, changes in the same nanosecond tie",
        key_detail="`pk`",
    )
    layout: ClassVar[Layout] = DATAWORKS2_LAYOUT
    ops: ClassVar[Mapping[str, OpRule]] = DATAWORKS2_OPS
    keeps_extend: ClassVar[bool] = True

    sniff_keys = frozenset({FIELD_VERSION})  # "2.0" decides

    @classmethod
    def sniff(cls, message: Any) -> float:
        """Sure when ``version`` is ``"2.0"`` and ``payload`` has ``op`` and ``timestamp``."""
        if not isinstance(message, dict) or message.get(FIELD_VERSION) != VERSION_2:
            return 0.0
        payload = message.get(FIELD_PAYLOAD)
        if not isinstance(payload, dict) or not isinstance(payload.get(FIELD_OP), str):
            return 0.0
        score = 0.6
        if isinstance(payload.get(FIELD_TIMESTAMP), dict):
            score += 0.2
        schema = message.get(FIELD_SCHEMA)
        if schema is None or (isinstance(schema, dict) and FIELD_COLUMN in schema):
            score += 0.1
        return round(score, 2)

    # ---- decoding hooks
    def logical_type(self, type_name: str) -> LogicalType:
        found = _OMS_TYPES.get(type_name.upper())
        return found if found is not None else sql_type(type_name)

    def parser_for(self, ltype: LogicalType) -> Parser:
        if ltype.name == "date":
            return _parse_date
        if ltype.name == "timestamp":
            return self._parse_local_datetime
        if ltype.name == "timestamptz":
            return self._parse_instant
        return generic_parser(ltype, self.options.timezone)

    # ---- fast path
    def fast_type(self, column: Column, parser: Parser | None) -> tuple[Any, Parser | None]:
        return json_value_type(column.type, parser, self.options.timezone, column.vendor_type)

    def _parse_local_datetime(self, raw: Any) -> dt.datetime:
        """DATETIME: text (a zone id in it is kept), or epoch ms as UTC (``timezone``) wall time."""
        tz = self.options.timezone
        if _is_number(raw):
            instant = parse_epoch_millis(raw)
            return instant.astimezone(tz) if tz is not None else instant.replace(tzinfo=None)
        return parse_datetime(raw, tz)

    def _parse_instant(self, raw: Any) -> dt.datetime:
        """TIMESTAMP / ZONED_DATETIME: epoch ms number, epoch seconds text, or zoned text."""
        if _is_number(raw):
            return parse_epoch_millis(raw)
        if isinstance(raw, str) and EPOCH_TEXT.fullmatch(raw.strip()):
            return parse_epoch_seconds(raw.strip())
        value = parse_datetime(raw, self.options.timezone)
        if value.tzinfo is None:
            raise ValueError(f"no time zone in {raw!r} (set the timezone option)")
        return value

    def position(
        self, event_time: tuple[int, int] | None, sequence: Any, scn: str | None
    ) -> Position | None:
        if event_time is None:
            return None
        if scn is not None and scn.isdigit() and len(scn) < 40:
            return Position((*event_time, int(scn)))
        return Position(event_time)

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One message per event; split-update halves cannot be expressed (no split mode)."""
        if event.split is not None:
            raise EncodeError(
                self.id, f"a lone {event.split} half of a split update (pair the halves first)"
            )
        event_time = self._event_time(event)
        if _bare_heartbeat(event):
            code = vendor_op(event, self.ops) or OP_HEARTBEAT
            payload = {FIELD_TIMESTAMP: {FIELD_EVENT_TIME: event_time}, FIELD_OP: code}
            return [dumps({FIELD_VERSION: VERSION_2, FIELD_PAYLOAD: payload}).encode("utf-8")]
        code = self._code(event)
        types = self.column_types(event)
        columns = event.columns or {}
        before = after = None
        if event.before is not None and event.op in (Op.UPDATE, Op.DELETE):
            before = {FIELD_DATA: self.render_image(event.before, types, columns, event.invalid)}
        if event.after is not None and event.op in (Op.UPDATE, Op.INSERT, Op.SNAPSHOT):
            after = {FIELD_DATA: self.render_image(event.after, types, columns, event.invalid)}
        ddl = event.ddl if event.op in (Op.DDL, Op.TRUNCATE) else None
        schema: dict[str, Any] = {
            FIELD_SOURCE: {
                FIELD_DB_TYPE: event.extra.get(EXTRA_DB_TYPE),
                FIELD_DB_VERSION: None,
                FIELD_DB_NAME: event.database,
                FIELD_SOURCE_SCHEMA: event.schema,
                FIELD_SOURCE_TABLE: event.table,
            },
            FIELD_COLUMN: [{FIELD_NAME: n, FIELD_TYPE: t} for n, t in types.items()] or None,
        }
        if event.key:
            schema[FIELD_PK] = list(event.key)
        message: dict[str, Any] = {
            FIELD_VERSION: VERSION_2,
            FIELD_SCHEMA: schema,
            FIELD_PAYLOAD: {
                FIELD_BEFORE: before,
                FIELD_AFTER: after,
                FIELD_OP: code,
                FIELD_TIMESTAMP: {FIELD_EVENT_TIME: event_time},
                FIELD_DDL: {FIELD_DDL_TEXT: ddl} if ddl is not None else None,
                FIELD_SCN: self._scn(event),
            },
        }
        extend = event.extra.get(EXTRA_EXTEND)
        if extend is not None:
            message[FIELD_EXTEND] = extend
        return [dumps(message).encode("utf-8")]

    def _code(self, event: ChangeEvent) -> str:
        if event.op in (Op.INSERT, Op.SNAPSHOT):
            return OP_INSERT
        if event.op is Op.DELETE:
            if event.before is None:
                raise EncodeError(self.id, "a delete needs its before image")
            return OP_DELETE
        if event.op is Op.UPDATE:
            if event.after is None:
                raise EncodeError(self.id, "an update needs its after image")
            return OP_UPDATE
        return vendor_op(event, self.ops) or _MARKER_CODES[event.op]

    def _event_time(self, event: ChangeEvent) -> int | Decimal:
        """eventTime from ts_ms, with the nanoseconds of a position derived from it."""
        if event.ts_ms is None:
            return NO_VALUE
        parts = event.position.parts if event.position is not None else ()
        if len(parts) >= 2 and parts[0] == event.ts_ms and 0 < parts[1] < 10**9:
            return Decimal(f"{event.ts_ms}.{parts[1]:09d}")
        return event.ts_ms

    def _scn(self, event: ChangeEvent) -> str:
        scn = event.extra.get(EXTRA_SCN)
        if scn is not None:
            return str(scn)
        parts = event.position.parts if event.position is not None else ()
        if len(parts) == 3 and parts[0] == event.ts_ms:
            return str(parts[2])
        return SCN_NONE

    def encode_type(self, ltype: LogicalType, sample: Any) -> str:
        if ltype.name in _TYPE_FOR_LOGICAL:
            return _TYPE_FOR_LOGICAL[ltype.name]
        return infer_type(sample, _TYPE_FOR_LOGICAL)

    def render_value(self, value: Any, vendor_type: str, ltype: LogicalType) -> Any:
        if isinstance(value, bool) and ltype == BOOLEAN:
            return int(value)  # OMS: BOOL/BOOLEAN true = 1, false = 0
        if isinstance(value, dt.datetime):
            if ltype == TIMESTAMPTZ and vendor_type.upper() == TYPE_TIMESTAMP:
                return epoch_seconds_text(value)
            return _datetime_text(value)
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, dt.time):
            return format_time(value)
        return as_sent(value)


def _bare_heartbeat(event: ChangeEvent) -> bool:
    """A heartbeat with nothing but a time: written as OMS writes its heartbeats."""
    return (
        event.op is Op.HEARTBEAT
        and (event.database, event.schema, event.table, event.key, event.columns)
        == (None, None, None, None, None)
        and not set(event.extra) - {EXTRA_VENDOR_OP}
    )


def _fraction(micros: int) -> str:
    """``.ffffff`` without trailing zeros (OMS shows only the non-zero sub-second digits)."""
    return f".{micros:06d}".rstrip("0") if micros else ""


def _datetime_text(value: dt.datetime) -> str:
    """``YYYY-MM-DD HH:MM:SS[.ffffff][ zone]`` as OMS writes DATETIME / ZONED_DATETIME."""
    text = (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}{_fraction(value.microsecond)}"
    )
    tz = value.tzinfo
    if tz is None:
        return text
    if isinstance(tz, ZoneInfo):
        return f"{text} {tz.key}"
    offset = value.utcoffset() or dt.timedelta(0)
    if not offset:
        return f"{text} UTC"
    sign = "-" if offset < dt.timedelta(0) else "+"
    minutes = abs(offset) // dt.timedelta(minutes=1)
    return f"{text} {sign}{minutes // 60:02d}:{minutes % 60:02d}"


__all__ = ["DataWorks2Json"]
