"""Encoding events as Debezium JSON: the envelope, its Connect schema and the source
fields of each connector family."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, Final

from anycdc.errors import EncodeError
from anycdc.event import ChangeEvent, Op, dumps
from anycdc.formats.base import Format
from anycdc.formats.codecs.mongo import ejson_fields
from anycdc.formats.debezium.connect import (
    STRING_ITEMS,
    FieldSpec,
    as_schema_field,
    field_spec,
    render_image,
    schema_array,
    schema_field,
    schema_struct,
    unknown_spec,
)
from anycdc.formats.debezium.source import squashed_name
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
    CE_SPECVERSION,
    CE_TIME,
    CE_TX_PREFIX,
    CE_TYPE,
    CE_VERSION,
    CHANGE_ID,
    CHANGE_TABLE,
    CHANGE_TYPE,
    COLUMN_JDBC_TYPE,
    COLUMN_LENGTH,
    COLUMN_NAME,
    COLUMN_OPTIONAL,
    COLUMN_POSITION,
    COLUMN_SCALE,
    COLUMN_TYPE_NAME,
    CONNECTOR_MARIADB,
    CONNECTOR_MONGODB,
    CONNECTOR_MYSQL,
    CONNECTOR_ORACLE,
    CONNECTOR_POSTGRESQL,
    CONNECTOR_SQLSERVER,
    DATABASE_NAME,
    DDL,
    DDL_SCHEMA_NAME,
    ENCODER_VERSION,
    ENVELOPE_PAYLOAD,
    ENVELOPE_SCHEMA,
    MESSAGE,
    MESSAGE_CONTENT,
    MESSAGE_PREFIX,
    MONGO_ID,
    MONGO_KEY_ID,
    MONGO_REMOVED_FIELDS,
    MONGO_TRUNCATED_ARRAYS,
    MONGO_TRUNCATED_FIELD,
    MONGO_TRUNCATED_SIZE,
    MONGO_UPDATE_DESCRIPTION,
    MONGO_UPDATED_FIELDS,
    MYSQL_FAMILY,
    N_COLUMN,
    N_ENUM,
    N_HEARTBEAT,
    N_JSON,
    N_TABLE,
    N_TABLE_CHANGE,
    N_TX_METADATA,
    OP,
    OP_CODES,
    OP_MESSAGE,
    PARAM_ALLOWED,
    SCHEMA_FIELD,
    SCHEMA_FIELDS,
    SCHEMA_PARAMETERS,
    SNAPSHOT_ALLOWED,
    SNAPSHOT_FALSE,
    SNAPSHOT_TRUE,
    SOURCE,
    SRC_CHANGE_LSN,
    SRC_COLLECTION,
    SRC_COMMIT_LSN,
    SRC_COMMIT_SCN,
    SRC_CONNECTOR,
    SRC_DB,
    SRC_EVENT_SERIAL_NO,
    SRC_FILE,
    SRC_GTID,
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
    SRC_SNAPSHOT,
    SRC_TABLE,
    SRC_THREAD,
    SRC_TS_MS,
    SRC_TX_ID,
    SRC_VERSION,
    SRC_XMIN,
    STATUS_BEGIN,
    STATUS_END,
    T_BOOLEAN,
    T_BYTES,
    T_INT32,
    T_INT64,
    T_STRING,
    TABLE_CHANGES,
    TABLE_COLUMNS,
    TABLE_PRIMARY_KEY,
    TRANSACTION,
    TS_MS,
    TX_DATA_COLLECTION,
    TX_DATA_COLLECTION_ORDER,
    TX_DATA_COLLECTIONS,
    TX_EVENT_COUNT,
    TX_ID,
    TX_STATUS,
    TX_TOTAL_ORDER,
    X_CLOUDEVENTS,
    X_COMMIT_SCN,
    X_CONNECTOR,
    X_DATA_COLLECTION_ORDER,
    X_DATA_COLLECTIONS,
    X_EVENT_COUNT,
    X_GTID,
    X_MESSAGE,
    X_SNAPSHOT,
    X_TABLE_CHANGE,
    X_TOTAL_ORDER,
)
from anycdc.formats.options import flag, text
from anycdc.values import EPOCH

SCHEMA_OPTION: Final = flag(
    "schema",
    "encoder: include the schema part, as the JSON converter with schemas.enable=true "
    "(true/false); events without column types are always written as the payload alone",
    default=True,
)
DEFAULT_SERVER_NAME: Final = "anycdc"
SERVER_NAME_OPTION: Final = text(
    "server_name",
    "encoder: logical server name written in source.name and the schema names",
    DEFAULT_SERVER_NAME,
)


class DebeziumEncoder(Format):
    """The encoding half of :class:`~anycdc.formats.debezium.format.DebeziumJson`."""

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        # debezium-avro declares no ``schema``: its messages never carry the JSON schema part
        declared = SCHEMA_OPTION.name in {spec.name for spec in self.option_specs()}
        self._with_schema = declared and self.option(SCHEMA_OPTION)
        self._server = self.option(SERVER_NAME_OPTION)

    # ------------------------------------------------------------------ encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One message: the envelope (``schema`` option) or the payload alone (a row change
        that came as a CloudEvent goes back as one)."""
        schema, payload = self.schema_and_payload(event)
        if event.op in OP_CODES and X_CLOUDEVENTS in event.extra:
            return [dumps(self._encode_cloudevent(event, schema, payload)).encode("utf-8")]
        body = (
            {ENVELOPE_SCHEMA: schema, ENVELOPE_PAYLOAD: payload}
            if self._with_schema and schema is not None
            else payload
        )
        return [dumps(body).encode("utf-8")]

    def schema_and_payload(
        self, event: ChangeEvent
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The Connect schema (None for a row change without column types) and the payload
        the JSON converter writes for ``event`` (the Avro encoder starts from both)."""
        schema: dict[str, Any] | None
        payload: dict[str, Any]
        if event.op in OP_CODES:
            if event.extra.get(X_CONNECTOR) == CONNECTOR_MONGODB:
                schema, payload = self._encode_mongo(event)
            else:
                schema, payload = self._encode_change(event)
        elif event.op is Op.DDL:
            schema, payload = self._encode_schema_change(event)
        elif event.op in (Op.BEGIN, Op.COMMIT):
            schema, payload = _encode_transaction_marker(event)
        elif X_MESSAGE in event.extra:
            schema, payload = self._encode_message(event)
        else:
            schema = schema_struct([schema_field(T_INT64, TS_MS, optional=False)], N_HEARTBEAT)
            payload = {TS_MS: event.ts_ms}
        return schema, payload

    def encode_key(self, event: ChangeEvent) -> bytes | None:
        """Debezium's Kafka key: a struct of the key columns (with its schema when enabled)."""
        key = self.key_schema_and_payload(event)
        if key is None:
            return None
        schema, payload = key
        if not self._with_schema or (
            event.columns is None and event.extra.get(X_CONNECTOR) != CONNECTOR_MONGODB
        ):
            return dumps(payload).encode("utf-8")
        return dumps({ENVELOPE_SCHEMA: schema, ENVELOPE_PAYLOAD: payload}).encode("utf-8")

    def key_schema_and_payload(
        self, event: ChangeEvent
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The Connect schema and payload of the Kafka key (None: the event has no key)."""
        if event.extra.get(X_CONNECTOR) == CONNECTOR_MONGODB:
            row = event.image if event.image is not None else event.before
            if row is None or MONGO_ID not in row:
                return None
            id_field = ejson_fields({MONGO_ID: row[MONGO_ID]}, event.columns)[MONGO_ID]
            payload: dict[str, Any] = {MONGO_KEY_ID: dumps(id_field)}
            fields = [schema_field(T_STRING, MONGO_KEY_ID, optional=False)]
        else:
            values = event.key_values()
            if values is None or event.key is None:
                return None
            specs = [self._spec(event, name) for name in event.key]
            payload = {
                name: spec.render(value) if value is not None else None
                for name, spec, value in zip(event.key, specs, values, strict=True)
            }
            fields = [
                spec.schema(name, optional=False)
                for name, spec in zip(event.key, specs, strict=True)
            ]
        return schema_struct(fields, f"{self._prefix(event)}.Key"), payload

    def _spec(self, event: ChangeEvent, name: str) -> FieldSpec:
        column = (event.columns or {}).get(name)
        if column is None:
            sample = next(
                (
                    img[name]
                    for img in (event.after, event.before)
                    if img and img.get(name) is not None
                ),
                None,
            )
            return unknown_spec(None, sample)
        return field_spec(column, event, name)

    def _prefix(self, event: ChangeEvent) -> str:
        return ".".join(p for p in (self._server, event.database, event.schema, event.table) if p)

    def _encode_change(self, event: ChangeEvent) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        names = list(event.columns or ())
        for image in (event.before, event.after):
            names.extend(n for n in (image or ()) if n not in names)
        specs = {name: self._spec(event, name) for name in names}
        source, source_fields, connector = self._encode_source(event)
        payload: dict[str, Any] = {
            BEFORE: render_image(event.before, specs),
            AFTER: render_image(event.after, specs),
            SOURCE: source,
            OP: OP_CODES[event.op],
            TS_MS: event.ts_ms,
        }
        tx_field = self._encode_transaction(event, payload, source, connector)
        if event.columns is None:
            return None, payload
        key = set(event.key or ())
        value_fields = [specs[n].schema(n, optional=n not in key) for n in names]
        prefix = self._prefix(event)
        value_struct = schema_struct(value_fields, f"{prefix}.Value")
        fields = [
            as_schema_field(value_struct, BEFORE),
            as_schema_field(value_struct, AFTER),
            _source_schema(source_fields, connector),
            schema_field(T_STRING, OP, optional=False),
            schema_field(T_INT64, TS_MS),
        ]
        if tx_field:
            fields.append(_TRANSACTION_SCHEMA)
        return schema_struct(fields, f"{prefix}.Envelope"), payload

    def _encode_transaction(
        self,
        event: ChangeEvent,
        payload: dict[str, Any],
        source: dict[str, Any],
        connector: str | None,
    ) -> bool:
        """Write ``tx``: Postgres/Oracle ``source.txId``, else a ``transaction`` block."""
        if event.tx is None:
            return False
        ordered = X_TOTAL_ORDER in event.extra or X_DATA_COLLECTION_ORDER in event.extra
        if not ordered and connector == CONNECTOR_POSTGRESQL and event.tx.isdigit():
            source[SRC_TX_ID] = int(event.tx)
            return False
        if not ordered and connector == CONNECTOR_ORACLE:
            source[SRC_TX_ID] = event.tx
            return False
        payload[TRANSACTION] = {
            TX_ID: event.tx,
            TX_TOTAL_ORDER: event.extra.get(X_TOTAL_ORDER),
            TX_DATA_COLLECTION_ORDER: event.extra.get(X_DATA_COLLECTION_ORDER),
        }
        return True

    def _encode_source(
        self, event: ChangeEvent
    ) -> tuple[dict[str, Any], list[tuple[str, str]], str | None]:
        """The ``source`` block laid out for the event's connector, and its field types."""
        extra = event.extra
        connector = extra.get(X_CONNECTOR)
        parts = event.position.parts if event.position is not None else None
        family = _family(connector, extra)
        if parts is not None and len(parts) != _POSITION_ARITY.get(family, -1):
            family = None  # this position does not fit the connector's fields: use `sequence`
        source: dict[str, Any] = {
            SRC_VERSION: ENCODER_VERSION,
            SRC_CONNECTOR: connector,
            SRC_NAME: self._server,
        }
        if connector is None:
            del source[SRC_CONNECTOR]
        source[SRC_TS_MS] = event.ts_ms
        snapshot = extra.get(X_SNAPSHOT) or (
            SNAPSHOT_TRUE if event.op is Op.SNAPSHOT else SNAPSHOT_FALSE
        )
        source[SRC_SNAPSHOT] = snapshot
        source[SRC_DB] = event.database
        if family in MYSQL_FAMILY:
            source[SRC_TABLE] = event.table
            source[SRC_SERVER_ID] = 0
            source[SRC_GTID] = extra.get(X_GTID)
            source[SRC_FILE] = f"mysql-bin.{parts[0]:06d}" if parts else None
            source[SRC_POS] = parts[1] if parts else None
            source[SRC_ROW] = parts[2] if parts else None
            source[SRC_THREAD] = None
            source[SRC_QUERY] = None
        elif family == CONNECTOR_MONGODB:
            source[SRC_RS] = None
            source[SRC_COLLECTION] = event.table
            if parts and (event.ts_ms is None or event.ts_ms // 1000 != parts[0]):
                source[SRC_SEC] = parts[0]  # the oplog seconds, when ts_ms does not carry them
            source[SRC_ORD] = parts[1] if parts else None
        else:
            source[SRC_SCHEMA] = event.schema
            source[SRC_TABLE] = event.table
            if family == CONNECTOR_POSTGRESQL:
                source[SRC_TX_ID] = None
                source[SRC_LSN] = parts[0] if parts else None
                source[SRC_XMIN] = None
            elif family == CONNECTOR_SQLSERVER:
                source[SRC_CHANGE_LSN] = (
                    _format_lsn(parts[3:6]) if parts and any(parts[3:6]) else None
                )
                source[SRC_COMMIT_LSN] = _format_lsn(parts[0:3]) if parts else None
                source[SRC_EVENT_SERIAL_NO] = parts[6] if parts and parts[6] else None
            elif family == CONNECTOR_ORACLE:
                source[SRC_TX_ID] = None
                source[SRC_SCN] = str(parts[0]) if parts else None
                source[SRC_COMMIT_SCN] = extra.get(X_COMMIT_SCN)
                source[SRC_ROW_ID] = event.row_id
            else:
                source[SRC_SEQUENCE] = dumps([str(p) for p in parts]) if parts else None
        if event.row_id is not None and SRC_ROW_ID not in source:
            source[SRC_ROW_ID] = event.row_id
        types = _ORACLE_SOURCE_TYPES if family == CONNECTOR_ORACLE else _SOURCE_TYPES
        fields = [(name, types.get(name, T_STRING)) for name in source]
        return source, fields, connector

    def _encode_schema_change(self, event: ChangeEvent) -> tuple[dict[str, Any], dict[str, Any]]:
        source, source_fields, connector = self._encode_source(event)
        changes: list[dict[str, Any]] = []
        if event.columns is not None:
            table_id = ".".join(f'"{p}"' for p in (event.database, event.schema, event.table) if p)
            columns = []
            for position, (name, col) in enumerate(event.columns.items(), start=1):
                is_decimal = col.type.name == "decimal" and col.type.precision is not None
                columns.append({
                    COLUMN_NAME: name,
                    COLUMN_JDBC_TYPE: col.vendor_code,
                    COLUMN_TYPE_NAME: col.vendor_type or str(col.type),
                    COLUMN_LENGTH: col.type.precision if is_decimal else None,
                    COLUMN_SCALE: col.type.scale if is_decimal else None,
                    COLUMN_POSITION: position,
                    COLUMN_OPTIONAL: name not in (event.key or ()),
                })  # fmt: skip
            changes.append({
                CHANGE_TYPE: event.extra.get(X_TABLE_CHANGE, "ALTER"),
                CHANGE_ID: table_id,
                CHANGE_TABLE: {TABLE_PRIMARY_KEY: list(event.key or ()), TABLE_COLUMNS: columns},
            })  # fmt: skip
        payload = {
            SOURCE: source,
            TS_MS: event.ts_ms,
            DATABASE_NAME: event.database,
            DDL_SCHEMA_NAME: event.schema,
            DDL: event.ddl,
            TABLE_CHANGES: changes,
        }
        fields = [
            _source_schema(source_fields, connector),
            schema_field(T_INT64, TS_MS),
            schema_field(T_STRING, DATABASE_NAME),
            schema_field(T_STRING, DDL_SCHEMA_NAME),
            schema_field(T_STRING, DDL),
            schema_array(_TABLE_CHANGE_SCHEMA, TABLE_CHANGES, optional=False),
        ]
        name = f"io.debezium.connector.{connector or 'common'}.SchemaChangeValue"
        return schema_struct(fields, name), payload

    def _encode_message(self, event: ChangeEvent) -> tuple[dict[str, Any], dict[str, Any]]:
        source, source_fields, connector = self._encode_source(event)
        message = event.extra[X_MESSAGE]
        payload = {SOURCE: source, OP: OP_MESSAGE, TS_MS: event.ts_ms, MESSAGE: dict(message)}
        tx_field = self._encode_transaction(event, payload, source, connector)
        message_schema = schema_struct(
            [schema_field(T_STRING, MESSAGE_PREFIX), schema_field(T_BYTES, MESSAGE_CONTENT)],
            "io.debezium.connector.postgresql.Message",
        )
        fields = [
            _source_schema(source_fields, connector),
            schema_field(T_STRING, OP, optional=False),
            schema_field(T_INT64, TS_MS),
            as_schema_field(message_schema, MESSAGE),
        ]
        if tx_field:
            fields.append(_TRANSACTION_SCHEMA)
        return schema_struct(fields, f"{self._prefix(event)}.Envelope"), payload

    def _encode_cloudevent(
        self, event: ChangeEvent, schema: dict[str, Any] | None, payload: dict[str, Any]
    ) -> dict[str, Any]:
        """A row change as Debezium's CloudEventsConverter writes it (JSON envelope, JSON
        data): ``source``/``transaction`` fields as extension attributes (int64 as text)."""
        envelope = event.extra[X_CLOUDEVENTS]
        envelope = envelope if isinstance(envelope, Mapping) else {}
        source = payload.pop(SOURCE)
        transaction = payload.pop(TRANSACTION, None) or {}
        out: dict[str, Any] = {
            CE_ID: envelope.get(CE_ID),
            CE_SOURCE: envelope.get(CE_SOURCE),
            CE_SPECVERSION: CE_VERSION,
            CE_TYPE: envelope.get(CE_TYPE),
            CE_TIME: _iso_millis(event.ts_ms),
            CE_DATA_CONTENT_TYPE: CE_JSON,
            CE_OP: payload.pop(OP),
        }
        payload.pop(TS_MS, None)
        for prefix, block in ((CE_PREFIX, source), (CE_TX_PREFIX, transaction)):
            for name, value in block.items():
                out[prefix + squashed_name(name)] = str(value) if type(value) is int else value
        if schema is not None and self._with_schema:
            fields = [f for f in schema[SCHEMA_FIELDS] if f.get(SCHEMA_FIELD) in payload]
            data_schema = schema_struct(fields, f"{self._prefix(event)}.Data")
            out[CE_DATA] = {ENVELOPE_SCHEMA: data_schema, ENVELOPE_PAYLOAD: payload}
        else:
            out[CE_DATA] = payload
        return out

    def _encode_mongo(self, event: ChangeEvent) -> tuple[dict[str, Any], dict[str, Any]]:
        source, source_fields, connector = self._encode_source(event)
        after = event.after
        if event.op is Op.UPDATE and event.patch is not None and AFTER in event.partial:
            after = None  # the id travels in the Kafka key
        before = None if BEFORE in event.partial else event.before
        payload: dict[str, Any] = {
            BEFORE: dumps(ejson_fields(before, event.columns)) if before is not None else None,
            AFTER: dumps(ejson_fields(after, event.columns)) if after is not None else None,
        }
        if event.patch is not None:
            payload[MONGO_UPDATE_DESCRIPTION] = _render_update_description(event.patch)
        payload.update({SOURCE: source, OP: OP_CODES[event.op], TS_MS: event.ts_ms})
        self._encode_transaction(event, payload, source, connector)
        truncated = schema_struct(
            [
                schema_field(T_STRING, MONGO_TRUNCATED_FIELD, optional=False),
                schema_field(T_INT32, MONGO_TRUNCATED_SIZE, optional=False),
            ],
            None,
        )
        update_schema = schema_struct(
            [
                schema_array(STRING_ITEMS, MONGO_REMOVED_FIELDS),
                schema_field(T_STRING, MONGO_UPDATED_FIELDS, name=N_JSON),
                schema_array(truncated, MONGO_TRUNCATED_ARRAYS),
            ],
            "io.debezium.connector.mongodb.changestream.updatedescription",
        )
        fields = [
            schema_field(T_STRING, BEFORE, name=N_JSON),
            schema_field(T_STRING, AFTER, name=N_JSON),
            as_schema_field(update_schema, MONGO_UPDATE_DESCRIPTION),
            _source_schema(source_fields, connector),
            schema_field(T_STRING, OP, optional=False),
            schema_field(T_INT64, TS_MS),
        ]
        if TRANSACTION in payload:
            fields.append(_TRANSACTION_SCHEMA)
        return schema_struct(fields, f"{self._prefix(event)}.Envelope"), payload


# --------------------------------------------------------------------------- helpers (encode)
_POSITION_ARITY: Final[dict[str | None, int]] = {
    CONNECTOR_MYSQL: 3,
    CONNECTOR_MARIADB: 3,
    CONNECTOR_POSTGRESQL: 1,
    CONNECTOR_SQLSERVER: 7,
    CONNECTOR_ORACLE: 1,
    CONNECTOR_MONGODB: 2,
}
_SOURCE_TYPES: Final[dict[str, str]] = {
    SRC_TS_MS: T_INT64, SRC_SERVER_ID: T_INT64, SRC_POS: T_INT64, SRC_ROW: T_INT32,
    SRC_THREAD: T_INT64, SRC_TX_ID: T_INT64, SRC_LSN: T_INT64, SRC_XMIN: T_INT64,
    SRC_EVENT_SERIAL_NO: T_INT64, SRC_ORD: T_INT32, SRC_SEC: T_INT64,
}  # fmt: skip
_ORACLE_SOURCE_TYPES: Final = {**_SOURCE_TYPES, SRC_TX_ID: T_STRING}  # txId "6.28.807"
_REQUIRED_SOURCE_FIELDS: Final = frozenset({SRC_VERSION, SRC_NAME})


def _family(connector: Any, extra: Mapping[str, Any]) -> str | None:
    """Which connector's source fields to write (older messages name no connector)."""
    if connector in _POSITION_ARITY:
        return str(connector)
    if connector is None and X_COMMIT_SCN in extra:
        return CONNECTOR_ORACLE
    if connector is None and X_GTID in extra:
        return CONNECTOR_MYSQL
    return None


def _iso_millis(ts_ms: int | None) -> str | None:
    """RFC 3339 UTC time with milliseconds, as the CloudEvents ``time`` attribute."""
    if ts_ms is None:
        return None
    try:
        moment = EPOCH + dt.timedelta(milliseconds=ts_ms)
    except OverflowError:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _format_lsn(parts: Sequence[int]) -> str:
    return f"{parts[0]:08x}:{parts[1]:08x}:{parts[2]:04x}"


def _source_schema(fields: list[tuple[str, str]], connector: str | None) -> dict[str, Any]:
    items = []
    for name, ctype in fields:
        if name == SRC_SNAPSHOT:
            snapshot = schema_field(T_STRING, name, name=N_ENUM)
            snapshot[SCHEMA_PARAMETERS] = {PARAM_ALLOWED: SNAPSHOT_ALLOWED}
            items.append(snapshot)
        else:
            items.append(schema_field(ctype, name, optional=name not in _REQUIRED_SOURCE_FIELDS))
    source = schema_struct(items, f"io.debezium.connector.{connector or 'common'}.Source")
    return as_schema_field(source, SOURCE, optional=False)


_TRANSACTION_SCHEMA: Final = as_schema_field(
    schema_struct(
        [
            schema_field(T_STRING, TX_ID, optional=False),
            schema_field(T_INT64, TX_TOTAL_ORDER),
            schema_field(T_INT64, TX_DATA_COLLECTION_ORDER),
        ],
        "event.block",
    ),
    TRANSACTION,
)
_COLUMN_SCHEMA: Final = schema_struct(
    [
        schema_field(T_STRING, COLUMN_NAME, optional=False),
        schema_field(T_INT32, COLUMN_JDBC_TYPE),
        schema_field(T_STRING, COLUMN_TYPE_NAME),
        schema_field(T_INT32, COLUMN_LENGTH),
        schema_field(T_INT32, COLUMN_SCALE),
        schema_field(T_INT32, COLUMN_POSITION),
        schema_field(T_BOOLEAN, COLUMN_OPTIONAL),
    ],
    N_COLUMN,
)
_TABLE_SCHEMA: Final = schema_struct(
    [
        schema_array(STRING_ITEMS, TABLE_PRIMARY_KEY),
        schema_array(_COLUMN_SCHEMA, TABLE_COLUMNS, optional=False),
    ],
    N_TABLE,
)
_TABLE_CHANGE_SCHEMA: Final = schema_struct(
    [
        schema_field(T_STRING, CHANGE_TYPE, optional=False),
        schema_field(T_STRING, CHANGE_ID, optional=False),
        as_schema_field(_TABLE_SCHEMA, CHANGE_TABLE),
    ],
    N_TABLE_CHANGE,
)


def _encode_transaction_marker(event: ChangeEvent) -> tuple[dict[str, Any], dict[str, Any]]:
    payload = {
        TX_STATUS: STATUS_BEGIN if event.op is Op.BEGIN else STATUS_END,
        TX_ID: event.tx,
        TS_MS: event.ts_ms,
        TX_EVENT_COUNT: event.extra.get(X_EVENT_COUNT),
        TX_DATA_COLLECTIONS: _data_collections(event.extra.get(X_DATA_COLLECTIONS)),
    }
    collection = schema_struct(
        [
            schema_field(T_STRING, TX_DATA_COLLECTION, optional=False),
            schema_field(T_INT64, TX_EVENT_COUNT, optional=False),
        ],
        None,
    )
    fields = [
        schema_field(T_STRING, TX_STATUS, optional=False),
        schema_field(T_STRING, TX_ID, optional=False),
        schema_field(T_INT64, TS_MS),
        schema_field(T_INT64, TX_EVENT_COUNT),
        schema_array(collection, TX_DATA_COLLECTIONS),
    ]
    return schema_struct(fields, N_TX_METADATA), payload


def _data_collections(counts: Mapping[str, int] | None) -> list[dict[str, Any]] | None:
    """An END marker's ``data_collections`` from its events per table (None: not said)."""
    if not counts:
        return None
    return [{TX_DATA_COLLECTION: name, TX_EVENT_COUNT: n} for name, n in counts.items()]


def _render_update_description(patch: Mapping[str, Any]) -> dict[str, Any]:
    updated = patch.get("$set")
    removed = patch.get("$unset")
    unknown = sorted(set(patch) - {"$set", "$unset", "$truncatedArrays"})
    if unknown:
        raise EncodeError(
            "debezium-json", f"update operators {unknown} have no updateDescription form"
        )
    return {
        MONGO_REMOVED_FIELDS: list(removed) if removed else None,
        MONGO_UPDATED_FIELDS: dumps(updated) if updated else None,
        MONGO_TRUNCATED_ARRAYS: patch.get("$truncatedArrays"),
    }
