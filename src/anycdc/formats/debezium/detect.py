"""Detection of Debezium messages: an envelope, a payload alone or a CloudEvent."""

from __future__ import annotations

from typing import Any

from anycdc.formats.debezium.wire import (
    AFTER,
    AVRO_TYPE_NAMES,
    AVRO_VALUE_SUFFIX,
    BEFORE,
    CASSANDRA_CELL,
    CE_DATA,
    CE_DEBEZIUM_SOURCE,
    CE_DEBEZIUM_TYPE,
    CE_OP,
    CE_SOURCE,
    CE_SPECVERSION,
    CE_TYPE,
    CONNECTOR_CASSANDRA,
    DDL,
    ENVELOPE_PAYLOAD,
    ENVELOPE_SCHEMA,
    KEY_SCHEMA_SUFFIXES,
    N_HEARTBEAT,
    OP,
    OPS,
    SCHEMA_FIELDS,
    SCHEMA_NAME,
    SCHEMA_TYPE,
    SOURCE,
    SRC_CONNECTOR,
    SRC_LSN,
    SRC_SEQUENCE,
    SRC_SNAPSHOT,
    SRC_TABLE,
    SRC_TX_ID,
    STATUS_BEGIN,
    STATUS_END,
    T_STRUCT,
    TABLE_CHANGES,
    TS_MS,
    TX_DATA_COLLECTIONS,
    TX_EVENT_COUNT,
    TX_STATUS,
)

# ---- MongoDB


# --------------------------------------------------------------------------- helpers (decode)
def starts_like_envelope(data: bytes) -> bool:
    """Is the first key ``schema`` or ``payload``? (then the schema is kept raw, as a cache key)"""
    quote = data.find(b'"', 0, 64)
    if quote < 0 or data[:quote].strip() != b"{":
        return False
    return data.startswith(b'"schema"', quote) or data.startswith(b'"payload"', quote)


def sniff_debezium(message: Any) -> float:
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
        if foreign_shape(payload, source if isinstance(source, dict) else {}) is not None:
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


def foreign_shape(payload: dict[str, Any], source: dict[str, Any]) -> tuple[str, str] | None:
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
