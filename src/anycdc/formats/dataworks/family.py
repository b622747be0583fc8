"""The DataWorks flow, :class:`DataWorksFamily`, shared with dataworks2-json: the header,
the declared columns, the images, the fast path's plans and the encoder's helpers.

Both paths of a message end in the same two steps: :meth:`DataWorksFamily.pair_images` (which
images an op code uses) and :meth:`DataWorksFamily.event` (time, scn, position, extra, the
event). The schema part's names and key are read by :meth:`DataWorksFamily.schema_source`,
per message on the reference path and once per schema shape in a fast path's
:class:`FastPlan`. A fast path only reads the envelope its quicker way and types the images
by its plan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar, Final, NoReturn

import msgspec

from anycdc.errors import DecodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position, value_to_json
from anycdc.formats.base import (
    JSON_DECODER,
    NULL_RAW,
    Cache,
    Format,
    NotFast,
    PlanCache,
    TypedRows,
    column_parser,
    convert_values,
    expect_list,
    expect_object,
    expect_str,
    optional_str,
    require,
)
from anycdc.formats.dataworks.wire import (
    EXTRA_DB_TYPE,
    EXTRA_EXTEND,
    EXTRA_SCN,
    EXTRA_VENDOR_OP,
    FIELD_AFTER,
    FIELD_BEFORE,
    FIELD_DB_NAME,
    FIELD_DB_TYPE,
    FIELD_DDL,
    FIELD_DDL_TEXT,
    FIELD_EVENT_TIME,
    FIELD_EXTEND,
    FIELD_NAME,
    FIELD_OP,
    FIELD_PAYLOAD,
    FIELD_SCHEMA,
    FIELD_SCN,
    FIELD_SEQUENCE_ID,
    FIELD_SOURCE,
    FIELD_TIMESTAMP,
    FIELD_TYPE,
    MAX_CACHED_TYPES,
    MAX_EPOCH_DIGITS,
    SCN_ABSENT,
    SPLIT_AFTER,
    SPLIT_BEFORE,
    UNKNOWN_COLUMN,
    Declared,
    Layout,
    Parser,
)
from anycdc.formats.events import (
    RULE_DELETE,
    RULE_INSERT,
    RULE_NONE,
    RULE_UPDATE_AFTER,
    RULE_UPDATE_BEFORE,
    Header,
    OpRule,
    build_event,
)
from anycdc.values import (
    UNKNOWN,
    LogicalType,
    parse_int,
)

# --------------------------------------------------------------------------- shared helpers
_DDL_TEXT_OPS: Final = (Op.DDL, Op.TRUNCATE)  # the events that keep ``payload.ddl.text``


def epoch_ms_ns(format_id: str, value: Any, path: str) -> tuple[int, int] | None:
    """``eventTime`` as (milliseconds, nanoseconds within the ms); None when absent or negative.

    Accepts ``1590315269000``, ``"1590315269000"`` and ``1590315269000.123456789``
    (digits past the ninth fraction digit are truncated).
    """
    if type(value) is int:  # the common value, first
        return (value, 0) if value >= 0 else None
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str, Decimal)):
        raise DecodeError(format_id, path, f"expected epoch milliseconds, got {type_name(value)}")
    if isinstance(value, int):
        return (value, 0) if value >= 0 else None
    if isinstance(value, Decimal):
        if not value.is_finite() or value.adjusted() > MAX_EPOCH_DIGITS:
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
    if type(value) is str and value.isdigit() and len(value) < 4000:  # the common value
        return int(value)
    if value is None or value == "":
        return None
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
    if value is None or type(value) is str:  # the common values, without the checks
        return None if value is None or value in SCN_ABSENT else value
    text = optional_str(format_id, value, "$.payload.scn")
    return None if text is None or text in SCN_ABSENT else text


# --------------------------------------------------------------------------- fast path
# The common row change: msgspec decodes the envelope with ``schema`` and the images
# kept as raw bytes; the schema's bytes are the cache key of a :class:`FastPlan` (its
# columns, a :class:`~anycdc.formats.base.TypedRows` typing the images per column in C
# with each format's :meth:`DataWorksFamily.fast_type`, and the schema's
# :class:`SchemaSource`); the payload's header fields come as parse_json gives them.
# Anything else raises and :meth:`Format.decode_slow` decides.


class _FastPayload(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The payload fields of both formats (field names are the wire names; any other: slow
    path). DataWorks 2.0 sends no ``sequenceId``, and its position rule ignores one."""

    op: Any = None
    before: msgspec.Raw = NULL_RAW
    after: msgspec.Raw = NULL_RAW
    sequenceId: Any = None
    scn: Any = None
    timestamp: Any = None
    ddl: Any = None


