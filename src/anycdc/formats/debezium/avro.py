"""Debezium change events written by an Avro converter in the Confluent wire format.

Each Kafka message value (and key) is ``0x00`` + a 4-byte big-endian schema id + the Avro
binary encoding of one record written with that schema; the schema comes from a schema
registry (Confluent's ``AvroConverter``, Apicurio's with ``as-confluent``, Karapace ...)
or, for files and tests, from a folder of ``.avsc`` files (see
:mod:`anycdc.formats.schema_source`). The record is Debezium's envelope (``before``,
``after``, ``source``, ``op``, ``ts_ms``, ``transaction``), a schema-change value, a
transaction marker or a heartbeat, exactly as with the JSON converter.

How a message is decoded: its writer schema is read (once per process and id), mapped
back to the Kafka Connect schema it was made from (:mod:`anycdc.formats.debezium.avro_schemas`,
the converters' own rules: ``int`` + ``connect.type`` ``int8``/``int16``, ``connect.name`` /
``connect.parameters`` / ``connect.version`` on every logical type, ``["null", T]`` for an optional field, records
for structs, ``MapEntry`` arrays for maps with non-string keys; Avro logical types
without ``connect.name`` map to their Connect / Debezium equivalents), and the record's
values are given the JSON converter's rendering (bytes as base64 text). From there the
:class:`~anycdc.formats.debezium.format.DebeziumJson` decoder does the rest, so every rule of
``debezium-json`` holds here too: all logical types (``Decimal`` with its scale,
``VariableScaleDecimal``, ``io.debezium.time.*``, ``Json``, ``Enum``, ``Bits`` ...),
positions, transactions, MongoDB documents, TOAST placeholders, partial deletes. Differences:

* key columns come from the Kafka key's own Avro record (its field names, in order);
* a FLOAT32 value is the exact float32 the message holds (JSON prints it shortest);
* numbers inside a struct/array/map column are exact decimals, as JSON numbers are.

Errors: a message that is not framed, names an id the source does not hold, or does not
fit its schema is a DecodeError (dead letter). A registry that cannot answer (down,
refusing the credentials) raises :class:`~anycdc.formats.schema_source.SchemaSourceError`:
the pipeline fails the batch, to be retried, rather than dead-letter every message.

The encoder writes what the Avro converter writes for the ``debezium-json`` encoder's
Connect schema, registers the schema under ``<topic>-value`` (``<topic>-key`` for
:meth:`DebeziumAvro.encode_key`; the topic is Debezium's: ``<server>.<db>[.<schema>].<table>``,
``<server>`` for schema changes, ``<server>.transaction``,
``__debezium-heartbeat.<server>``) and frames the record with the id. Avro images hold
every column: a column an image lacks is written as Debezium's TOAST placeholder for a
PostgreSQL text/bytes column and refused otherwise. A row change without column types gets
types inferred from its values.

>>> fmt = DebeziumAvro()  # no registry_url / schema_dir: this process's schemas
>>> from decimal import Decimal
>>> from anycdc.event import ChangeEvent, Column, Op
>>> from anycdc.formats.debezium.wire import N_DECIMAL
>>> from anycdc.values import LogicalType
>>> event = ChangeEvent(op=Op.INSERT, format="debezium-avro", database="shop", table="items",
...     key=("id",), after={"id": 1, "price": Decimal("9.90")},
...     columns={"id": Column(LogicalType("int64"), "int64"),
...              "price": Column(LogicalType("decimal", 10, 2), N_DECIMAL)}, ts_ms=5)
>>> [message] = fmt.encode(event)
>>> message[0], len(message) > 5
(0, True)
>>> [decoded] = fmt.decode(message, key=fmt.encode_key(event))
>>> decoded.key, decoded.after["price"], str(decoded.columns["price"].type)
(('id',), Decimal('9.90'), 'decimal(10,2)')
"""

from __future__ import annotations

import binascii
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Final

import fastavro
import msgspec

