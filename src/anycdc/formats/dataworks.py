"""DataWorks JSON: what Alibaba Cloud DataWorks "sync a whole database to Kafka" writes.

One message per change (seed 000, "付録: メッセージ形式")::

    {"schema": {"dataColumn": [{"name": "id", "type": "LONG"}, ...], "primaryKey": ["id"] | null,
                "source": {"dbType", "dbVersion", "dbName", "schemaName", "tableName"}},
     "payload": {"before": {"dataColumn": {...}} | null, "after": {...} | null,
                 "sequenceId": "1620457642589000001", "scn": "...", "op": "UPDATE_AFTER",
                 "timestamp": {"eventTime": ms, "systemTime": ms, "checkpointTime": ms},
                 "ddl": {"text": "...", "ddlMeta": "<base64>"} | null},
     "version": "0.0.1" | "1.0.0"}

How it maps onto the canonical event:

* ``op`` (case-sensitive): ``INSERT`` -> insert; ``DELETE`` -> delete; ``UPDATE_BEFOR`` (sic)
  -> the before half of a split update (``op=update``, ``split="before"``, before image only);
  ``UPDATE_AFTER`` with both images -> a whole update (single mode), with the after image only
  -> the after half (``split="after"``). Both halves of one update share their ``sequenceId``,
  hence their position: :class:`anycdc.pairing.SplitUpdatePairer` joins them.
  ``TRANSACTION_BEGIN`` -> begin; ``TRANSACTION_END`` and ``XACOMMIT`` -> commit;
  ``CREATE``/``ALTER``/``ERASE``/``QUERY``/``RENAME``/``CINDEX``/``DINDEX`` -> ddl;
  ``TRUNCATE`` -> truncate; ``MHEARTBEAT`` -> heartbeat. ``GTID`` and ``XAROLLBACK`` carry no
  row and no usable boundary (a GTID precedes a transaction that also gets its own
  ``TRANSACTION_BEGIN``; there is no canonical rollback), so they become heartbeat markers.
  Where the canonical op does not name the vendor code (every ddl code, ``XACOMMIT``, ``GTID``,
  ``XAROLLBACK``) the code is kept in ``extra["vendor_op"]``. Any other code is a
  :class:`~anycdc.errors.DecodeError` ``unknown op 'XYZ'`` (the pipeline dead-letters it).
* Types: ``LONG`` -> int64; ``STRING`` -> string; ``BOOLEAN`` -> boolean; ``BYTES`` -> binary
  (standard base64); ``DOUBLE`` -> **decimal** (DataWorks has no DECIMAL type: source DECIMAL
  columns arrive as ``DOUBLE``, often as text such as ``"1.100000"``; keeping them as exact
  decimals never loses a digit, and a true double's shortest text is exact too);
  ``DATE`` -> **timestamptz**: a 13-digit epoch-millisecond number is an instant, so it becomes
  an aware UTC datetime, whether the source column was a date, a datetime or a timestamp
  (the message cannot tell which). Any other type name -> ``unknown`` (value as sent).
* ``position`` = ``sequenceId`` (a digit string, ``"-1"`` or null = none); ``ts_ms`` =
  ``timestamp.eventTime`` (``-1`` = none: full-load rows carry ``-1``); ``ddl`` =
  ``payload.ddl.text``. ``ddlMeta`` (a serialized Java ``SQLStatement``) is ignored: it is
  opaque, large and redundant with the text. Oracle ``scn`` goes to ``extra["scn"]``
  (as sent) and ``source.dbType`` to ``extra["db_type"]``.
* ``key`` = ``schema.primaryKey``. Tables without a primary key have ``primaryKey: null`` and a
  synthetic ``#alibaba_rds_row_id#`` LONG column that identifies the row: it stays an ordinary
  column and ``key`` is None (set the ``primary_key`` option to make it the key). The Oracle
  ``rowid`` column is likewise kept as an ordinary STRING column.
* ``columns`` lists the declared columns that the images carry (declared order), then any image
  key the schema does not declare, typed ``unknown``; events without images (ddl, truncate,
  markers) list every declared column.

The encoder writes messages as the seed's examples do (version ``0.0.1`` unless the ``version``
option says ``1.0.0``; ``checkpointTime`` = ``eventTime``, no ``systemTime``; ``eventTime`` and
``sequenceId`` are ``-1`` / null when unknown); option ``split_update=true`` writes a whole
update as two messages with one ``sequenceId``. Events of other formats are written with the
nearest DataWorks type: integers LONG, decimals and floats DOUBLE, dates and datetimes DATE
(epoch ms, zone-less = UTC), time and JSON STRING; a snapshot row is an INSERT; a position
of more than one part cannot be a ``sequenceId`` (:class:`~anycdc.errors.EncodeError`).

>>> fmt = DataWorksJson()
>>> [e] = fmt.decode(b'{"schema":{"dataColumn":[{"name":"id","type":"LONG"},'
...     b'{"name":"ts","type":"DATE"}],"primaryKey":["id"],"source":{"dbType":"MySQL",'
...     b'"dbName":"shop","tableName":"orders"}},"payload":{"before":null,"after":{"dataColumn":'
...     b'{"id":7,"ts":1590315269000}},"sequenceId":"42","timestamp":{"eventTime":1590315269000},'
...     b'"op":"INSERT","ddl":null},"version":"0.0.1"}')
>>> e.op.value, e.table, e.key, e.after["ts"].isoformat(), e.position
('insert', 'orders', ('id',), '2020-05-24T10:14:29+00:00', Position(parts=(42,)))
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Final

import msgspec

from anycdc.errors import DecodeError, EncodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position, dumps, value_to_json
from anycdc.formats.base import (
    JSON_DECODER,
    NULL_RAW,
    Cache,
    Capabilities,
    Format,
    NotFast,
    PlanCache,
    TypedRows,
    convert_values,
    expect_list,
    expect_object,
    expect_str,
    optional_str,
    require,
)
from anycdc.formats.options import OptionSpec, choice, flag
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

Parser = Callable[[Any], Any]

# --------------------------------------------------------------------------- wire names
FIELD_SCHEMA: Final = "schema"
FIELD_PAYLOAD: Final = "payload"
FIELD_VERSION: Final = "version"
FIELD_DATA_COLUMN: Final = "dataColumn"
FIELD_PRIMARY_KEY: Final = "primaryKey"
FIELD_SOURCE: Final = "source"
FIELD_DB_TYPE: Final = "dbType"
FIELD_DB_VERSION: Final = "dbVersion"
FIELD_DB_NAME: Final = "dbName"
FIELD_SCHEMA_NAME: Final = "schemaName"
FIELD_TABLE_NAME: Final = "tableName"
FIELD_NAME: Final = "name"
FIELD_TYPE: Final = "type"
FIELD_BEFORE: Final = "before"
FIELD_AFTER: Final = "after"
FIELD_SEQUENCE_ID: Final = "sequenceId"
FIELD_SCN: Final = "scn"
FIELD_OP: Final = "op"
FIELD_TIMESTAMP: Final = "timestamp"
FIELD_EVENT_TIME: Final = "eventTime"
FIELD_SYSTEM_TIME: Final = "systemTime"
FIELD_CHECKPOINT_TIME: Final = "checkpointTime"
FIELD_DDL: Final = "ddl"
FIELD_DDL_TEXT: Final = "text"
FIELD_DDL_META: Final = "ddlMeta"

VERSIONS: Final = ("0.0.1", "1.0.0")
SPLIT_UPDATE: Final = flag(
    "split_update",
    "encoder: write an update as two messages, UPDATE_BEFOR (before image) then "
    "UPDATE_AFTER (after image), as DataWorks does unless 'one Kafka record per "
    "update' is selected (true|false)",
)
VERSION: Final = choice(
    "version", "encoder: the 'version' field written (0.0.1 or 1.0.0)", VERSIONS, VERSIONS[0]
)
ROW_ID_COLUMN: Final = "#alibaba_rds_row_id#"  # LONG row identity of tables without a primary key
NO_VALUE: Final = -1  # sequenceId / eventTime of rows that have none (full-load rows)

OP_INSERT: Final = "INSERT"
OP_UPDATE_BEFORE: Final = "UPDATE_BEFOR"  # sic: the vendor's spelling
OP_UPDATE_AFTER: Final = "UPDATE_AFTER"
OP_DELETE: Final = "DELETE"
OP_TRANSACTION_BEGIN: Final = "TRANSACTION_BEGIN"
OP_TRANSACTION_END: Final = "TRANSACTION_END"
OP_CREATE: Final = "CREATE"
OP_ALTER: Final = "ALTER"
OP_ERASE: Final = "ERASE"
OP_QUERY: Final = "QUERY"
OP_TRUNCATE: Final = "TRUNCATE"
OP_RENAME: Final = "RENAME"
OP_CINDEX: Final = "CINDEX"
OP_DINDEX: Final = "DINDEX"
OP_GTID: Final = "GTID"
OP_XACOMMIT: Final = "XACOMMIT"
OP_XAROLLBACK: Final = "XAROLLBACK"
OP_MHEARTBEAT: Final = "MHEARTBEAT"
DDL_OPS: Final = (OP_CREATE, OP_ALTER, OP_ERASE, OP_QUERY, OP_RENAME, OP_CINDEX, OP_DINDEX)

TYPE_BOOLEAN: Final = "BOOLEAN"
TYPE_DOUBLE: Final = "DOUBLE"
TYPE_DATE: Final = "DATE"
TYPE_BYTES: Final = "BYTES"
TYPE_LONG: Final = "LONG"
TYPE_STRING: Final = "STRING"

EXTRA_VENDOR_OP: Final = "vendor_op"
EXTRA_SCN: Final = "scn"
EXTRA_DB_TYPE: Final = "db_type"
SCN_ABSENT: Final = frozenset({"", "null"})  # OMS writes the string "null" when there is no scn

SPLIT_BEFORE: Final = "before"
SPLIT_AFTER: Final = "after"


# --------------------------------------------------------------------------- op rules
# How each op code uses the images: which one it requires and what the event becomes.
RULE_INSERT: Final = "insert"  # after required
RULE_DELETE: Final = "delete"  # before required
RULE_UPDATE: Final = "update"  # after required, before optional (a whole update)
RULE_UPDATE_AFTER: Final = "update-after"  # after required; before present -> whole, else half
RULE_UPDATE_BEFORE: Final = "update-before"  # before required; the before half
RULE_NONE: Final = "none"  # no row


@dataclass(frozen=True, slots=True)
class OpRule:
    """What one vendor op code means: the canonical op and how the images are used."""

    op: Op
    images: str = RULE_NONE
    keep_code: bool = False  # record the vendor code in extra["vendor_op"]


def _ddl_rules(codes: tuple[str, ...]) -> dict[str, OpRule]:
    return {code: OpRule(Op.DDL, keep_code=True) for code in codes}


SHARED_OPS: Final[Mapping[str, OpRule]] = {
    OP_INSERT: OpRule(Op.INSERT, RULE_INSERT),
    OP_DELETE: OpRule(Op.DELETE, RULE_DELETE),
    OP_TRANSACTION_BEGIN: OpRule(Op.BEGIN),
    OP_TRANSACTION_END: OpRule(Op.COMMIT),
    OP_XACOMMIT: OpRule(Op.COMMIT, keep_code=True),
    OP_TRUNCATE: OpRule(Op.TRUNCATE),
    OP_GTID: OpRule(Op.HEARTBEAT, keep_code=True),
    OP_XAROLLBACK: OpRule(Op.HEARTBEAT, keep_code=True),
    **_ddl_rules(DDL_OPS),
}
DATAWORKS_OPS: Final[Mapping[str, OpRule]] = {
    **SHARED_OPS,
    OP_UPDATE_BEFORE: OpRule(Op.UPDATE, RULE_UPDATE_BEFORE),
    OP_UPDATE_AFTER: OpRule(Op.UPDATE, RULE_UPDATE_AFTER),
    OP_MHEARTBEAT: OpRule(Op.HEARTBEAT),
}


@dataclass(frozen=True, slots=True)
class Layout:
    """Field names that differ between DataWorks JSON and DataWorks 2.0 JSON."""

    columns: str
    primary_key: str
    schema_name: str
    table_name: str
    image: str


DATAWORKS_LAYOUT: Final = Layout(
    FIELD_DATA_COLUMN, FIELD_PRIMARY_KEY, FIELD_SCHEMA_NAME, FIELD_TABLE_NAME, FIELD_DATA_COLUMN
)
_UNKNOWN_COLUMN: Final = Column(UNKNOWN)
Declared = tuple[dict[str, Column], dict[str, Parser | None]]
_MAX_CACHED_TYPES: Final = 1024
_MAX_EPOCH_DIGITS: Final = 40


# --------------------------------------------------------------------------- shared helpers
def epoch_ms_ns(format_id: str, value: Any, path: str) -> tuple[int, int] | None:
    """``eventTime`` as (milliseconds, nanoseconds within the ms); None when absent or negative.

    Accepts ``1590315269000``, ``"1590315269000"`` and ``1590315269000.123456789``
    (digits past the ninth fraction digit are truncated).
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str, Decimal)):
        raise DecodeError(format_id, path, f"expected epoch milliseconds, got {type_name(value)}")
    if isinstance(value, int):
        return (value, 0) if value >= 0 else None
    if isinstance(value, Decimal):
        if not value.is_finite() or value.adjusted() > _MAX_EPOCH_DIGITS:
            raise DecodeError(format_id, path, f"expected epoch milliseconds, got {value}")
        text = format(value, "f")  # no exponent: 1E-9 -> 0.000000001
    else:
        text = value.strip()
    whole, _, fraction = text.partition(".")
    digits = whole[1:] if whole[:1] == "-" else whole
    if not digits.isdigit() or not (fraction == "" or fraction.isdigit()):
        raise DecodeError(format_id, path, f"expected epoch milliseconds, got {value!r}")
    if whole[:1] == "-":
        return None
    try:
        return int(digits), int((fraction + "000000000")[:9])
    except ValueError:  # more digits than Python converts
        raise DecodeError(
            format_id, path, f"epoch milliseconds out of range: {text[:40]}"
        ) from None