class _FastMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The root fields of both formats (``extend``: DataWorks 2.0's, kept by it only)."""

    version: Any = None
    schema: msgspec.Raw = NULL_RAW
    payload: _FastPayload | None = None
    extend: Any = None


_FAST_DECODER: Final = msgspec.json.Decoder(_FastMessage, float_hook=Decimal)


# --------------------------------------------------------------------------- the shared flow
class DataWorksFamily(Format):
    """Decoding and encoding shared by DataWorks JSON and DataWorks 2.0 JSON.

    Subclasses give the field layout, the op table, the type table and the
    position rule; the flow (envelope, images, columns, events) is here.
    """

    layout: ClassVar[Layout]
    ops: ClassVar[Mapping[str, OpRule]]
    keeps_extend: ClassVar[bool] = False
    """Whether ``extra`` keeps the root's ``extend`` object as sent (DataWorks 2.0)."""

    _FAST_PLANS: ClassVar[int] = 512

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self._types: Cache[str, tuple[Column, Parser | None]] = Cache(MAX_CACHED_TYPES)
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
        self, event_time: tuple[int, int] | None, sequence: Any, scn: str | None
    ) -> Position | None:
        """The event's position from ``eventTime`` (ms, ns), ``payload.sequenceId`` as sent
        and the scn (:func:`scn_text`)."""
        raise NotImplementedError

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
        return [
            self.event(
                code, rule, self.schema_source(schema, source), payload.get(FIELD_TIMESTAMP),
                payload.get(FIELD_SEQUENCE_ID), payload.get(FIELD_SCN), root.get(FIELD_EXTEND),
                payload.get(FIELD_DDL), before_row, after_row, columns, split, tuple(invalid),
            )
        ]  # fmt: skip

    def schema_source(self, schema: Mapping[str, Any], source: Mapping[str, Any]) -> SchemaSource:
        """What the schema part says besides the columns (``source``: its checked
        ``source`` object): the names, the dbType and the key, where the configured key
        wins. The reference path reads it per message, a fast path once per :class:`FastPlan`."""
        return SchemaSource(
            self._source_str(source, FIELD_DB_TYPE),
            self._source_str(source, FIELD_DB_NAME),
            self._source_str(source, self.layout.schema_name),
            self._source_str(source, self.layout.table_name),
            self.primary_key(self._key_names(schema.get(self.layout.primary_key))),
        )

    def event(
        self,
        code: str,
        rule: OpRule,
        source: SchemaSource,
        timestamp: Any,
        sequence: Any,
        scn: Any,
        extend: Any,
        ddl: Any,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        columns: dict[str, Column] | None,
        split: str | None,
        invalid: tuple[str, ...],
    ) -> ChangeEvent:
        """The event of a message whose op is known and whose images are paired
        (:meth:`pair_images`) and typed, whichever path typed them: the header rules (time,
        scn, position, extra) and the event, here only. ``timestamp``, ``sequence``,
        ``scn``, ``extend`` and ``ddl`` are the payload's fields (``extend``: the root's)
        as sent; a check that fails is a :class:`DecodeError` (in a fast path: a refusal,
        and the reference path reports it)."""
        if timestamp is None:
            event_time = None
        else:
            if type(timestamp) is not dict:
                timestamp = expect_object(self.id, timestamp, "$.payload.timestamp")
            millis = timestamp.get(FIELD_EVENT_TIME)
            # the common value (epoch_ms_ns' first case) without the call: once per event
            event_time = (
                (millis, 0)
                if type(millis) is int and millis >= 0
                else epoch_ms_ns(self.id, millis, "$.payload.timestamp.eventTime")
            )
        scn_value = None if scn is None else scn_text(self.id, scn)
        extra: dict[str, Any] = {EXTRA_SCN: scn_value} if scn_value is not None else {}
        if extend is not None and self.keeps_extend:
            extra[EXTRA_EXTEND] = extend
        if source.db_type is not None:
            extra[EXTRA_DB_TYPE] = source.db_type
        if rule.keep_code:
            extra[EXTRA_VENDOR_OP] = code
        head = Header(
            source.database, source.schema, source.table,
            event_time[0] if event_time is not None else None,
            self.position(event_time, sequence, scn_value), None, None, extra,
            self._ddl_text(ddl) if ddl is not None and rule.op in _DDL_TEXT_OPS else None,
        )  # fmt: skip
        return build_event(
            self.id, rule.op, head, source.key, before, after, columns, (), invalid, split
        )

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
            return UNKNOWN_COLUMN, None
        found = self._types.get(vendor)
        if found is None:
            ltype = self.logical_type(vendor)
            parser = None
            if ltype != UNKNOWN:
                parser = column_parser(self.parser_for(ltype), ltype, vendor)
            found = (Column(ltype, vendor), parser)
            self._types.put(vendor, found)
        return found

    def _images(
        self, payload: Mapping[str, Any], code: str, rule: OpRule
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str | None]:
        if rule.images == RULE_NONE:
            return None, None, None
        return self.pair_images(
            code, rule, self._image(payload, FIELD_BEFORE), self._image(payload, FIELD_AFTER)
        )

    def pair_images(
        self, code: str, rule: OpRule, before: dict[str, Any] | None, after: dict[str, Any] | None
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str | None]:
        """The images a row op code uses (both paths: the images as sent, or typed), and the
        half of a split update it is; the error of an image it needs and lacks."""
        images = rule.images
        if images == RULE_INSERT:  # the common op first
            if after is None:
                self._missing_image(FIELD_AFTER, code)
            return None, after, None
        if images == RULE_DELETE or images == RULE_UPDATE_BEFORE:
            if before is None:
                self._missing_image(FIELD_BEFORE, code)
            return before, None, SPLIT_BEFORE if images == RULE_UPDATE_BEFORE else None
        if after is None:
            self._missing_image(FIELD_AFTER, code)
        if images == RULE_UPDATE_AFTER and before is None:
            return None, after, SPLIT_AFTER
        return before, after, None

    def _missing_image(self, field: str, code: str) -> NoReturn:
        raise self.error(f"$.payload.{field}", f"missing {field!r} image when 'op' is {code!r}")

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
                    columns[name] = UNKNOWN_COLUMN
        return columns, parsers

    def _ddl_text(self, value: Any) -> str | None:
        ddl = self._optional_object(value, "$.payload.ddl")
        return optional_str(self.id, ddl.get(FIELD_DDL_TEXT), "$.payload.ddl.text")

    # ---- fast path: the formats' typing of the images, then the flow's rules above
    def fast_type(self, column: Column, parser: Parser | None) -> tuple[Any, Parser | None]:
        """The strict msgspec type of a declared column's JSON value and the conversion
        after it that give what ``parser`` (its reference parser) gives."""
        raise NotImplementedError

    fast_path = True

    def decode_fast(self, value: bytes, key: bytes | None = None) -> list[ChangeEvent]:
        """The common row change: the envelope read by msgspec, the images typed by the
        schema's :class:`FastPlan`, then the reference path's :meth:`pair_images` and
        :meth:`event`; anything else is a refusal (then :meth:`decode_slow` decides)."""
        msg = _FAST_DECODER.decode(value)
        payload = msg.payload
        if payload is None:
            raise NotFast  # the slow path reports it
        code = payload.op
        try:
            rule = self.ops[code]
        except (KeyError, TypeError):
            raise NotFast from None  # an unknown op: the slow path reports it
        if rule.images == RULE_NONE:
            raise NotFast  # markers and DDL: the slow path
        last = self._last_plan
        # consecutive messages of a topic mostly share their table: compare, no hashing
        plan = last[1] if last is not None and last[0] == msg.schema else self.fast_plan(msg.schema)
        before_raw, after_raw = payload.before, payload.after
        before, after, split = self.pair_images(
            code,
            rule,
            None if before_raw == NULL_RAW else plan.rows.decode(before_raw),
            None if after_raw == NULL_RAW else plan.rows.decode(after_raw),
        )
        return [
            self.event(
                code, rule, plan.source, payload.timestamp, payload.sequenceId, payload.scn,
                msg.extend, payload.ddl, before, after, plan.columns, split, (),
            )
        ]  # fmt: skip

    def fast_plan(self, raw_schema: msgspec.Raw) -> FastPlan:
        """What a schema part says (one other than the last message's: :meth:`decode_fast`
        compares that first), cached by its bytes; it becomes the last one."""
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
            columns, TypedRows(types, self.layout.image), self.schema_source(schema, source)
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
            col = (event.columns or {}).get(name, UNKNOWN_COLUMN)
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
            col = columns.get(name, UNKNOWN_COLUMN)
            if value is None or name in invalid:
                out[name] = as_sent(value)
            else:
                out[name] = self.render_value(value, types.get(name, ""), col.type)
        return out

    def render_value(self, value: Any, vendor_type: str, ltype: LogicalType) -> Any:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class SchemaSource:
    """The schema part's names, dbType and key (:meth:`DataWorksFamily.schema_source`)."""

    db_type: str | None
    database: str | None
    schema: str | None
    table: str | None
    key: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class FastPlan:
    """What the schema part of a message says, prepared for the fast path: the columns,
    their typed reader, and the source (read as the reference path reads it)."""

    columns: dict[str, Column]
    rows: TypedRows
    source: SchemaSource