from anycdc.errors import EncodeError, OptionError, type_name
from anycdc.event import ROW_OPS, ChangeEvent, Column, Op
from anycdc.formats.base import MAX_MESSAGE_BYTES, Capabilities
from anycdc.formats.codecs.avro import AvroDataError, AvroReader
from anycdc.formats.debezium.avro_schemas import (
    AvroValues,
    ConnectSchemas,
    Convert,
    JsonValues,
    avro_schema,
)
from anycdc.formats.debezium.encode import DEFAULT_SERVER_NAME
from anycdc.formats.debezium.format import DebeziumJson
from anycdc.formats.debezium.plans import EnvelopePlan
from anycdc.formats.debezium.wire import (
    AFTER,
    BEFORE,
    CONNECTOR_MONGODB,
    CONNECTOR_POSTGRESQL,
    ENCODER_VERSION,
    SCHEMA_FIELD,
    SCHEMA_FIELDS,
    SCHEMA_OPTIONAL,
    UNAVAILABLE_VALUE,
    UNAVAILABLE_VALUE_BASE64,
    X_CONNECTOR,
)
from anycdc.formats.options import OptionSpec, optional_text, text, typed
from anycdc.formats.schema_source import (
    ConfluentRegistry,
    MemorySchemas,
    SchemaFolder,
    SchemaNotFound,
    SchemaSource,
    frame,
    parse_timeout,
    registered_id,
    schema_text,
    unframe,
)
from anycdc.values import UNKNOWN

# options
OPT_REGISTRY_URL: Final = "registry_url"
OPT_REGISTRY_USER: Final = "registry_user"
OPT_REGISTRY_PASSWORD: Final = "registry_password"  # noqa: S105 - an option name
OPT_REGISTRY_TOKEN: Final = "registry_token"  # noqa: S105 - an option name
OPT_REGISTRY_TIMEOUT: Final = "registry_timeout"
OPT_REGISTRY_CA_FILE: Final = "registry_ca_file"
OPT_SCHEMA_DIR: Final = "schema_dir"
OPT_SERVER_NAME: Final = "server_name"
REGISTRY_URL: Final = optional_text(
    OPT_REGISTRY_URL,
    "Confluent-compatible schema registry URL(s), comma-separated, tried in order "
    "(Confluent / Karapace http://host:8081, Apicurio http://host:8080/apis/ccompat/v7); "
    "each schema id is fetched once per process. Encoders register their schemas there",
)
REGISTRY_USER: Final = optional_text(
    OPT_REGISTRY_USER, "registry basic-auth user (or user:password@ in the URL)"
)
REGISTRY_PASSWORD: Final = optional_text(
    OPT_REGISTRY_PASSWORD, "registry basic-auth password (secret: never printed)"
)
REGISTRY_TOKEN: Final = optional_text(
    OPT_REGISTRY_TOKEN, "registry bearer token (secret: never printed)"
)
REGISTRY_TIMEOUT: Final = typed(
    OPT_REGISTRY_TIMEOUT,
    "seconds per registry request",
    parse_timeout,
    kind="seconds",
    default="10",
)
REGISTRY_CA_FILE: Final = optional_text(
    OPT_REGISTRY_CA_FILE, "PEM file of the CA that signed the registry's certificate"
)
SCHEMA_DIR: Final = optional_text(
    OPT_SCHEMA_DIR,
    "instead of a registry: a folder of <id>.avsc files (the schema id in decimal, "
    "e.g. 42.avsc) readable by every executor; encoders write their schemas there "
    "(ids derived from the schema text)",
)
SERVER_NAME: Final = text(
    OPT_SERVER_NAME,
    "encoder: logical server name written in source.name, the schema names and the "
    "subjects (<server>.<db>.<table>-value)",
    DEFAULT_SERVER_NAME,
)

SUBJECT_VALUE: Final = "-value"
SUBJECT_KEY: Final = "-key"
TOPIC_TRANSACTION: Final = ".transaction"
TOPIC_HEARTBEAT: Final = "__debezium-heartbeat."

_PLAN_CACHE_SIZE: Final = 512


# =========================================================================== the format
@dataclass(frozen=True, slots=True)
class _Reading:
    """How to read the records of one writer schema (compiled once per decoder and id)."""

    reader: AvroReader
    convert: Convert | None
    plan: EnvelopePlan


@dataclass(frozen=True, slots=True)
class _Writing:
    """How to write one Connect schema: its Avro schema (parsed), id and value conversion."""

    parsed: Any
    header: bytes
    convert: Convert | None


