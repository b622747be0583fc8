"""Decoding Debezium JSON: the one payload flow (row changes by a cached schema plan),
schema changes, transactions, messages and CloudEvents (MongoDB: :mod:`.mongo`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from anycdc.errors import DecodeError, type_name
from anycdc.event import ChangeEvent, Column, Op
from anycdc.formats.base import (
    Cache,
    NotFast,
    convert_values,
)
from anycdc.formats.debezium.detect import foreign_shape, sniff_debezium, starts_like_envelope
from anycdc.formats.debezium.mongo import is_mongo, mongo_event
from anycdc.formats.debezium.plans import NO_SCHEMA, EnvelopePlan, RowPlan, SchemaPlans, fast_image
from anycdc.formats.debezium.source import CE_SOURCE_FIELDS, CE_TRANSACTION_FIELDS, SourceReader
from anycdc.formats.debezium.wire import (
    AFTER,
    BEFORE,
    CE_DATA,
    CE_DATA_CONTENT_TYPE,
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
    ENVELOPE_PAYLOAD,
    ENVELOPE_SCHEMA,
    EXACT_JSON,
    HEARTBEAT,
    KEY_SCHEMA_SUFFIXES,
    MESSAGE,
    MESSAGE_CONTENT,
    MESSAGE_PREFIX,
    MONGO_PATCH,
    MONGO_UPDATE_DESCRIPTION,
    N_HEARTBEAT,
    OP,
    OP_CODES,
    OPS,
    ROW_OP_CODES,
    SOURCE,
    SRC_COLLECTION,
    SRC_CONNECTOR,
    SRC_LSN,
    SRC_TABLE,
    STATUS_BEGIN,
    STATUS_END,
    TABLE_CHANGES,
    TABLE_COLUMNS,
    TABLE_PRIMARY_KEY,
    TRANSACTION,
    TRUNCATE,
    TS_MS,
    TX_DATA_COLLECTION,
    TX_DATA_COLLECTIONS,
    TX_EVENT_COUNT,
    TX_ID,
    TX_STATUS,
    UNAVAILABLE_VALUES,
    UPDATE,
    X_CLOUDEVENTS,
    X_CONNECTOR,
    X_DATA_COLLECTIONS,
    X_EVENT_COUNT,
    X_MESSAGE,
    X_TABLE_CHANGE,
)
from anycdc.formats.events import Header, build_event
from anycdc.formats.heads import SCHEMA_HEAD, Heads
from anycdc.typemap import jdbc_type, sql_type
from anycdc.values import (
    UNKNOWN,
    LogicalType,
)


class DebeziumDecoder(SchemaPlans, SourceReader):
    """The decoding half of :class:`~anycdc.formats.debezium.format.DebeziumJson`."""

    _PLAN_CACHE_SIZE: ClassVar[int] = 512
    _PREFIX_CACHE_SIZE: ClassVar[int] = 256  # a head per table and schema version

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self._plans: Cache[bytes, EnvelopePlan] = Cache(self._PLAN_CACHE_SIZE)
        # the bytes of a message up to its payload value -> the plan of its schema
        self._prefixes: Heads[EnvelopePlan] = Heads(self._PREFIX_CACHE_SIZE)

    # ------------------------------------------------------------------ detection
    # an envelope's payload, a CloudEvent (its specversion: ``data`` alone is also a
    # Canal message's rows, and the sniffer claims no CloudEvent without a specversion),
    # or a payload alone: a row change's op, a schema change's source, a transaction
    # marker's status
    sniff_keys = frozenset({ENVELOPE_PAYLOAD, CE_SPECVERSION, OP, SOURCE, TX_STATUS})

    @classmethod
    def sniff(cls, message: Any) -> float:
        """Envelope with a Connect struct schema, or a payload with a Debezium ``op``."""
        try:
            return sniff_debezium(message)
        except Exception:  # a sniffer never raises
            return 0.0

    # ------------------------------------------------------------------ decoding
    # :meth:`Format.decode` dispatches: the plan of a known envelope below (the fast path),
    # else :meth:`decode_slow` (the parsed message: :meth:`decode_object`); both end in the
    # one payload flow, :meth:`_decode_payload`
    fast_path = True

    def decode_fast(self, value: bytes, key: bytes | None = None) -> list[ChangeEvent]:
        """The usual message by its :class:`EnvelopePlan`: an envelope that starts like a
        recent one (its plan found by the prefix, only the payload parsed), a new envelope
        (its schema planned, its prefix kept), or a payload alone; ``key`` (the Kafka key)
        names the key columns. A message the envelope reader cannot read is a refusal
        (:class:`NotFast`): :meth:`decode_slow` parses it and reports what is wrong."""
        if value.startswith(SCHEMA_HEAD) or value.startswith(b'{"payload"'):
            envelope_like = True
        elif value.startswith(b'{"'):
            envelope_like = False  # the first key is another one
        else:
            envelope_like = starts_like_envelope(value)
        if not envelope_like:
            # the payload alone, usually
            try:
                obj = EXACT_JSON.decode(value)
            except (msgspec.DecodeError, RecursionError, UnicodeError):
                raise NotFast from None
            if type(obj) is not dict or OP not in obj:
                return self.decode_object(obj, key)
            return self._decode_payload(obj, NO_SCHEMA, key, "$")
        known = self._known_envelope(value)
        if known is not None:
            return self._decode_payload(known[1], known[0], key, "$.payload")
        try:
            envelope = ENVELOPE_DECODER.decode(value)
        except (msgspec.DecodeError, RecursionError, UnicodeError):
            raise NotFast from None
        if envelope.payload is msgspec.UNSET:
            raise NotFast
        raw = bytes(envelope.schema)
        plan = self._plan_from_raw(raw)
        self._prefixes.remember(value, raw, plan)
        return self._decode_payload(envelope.payload, plan, key, "$.payload")

    def _known_envelope(self, data: bytes) -> tuple[EnvelopePlan, Any] | None:
        """Fast path: the message starts with the exact bytes of a recently seen
        ``{"schema":<S>,"payload":`` and ends with ``}``, so only the payload is parsed
        (a byte comparison instead of parsing a schema of kilobytes every message).
        Anything else (another schema, trailing data, a duplicate key) takes the full path
        (:class:`~anycdc.formats.heads.Heads`)."""
        found = self._prefixes.find(data)
        if found is None:
            return None
        try:
            return found[0], EXACT_JSON.decode(found[1])
        except (msgspec.DecodeError, RecursionError, UnicodeError):
            return None

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
            plan = self._plan_from_schema(schema) if schema is not None else NO_SCHEMA
            return self._decode_payload(obj[ENVELOPE_PAYLOAD], plan, key, "$.payload")
        return self._decode_payload(obj, NO_SCHEMA, key, "$")

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
        plan = NO_SCHEMA
        if ENVELOPE_PAYLOAD in data and data.keys() <= {ENVELOPE_SCHEMA, ENVELOPE_PAYLOAD}:
            schema = data.get(ENVELOPE_SCHEMA)
            plan = self._plan_from_schema(schema) if schema is not None else NO_SCHEMA
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
                transaction[CE_TRANSACTION_FIELDS.get(field, field)] = value
            else:
                field = name[len(CE_PREFIX) :]
                source[CE_SOURCE_FIELDS.get(field, field)] = value
        payload[SOURCE] = source
        if transaction:
            payload[TRANSACTION] = transaction
        envelope = {name: event.get(name) for name in (CE_ID, CE_SOURCE, CE_TYPE)}
        return [
            e.with_changes(extra={**e.extra, X_CLOUDEVENTS: envelope})
            for e in self._decode_payload(payload, plan, key, path)
        ]

    # ---- payloads
    def _decode_payload(
        self, payload: Any, plan: EnvelopePlan, key: bytes | None, path: str, careful: bool = False
    ) -> list[ChangeEvent]:
        """The events of a payload, however it came (JSON envelope, payload alone,
        CloudEvent, Avro record): the one flow of every rule past the envelope.

        The fast path (:meth:`decode_fast`, which :meth:`Format.decode` dispatches to) is no
        second decoder: it is the envelope's :class:`EnvelopePlan` (cached per schema,
        found by the message's prefix), the typed reading of the
        images by that plan (:func:`fast_image`, else :meth:`_careful_image`), and this: a
        usual row change of a relational connector skips the detectors of foreign and
        MongoDB shapes. Should a rule below then refuse the message, it is decoded again
        ``careful``-ly, detectors first, so that the error (or the odd shape) is reported
        as the detectors see it."""
        if payload is None:
            return []  # the tutorial's rendering of a tombstone: {"schema":null,"payload":null}
        if type(payload) is not dict and not isinstance(payload, dict):
            raise self.error(path, f"expected object, got {type_name(payload)}")
        op_code = payload.get(OP)
        if op_code is None:
            return [self._decode_other(payload, plan, path)]
        rule = ROW_OP_CODES.get(op_code) if type(op_code) is str else None
        source = payload.get(SOURCE)
        after_raw = payload.get(AFTER)
        before_raw = payload.get(BEFORE)
        # what foreign_shape and is_mongo look for, ruled out in a few checks
        if (
            careful
            or rule is None
            or type(source) is not dict
            or (connector := source.get(SRC_CONNECTOR)) == CONNECTOR_MONGODB
            or connector == CONNECTOR_CASSANDRA
            or isinstance(after_raw, str)
            or isinstance(before_raw, str)
            or MONGO_PATCH in payload
            or MONGO_UPDATE_DESCRIPTION in payload
            or (type(after_raw) is dict and len(after_raw) == 1)  # maybe an Avro union
            or (type(before_raw) is dict and len(before_raw) == 1)
        ):
            if not careful:
                self.fast_fallbacks += 1
                careful = True
            rule = OPS.get(op_code) if isinstance(op_code, str) else None
            if rule is None:
                raise self.error(f"{path}.op", f"unknown op {op_code!r}")
            if source is None:
                source = {}
            elif not isinstance(source, dict):
                raise self.error(f"{path}.source", f"expected object, got {type_name(source)}")
            foreign = foreign_shape(payload, source)
            if foreign is not None:
                raise self.error(path + foreign[0], foreign[1])
            connector = source.get(SRC_CONNECTOR)
        op = rule.op
        try:
            meta = self._meta(payload, source, op_code, path)
            if op is HEARTBEAT:
                return [self._message_event(payload, meta, path)]
            key_names, key_values = self._parse_key(key) if key is not None else (None, None)
            if careful and is_mongo(payload, source):
                return [mongo_event(self, op, payload, meta, key_values, path)]
            event_key = self.primary_key(key_names) if key_names else self.unnamed_key
            if op is TRUNCATE:
                return [build_event(self.id, op, meta, event_key)]
            postgres = connector == CONNECTOR_POSTGRESQL or SRC_LSN in source
            return [
                self._row_event(
                    op, before_raw, after_raw, plan.row, meta, event_key, key_values, path, postgres
                )
            ]
        except DecodeError:
            if careful:
                raise
        self.fast_fallbacks += 1
        return self._decode_payload(payload, plan, key, path, careful=True)

    def _row_event(
        self,
        op: Op,
        before_raw: Any,
        after_raw: Any,
        plan: RowPlan | None,
        meta: Header,
        key: tuple[str, ...] | None,
        key_values: dict[str, Any] | None,
        path: str,
        postgres: bool,
    ) -> ChangeEvent:
        invalid: list[str] = []
        partial_images: list[str] = []
        columns = plan.columns if plan is not None else None
        before = after = None
        if op is not DELETE:
            if after_raw is None:
                raise self.error(f"{path}.after", f"missing after image for op '{OP_CODES[op]}'")
            try:  # the quick reading, else the careful one (see :meth:`_careful_image`)
                after = fast_image(after_raw, plan)
            except NotFast:
                after = self._careful_image(after_raw, plan, path, AFTER, invalid)
        if op is UPDATE or op is DELETE:
            if before_raw is not None:
                # the after image typed whole: unchanged columns reuse its values
                twin = None if invalid or type(after_raw) is not dict else after
                try:
                    before = fast_image(before_raw, plan, after_raw, twin)
                except NotFast:
                    before = self._careful_image(
                        before_raw, plan, path, BEFORE, invalid, after_raw, twin
                    )
            elif op is DELETE:
                if not key_values:
                    raise self.error(
                        f"{path}.before",
                        "delete without a before image and no Kafka key (Postgres: set "
                        "REPLICA IDENTITY FULL, or pass the message key)",
                    )
                try:
                    before = fast_image(key_values, plan)
                except NotFast:
                    before = self._careful_image(key_values, plan, path, BEFORE, invalid)
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
            partial = tuple(p for p in (BEFORE, AFTER) if p in partial_images)
            return build_event(
                self.id, op, meta, key, before, after, columns, partial, tuple(invalid)
            )
        return build_event(self.id, op, meta, key, before, after, columns)

    @staticmethod
    def _extra_columns(
        plan: RowPlan,
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

    def _careful_image(
        self,
        raw: Any,
        plan: RowPlan | None,
        path: str,
        field: str,
        invalid: list[str],
        twin_raw: Any = None,
        twin: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """An image the quick reading (:func:`fast_image`) refused, typed value by value with
        the same plan's parsers (:func:`convert_values`), which record the invalid ones.

        Each image is read quickly first, where :meth:`_row_event` reads it (a call here per
        image would cost every message): the quick loop checks the columns group by group
        (strings, integers in range, booleans: no call per value) and converts only the
        rest, reusing an update's unchanged values. Each refusal of an object with a plan
        is counted in ``fast_fallbacks``."""
        if type(raw) is not dict:
            raise self.error(f"{path}.{field}", f"expected object, got {type_name(raw)}")
        if plan is None:
            return dict(raw)
        self.fast_fallbacks += 1
        return convert_values(raw, plan.parsers, invalid)

    # ---- Kafka key
    def _parse_key(self, key: bytes | None) -> tuple[tuple[str, ...] | None, dict[str, Any] | None]:
        """Key column names and values from the Kafka key (schema part or not); None if unusable."""
        if key is None:
            return None, None
        try:
            envelope = ENVELOPE_DECODER.decode(key)
            payload = envelope.payload
            if payload is msgspec.UNSET or not len(envelope.schema):
                # no schema part: the key is its columns, one of them may be named payload
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
            return build_event(self.id, HEARTBEAT, Header(ts_ms=ts_ms))
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
        meta.ddl = ddl
        return build_event(self.id, Op.DDL, meta, self.primary_key(key), columns=columns)

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
        collections = self._data_collections(payload.get(TX_DATA_COLLECTIONS), path)
        if collections:
            extra[X_DATA_COLLECTIONS] = collections
        head = Header(
            ts_ms=self._int(payload.get(TS_MS), path, "ts_ms"),
            tx=self._text(payload.get(TX_ID), path, "id"),
            extra=extra,
        )
        return build_event(self.id, Op.BEGIN if status == STATUS_BEGIN else Op.COMMIT, head)

    def _data_collections(self, value: Any, path: str) -> dict[str, int] | None:
        """An END marker's events per data collection (``[{data_collection, event_count}]``
        -> ``{name: count}``): what a read's cut waits for before it shows the transaction."""
        if value is None:
            return None
        where = f"{path}.{TX_DATA_COLLECTIONS}"
        if not isinstance(value, list):
            raise self.error(where, f"expected array, got {type_name(value)}")
        counts: dict[str, int] = {}
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.error(f"{where}[{i}]", f"expected object, got {type_name(item)}")
            name = self._text(item.get(TX_DATA_COLLECTION), f"{where}[{i}]", TX_DATA_COLLECTION)
            count = self._count(item.get(TX_EVENT_COUNT), f"{where}[{i}]", TX_EVENT_COUNT)
            if name is None or count is None:
                missing = TX_DATA_COLLECTION if name is None else TX_EVENT_COUNT
                raise self.error(f"{where}[{i}].{missing}", "required field is null or missing")
            counts[name] = counts.get(name, 0) + count
        return counts

    def _message_event(self, payload: dict[str, Any], meta: Header, path: str) -> ChangeEvent:
        message = payload.get(MESSAGE)
        if message is not None:
            if not isinstance(message, dict):
                raise self.error(f"{path}.message", f"expected object, got {type_name(message)}")
            meta.extra[X_MESSAGE] = {
                MESSAGE_PREFIX: self._text(message.get(MESSAGE_PREFIX), path, "message.prefix"),
                MESSAGE_CONTENT: self._text(message.get(MESSAGE_CONTENT), path, "message.content"),
            }
        return build_event(self.id, HEARTBEAT, meta)


def _drop_unavailable(image: dict[str, Any]) -> bool:
    """Remove Postgres' placeholders for unchanged TOAST values; True if any was there."""
    try:
        if UNAVAILABLE_VALUES.isdisjoint(image.values()):
            return False  # the usual image: one set operation, no loop
    except TypeError:  # an unhashable value (a JSON object or array): looked at one by one
        pass
    gone = [n for n, v in image.items() if type(v) in (str, bytes) and v in UNAVAILABLE_VALUES]
    for name in gone:
        del image[name]
    return bool(gone)


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
