"""Decoding Debezium JSON: schema plans, the fast row, the general payload path,
schema changes, transactions, messages and CloudEvents (MongoDB: :mod:`.mongo`)."""

from __future__ import annotations

import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from types import MappingProxyType
from typing import Any, ClassVar, Final

import msgspec

from anycdc.errors import type_name
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats.base import (
    MAX_MESSAGE_BYTES,
    Cache,
    Format,
    NotFast,
    convert_values,
    parse_json,
)
from anycdc.formats.debezium.connect import (
    INT_BOUNDS,
    LOGICAL_NAMES,
    PRIMITIVES,
    in_zone,
    parse_connect_bool,
    parse_connect_decimal,
    parse_connect_str,
)
from anycdc.formats.debezium.mongo import is_mongo, mongo_event
from anycdc.formats.debezium.wire import (
    AFTER,
    AVRO_TYPE_NAMES,
    AVRO_VALUE_SUFFIX,
    BEFORE,
    CASSANDRA_CELL,
    CE_DATA,
    CE_DATA_CONTENT_TYPE,
    CE_DEBEZIUM_SOURCE,
    CE_DEBEZIUM_TYPE,
    CE_ID,
    CE_JSON,
    CE_OP,
    CE_PREFIX,
    CE_SOURCE,
    CE_SOURCE_TX_ID,
    CE_SPECVERSION,
    CE_TX_PREFIX,
    CE_TYPE,
    CHANGE_TABLE,
    CHANGE_TYPE,
    COLUMN_JDBC_TYPE,
    COLUMN_LENGTH,
    COLUMN_NAME,
    COLUMN_SCALE,
    COLUMN_TYPE_NAME,
    CONNECTOR_CASSANDRA,
    CONNECTOR_MONGODB,
    CONNECTOR_POSTGRESQL,
    DATABASE_NAME,
    DDL,
    DDL_SCHEMA_NAME,
    DELETE,
    ENVELOPE_DECODER,
    ENVELOPE_HEAD_RE,
    ENVELOPE_PAYLOAD,
    ENVELOPE_SCHEMA,
    EXACT_JSON,
    HEARTBEAT,
    KEY_SCHEMA_SUFFIXES,
    LSN_RE,
    MESSAGE,
    MESSAGE_CONTENT,
    MESSAGE_PREFIX,
    MONGO_PATCH,
    MONGO_UPDATE_DESCRIPTION,
    N_DECIMAL,
    N_HEARTBEAT,
    OP,
    OP_CODES,
    OP_READ,
    OPS,
    ORD_SNAPSHOT,
    PARAM_PRECISION,
    PARAM_SCALE,
    PAYLOAD_HEAD_RE,
    ROW_OP_CODES,
    SCHEMA_FIELD,
    SCHEMA_FIELDS,
    SCHEMA_NAME,
    SCHEMA_PARAMETERS,
    SCHEMA_TYPE,
    SNAPSHOT_FALSE,
    SNAPSHOT_TRUE,
    SOURCE,
    SOURCE_PATHS,
    SRC_CHANGE_LSN,
    SRC_COLLECTION,
    SRC_COMMIT_LSN,
    SRC_COMMIT_SCN,
    SRC_CONNECTOR,
    SRC_DB,
    SRC_EVENT_SERIAL_NO,
    SRC_FILE,
    SRC_GTID,
    SRC_KEYSPACE,
    SRC_LSN,
    SRC_NAME,
    SRC_ORD,
    SRC_POS,
    SRC_QUERY,
    SRC_ROW,
    SRC_ROW_ID,
    SRC_RS,
    SRC_SCHEMA,
    SRC_SCN,
    SRC_SEC,
    SRC_SEQUENCE,
    SRC_SERVER_ID,
    SRC_SHARD,
    SRC_SNAPSHOT,
    SRC_TABLE,
    SRC_THREAD,
    SRC_TS_MS,
    SRC_TS_NS,
    SRC_TS_SEC,
    SRC_TS_US,
    SRC_TX_ID,
    SRC_VERSION,
    SRC_VGTID,
    SRC_WALL_TIME,
    SRC_XMIN,
    STATUS_BEGIN,
    STATUS_END,
    T_STRUCT,
    TABLE_CHANGES,
    TABLE_COLUMNS,
    TABLE_PRIMARY_KEY,
    TRANSACTION,
    TRUNCATE,
    TS_MS,
    TX_DATA_COLLECTION_ORDER,
    TX_DATA_COLLECTIONS,
    TX_EVENT_COUNT,
    TX_ID,
    TX_STATUS,
    TX_TOTAL_ORDER,
    UNAVAILABLE_VALUES,
    UPDATE,
    X_CLOUDEVENTS,
    X_COMMIT_SCN,
    X_CONNECTOR,
    X_DATA_COLLECTION_ORDER,
    X_EVENT_COUNT,
    X_GTID,
    X_MESSAGE,
    X_SNAPSHOT,
    X_TABLE_CHANGE,
    X_TOTAL_ORDER,
)
from anycdc.typemap import jdbc_type, sql_type
from anycdc.values import (
    TIMESTAMP,
    UNKNOWN,
    LogicalType,
    decimal_type,
    parse_int,
)

# the fast row's base64 decimal: module-level names, no attribute lookups per value
_a2b_base64: Final = binascii.a2b_base64
_from_bytes: Final = int.from_bytes


# --------------------------------------------------------------------------- schema plans
@dataclass(frozen=True, slots=True)
class _RowPlan:
    """How to type the images of one table schema (built once, cached per schema)."""

    columns: Mapping[str, Column]
    parsers: dict[str, Callable[[Any], Any] | None]
    names: frozenset[str]
    # the same parsers grouped by kind, for :func:`_fast_image` (checks inlined, no calls)
    strings: tuple[str, ...] = ()
    ints: tuple[tuple[str, int, int], ...] = ()
    bools: tuple[str, ...] = ()
    decimals: tuple[tuple[str, str], ...] = ()  # (column, exponent suffix "E-<scale>")
    others: tuple[tuple[str, Callable[[Any], Any]], ...] = ()


def _row_plan(
    columns: dict[str, Column], parsers: dict[str, Callable[[Any], Any] | None]
) -> _RowPlan:
    strings: list[str] = []
    ints: list[tuple[str, int, int]] = []
    bools: list[str] = []
    decimals: list[tuple[str, str]] = []
    others: list[tuple[str, Callable[[Any], Any]]] = []
    for name, parse in parsers.items():
        if parse is None:
            continue
        bounds = INT_BOUNDS.get(parse)
        if bounds is not None:
            ints.append((name, *bounds))
        elif parse is parse_connect_str:
            strings.append(name)
        elif parse is parse_connect_bool:
            bools.append(name)
        elif (
            isinstance(parse, partial)
            and parse.func is parse_connect_decimal
            and len(parse.args) == 1
            and not parse.keywords
        ):
            decimals.append((name, f"E{-parse.args[0]}"))
        else:
            others.append((name, parse))
    return _RowPlan(
        MappingProxyType(columns),
        parsers,
        frozenset(columns),
        tuple(strings),
        tuple(ints),
        tuple(bools),
        tuple(decimals),
        tuple(others),
    )