class DebeziumAvro(DebeziumJson):
    """Debezium change events, Avro converter, Confluent wire format (see the module doc)."""

    id: ClassVar[str] = "debezium-avro"
    vendor: ClassVar[str] = "Debezium (Red Hat / Kafka Connect)"
    title: ClassVar[str] = (
        "Debezium change event (Avro converter, Confluent wire format: schema id + Avro)"
    )
    binary: ClassVar[bool] = True
    # what debezium-json carries, from the Avro writer schema instead of the JSON one
    capabilities: ClassVar[Capabilities] = replace(
        DebeziumJson.capabilities,
        types_detail="Avro writer schema from the schema registry (Kafka Connect logical names)",
        key_detail="from the Kafka key's Avro record or `primary_key=`",
        notes=(
            "key names from the Kafka message key (its Avro record); BIGINT UNSIGNED as "
            "DECIMAL(20,0)",
            "schemas in a registry or a schema_dir (an encoder without either keeps them in "
            "its process)",
        ),
    )
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = (
        REGISTRY_URL,
        REGISTRY_USER,
        REGISTRY_PASSWORD,
        REGISTRY_TOKEN,
        REGISTRY_TIMEOUT,
        REGISTRY_CA_FILE,
        SCHEMA_DIR,
        SERVER_NAME,
    )

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self.schema_source = self._schema_source()
        self._readings: dict[int, _Reading] = {}
        self._writings: dict[bytes, _Writing] = {}
        self._parsed: dict[int, Any] = {}

    def _schema_source(self) -> SchemaSource:
        get = self.option
        url, folder = get(REGISTRY_URL), get(SCHEMA_DIR)
        if url and folder:
            raise OptionError(f"{self.id}: give {OPT_REGISTRY_URL} or {OPT_SCHEMA_DIR}, not both")
        if folder:
            return SchemaFolder(Path(folder).expanduser())
        if not url:
            for spec in (REGISTRY_USER, REGISTRY_PASSWORD, REGISTRY_TOKEN):
                if get(spec):
                    raise OptionError(f"{self.id}: option {spec.name} needs {OPT_REGISTRY_URL}")
            return MemorySchemas()
        try:
            return ConfluentRegistry.from_options(
                url,
                user=get(REGISTRY_USER),
                password=get(REGISTRY_PASSWORD),
                token=get(REGISTRY_TOKEN),
                timeout=get(REGISTRY_TIMEOUT),
                ca_file=get(REGISTRY_CA_FILE),
            )
        except ValueError as exc:
            raise OptionError(f"{self.id}: option {OPT_REGISTRY_URL}: {exc}") from None

    # ------------------------------------------------------------------ detection
    @classmethod
    def sniff(cls, message: Any) -> float:
        """A Confluent frame whose Avro body shows Debezium's ``source`` block (its version
        and connector strings), a transaction marker's status, the envelope's end, or is a
        heartbeat's lone epoch-milliseconds long."""
        try:
            return _sniff(message)
        except Exception:  # a sniffer never raises
            return 0.0

    # ------------------------------------------------------------------ decoding
    # binary: Format.decode -> decode_slow -> decode_bytes, then the JSON format's payload flow
    fast_path = False

    def decode_bytes(self, value: bytes, key: bytes | None) -> list[ChangeEvent]:
        if len(value) > MAX_MESSAGE_BYTES:
            raise self.error("$", f"message of {len(value)} bytes exceeds the limit")
        payload, reading = self._read(value, "")
        if type(payload) is not dict:
            raise self.error("$", f"expected a record, got {type_name(payload)}")
        return self._decode_payload(payload, reading.plan, key, "$")

    def _read(self, data: bytes, what: str) -> tuple[Any, _Reading]:
        """The record of a framed message (``what``: "" for the value, "Kafka key: ")."""
        try:
            schema_id, offset = unframe(data)
        except ValueError as exc:
            raise self.error("$", f"{what}not a Confluent-framed Avro message: {exc}") from None
        reading = self._reading(schema_id, what)
        try:
            datum = reading.reader.read(data[offset:])
        except AvroDataError as exc:
            raise self.error(
                exc.path, f"{what}does not fit its writer schema (id {schema_id}): {exc.reason}"
            ) from None
        return (datum if reading.convert is None else reading.convert(datum)), reading

    def _reading(self, schema_id: int, what: str) -> _Reading:
        reading = self._readings.get(schema_id)
        if reading is not None:
            return reading
        try:
            text = schema_text(self.schema_source, schema_id)
        except SchemaNotFound as exc:
            raise self.error("$", f"{what}schema id {schema_id}: {exc}") from None
        try:
            reader = AvroReader(json.loads(text), tag_unions=False)
        except Exception as exc:  # fastavro raises many kinds of errors for bad schemas
            raise self.error(
                "$", f"{what}schema id {schema_id} is not a valid Avro schema: {exc}"
            ) from None
        schemas = ConnectSchemas(reader.named_types)
        connect = schemas.schema(reader.root_schema)
        convert = JsonValues(reader.named_types, schemas).converter(reader.root_schema)
        reading = _Reading(reader, convert, self._build_plan(connect))
        if len(self._readings) >= _PLAN_CACHE_SIZE:
            self._readings.clear()
        self._readings[schema_id] = reading
        return reading

    def _parse_key(self, key: bytes | None) -> tuple[tuple[str, ...] | None, dict[str, Any] | None]:
        """Key column names and values from the Kafka key's Avro record (a JSON key, from
        a JSON key converter, is read as ``debezium-json`` reads it)."""
        if key is None:
            return None, None
        if key[:1] != b"\x00":
            return super()._parse_key(key)
        record, _ = self._read(bytes(key), "Kafka key: ")
        if type(record) is not dict or not record:
            return None, None
        return tuple(record), record

    # ------------------------------------------------------------------ encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One framed Avro record; its schema registered under ``<topic>-value``."""
        row = event.op in ROW_OPS and event.extra.get(X_CONNECTOR) != CONNECTOR_MONGODB
        if (row or event.op is Op.TRUNCATE) and event.columns is None:  # types from the values
            names = dict.fromkeys([*(event.before or ()), *(event.after or ())])
            event = event.with_changes(columns=dict.fromkeys(names, Column(UNKNOWN)))
        schema, payload = self.schema_and_payload(event)
        if schema is None:  # pragma: no cover - every event has a schema once typed
            raise EncodeError(self.id, "no Connect schema for this event")
        if row:
            self._fill_images(event, payload)
        writing = self._writing(schema, self._topic(event) + SUBJECT_VALUE)
        return [self._write(writing, payload)]

    def encode_key(self, event: ChangeEvent) -> bytes | None:
        """Debezium's Kafka key: a framed Avro record of the key columns (``<topic>-key``)."""
        key = self.key_schema_and_payload(event)
        if key is None:
            return None
        schema, payload = key
        for field in schema[SCHEMA_FIELDS]:
            if payload.get(field[SCHEMA_FIELD]) is None:
                field[SCHEMA_OPTIONAL] = True
        return self._write(self._writing(schema, self._topic(event) + SUBJECT_KEY), payload)

    def _fill_images(self, event: ChangeEvent, payload: dict[str, Any]) -> None:
        """Every column in every image: Debezium's TOAST placeholder for what a PostgreSQL
        image lacks (text and bytes columns); anything else cannot be written."""
        assert event.columns is not None
        names = list(event.columns)
        postgres = event.extra.get(X_CONNECTOR) == CONNECTOR_POSTGRESQL
        for image_name in (BEFORE, AFTER):
            image = payload.get(image_name)
            if image is None:
                continue
            for name in names:
                if name in image:
                    continue
                column = event.columns[name]
                if postgres and column.type.name in ("string", "json", "binary"):
                    binary = column.type.name == "binary"
                    image[name] = UNAVAILABLE_VALUE_BASE64 if binary else UNAVAILABLE_VALUE
                    continue
                raise EncodeError(
                    self.id,
                    f"the {image_name} image lacks column {name!r}: an Avro record holds "
                    "every column (only a PostgreSQL text/bytes column has a placeholder)",
                )

    def _writing(self, schema: dict[str, Any], subject: str) -> _Writing:
        cache_key = msgspec.json.encode([subject, schema])
        writing = self._writings.get(cache_key)
        if writing is not None:
            return writing
        avro = avro_schema(schema)
        text = json.dumps(avro, separators=(",", ":"), ensure_ascii=False)
        try:
            parsed = fastavro.parse_schema(avro)
        except Exception as exc:  # fastavro raises many kinds of errors for bad schemas
            raise EncodeError(self.id, f"invalid Avro schema: {exc}") from None
        schema_id = registered_id(self.schema_source, subject, text)
        writing = _Writing(parsed, frame(schema_id, b""), AvroValues().converter(avro))
        if len(self._writings) >= _PLAN_CACHE_SIZE:
            self._writings.clear()
        self._writings[cache_key] = writing
        return writing

    def _write(self, writing: _Writing, payload: Any) -> bytes:
        out = io.BytesIO()
        out.write(writing.header)
        try:
            datum = payload if writing.convert is None else writing.convert(payload)
            fastavro.schemaless_writer(out, writing.parsed, datum)
        except (
            ValueError,
            TypeError,
            OverflowError,
            KeyError,
            AttributeError,
            binascii.Error,
        ) as exc:
            raise EncodeError(self.id, f"Avro writer refused the record: {exc}") from None
        return out.getvalue()

    def _topic(self, event: ChangeEvent) -> str:
        """The Kafka topic Debezium writes ``event`` to (the subjects are named after it)."""
        if event.op is Op.DDL:
            return self._server
        if event.op in (Op.BEGIN, Op.COMMIT):
            return self._server + TOPIC_TRANSACTION
        if event.op is Op.HEARTBEAT and event.table is None and event.database is None:
            return TOPIC_HEARTBEAT + self._server
        return self._prefix(event)

    def avro_schema_of(self, message: bytes) -> Any:
        """The writer schema of a framed message, parsed by fastavro (benchmarks' bare parse)."""
        schema_id, _ = unframe(message)
        parsed = self._parsed.get(schema_id)
        if parsed is None:
            text = schema_text(self.schema_source, schema_id)
            parsed = self._parsed[schema_id] = fastavro.parse_schema(json.loads(text))
        return parsed