def sequence_number(format_id: str, value: Any, path: str) -> int | None:
    """A non-negative sequence number from a digit string or an integer; -1/null = none."""
    if value is None or value == "":
        return None
    if type(value) is str and value.isdigit() and len(value) < 4000:
        return int(value)
    try:
        number = parse_int(value) if not isinstance(value, bool) else None
    except (ValueError, ArithmeticError):
        number = None
    if number is None:
        raise DecodeError(format_id, path, f"expected a digit string, got {value!r}")
    return number if number >= 0 else None


def as_sent(value: Any) -> Any:
    """A value for a JSON message as it was received (numbers stay bare, exact numbers)."""
    if isinstance(value, Decimal):
        return value if value.is_finite() else str(value)
    return value_to_json(value)


def vendor_op(event: ChangeEvent, allowed: Mapping[str, OpRule]) -> str | None:
    """The vendor code kept in ``extra`` when it is a valid code for the event's op."""
    code = event.extra.get(EXTRA_VENDOR_OP)
    if isinstance(code, str) and code in allowed and allowed[code].op is event.op:
        return code
    return None


def scn_text(format_id: str, value: Any) -> str | None:
    """``payload.scn`` as sent, or None when absent (null, empty, the string ``"null"``)."""
    text = optional_str(format_id, value, "$.payload.scn")
    return None if text is None or text in SCN_ABSENT else text


