"""``dataworks-json``: DataWorks' six types, its fast path and its encoder."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Final

import msgspec

from anycdc.errors import EncodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position, dumps
from anycdc.formats.base import (
    Capabilities,
)
from anycdc.formats.dataworks.family import DataWorksFamily, as_sent, sequence_number, vendor_op
from anycdc.formats.dataworks.wire import (
    DATAWORKS_LAYOUT,
    DATAWORKS_OPS,
    EXTRA_DB_TYPE,
    EXTRA_SCN,
    FIELD_AFTER,
    FIELD_BEFORE,
    FIELD_CHECKPOINT_TIME,
    FIELD_DATA_COLUMN,
    FIELD_DB_NAME,
    FIELD_DB_TYPE,
    FIELD_DDL,
    FIELD_DDL_TEXT,
    FIELD_EVENT_TIME,
    FIELD_NAME,
    FIELD_OP,
    FIELD_PAYLOAD,
    FIELD_PRIMARY_KEY,
    FIELD_SCHEMA,
    FIELD_SCHEMA_NAME,
    FIELD_SCN,
    FIELD_SEQUENCE_ID,
    FIELD_SOURCE,
    FIELD_TABLE_NAME,
    FIELD_TIMESTAMP,
    FIELD_TYPE,
    FIELD_VERSION,
    NO_VALUE,
    OP_DELETE,
    OP_INSERT,
    OP_MHEARTBEAT,
    OP_QUERY,
    OP_TRANSACTION_BEGIN,
    OP_TRANSACTION_END,
    OP_TRUNCATE,
    OP_UPDATE_AFTER,
    OP_UPDATE_BEFORE,
    SPLIT_AFTER,
    SPLIT_BEFORE,
    SPLIT_UPDATE,
    TYPE_BOOLEAN,
    TYPE_BYTES,
    TYPE_DATE,
    TYPE_DOUBLE,
    TYPE_LONG,
    TYPE_STRING,
    VERSION,
    VERSIONS,
    Layout,
    Parser,
)
from anycdc.formats.events import OpRule
from anycdc.formats.options import OptionSpec
from anycdc.values import (
    BINARY,
    BOOLEAN,
    DECIMAL,
    EPOCH,
    INT64,
    STRING,
    TIMESTAMPTZ,
    UNKNOWN,
    LogicalType,
    epoch_ms,
    parse_base64,
    parse_bool,
    parse_decimal,
    parse_epoch_millis,
    parse_int,
)

# --------------------------------------------------------------------------- DataWorks JSON
_DATAWORKS_TYPES: Final[Mapping[str, LogicalType]] = {
    TYPE_BOOLEAN: BOOLEAN,
    TYPE_DOUBLE: DECIMAL,
    TYPE_DATE: TIMESTAMPTZ,
    TYPE_BYTES: BINARY,
    TYPE_LONG: INT64,
    TYPE_STRING: STRING,
}
_TYPE_FOR_LOGICAL: Final[Mapping[str, str]] = {
    "boolean": TYPE_BOOLEAN,
    "int8": TYPE_LONG, "int16": TYPE_LONG, "int32": TYPE_LONG, "int64": TYPE_LONG,
    "uint64": TYPE_LONG, "integer": TYPE_LONG,
    "decimal": TYPE_DOUBLE, "float32": TYPE_DOUBLE, "float64": TYPE_DOUBLE,
    "string": TYPE_STRING, "json": TYPE_STRING, "time": TYPE_STRING,
    "binary": TYPE_BYTES,
    "date": TYPE_DATE, "timestamp": TYPE_DATE, "timestamptz": TYPE_DATE,
}  # fmt: skip


def infer_type(sample: Any, names: Mapping[str, str]) -> str:
    """A vendor type name for an untyped value, by its Python type (``names`` by logical name)."""
    if isinstance(sample, bool):
        return names["boolean"]
    if isinstance(sample, int):
        return names["int64" if -(2**63) <= sample < 2**63 else "integer"]
    if isinstance(sample, (Decimal, float)):
        return names["decimal"]
    if isinstance(sample, (bytes, bytearray, memoryview)):
        return names["binary"]
    if isinstance(sample, dt.datetime):
        return names["timestamptz" if sample.tzinfo is not None else "timestamp"]
    if isinstance(sample, dt.date):
        return names["date"]
    if isinstance(sample, dt.time):
        return names["time"]
    return names["string"]


def _int64(raw: Any) -> int:
    value = parse_int(raw)
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"{value} out of range for LONG")
    return value


def _epoch_millis(raw: Any) -> dt.datetime:
    """DATE: epoch milliseconds -> aware UTC (ints take the short way)."""
    if type(raw) is int:
        return EPOCH + dt.timedelta(milliseconds=raw)
    return parse_epoch_millis(raw)


def _string(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    raise ValueError(f"expected string, got {type_name(raw)}")


_DATAWORKS_PARSERS: Final[Mapping[str, Parser]] = {
    "boolean": parse_bool,
    "decimal": parse_decimal,
    "timestamptz": _epoch_millis,
    "binary": parse_base64,
    "int64": _int64,
    "string": _string,
}


# --------------------------------------------------------------------------- fast path
_LONG: Final[Any] = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)] | None
# the strict msgspec type of each logical type, and the conversion after it
_FAST_TYPES: Final[Mapping[str, tuple[Any, Parser | None]]] = {
    "int64": (_LONG, None),  # a JSON integer in range: what _int64 gives
    "string": (str | None, None),
    "boolean": (bool | None, None),  # true/false: what parse_bool gives
    "decimal": (Decimal | None, None),  # a number or text: what parse_decimal gives
    "timestamptz": (int | None, lambda raw: EPOCH + dt.timedelta(milliseconds=raw)),
    "binary": (str | None, parse_base64),
}


class DataWorksJson(DataWorksFamily):
    """DataWorks JSON (versions 0.0.1 and 1.0.0), split or single-message updates."""

    id: ClassVar[str] = "dataworks-json"
    vendor: ClassVar[str] = "Alibaba Cloud DataWorks"
    title: ClassVar[str] = "DataWorks whole-database sync to Kafka (JSON)"
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.FULL,
        types=Capabilities.Types.FEW,
        key_names=True,
        snapshots=False,
        before_detail="in split mode UPDATE_BEFOR + UPDATE_AFTER, paired",
        types_detail="LONG, DOUBLE, STRING, BOOLEAN, DATE, BYTES",
        position="`payload.sequenceId` (split-update halves share it)",
        key_detail="`primaryKey`",
        notes=(
            "six types: integers as LONG, DOUBLE/FLOAT as exact decimals, DATE/DATETIME/"
            "TIMESTAMP as epoch ms (UTC), TIME and JSON as STRING; no BIGINT UNSIGNED above "
            "2^63 nor DECIMAL beyond (38,18)",
        ),
    )
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = (SPLIT_UPDATE, VERSION)
    layout: ClassVar[Layout] = DATAWORKS_LAYOUT
    ops: ClassVar[Mapping[str, OpRule]] = DATAWORKS_OPS

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self._split_update = self.option(SPLIT_UPDATE)
        self._version = self.option(VERSION)

    sniff_keys = frozenset({FIELD_PAYLOAD})

    @classmethod
    def sniff(cls, message: Any) -> float:
        """Sure when ``payload`` has ``op``, ``timestamp``, ``sequenceId`` and ``schema`` has
        ``dataColumn``; DataWorks 2.0 and Debezium envelopes (also ``schema`` + ``payload``)
        lack those fields and stay below 0.5."""
        if not isinstance(message, dict):
            return 0.0
        payload = message.get(FIELD_PAYLOAD)
        if not isinstance(payload, dict) or not isinstance(payload.get(FIELD_OP), str):
            return 0.0
        score = 0.2
        if isinstance(payload.get(FIELD_TIMESTAMP), dict):
            score += 0.2
        if FIELD_SEQUENCE_ID in payload:
            score += 0.2
        schema = message.get(FIELD_SCHEMA)
        if isinstance(schema, dict) and FIELD_DATA_COLUMN in schema:
            score += 0.3
        if message.get(FIELD_VERSION) in VERSIONS:
            score += 0.1
        return round(score, 2)

    def logical_type(self, type_name: str) -> LogicalType:
        return _DATAWORKS_TYPES.get(type_name, UNKNOWN)

    # ---- fast path
    def fast_type(self, column: Column, parser: Parser | None) -> tuple[Any, Parser | None]:
        return _FAST_TYPES.get(column.type.name, (Any, None))

    def parser_for(self, ltype: LogicalType) -> Parser:
        return _DATAWORKS_PARSERS[ltype.name]

    def position(
        self, event_time: tuple[int, int] | None, sequence: Any, scn: str | None
    ) -> Position | None:
        number = sequence_number(self.id, sequence, "$.payload.sequenceId")
        return Position((number,)) if number is not None else None

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One message (two for a whole update with ``split_update=true``)."""
        sequence = self._sequence_id(event)
        types = self.column_types(event)
        columns = event.columns or {}
        before = (
            self.render_image(event.before, types, columns, event.invalid)
            if event.before is not None
            else None
        )
        after = (
            self.render_image(event.after, types, columns, event.invalid)
            if event.after is not None
            else None
        )
        ddl = event.ddl if event.op in (Op.DDL, Op.TRUNCATE) else None
        if event.op in (Op.INSERT, Op.SNAPSHOT):
            return [self._message(event, OP_INSERT, None, after, sequence, types, ddl)]
        if event.op is Op.DELETE:
            return [self._message(event, OP_DELETE, before, None, sequence, types, ddl)]
        if event.op is Op.UPDATE:
            return self._update(event, before, after, sequence, types)
        code = vendor_op(event, self.ops) or _MARKER_CODES[event.op]
        return [self._message(event, code, None, None, sequence, types, ddl)]

    def _update(
        self,
        event: ChangeEvent,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        sequence: str | None,
        types: dict[str, str],
    ) -> list[bytes]:
        if event.split == SPLIT_BEFORE or after is None:
            if before is None:
                raise EncodeError(self.id, "an update needs a before or an after image")
            return [self._message(event, OP_UPDATE_BEFORE, before, None, sequence, types, None)]
        if event.split == SPLIT_AFTER or before is None:
            return [self._message(event, OP_UPDATE_AFTER, None, after, sequence, types, None)]
        if self._split_update:
            return [
                self._message(event, OP_UPDATE_BEFORE, before, None, sequence, types, None),
                self._message(event, OP_UPDATE_AFTER, None, after, sequence, types, None),
            ]
        return [self._message(event, OP_UPDATE_AFTER, before, after, sequence, types, None)]

    def _sequence_id(self, event: ChangeEvent) -> str | None:
        if event.position is None:
            return None
        if len(event.position.parts) != 1:
            raise EncodeError(
                self.id,
                f"position {event.position} has {len(event.position.parts)} parts; "
                "sequenceId holds one number",
            )
        return str(event.position.parts[0])

    def _message(
        self,
        event: ChangeEvent,
        code: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        sequence: str | None,
        types: Mapping[str, str],
        ddl: str | None,
    ) -> bytes:
        event_time = event.ts_ms if event.ts_ms is not None else NO_VALUE
        payload: dict[str, Any] = {
            FIELD_BEFORE: {FIELD_DATA_COLUMN: before} if before is not None else None,
            FIELD_AFTER: {FIELD_DATA_COLUMN: after} if after is not None else None,
            FIELD_SEQUENCE_ID: sequence,
        }
        scn = event.extra.get(EXTRA_SCN)
        if scn is not None:
            payload[FIELD_SCN] = str(scn)
        payload[FIELD_TIMESTAMP] = {FIELD_EVENT_TIME: event_time, FIELD_CHECKPOINT_TIME: event_time}
        payload[FIELD_OP] = code
        payload[FIELD_DDL] = {FIELD_DDL_TEXT: ddl} if ddl is not None else None
        message = {
            FIELD_SCHEMA: {
                FIELD_DATA_COLUMN: [{FIELD_NAME: n, FIELD_TYPE: t} for n, t in types.items()]
                or None,
                FIELD_PRIMARY_KEY: list(event.key) if event.key else None,
                FIELD_SOURCE: self._source(event),
            },
            FIELD_PAYLOAD: payload,
            FIELD_VERSION: self._version,
        }
        return dumps(message).encode("utf-8")

    def _source(self, event: ChangeEvent) -> dict[str, Any] | None:
        db_type = event.extra.get(EXTRA_DB_TYPE)
        if db_type is None and (event.database, event.schema, event.table) == (None, None, None):
            return None
        source: dict[str, Any] = {}
        if db_type is not None:
            source[FIELD_DB_TYPE] = str(db_type)
        source[FIELD_DB_NAME] = event.database
        if event.schema is not None:
            source[FIELD_SCHEMA_NAME] = event.schema
        source[FIELD_TABLE_NAME] = event.table
        return source

    def encode_type(self, ltype: LogicalType, sample: Any) -> str:
        if ltype.name in _TYPE_FOR_LOGICAL:
            return _TYPE_FOR_LOGICAL[ltype.name]
        return infer_type(sample, _TYPE_FOR_LOGICAL)

    def render_value(self, value: Any, vendor_type: str, ltype: LogicalType) -> Any:
        if vendor_type == TYPE_DATE and isinstance(value, dt.date):
            if not isinstance(value, dt.datetime):
                value = dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
            return epoch_ms(value)
        return as_sent(value)


_MARKER_CODES: Final[Mapping[Op, str]] = {
    Op.BEGIN: OP_TRANSACTION_BEGIN,
    Op.COMMIT: OP_TRANSACTION_END,
    Op.DDL: OP_QUERY,
    Op.TRUNCATE: OP_TRUNCATE,
    Op.HEARTBEAT: OP_MHEARTBEAT,
}