# --------------------------------------------------------------------------- detection
# Debezium's ``source`` record starts with ``version`` then ``connector`` (both strings);
# Avro writes a string as its zig-zag length then its UTF-8 bytes.
_CONNECTORS: Final = (
    "mysql", "mariadb", "postgresql", "sqlserver", "oracle", "mongodb", "db2", "informix",
    "vitess", "spanner", "cassandra", "yugabytedb", "ibmi", "jdbc",
)  # fmt: skip
_CONNECTOR_RE: Final = re.compile(
    b"|".join(re.escape(bytes((2 * len(c),)) + c.encode()) for c in _CONNECTORS)
)
_VERSION_RE: Final = re.compile(  # Debezium's releases: 2.7.3.Final, 3.0.0.CR1, 2.6.0-SNAPSHOT
    rb"\d{1,3}\.\d{1,3}\.\d{1,4}(?:\.(?:Final|Alpha\d*|Beta\d*|CR\d*)|-SNAPSHOT)|"
    + re.escape(ENCODER_VERSION.encode())
)
_MARKER_HEADS: Final = (b"\x0aBEGIN", b"\x06END")  # a transaction marker's status
_ENVELOPE_END: Final = re.compile(
    rb"\x02[cudrt]\x02[\x80-\xff]{5,6}[\x00-\x7f](?:\x02[\x80-\xff]{5,9}[\x00-\x7f]){0,2}\x00?\Z"
)  # op, an epoch-ms ts_ms (then ts_us, ts_ns) and no transaction block
_SNIFF_BYTES: Final = 8192
_HEARTBEAT: Final = re.compile(rb"[\x80-\xff]{5,6}[\x00-\x7f]")  # one varint: Heartbeat{ts_ms}
_HEARTBEAT_MS: Final = (946_684_800_000, 7_258_118_400_000)  # 2000-01-01 .. 2200-01-01