# --------------------------------------------------------------------------- the shared flow
class DataWorksFamily(Format):
    """Decoding and encoding shared by DataWorks JSON and DataWorks 2.0 JSON.

    Subclasses give the field layout, the op table, the type table and the
    position rule; the flow (envelope, images, columns, events) is here.
    """

    layout: ClassVar[Layout]
    ops: ClassVar[Mapping[str, OpRule]]

    _FAST_PLANS: ClassVar[int] = 512

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self._types: Cache[str, tuple[Column, Parser | None]] = Cache(_MAX_CACHED_TYPES)
        # fast path: plans by the raw bytes of the schema part, the last one compared first
        self._fast_plans = PlanCache(self._FAST_PLANS)
        self._last_plan: tuple[msgspec.Raw, FastPlan] | None = None

    # ---- hooks
    def logical_type(self, type_name: str) -> LogicalType:
        """The logical type of a vendor type name (``unknown`` when not recognised)."""
        raise NotImplementedError

    def parser_for(self, ltype: LogicalType) -> Parser:
        """How a raw value of ``ltype`` becomes a typed value."""
        return self.value_parser(ltype)

    def position(
        self, payload: Mapping[str, Any], event_time: tuple[int, int] | None
    ) -> Position | None:
        raise NotImplementedError

    def vendor_extra(self, root: Mapping[str, Any], payload: Mapping[str, Any]) -> dict[str, Any]:
        """Vendor metadata kept in ``extra`` besides ``vendor_op`` and ``db_type``."""
        scn = scn_text(self.id, payload.get(FIELD_SCN))
        return {EXTRA_SCN: scn} if scn is not None else {}

    # ---- decoding
    def decode_object(self, obj: Any, key: bytes | None = None) -> list[ChangeEvent]:
        """Decode one parsed message into one event."""
        root = expect_object(self.id, obj, "$")
        payload = expect_object(self.id, require(self.id, root, FIELD_PAYLOAD, "$"), "$.payload")
        code = expect_str(self.id, require(self.id, payload, FIELD_OP, "$.payload"), "$.payload.op")
        rule = self.ops.get(code)
        if rule is None:
            raise self.error("$.payload.op", f"unknown op {code!r}")
        schema = self._optional_object(root.get(FIELD_SCHEMA), "$.schema")
        source = self._optional_object(schema.get(FIELD_SOURCE), "$.schema.source")
        declared = self._declared_columns(schema.get(self.layout.columns))
        before, after, split = self._images(payload, code, rule)
        columns, parsers = self._columns(declared, before, after)
        invalid: list[str] = []
        before_row = convert_values(before, parsers, invalid) if before is not None else None
        after_row = convert_values(after, parsers, invalid) if after is not None else None
        timestamp = self._optional_object(payload.get(FIELD_TIMESTAMP), "$.payload.timestamp")
        event_time = epoch_ms_ns(
            self.id, timestamp.get(FIELD_EVENT_TIME), "$.payload.timestamp.eventTime"
        )
        extra = self.vendor_extra(root, payload)
        db_type = self._source_str(source, FIELD_DB_TYPE)
        if db_type is not None:
            extra[EXTRA_DB_TYPE] = db_type
        if rule.keep_code:
            extra[EXTRA_VENDOR_OP] = code
        event = ChangeEvent(
            op=rule.op,
            format=self.id,
            database=self._source_str(source, FIELD_DB_NAME),
            schema=self._source_str(source, self.layout.schema_name),
            table=self._source_str(source, self.layout.table_name),
            key=self.primary_key(self._key_names(schema.get(self.layout.primary_key))),
            before=before_row,
            after=after_row,
            columns=columns,
            ts_ms=event_time[0] if event_time is not None else None,
            position=self.position(payload, event_time),
            ddl=self._ddl_text(payload) if rule.op in (Op.DDL, Op.TRUNCATE) else None,
            split=split,
            invalid=tuple(invalid),
            extra=extra,
        )
        return [event]

    def _optional_object(self, value: Any, path: str) -> dict[str, Any]:
        return {} if value is None else expect_object(self.id, value, path)

    def table_path(self, event: ChangeEvent) -> str:
        return f"$.schema.source.{self.layout.table_name}"

    def _source_str(self, source: Mapping[str, Any], field: str) -> str | None:
        value = source.get(field)
        if value is None or type(value) is str:
            return value
        return optional_str(self.id, value, f"$.schema.source.{field}")

    def _key_names(self, value: Any) -> list[str] | None:
        path = f"$.schema.{self.layout.primary_key}"
        if value is None:
            return None
        names = expect_list(self.id, value, path)
        if all(type(n) is str for n in names):
            return names
        return [expect_str(self.id, n, f"{path}[{i}]") for i, n in enumerate(names)]

    def _declared_columns(self, value: Any) -> Declared | None:
        """The schema's columns and their parsers (type names resolved through a cache)."""
        if value is None:
            return None
        path = f"$.schema.{self.layout.columns}"
        columns: dict[str, Column] = {}
        parsers: dict[str, Parser | None] = {}
        types = self._types
        for index, item in enumerate(expect_list(self.id, value, path)):
            name = item.get(FIELD_NAME) if type(item) is dict else None
            vendor = item.get(FIELD_TYPE) if type(item) is dict else None
            if type(name) is not str or (vendor is not None and type(vendor) is not str):
                name, vendor = self._column_spec(item, f"{path}[{index}]")
            found = types.get(vendor) if vendor is not None else None
            column, parser = found if found is not None else self._column_of(vendor)
            columns[name] = column
            parsers[name] = parser
        return columns, parsers

    def _column_spec(self, item: Any, path: str) -> tuple[str, str | None]:
        """Name and type of one column entry, or the DecodeError that says what is wrong."""
        spec = expect_object(self.id, item, path)
        name = expect_str(self.id, require(self.id, spec, FIELD_NAME, path), f"{path}.name")
        return name, optional_str(self.id, spec.get(FIELD_TYPE), f"{path}.type")

    def _column_of(self, vendor: str | None) -> tuple[Column, Parser | None]:
        if vendor is None:
            return _UNKNOWN_COLUMN, None
        found = self._types.get(vendor)
        if found is None:
            ltype = self.logical_type(vendor)
            parser = None if ltype == UNKNOWN else self.parser_for(ltype)
            found = (Column(ltype, vendor), parser)
            self._types.put(vendor, found)
        return found

    def _images(
        self, payload: Mapping[str, Any], code: str, rule: OpRule
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str | None]:
        if rule.images == RULE_NONE:
            return None, None, None
        before = self._image(payload, FIELD_BEFORE)
        after = self._image(payload, FIELD_AFTER)
        needs = FIELD_BEFORE if rule.images in (RULE_DELETE, RULE_UPDATE_BEFORE) else FIELD_AFTER
        if (before if needs == FIELD_BEFORE else after) is None:
            raise self.error(f"$.payload.{needs}", f"missing {needs!r} image when 'op' is {code!r}")
        if rule.images == RULE_INSERT:
            return None, after, None
        if rule.images == RULE_DELETE:
            return before, None, None
        if rule.images == RULE_UPDATE_BEFORE:
            return before, None, SPLIT_BEFORE
        if rule.images == RULE_UPDATE_AFTER and before is None:
            return None, after, SPLIT_AFTER
        return before, after, None

    def _image(self, payload: Mapping[str, Any], field: str) -> dict[str, Any] | None:
        value = payload.get(field)
        if value is None:
            return None
        path = f"$.payload.{field}"
        wrapper = expect_object(self.id, value, path)
        inner = require(self.id, wrapper, self.layout.image, path)
        return expect_object(self.id, inner, f"{path}.{self.layout.image}")

    def _columns(
        self,
        declared: Declared | None,
        before: Mapping[str, Any] | None,
        after: Mapping[str, Any] | None,
    ) -> tuple[dict[str, Column] | None, Mapping[str, Parser | None]]:
        images = [image for image in (before, after) if image is not None]
        if not images:
            return (declared[0], {}) if declared is not None else (None, {})
        known, parsers = declared if declared is not None else ({}, {})
        present = images[0].keys() | images[1].keys() if len(images) == 2 else images[0].keys()
        if known.keys() == present:  # the usual message: the images carry every declared column
            return known, parsers
        columns = {name: col for name, col in known.items() if name in present}
        for image in images:
            for name in image:
                if name not in columns:
                    columns[name] = _UNKNOWN_COLUMN
        return columns, parsers

    def _ddl_text(self, payload: Mapping[str, Any]) -> str | None:
        ddl = self._optional_object(payload.get(FIELD_DDL), "$.payload.ddl")
        return optional_str(self.id, ddl.get(FIELD_DDL_TEXT), "$.payload.ddl.text")

    # ---- fast path (the formats' decode_fast)
    def fast_type(self, column: Column, parser: Parser | None) -> tuple[Any, Parser | None]:
        """The strict msgspec type of a declared column's JSON value and the conversion
        after it that give what ``parser`` (its reference parser) gives."""
        raise NotImplementedError

    fast_decoder: ClassVar[msgspec.json.Decoder[Any]]
    """Decodes the envelope with the images and the schema kept raw (``schema``, ``payload``)."""
    fast_rules: ClassVar[frozenset[str]]
    """The image rules (:attr:`OpRule.images`) the fast path takes; others: slow path."""

    def fast_images(self, value: bytes) -> tuple[Any, str, OpRule, FastPlan, Any, Any]:
        """The shared start of the family's fast paths: the envelope, the op code and its
        rule, the schema's plan and both images typed by it (None where null)."""
        msg = self.fast_decoder.decode(value)
        payload = msg.payload
        if payload is None:
            raise NotFast  # the slow path reports it
        try:
            rule = self.ops[payload.op]
        except (KeyError, TypeError):
            raise NotFast from None  # an unknown op: the slow path reports it
        code = payload.op
        if rule.images not in self.fast_rules:
            raise NotFast
        plan = self.fast_plan(msg.schema)
        before_raw, after_raw = payload.before, payload.after
        before = None if before_raw == NULL_RAW else plan.rows.decode(before_raw)
        after = None if after_raw == NULL_RAW else plan.rows.decode(after_raw)
        return msg, code, rule, plan, before, after

    def fast_plan(self, raw_schema: msgspec.Raw) -> FastPlan:
        """What a schema part says, cached by its bytes (the last one compared first)."""
        last = self._last_plan
        # consecutive messages of a topic mostly share their table: compare, no hashing
        if last is not None and last[0] == raw_schema:
            return last[1]
        key = bytes(raw_schema)
        plan: FastPlan = self._fast_plans.plan(key, lambda: self._build_fast_plan(key))
        self._last_plan = (raw_schema.copy(), plan)  # a copy: not the whole message
        return plan

    def _build_fast_plan(self, raw_schema: bytes) -> FastPlan:
        schema = JSON_DECODER.decode(raw_schema)
        if type(schema) is not dict:
            raise NotFast
        source = self._optional_object(schema.get(FIELD_SOURCE), "$.schema.source")
        declared = self._declared_columns(schema.get(self.layout.columns))
        if not declared:
            raise NotFast  # no declared columns: the images type nothing (slow path)
        columns, parsers = declared
        types = {name: self.fast_type(col, parsers[name]) for name, col in columns.items()}
        return FastPlan(
            columns,
            TypedRows(types, self.layout.image),
            self.primary_key(self._key_names(schema.get(self.layout.primary_key))),
            self._source_str(source, FIELD_DB_NAME),
            self._source_str(source, self.layout.schema_name),
            self._source_str(source, self.layout.table_name),
            self._source_str(source, FIELD_DB_TYPE),
        )

    # ---- encoding helpers
    def encode_type(self, ltype: LogicalType, sample: Any) -> str:
        """The vendor type name this format writes for a logical type."""
        raise NotImplementedError

    def column_types(self, event: ChangeEvent) -> dict[str, str]:
        """Vendor type name of every column the event carries, in column order.

        A column keeps its vendor type name when that name means the same
        logical type here (re-encoding a decoded event is faithful); otherwise
        the format's name for the logical type is used, inferred from the
        values when the type is unknown.
        """
        rows = [image for image in (event.before, event.after) if image is not None]
        names = list(event.columns or {})
        for row in rows:
            names.extend(n for n in row if n not in (event.columns or {}))
        out: dict[str, str] = {}
        for name in dict.fromkeys(names):
            col = (event.columns or {}).get(name, _UNKNOWN_COLUMN)
            if col.vendor_type is not None and self.logical_type(col.vendor_type) == col.type:
                out[name] = col.vendor_type
                continue
            sample = next((r[name] for r in rows if r.get(name) is not None), None)
            out[name] = self.encode_type(col.type, sample)
        return out

    def render_image(
        self,
        image: Mapping[str, Any],
        types: Mapping[str, str],
        columns: Mapping[str, Column],
        invalid: tuple[str, ...],
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in image.items():
            col = columns.get(name, _UNKNOWN_COLUMN)
            if value is None or name in invalid:
                out[name] = as_sent(value)
            else:
                out[name] = self.render_value(value, types.get(name, ""), col.type)
        return out

    def render_value(self, value: Any, vendor_type: str, ltype: LogicalType) -> Any:
        raise NotImplementedError


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
# The common row change: msgspec decodes the envelope with ``schema`` kept as raw
# bytes (the cache key of a plan: columns, key, source names and a
# :class:`~anycdc.formats.base.TypedRows` for the images, typed per column in C)
# and the payload's header fields as parse_json gives them. Anything else raises
# and :meth:`Format.decode_slow` decides.


class _FastPayload(msgspec.Struct, forbid_unknown_fields=True):
    """The payload fields (field names are the wire names; any other: slow path)."""

    op: Any = None
    before: msgspec.Raw = NULL_RAW
    after: msgspec.Raw = NULL_RAW
    sequenceId: Any = None
    scn: Any = None
    timestamp: Any = None
    ddl: Any = None


class _FastMessage(msgspec.Struct, forbid_unknown_fields=True):
    schema: msgspec.Raw = NULL_RAW
    payload: _FastPayload | None = None
    version: Any = None


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


@dataclass(frozen=True, slots=True)
class FastPlan:
    """What the schema part of a message says, prepared for the fast path."""

    columns: dict[str, Column]
    rows: TypedRows
    key: tuple[str, ...] | None
    database: str | None
    schema: str | None
    table: str | None
    db_type: str | None


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
    fast_decoder = msgspec.json.Decoder(_FastMessage, float_hook=Decimal)
    fast_rules = frozenset({RULE_INSERT, RULE_DELETE, RULE_UPDATE_BEFORE, RULE_UPDATE_AFTER})

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
    fast_path = True

    def decode_fast(self, value: bytes) -> list[ChangeEvent]:
        """The common row change, or a fast-path refusal (then :meth:`decode_slow` decides)."""
        msg, code, rule, plan, before, after = self.fast_images(value)
        payload = msg.payload
        split = None
        if rule.images == RULE_INSERT or (rule.images == RULE_UPDATE_AFTER and before is None):
            if after is None:
                raise NotFast  # the slow path reports the missing image
            before, split = None, (SPLIT_AFTER if rule.images == RULE_UPDATE_AFTER else None)
        elif rule.images == RULE_DELETE or rule.images == RULE_UPDATE_BEFORE:
            if before is None:
                raise NotFast
            after, split = None, (SPLIT_BEFORE if rule.images == RULE_UPDATE_BEFORE else None)
        elif after is None:
            raise NotFast
        timestamp = payload.timestamp
        event_time = None
        if timestamp is not None:
            if type(timestamp) is not dict:
                raise NotFast
            event_time = timestamp.get(FIELD_EVENT_TIME)
            if type(event_time) is not int:
                if event_time is not None:
                    raise NotFast
            elif event_time < 0:
                event_time = None
        sequence = payload.sequenceId
        if type(sequence) is str and sequence.isdigit() and len(sequence) < 4000:
            position: Position | None = Position((int(sequence),))
        elif sequence is None or sequence == "" or sequence == "-1":
            position = None
        else:
            raise NotFast
        scn = payload.scn
        if scn is not None and type(scn) is not str:
            raise NotFast
        extra: dict[str, Any] = {EXTRA_SCN: scn} if scn and scn not in SCN_ABSENT else {}
        if plan.db_type is not None:
            extra[EXTRA_DB_TYPE] = plan.db_type
        if rule.keep_code:
            extra[EXTRA_VENDOR_OP] = code
        return [
            ChangeEvent(
                op=rule.op, format=self.id, database=plan.database, schema=plan.schema,
                table=plan.table, key=plan.key, before=before, after=after,
                columns=plan.columns, ts_ms=event_time, position=position, split=split,
                extra=extra,
            )
        ]  # fmt: skip

    def fast_type(self, column: Column, parser: Parser | None) -> tuple[Any, Parser | None]:
        return _FAST_TYPES.get(column.type.name, (Any, None))

    def parser_for(self, ltype: LogicalType) -> Parser:
        return _DATAWORKS_PARSERS[ltype.name]

    def position(
        self, payload: Mapping[str, Any], event_time: tuple[int, int] | None
    ) -> Position | None:
        number = sequence_number(self.id, payload.get(FIELD_SEQUENCE_ID), "$.payload.sequenceId")
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