def _fast_image(
    raw: dict[str, Any],
    plan: _RowPlan,
    twin_raw: dict[str, Any] | None = None,
    twin: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``raw`` typed by ``plan`` when every value has its usual JSON type and is valid;
    NotFast otherwise (then the careful per-value path decides, and finds the invalid ones).

    ``twin`` is the other image of an update, typed from ``twin_raw`` by this function:
    a value sent the same (same text or integer) reuses its typed value (unchanged columns).
    """
    out = dict(raw)
    get = out.get
    for name in plan.strings:
        value = get(name)
        if value is not None and type(value) is not str:
            raise NotFast
    for name, low, high in plan.ints:
        value = get(name)
        if value is not None and (type(value) is not int or not low <= value <= high):
            raise NotFast
    for name in plan.bools:
        value = get(name)
        if value is not None and type(value) is not bool:
            raise NotFast
    twin_get = twin_raw.get if twin_raw is not None and twin is not None else _no_twin
    try:
        for name, exponent in plan.decimals:
            value = get(name)
            if value is not None:
                if type(value) is not str:
                    raise NotFast
                same = twin_get(name)
                if type(same) is str and same == value:
                    out[name] = twin[name]  # type: ignore[index]
                    continue
                unscaled = _from_bytes(_a2b_base64(value, strict_mode=True), "big", signed=True)
                out[name] = Decimal(f"{unscaled}{exponent}")
        for name, parse in plan.others:
            value = get(name)
            if value is not None:
                same = twin_get(name)
                kind = type(same)
                if (kind is int or kind is str) and type(value) is kind and same == value:
                    out[name] = twin[name]  # type: ignore[index]
                    continue
                out[name] = parse(value)
    except (ValueError, TypeError, OverflowError, ArithmeticError):
        raise NotFast from None
    return out


def _no_twin(name: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class EnvelopePlan:
    """What the schema part of a message tells: the row plan and the schema's name."""

    row: _RowPlan | None
    name: str | None


_NO_SCHEMA: Final = EnvelopePlan(None, None)


class EventMeta(msgspec.Struct):
    """Event fields taken from the ``source`` block and the envelope (a Struct: cheap to build)."""

    database: str | None
    schema: str | None
    table: str | None
    ts_ms: int | None
    position: Position | None
    tx: str | None
    row_id: str | None
    extra: dict[str, Any]


class DebeziumDecoder(Format):
    """The decoding half of :class:`~anycdc.formats.debezium.DebeziumJson`."""

    _PLAN_CACHE_SIZE: ClassVar[int] = 512
    _PREFIX_CACHE_SIZE: ClassVar[int] = 8

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self._plans: Cache[bytes, EnvelopePlan] = Cache(self._PLAN_CACHE_SIZE)
        # the bytes of a message up to its payload value -> the plan of its schema
        self._prefixes: Cache[bytes, EnvelopePlan] = Cache(self._PREFIX_CACHE_SIZE)

    # ------------------------------------------------------------------ detection
    # an envelope's payload, a CloudEvent's data, or a payload alone: a row change's op,
    # a schema change's source, a transaction marker's status
    sniff_keys = frozenset({ENVELOPE_PAYLOAD, CE_DATA, OP, SOURCE, TX_STATUS})

    @classmethod
    def sniff(cls, message: Any) -> float:
        """Envelope with a Connect struct schema, or a payload with a Debezium ``op``."""
        try:
            return _sniff(message)
        except Exception:  # a sniffer never raises
            return 0.0

    # ------------------------------------------------------------------ decoding
    def decode(
        self, value: bytes | bytearray | memoryview | str | None, key: bytes | None = None
    ) -> list[ChangeEvent]:
        """Decode one message value; ``key`` (the Kafka key) names the key columns."""
        if value is None:
            return self.decode_tombstone(key)
        if type(value) is bytes:
            data = value
        else:
            data = (
                value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
            )
        if len(data) > MAX_MESSAGE_BYTES:
            return self.decode_object(parse_json(self.id, data), key)  # raises: too long
        if data.startswith(b'{"schema"') or data.startswith(b'{"payload"'):
            envelope_like = True
        elif data.startswith(b'{"'):
            envelope_like = False  # the first key is another one
        else:
            envelope_like = _starts_like_envelope(data)
        if not envelope_like:
            # the payload alone, usually: parsed here, errors reported by parse_json
            try:
                obj = EXACT_JSON.decode(data)
            except (msgspec.DecodeError, RecursionError, UnicodeError):
                return self.decode_object(parse_json(self.id, data), key)
            if type(obj) is not dict or OP not in obj:
                return self.decode_object(obj, key)
            payload, plan, path = obj, _NO_SCHEMA, "$"
        else:
            known = self._known_envelope(data)
            if known is None:
                try:
                    envelope = ENVELOPE_DECODER.decode(data)
                except (msgspec.DecodeError, RecursionError, UnicodeError):
                    envelope = None
                if envelope is None or envelope.payload is msgspec.UNSET:
                    return self.decode_object(parse_json(self.id, data), key)
                raw = bytes(envelope.schema)
                plan = self._plan_from_raw(raw)
                self._remember_prefix(data, raw, plan)
                return self._decode_payload(envelope.payload, plan, key, "$.payload")
            plan, payload = known
            path = "$.payload"
            if type(payload) is not dict:
                return self._decode_payload(payload, plan, key, path)
        # the usual message (no call in between: this is the hot path)
        try:
            return [self._fast_row(payload, plan.row, key, path)]
        except NotFast:
            self.fast_fallbacks += 1
        return self._decode_payload(payload, plan, key, path, fast=False)

    def _known_envelope(self, data: bytes) -> tuple[EnvelopePlan, Any] | None:
        """Fast path: the message starts with the exact bytes of a recently seen
        ``{"schema":<S>,"payload":`` and ends with ``}``, so only the payload is parsed
        (a byte comparison instead of parsing a schema of kilobytes every message).
        Anything else (another schema, trailing data, a duplicate key) takes the full path."""
        end = len(data)
        if not data.endswith(b"}"):
            end = len(data.rstrip())
            if data[end - 1 : end] != b"}":
                return None
        for prefix in self._prefixes:  # (keys, then the plan: the quickest way)
            if data.startswith(prefix):
                try:
                    return self._prefixes[prefix], EXACT_JSON.decode(data[len(prefix) : end - 1])
                except (msgspec.DecodeError, RecursionError, UnicodeError):
                    return None
        return None

    def _remember_prefix(self, data: bytes, raw_schema: bytes, plan: EnvelopePlan) -> None:
        """Keep ``data`` up to the payload value, in the producer's own spacing."""
        head = ENVELOPE_HEAD_RE.match(data)
        if not raw_schema or head is None or not data.startswith(raw_schema, head.end()):
            return
        tail = PAYLOAD_HEAD_RE.match(data, head.end() + len(raw_schema))
        if tail is not None and all(not data.startswith(p) for p in self._prefixes):
            self._prefixes.put(data[: tail.end()], plan)

    def table_path(self, event: ChangeEvent) -> str:
        """``source.table`` (MongoDB: ``source.collection``) of the payload, wherever the
        message holds it (enveloped, alone, or in a CloudEvent's ``data``)."""
        mongo = event.extra.get(X_CONNECTOR) == CONNECTOR_MONGODB
        return f"$..{SOURCE}.{SRC_COLLECTION if mongo else SRC_TABLE}"

    def decode_tombstone(self, key: bytes | None) -> list[ChangeEvent]:
        """A null value (the tombstone after a delete, for log compaction): no event.

        The delete itself came in the message before it; the key alone adds nothing.
        """
        return []

    def decode_object(self, obj: Any, key: bytes | None = None) -> list[ChangeEvent]:
        """Decode a parsed message: the envelope or the payload alone."""
        if not isinstance(obj, dict):
            raise self.error("$", f"expected object, got {type_name(obj)}")
        if CE_SPECVERSION in obj and CE_DATA in obj:
            return self._decode_cloudevent(obj, key)
        if ENVELOPE_PAYLOAD in obj and OP not in obj:
            schema = obj.get(ENVELOPE_SCHEMA)
            plan = self._plan_from_schema(schema) if schema is not None else _NO_SCHEMA
            return self._decode_payload(obj[ENVELOPE_PAYLOAD], plan, key, "$.payload")
        return self._decode_payload(obj, _NO_SCHEMA, key, "$")

    def _decode_cloudevent(self, event: dict[str, Any], key: bytes | None) -> list[ChangeEvent]:
        """A CloudEvent of Debezium's CloudEventsConverter: the payload is rebuilt from
        ``data`` and the extension attributes, then decoded as any payload; the envelope's
        ``id``, ``source`` and ``type`` are kept in ``extra["cloudevents"]``."""
        data = event[CE_DATA]
        content_type = event.get(CE_DATA_CONTENT_TYPE)
        if content_type not in (None, CE_JSON) or not isinstance(data, dict):
            raise self.error(
                "$.data",
                f"CloudEvents data is {content_type or type_name(data)}, not JSON: only the "
                "converter's JSON data (data.serializer.type=json) is read",
            )
        path = "$.data"
        plan = _NO_SCHEMA
        if ENVELOPE_PAYLOAD in data and data.keys() <= {ENVELOPE_SCHEMA, ENVELOPE_PAYLOAD}:
            schema = data.get(ENVELOPE_SCHEMA)
            plan = self._plan_from_schema(schema) if schema is not None else _NO_SCHEMA
            data, path = data[ENVELOPE_PAYLOAD], "$.data.payload"
            if not isinstance(data, dict):
                raise self.error(path, f"expected object, got {type_name(data)}")
        if CE_OP not in event:
            raise self.error(
                "$", f"missing extension attribute {CE_OP!r} (extension.attributes.enable=false)"
            )
        payload: dict[str, Any] = {**data, OP: event[CE_OP]}
        source: dict[str, Any] = {}
        transaction: dict[str, Any] = {}
        for name, value in event.items():
            if not name.startswith(CE_PREFIX) or name == CE_OP:
                continue
            if name.startswith(CE_TX_PREFIX) and name != CE_SOURCE_TX_ID:
                field = name[len(CE_TX_PREFIX) :]
                transaction[_CE_TRANSACTION_FIELDS.get(field, field)] = value
            else:
                field = name[len(CE_PREFIX) :]
                source[_CE_SOURCE_FIELDS.get(field, field)] = value
        payload[SOURCE] = source
        if transaction:
            payload[TRANSACTION] = transaction
        envelope = {name: event.get(name) for name in (CE_ID, CE_SOURCE, CE_TYPE)}
        return [
            e.with_changes(extra={**e.extra, X_CLOUDEVENTS: envelope})
            for e in self._decode_payload(payload, plan, key, path)
        ]

    # ---- schema plans
    def _plan_from_raw(self, raw: bytes) -> EnvelopePlan:
        if not raw or raw == b"null":
            return _NO_SCHEMA
        plan = self._plans.get(raw)
        if plan is None:
            try:
                schema = EXACT_JSON.decode(raw)
            except (msgspec.DecodeError, RecursionError, UnicodeError) as exc:
                raise self.error("$.schema", f"invalid JSON: {exc}") from None
            plan = self._plans.put(raw, self._build_plan(schema))
        return plan

    def _plan_from_schema(self, schema: Any) -> EnvelopePlan:
        try:
            raw = msgspec.json.encode(schema)
        except (TypeError, ValueError, OverflowError):
            return self._build_plan(schema)
        plan = self._plans.get(raw)
        if plan is None:
            plan = self._plans.put(raw, self._build_plan(schema))
        return plan

    def _build_plan(self, schema: Any) -> EnvelopePlan:
        if schema is None:
            return _NO_SCHEMA
        if not isinstance(schema, dict):
            raise self.error("$.schema", f"expected object, got {type_name(schema)}")
        name = schema.get(SCHEMA_NAME)
        name = name if isinstance(name, str) else None
        fields = schema.get(SCHEMA_FIELDS)
        if fields is None:
            return EnvelopePlan(None, name)
        if not isinstance(fields, list):
            raise self.error("$.schema.fields", f"expected array, got {type_name(fields)}")
        row: _RowPlan | None = None
        for index, field_schema in enumerate(fields):
            path = f"$.schema.fields[{index}]"
            if not isinstance(field_schema, dict):
                raise self.error(path, f"expected object, got {type_name(field_schema)}")
            if field_schema.get(SCHEMA_FIELD) not in (AFTER, BEFORE):
                continue
            if field_schema.get(SCHEMA_TYPE) != T_STRUCT:
                continue  # MongoDB: the image is JSON text
            row = self._row_plan(field_schema, path)
            if field_schema.get(SCHEMA_FIELD) == AFTER:
                break
        return EnvelopePlan(row, name)

    def _row_plan(self, struct: dict[str, Any], path: str) -> _RowPlan:
        fields = struct.get(SCHEMA_FIELDS)
        if not isinstance(fields, list):
            raise self.error(f"{path}.fields", f"expected array, got {type_name(fields)}")
        columns: dict[str, Column] = {}
        parsers: dict[str, Callable[[Any], Any] | None] = {}
        for index, field_schema in enumerate(fields):
            fpath = f"{path}.fields[{index}]"
            if not isinstance(field_schema, dict):
                raise self.error(fpath, f"expected object, got {type_name(field_schema)}")
            column_name = field_schema.get(SCHEMA_FIELD)
            if not isinstance(column_name, str):
                raise self.error(f"{fpath}.field", f"expected string, got {type_name(column_name)}")
            columns[column_name], parsers[column_name] = self._column(field_schema)
        return _row_plan(columns, parsers)

    def _column(self, field_schema: dict[str, Any]) -> tuple[Column, Callable[[Any], Any] | None]:
        ctype = field_schema.get(SCHEMA_TYPE)
        name = field_schema.get(SCHEMA_NAME)
        ctype = ctype if isinstance(ctype, str) else None
        name = name if isinstance(name, str) else None
        vendor = name or ctype
        if name == N_DECIMAL:
            params = field_schema.get(SCHEMA_PARAMETERS)
            params = params if isinstance(params, dict) else {}
            scale = _int_param(params.get(PARAM_SCALE)) or 0
            precision = _int_param(params.get(PARAM_PRECISION))
            valid = precision is not None and 0 <= scale <= precision
            ltype = decimal_type(precision, scale) if valid else decimal_type(None, None)
            return Column(ltype, vendor), partial(parse_connect_decimal, scale)
        known = LOGICAL_NAMES.get(name) if name else None
        if known is None or (ctype is not None and ctype != known.ctype):
            known = PRIMITIVES.get(ctype) if ctype is not None else None
            if known is None:
                return Column(UNKNOWN, vendor), None  # struct, array, map: JSON value kept
        ltype, parse = known.ltype, known.parse
        zone = self.options.timezone
        if ltype is TIMESTAMP and zone is not None and parse is not None:
            parse = partial(in_zone, parse, zone)
        return Column(ltype, vendor), parse

    # ---- payloads
    def _decode_payload(
        self,
        payload: Any,
        plan: EnvelopePlan,
        key: bytes | None,
        path: str,
        fast: bool = True,
    ) -> list[ChangeEvent]:
        """The events of a payload: the fast row first (unless ``fast`` is false: it
        was tried), else the general path."""
        if payload is None:
            return []  # the tutorial's rendering of a tombstone: {"schema":null,"payload":null}
        if type(payload) is dict:
            if fast:
                try:
                    return [self._fast_row(payload, plan.row, key, path)]
                except NotFast:
                    self.fast_fallbacks += 1
        elif not isinstance(payload, dict):
            raise self.error(path, f"expected object, got {type_name(payload)}")
        op_code = payload.get(OP)
        if op_code is None:
            return [self._decode_other(payload, plan, path)]
        op = OPS.get(op_code) if isinstance(op_code, str) else None
        if op is None:
            raise self.error(f"{path}.op", f"unknown op {op_code!r}")
        source = payload.get(SOURCE)
        if source is None:
            source = {}
        elif not isinstance(source, dict):
            raise self.error(f"{path}.source", f"expected object, got {type_name(source)}")
        foreign = _foreign_shape(payload, source)
        if foreign is not None:
            raise self.error(path + foreign[0], foreign[1])
        meta = self._meta(payload, source, op_code, path)
        if op is HEARTBEAT:
            return [self._message_event(payload, meta, path)]
        key_names, key_values = self._parse_key(key) if key is not None else (None, None)
        if is_mongo(payload, source):
            return [mongo_event(self, op, payload, meta, key_values, path)]
        event_key = self.primary_key(key_names)
        if op is TRUNCATE:
            return [self._event(op, meta, key=event_key)]
        postgres = source.get(SRC_CONNECTOR) == CONNECTOR_POSTGRESQL or SRC_LSN in source
        return [self._row_event(op, payload, plan.row, meta, event_key, key_values, path, postgres)]

    def _fast_row(
        self, payload: dict[str, Any], plan: _RowPlan | None, key: bytes | None, path: str
    ) -> ChangeEvent:
        """The usual row change (c/u/d/r, well-typed source and images) in one pass.

        NotFast for anything else: the general path (below) then decodes the message from
        scratch, reports errors and handles the rare cases. When this returns an event,
        it is the one the general path builds.
        """
        op_code = payload.get(OP)
        if type(op_code) is not str:
            raise NotFast
        op = ROW_OP_CODES.get(op_code)
        source = payload.get(SOURCE)
        if op is None or type(source) is not dict or payload.get(TRANSACTION) is not None:
            raise NotFast
        after_raw = payload.get(AFTER)
        before_raw = payload.get(BEFORE)
        get = source.get
        connector = get(SRC_CONNECTOR)
        if (
            connector == CONNECTOR_MONGODB
            or connector == CONNECTOR_CASSANDRA
            or isinstance(after_raw, str)
            or isinstance(before_raw, str)
            or MONGO_PATCH in payload
            or MONGO_UPDATE_DESCRIPTION in payload
            or SRC_SCN in source
            or (type(after_raw) is dict and len(after_raw) == 1)  # maybe an Avro union
            or (type(before_raw) is dict and len(before_raw) == 1)
        ):
            raise NotFast
        # source metadata, as _meta reads it when every field has its usual type
        tx = get(SRC_TX_ID)
        database, schema, table = get(SRC_DB), get(SRC_SCHEMA), get(SRC_TABLE)
        if not database and SRC_KEYSPACE in source:
            database = get(SRC_KEYSPACE)
        if table is None:
            table = get(SRC_COLLECTION)
        ts_ms = get(SRC_TS_MS)
        row_id = get(SRC_ROW_ID)
        if (
            (tx is not None and type(tx) is not str)
            or (database is not None and (type(database) is not str or not database))
            or (schema is not None and (type(schema) is not str or not schema))
            or (table is not None and (type(table) is not str or not table))
            or type(ts_ms) is not int
            or (row_id is not None and type(row_id) is not str)
        ):
            raise NotFast
        extra = _source_extras(get, op_code)
        position = self._position(source, ts_ms, SOURCE_PATHS.get(path) or f"{path}.source")
        # images
        before = after = None
        if op is not DELETE:
            if type(after_raw) is not dict:
                raise NotFast
            after = dict(after_raw) if plan is None else _fast_image(after_raw, plan)
        if op is UPDATE or op is DELETE:
            if type(before_raw) is dict:
                if plan is None:
                    before = dict(before_raw)
                else:
                    before = _fast_image(before_raw, plan, after_raw, after)
            elif before_raw is not None or op is DELETE:
                raise NotFast
        if plan is not None:
            names = plan.names
            if (after is not None and after.keys() != names) or (
                before is not None and before.keys() != names
            ):
                raise NotFast
            columns: Mapping[str, Column] | None = plan.columns
        else:
            columns = None
            if before is not None and after is not None and before.keys() != after.keys():
                raise NotFast
        if (connector == CONNECTOR_POSTGRESQL or SRC_LSN in source) and (
            _may_be_unavailable(before) or _may_be_unavailable(after)
        ):
            raise NotFast
        key_names = self._parse_key(key)[0] if key is not None else None
        return ChangeEvent(
            op=op,
            format=self.id,
            database=database,
            schema=schema,
            table=table,
            key=self.primary_key(key_names) if key_names else self.unnamed_key,
            before=before,
            after=after,
            columns=columns,
            ts_ms=ts_ms,
            position=position,
            tx=tx,
            row_id=row_id,
            extra=extra,
        )

    def _row_event(
        self,
        op: Op,
        payload: dict[str, Any],
        plan: _RowPlan | None,
        meta: EventMeta,
        key: tuple[str, ...] | None,
        key_values: dict[str, Any] | None,
        path: str,
        postgres: bool,
    ) -> ChangeEvent:
        invalid: list[str] = []
        partial_images: list[str] = []
        columns = plan.columns if plan is not None else None
        before_raw = payload.get(BEFORE)
        after_raw = payload.get(AFTER)
        before = after = None
        if op is not DELETE:
            if after_raw is None:
                raise self.error(f"{path}.after", f"missing after image for op '{OP_CODES[op]}'")
            after = self._image(after_raw, plan, path, AFTER, invalid)
        if op is UPDATE or op is DELETE:
            if before_raw is not None:
                # the after image typed whole: unchanged columns reuse its values
                twin = None if invalid or type(after_raw) is not dict else after
                before = self._image(before_raw, plan, path, BEFORE, invalid, after_raw, twin)
            elif op is DELETE:
                if not key_values:
                    raise self.error(
                        f"{path}.before",
                        "delete without a before image and no Kafka key (Postgres: set "
                        "REPLICA IDENTITY FULL, or pass the message key)",
                    )
                before = self._image(key_values, plan, path, BEFORE, invalid)
                partial_images.append(BEFORE)
        if plan is not None:
            names = plan.names
            if (after is None or after.keys() == names) and (
                before is None or before.keys() == names
            ):
                pass  # the usual case: exactly the schema's columns
            else:
                columns = self._extra_columns(plan, before, after, partial_images)
        elif before is not None and after is not None:
            if not after.keys() <= before.keys() and BEFORE not in partial_images:
                partial_images.append(BEFORE)
            if not before.keys() <= after.keys():
                partial_images.append(AFTER)
        if postgres:
            for name, image in ((BEFORE, before), (AFTER, after)):
                if image is not None and _drop_unavailable(image) and name not in partial_images:
                    partial_images.append(name)
        if partial_images or invalid:
            return self._event(
                op,
                meta,
                key=key,
                before=before,
                after=after,
                columns=columns,
                partial=tuple(p for p in (BEFORE, AFTER) if p in partial_images),
                invalid=tuple(invalid),
            )
        # the usual case, built at once (defaults left out: fewer keywords, a faster call)
        return ChangeEvent(
            op=op,
            format=self.id,
            database=meta.database,
            schema=meta.schema,
            table=meta.table,
            key=key,
            before=before,
            after=after,
            columns=columns,
            ts_ms=meta.ts_ms,
            position=meta.position,
            tx=meta.tx,
            row_id=meta.row_id,
            extra=meta.extra,
        )

    @staticmethod
    def _extra_columns(
        plan: _RowPlan,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        partial_images: list[str],
    ) -> Mapping[str, Column]:
        """Images that differ from the schema's columns: partial ones, and extra columns."""
        names = plan.names
        extras: list[str] = []
        for name, image in ((BEFORE, before), (AFTER, after)):
            if image is None or image.keys() == names:
                continue
            if not names <= image.keys() and name not in partial_images:
                partial_images.append(name)
            extras.extend(n for n in image if n not in names)
        if extras:
            return {**plan.columns, **dict.fromkeys(extras, Column(UNKNOWN))}
        return plan.columns

    def _image(
        self,
        raw: Any,
        plan: _RowPlan | None,
        path: str,
        field: str,
        invalid: list[str],
        twin_raw: Any = None,
        twin: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A typed image: at once when every value is usual (:func:`_fast_image`, where
        ``twin`` is the other image typed from ``twin_raw``), else value by value."""
        if type(raw) is not dict:
            raise self.error(f"{path}.{field}", f"expected object, got {type_name(raw)}")
        if plan is None:
            return dict(raw)
        try:
            return _fast_image(raw, plan, twin_raw, twin)
        except NotFast:
            return convert_values(raw, plan.parsers, invalid)

    def _event(self, op: Op, meta: EventMeta, **fields: Any) -> ChangeEvent:
        return ChangeEvent(
            op=op,
            format=self.id,
            database=meta.database,
            schema=meta.schema,
            table=meta.table,
            ts_ms=meta.ts_ms,
            position=meta.position,
            tx=meta.tx,
            row_id=meta.row_id,
            extra=meta.extra,
            **fields,
        )

    # ---- source metadata
    def _meta(
        self, payload: dict[str, Any], source: dict[str, Any], op_code: str | None, path: str
    ) -> EventMeta:
        get = source.get
        where = SOURCE_PATHS.get(path) or f"{path}.source"
        extra = _source_extras(get, op_code)
        if SRC_SCN in source:
            commit_scn = self._text(get(SRC_COMMIT_SCN), where, SRC_COMMIT_SCN)
            if commit_scn is not None:
                extra[X_COMMIT_SCN] = commit_scn
        tx = None
        transaction = payload.get(TRANSACTION)
        if transaction is not None:
            tx = self._transaction(transaction, extra, path)
        if tx is None:
            tx = get(SRC_TX_ID)
            if tx is not None and type(tx) is not str:
                tx = self._text(tx, where, SRC_TX_ID)
        # the usual types are checked inline; the readers handle the rest (and errors)
        database, schema, table = get(SRC_DB), get(SRC_SCHEMA), get(SRC_TABLE)
        database_field = SRC_DB
        if not database and SRC_KEYSPACE in source:
            database, database_field = get(SRC_KEYSPACE), SRC_KEYSPACE
        if table is None:
            table = get(SRC_COLLECTION)
        if database is not None and (type(database) is not str or not database):
            database = self._name(database, where, database_field)
        if schema is not None and (type(schema) is not str or not schema):
            schema = self._name(schema, where, SRC_SCHEMA)
        if table is not None and (type(table) is not str or not table):
            table = self._name(table, where, SRC_TABLE)
        ts_ms = get(SRC_TS_MS)
        if type(ts_ms) is not int:
            ts_ms = self._int(ts_ms, where, SRC_TS_MS)
            if ts_ms is None:
                ts_sec = self._int(get(SRC_TS_SEC), where, SRC_TS_SEC)
                ts_ms = ts_sec * 1000 if ts_sec is not None else None
        row_id = get(SRC_ROW_ID)
        if row_id is not None and type(row_id) is not str:
            row_id = self._text(row_id, where, SRC_ROW_ID)
        position = self._position(source, ts_ms, where)
        return EventMeta(database, schema, table, ts_ms, position, tx, row_id, extra)

    def _transaction(self, transaction: Any, extra: dict[str, Any], path: str) -> str | None:
        """The ``transaction`` block: its id, and its order counters into ``extra``."""
        where = f"{path}.transaction"
        if not isinstance(transaction, dict):
            raise self.error(where, f"expected object, got {type_name(transaction)}")
        for field, name in (
            (TX_TOTAL_ORDER, X_TOTAL_ORDER),
            (TX_DATA_COLLECTION_ORDER, X_DATA_COLLECTION_ORDER),
        ):
            number = self._int(transaction.get(field), where, field)
            if number is not None:
                extra[name] = number
        return self._text(transaction.get(TX_ID), where, TX_ID)

    # Field readers: a fast path for the expected JSON type; the error path is built
    # from ``where`` + ``field`` only when the value is wrong.
    def _text(self, value: Any, where: str, field: str) -> str | None:
        if value is None or type(value) is str:
            return value
        if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            return str(value)
        raise self.error(f"{where}.{field}", f"expected string, got {type_name(value)}")

    def _name(self, value: Any, where: str, field: str) -> str | None:
        if type(value) is str:
            return value or None  # Postgres messages (op m) send "" for no schema/table
        return self._text(value, where, field) or None

    def _int(self, value: Any, where: str, field: str) -> int | None:
        """An integer sent as a number or a digit string (None when null or empty)."""
        if type(value) is int or value is None:
            return value
        if value == "":
            return None
        try:
            return parse_int(value)
        except (ValueError, ArithmeticError):
            raise self.error(f"{where}.{field}", f"expected integer, got {value!r}") from None

    def _count(self, value: Any, where: str, field: str) -> int | None:
        number = self._int(value, where, field)
        if number is not None and number < 0:
            raise self.error(f"{where}.{field}", f"expected a non-negative integer, got {number}")
        return number

    def _position(self, source: dict[str, Any], ts_ms: int | None, where: str) -> Position | None:
        get = source.get
        if SRC_FILE in source and SRC_POS in source:  # MySQL, MariaDB
            binlog = get(SRC_FILE)
            if binlog is not None and type(binlog) is not str:
                raise self.error(f"{where}.file", f"expected string, got {type_name(binlog)}")
            pos, row = get(SRC_POS), get(SRC_ROW)
            if type(pos) is not int or pos < 0:
                pos = self._count(pos, where, SRC_POS)
            if type(row) is not int or row < 0:
                row = self._count(row, where, SRC_ROW) or 0
            number = binlog.rpartition(".")[2] if binlog else ""
            if pos is None or not (number.isdigit() and number.isascii()):
                return None
            return Position((int(number), pos, row))
        if SRC_LSN in source:  # PostgreSQL
            lsn = get(SRC_LSN)
            if type(lsn) is not int:
                lsn = self._int(lsn, where, SRC_LSN)
            return Position((lsn,)) if lsn is not None and lsn >= 0 else None
        if SRC_COMMIT_LSN in source or SRC_CHANGE_LSN in source:  # SQL Server, Db2
            commit = self._lsn(get(SRC_COMMIT_LSN), where, SRC_COMMIT_LSN)
            if commit is None:
                return None
            change = self._lsn(get(SRC_CHANGE_LSN), where, SRC_CHANGE_LSN) or (0, 0, 0)
            serial = self._count(get(SRC_EVENT_SERIAL_NO), where, SRC_EVENT_SERIAL_NO)
            return Position((*commit, *change, serial or 0))
        if SRC_SCN in source:  # Oracle
            scn = self._count(get(SRC_SCN), where, SRC_SCN)
            return Position((scn,)) if scn is not None else None
        if SRC_ORD in source:  # MongoDB
            order = get(SRC_ORD)  # -1: a snapshot read, at the start of its second
            order = 0 if order == ORD_SNAPSHOT else self._count(order, where, SRC_ORD)
            seconds = self._count(get(SRC_SEC), where, SRC_SEC)
            if seconds is None and ts_ms is not None and ts_ms >= 0:
                seconds = ts_ms // 1000
            if seconds is None or order is None:
                return None
            return Position((seconds, order))
        return _sequence_position(get(SRC_SEQUENCE))

    def _lsn(self, value: Any, where: str, field: str) -> tuple[int, int, int] | None:
        """``"00000027:00000758:0005"`` -> (0x27, 0x758, 5); None when absent or not 3 groups."""
        if value is None:
            return None
        if type(value) is not str:
            raise self.error(f"{where}.{field}", f"expected string, got {type_name(value)}")
        match = LSN_RE.fullmatch(value)
        if match is None:
            return None
        return int(match.group(1), 16), int(match.group(2), 16), int(match.group(3), 16)

    # ---- Kafka key
    def _parse_key(self, key: bytes | None) -> tuple[tuple[str, ...] | None, dict[str, Any] | None]:
        """Key column names and values from the Kafka key (schema part or not); None if unusable."""
        if key is None:
            return None, None
        try:
            envelope = ENVELOPE_DECODER.decode(key)
            payload = envelope.payload
            if payload is msgspec.UNSET:
                payload = EXACT_JSON.decode(key)
        except (msgspec.DecodeError, RecursionError, UnicodeError):
            return None, None
        if not isinstance(payload, dict) or not payload:
            return None, None
        return tuple(payload), payload

    # ---- events other than row changes
    def _decode_other(self, payload: dict[str, Any], plan: EnvelopePlan, path: str) -> ChangeEvent:
        if DDL in payload or TABLE_CHANGES in payload:
            return self._schema_change(payload, path)
        status = payload.get(TX_STATUS)
        if status in (STATUS_BEGIN, STATUS_END) and TX_ID in payload:
            return self._transaction_marker(payload, status, path)
        if plan.name == N_HEARTBEAT or payload.keys() == {TS_MS}:
            ts_ms = self._int(payload.get(TS_MS), path, "ts_ms")
            return ChangeEvent(op=Op.HEARTBEAT, format=self.id, ts_ms=ts_ms)
        reason = "missing required field 'op'"
        if plan.name and plan.name.endswith(KEY_SCHEMA_SUFFIXES):
            reason += f": this is a message key (schema {plan.name!r}), not a change-event value"
        raise self.error(path, reason)

    def _schema_change(self, payload: dict[str, Any], path: str) -> ChangeEvent:
        source = payload.get(SOURCE)
        if source is None:
            source = {}
        elif not isinstance(source, dict):
            raise self.error(f"{path}.source", f"expected object, got {type_name(source)}")
        meta = self._meta(payload, source, None, path)
        database = self._name(payload.get(DATABASE_NAME), path, "databaseName")
        schema = self._name(payload.get(DDL_SCHEMA_NAME), path, "schemaName")
        meta.database = database or meta.database
        meta.schema = schema or meta.schema
        ddl = self._text(payload.get(DDL), path, "ddl")
        changes = payload.get(TABLE_CHANGES)
        key: tuple[str, ...] | None = None
        columns: dict[str, Column] | None = None
        if changes is not None and not isinstance(changes, list):
            raise self.error(f"{path}.tableChanges", f"expected array, got {type_name(changes)}")
        if changes and len(changes) == 1:
            key, columns = self._table_change(changes[0], meta.extra, f"{path}.tableChanges[0]")
        return self._event(Op.DDL, meta, key=self.primary_key(key), columns=columns, ddl=ddl)

    def _table_change(
        self, change: Any, extra: dict[str, Any], path: str
    ) -> tuple[tuple[str, ...] | None, dict[str, Column] | None]:
        if not isinstance(change, dict):
            raise self.error(path, f"expected object, got {type_name(change)}")
        change_type = self._text(change.get(CHANGE_TYPE), path, "type")
        if change_type:
            extra[X_TABLE_CHANGE] = change_type
        table = change.get(CHANGE_TABLE)
        if table is None:
            return None, None
        if not isinstance(table, dict):
            raise self.error(f"{path}.table", f"expected object, got {type_name(table)}")
        pk = table.get(TABLE_PRIMARY_KEY)
        key = tuple(pk) if isinstance(pk, list) and all(isinstance(k, str) for k in pk) else None
        raw_columns = table.get(TABLE_COLUMNS)
        if not isinstance(raw_columns, list):
            return key or None, None
        columns: dict[str, Column] = {}
        for index, col in enumerate(raw_columns):
            cpath = f"{path}.table.columns[{index}]"
            if not isinstance(col, dict):
                raise self.error(cpath, f"expected object, got {type_name(col)}")
            name = col.get(COLUMN_NAME)
            if not isinstance(name, str):
                raise self.error(f"{cpath}.name", f"expected string, got {type_name(name)}")
            type_text = self._text(col.get(COLUMN_TYPE_NAME), cpath, "typeName")
            code = self._int(col.get(COLUMN_JDBC_TYPE), cpath, "jdbcType")
            length = self._int(col.get(COLUMN_LENGTH), cpath, "length")
            scale = self._int(col.get(COLUMN_SCALE), cpath, "scale")
            columns[name] = Column(_ddl_type(type_text, code, length, scale), type_text, code)
        return key or None, columns

    def _transaction_marker(self, payload: dict[str, Any], status: str, path: str) -> ChangeEvent:
        extra: dict[str, Any] = {}
        count = self._int(payload.get(TX_EVENT_COUNT), path, "event_count")
        if count is not None:
            extra[X_EVENT_COUNT] = count
        return ChangeEvent(
            op=Op.BEGIN if status == STATUS_BEGIN else Op.COMMIT,
            format=self.id,
            ts_ms=self._int(payload.get(TS_MS), path, "ts_ms"),
            tx=self._text(payload.get(TX_ID), path, "id"),
            extra=extra,
        )

    def _message_event(self, payload: dict[str, Any], meta: EventMeta, path: str) -> ChangeEvent:
        message = payload.get(MESSAGE)
        if message is not None:
            if not isinstance(message, dict):
                raise self.error(f"{path}.message", f"expected object, got {type_name(message)}")
            meta.extra[X_MESSAGE] = {
                MESSAGE_PREFIX: self._text(message.get(MESSAGE_PREFIX), path, "message.prefix"),
                MESSAGE_CONTENT: self._text(message.get(MESSAGE_CONTENT), path, "message.content"),
            }
        return self._event(Op.HEARTBEAT, meta)

    # ---- MongoDB


# --------------------------------------------------------------------------- helpers (decode)
def _starts_like_envelope(data: bytes) -> bool:
    """Is the first key ``schema`` or ``payload``? (then the schema is kept raw, as a cache key)"""
    quote = data.find(b'"', 0, 64)
    if quote < 0 or data[:quote].strip() != b"{":
        return False
    return data.startswith(b'"schema"', quote) or data.startswith(b'"payload"', quote)


def _sniff(message: Any) -> float:
    if not isinstance(message, dict):
        return 0.0
    if CE_SPECVERSION in message and CE_DATA in message:
        return _sniff_cloudevent(message)
    if ENVELOPE_PAYLOAD in message and OP not in message:
        if not message.keys() <= {ENVELOPE_SCHEMA, ENVELOPE_PAYLOAD}:
            return 0.0
        schema = message.get(ENVELOPE_SCHEMA)
        if schema is not None and not (
            isinstance(schema, dict)
            and (not schema or schema.get(SCHEMA_TYPE) == T_STRUCT or SCHEMA_FIELDS in schema)
        ):
            return 0.0
        payload = message[ENVELOPE_PAYLOAD]
        if payload is None:
            return 0.6 if schema is None else 0.55
        if not isinstance(payload, dict):
            return 0.0
        score = _sniff_payload(payload)
        if score:
            return min(1.0, score + 0.05)
        name = schema.get(SCHEMA_NAME) if isinstance(schema, dict) else None
        if isinstance(name, str) and name.endswith(KEY_SCHEMA_SUFFIXES):
            return 0.7  # a Debezium message key, sent where a value was expected
        if name == N_HEARTBEAT:
            return 0.9
        return 0.55 if isinstance(schema, dict) and schema.get(SCHEMA_TYPE) == T_STRUCT else 0.0
    return _sniff_payload(message)


def _sniff_payload(payload: dict[str, Any]) -> float:
    op = payload.get(OP)
    source = payload.get(SOURCE)
    if isinstance(op, str) and op in OPS:
        if _foreign_shape(payload, source if isinstance(source, dict) else {}) is not None:
            return 0.0  # a shape this format does not read: unknown, never wrong rows
        if isinstance(source, dict):
            return 0.9
        if BEFORE in payload or AFTER in payload:
            return 0.8
        return 0.3
    if (DDL in payload or TABLE_CHANGES in payload) and isinstance(source, dict):
        return 0.85
    if (
        payload.get(TX_STATUS) in (STATUS_BEGIN, STATUS_END)
        and TX_EVENT_COUNT in payload
        and (TX_DATA_COLLECTIONS in payload)
    ):
        return 0.75
    return 0.0


def _sniff_cloudevent(event: dict[str, Any]) -> float:
    """A Debezium CloudEvent with JSON data holding row images."""
    kind, source, data = event.get(CE_TYPE), event.get(CE_SOURCE), event[CE_DATA]
    debezium = (isinstance(kind, str) and kind.startswith(CE_DEBEZIUM_TYPE)) or (
        isinstance(source, str) and source.startswith(CE_DEBEZIUM_SOURCE)
    )
    if not debezium or CE_OP not in event or not isinstance(data, dict):
        return 0.0  # another producer's event, or Avro data (base64 text): unknown
    if ENVELOPE_PAYLOAD in data and data.keys() <= {ENVELOPE_SCHEMA, ENVELOPE_PAYLOAD}:
        data = data[ENVELOPE_PAYLOAD]
    if not isinstance(data, dict) or not (BEFORE in data or AFTER in data):
        return 0.0
    return 0.95 if _sniff_payload({**data, OP: event[CE_OP], SOURCE: {}}) else 0.0


def squashed_name(name: str) -> str:
    """An attribute name as the CloudEvents converter writes it: letters and digits only."""
    return "".join(c for c in name if c.isascii() and c.isalnum())


# source and transaction field names read here, by their CloudEvents attribute suffix
_CE_SOURCE_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        squashed_name(name): name
        for name in (
            SRC_VERSION, SRC_CONNECTOR, SRC_NAME, SRC_TS_MS, SRC_TS_SEC, SRC_SNAPSHOT, SRC_DB,
            SRC_SCHEMA, SRC_TABLE, SRC_COLLECTION, SRC_SEQUENCE, SRC_FILE, SRC_POS, SRC_ROW,
            SRC_GTID, SRC_SERVER_ID, SRC_THREAD, SRC_QUERY, SRC_LSN, SRC_TX_ID, SRC_XMIN,
            SRC_CHANGE_LSN, SRC_COMMIT_LSN, SRC_EVENT_SERIAL_NO, SRC_SCN, SRC_COMMIT_SCN,
            SRC_ROW_ID, SRC_ORD, SRC_SEC, SRC_RS, SRC_KEYSPACE, SRC_TS_US, SRC_TS_NS, SRC_SHARD,
            SRC_VGTID, SRC_WALL_TIME,
        )
    }
)  # fmt: skip
_CE_TRANSACTION_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {squashed_name(name): name for name in (TX_ID, TX_TOTAL_ORDER, TX_DATA_COLLECTION_ORDER)}
)


def _int_param(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _source_extras(get: Callable[[str], Any], op_code: str | None) -> dict[str, Any]:
    """The ``source`` block's connector, snapshot marker (when it says more than the op)
    and GTID, as the event's ``extra`` (one rule for the fast and the general decode)."""
    connector = get(SRC_CONNECTOR)
    extra: dict[str, Any] = {X_CONNECTOR: connector} if type(connector) is str else {}
    snapshot = get(SRC_SNAPSHOT)
    if snapshot is not None:
        if type(snapshot) is not str:
            snapshot = _snapshot_text(snapshot)
        if snapshot is not None and snapshot != (
            SNAPSHOT_TRUE if op_code == OP_READ else SNAPSHOT_FALSE
        ):
            extra[X_SNAPSHOT] = snapshot
    gtid = get(SRC_GTID)
    if gtid and type(gtid) is str:
        extra[X_GTID] = gtid
    return extra


def _snapshot_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return SNAPSHOT_TRUE if value else SNAPSHOT_FALSE
    return value if isinstance(value, str) else None


def _sequence_position(value: Any) -> Position | None:
    """``source.sequence``: a JSON array (as text) of counters: ``'["24023119","24023128"]'``."""
    if not isinstance(value, str):
        return None
    if value[:2] == '["' and value[-2:] == '"]':  # the usual one counter: '["24023128"]'
        inner = value[2:-2]
        if inner.isdigit() and inner.isascii():
            return Position((int(inner),))
    try:
        items = EXACT_JSON.decode(value)
    except (msgspec.DecodeError, RecursionError, UnicodeError):
        return None
    if not isinstance(items, list) or not items:
        return None
    parts: list[int] = []
    for item in items:
        if isinstance(item, str) and item.isdigit():
            parts.append(int(item))
        elif type(item) is int and item >= 0:
            parts.append(item)
        else:
            return None
    return Position(tuple(parts))


def _may_be_unavailable(image: dict[str, Any] | None) -> bool:
    """False when :func:`_drop_unavailable` surely finds nothing in ``image``."""
    if image is None:
        return False
    try:
        return not UNAVAILABLE_VALUES.isdisjoint(image.values())
    except TypeError:  # an unhashable value (a JSON object or array)
        return True


def _drop_unavailable(image: dict[str, Any]) -> bool:
    """Remove Postgres' placeholders for unchanged TOAST values; True if any was there."""
    gone = [n for n, v in image.items() if type(v) in (str, bytes) and v in UNAVAILABLE_VALUES]
    for name in gone:
        del image[name]
    return bool(gone)


def _foreign_shape(payload: dict[str, Any], source: dict[str, Any]) -> tuple[str, str] | None:
    """(path in the payload, reason) when a Debezium-like payload is not the JSON converter's output of a
    connector read here: Avro printed as Avro JSON (unions as ``{"<type>": value}``) or
    the Cassandra connector (cells as ``{value, deletion_ts, set}``, null = unchanged)."""
    cassandra = (
        "Debezium's Cassandra connector (cells as {value, deletion_ts, set}, null meaning "
        "unchanged) is not read"
    )
    if source.get(SRC_CONNECTOR) == CONNECTOR_CASSANDRA:
        return ".source.connector", cassandra
    avro = "Debezium Avro printed as Avro JSON (a union written as {%r: ...}), not JSON"
    for field in (BEFORE, AFTER):
        image = payload.get(field)
        if type(image) is not dict or not image:
            continue
        name, first = next(iter(image.items()))
        if len(image) == 1 and name.endswith(AVRO_VALUE_SUFFIX) and type(first) is dict:
            return f".{field}", avro % name
        if type(first) is dict and first.keys() == CASSANDRA_CELL:
            return f".{field}.{name}", cassandra
    for where, block in (("", payload), (".source", source)):
        for name in (TS_MS, SRC_SNAPSHOT, SRC_TABLE, SRC_SEQUENCE, SRC_TX_ID, SRC_LSN):
            value = block.get(name)
            if type(value) is dict and len(value) == 1 and next(iter(value)) in AVRO_TYPE_NAMES:
                return f"{where}.{name}", avro % next(iter(value))
    return None


def _ddl_type(
    type_text: str | None, code: int | None, length: int | None, scale: int | None
) -> LogicalType:
    """A tableChanges column's type: its SQL type name (with length/scale), else its JDBC code."""
    if type_text:
        if length is not None:
            sized = f"{type_text}({length}{f',{scale}' if scale is not None else ''})"
            ltype = sql_type(sized)
            if ltype is not UNKNOWN:
                return ltype
        ltype = sql_type(type_text)
        if ltype is not UNKNOWN:
            return ltype
    return jdbc_type(code)