def _zigzag(data: bytes) -> int:
    value = 0
    for shift, byte in enumerate(data):
        value |= (byte & 0x7F) << (7 * shift)
    return (value >> 1) ^ -(value & 1)


def _printable_at(body: bytes, end: int) -> bool:
    """Whether a zig-zag length-prefixed printable ASCII string ends right at ``end``."""
    for length in range(1, 64):
        start = end - length
        if start < 1:
            return False
        if body[start - 1] == 2 * length and all(32 <= b < 127 for b in body[start:end]):
            return True
    return False


def _printable_from(body: bytes, start: int) -> bool:
    """Whether a zig-zag length-prefixed printable ASCII string starts at ``start``."""
    if start >= len(body):
        return False
    size = body[start]
    if size % 2 or not 2 <= size < 128:
        return False
    text = body[start + 1 : start + 1 + size // 2]
    return len(text) == size // 2 and all(32 <= b < 127 for b in text)


def _sniff(message: Any) -> float:
    if not isinstance(message, (bytes, bytearray, memoryview)) or len(message) < 8:
        return 0.0
    data = bytes(message)
    if data[0] != 0:
        return 0.0
    body = data[5 : 5 + _SNIFF_BYTES]
    # (a string of an optional field is preceded by its union branch index 1: byte 0x02)
    for match in _CONNECTOR_RE.finditer(body):  # version, then a known connector
        start = match.start()
        if _printable_at(body, start) or (body[start - 1] == 2 and _printable_at(body, start - 1)):
            return 0.9
    for match in _VERSION_RE.finditer(body):  # a Debezium (or anycdc) version, then a name
        start, end = match.span()
        if start and body[start - 1] == 2 * (end - start):
            if _printable_from(body, end) or (
                body[end : end + 1] == b"\x02" and _printable_from(body, end + 1)
            ):
                return 0.9
    if body.startswith(_MARKER_HEADS):
        return 0.8
    if _HEARTBEAT.fullmatch(body) and _HEARTBEAT_MS[0] <= _zigzag(body) <= _HEARTBEAT_MS[1]:
        return 0.55  # a heartbeat: one long, a plausible epoch-ms ts_ms
    if len(data) <= 5 + _SNIFF_BYTES and _ENVELOPE_END.search(body):
        return 0.6
    return 0.0


__all__ = ["DebeziumAvro"]
