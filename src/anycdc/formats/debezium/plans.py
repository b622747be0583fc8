"""Debezium's value typing: Kafka Connect schemas -> :class:`EnvelopePlan` (columns, parsers,
the fast path's row plans), in :class:`SchemaPlans`."""

from __future__ import annotations

import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from types import MappingProxyType
from typing import Any, Final

import msgspec

from anycdc.errors import type_name
from anycdc.event import Column
from anycdc.formats.base import (
    Cache,
    Format,
    NotFast,
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
from anycdc.formats.debezium.source import int_param
from anycdc.formats.debezium.wire import (
    AFTER,
    BEFORE,
    EXACT_JSON,
    N_DECIMAL,
    PARAM_PRECISION,
    PARAM_SCALE,
    SCHEMA_FIELD,
    SCHEMA_FIELDS,
    SCHEMA_NAME,
    SCHEMA_PARAMETERS,
    SCHEMA_TYPE,
    T_STRUCT,
)
from anycdc.values import (
    TIMESTAMP,
    UNKNOWN,
    decimal_type,
)

# fast_image's base64 decimal: module-level names, no attribute lookups per value
from_base64: Final = binascii.a2b_base64
int_from_bytes: Final = int.from_bytes


# --------------------------------------------------------------------------- schema plans
@dataclass(frozen=True, slots=True)
class RowPlan:
    """How to type the images of one table schema (built once, cached per schema)."""

    columns: Mapping[str, Column]
    parsers: dict[str, Callable[[Any], Any] | None]
    names: frozenset[str]
    # the same parsers grouped by kind, for :func:`fast_image` (checks inlined, no calls)
    strings: tuple[str, ...] = ()
    ints: tuple[tuple[str, int, int], ...] = ()
    bools: tuple[str, ...] = ()
    decimals: tuple[tuple[str, str], ...] = ()  # (column, exponent suffix "E-<scale>")
    others: tuple[tuple[str, Callable[[Any], Any]], ...] = ()


def _row_plan(
    columns: dict[str, Column], parsers: dict[str, Callable[[Any], Any] | None]
) -> RowPlan:
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
    return RowPlan(
        MappingProxyType(columns),
        parsers,
        frozenset(columns),
        tuple(strings),
        tuple(ints),
        tuple(bools),
        tuple(decimals),
        tuple(others),
    )


def fast_image(
    raw: Any,
    plan: RowPlan | None,
    twin_raw: dict[str, Any] | None = None,
    twin: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``raw`` typed by ``plan`` when it is an object and every value has its usual JSON
    type and is valid; NotFast otherwise, and without a plan (then the careful per-value
    path decides, and finds the invalid ones).

    ``twin`` is the other image of an update, typed from ``twin_raw`` by this function:
    a value sent the same (same text or integer) reuses its typed value (unchanged columns).
    """
    if type(raw) is not dict or plan is None:
        raise NotFast
    out = dict(raw)
    get = out.get
    # the usual type tested first: a value sent is usually not null
    for name in plan.strings:
        value = get(name)
        if type(value) is not str and value is not None:
            raise NotFast
    for name, low, high in plan.ints:
        value = get(name)
        if type(value) is int:
            if not low <= value <= high:
                raise NotFast
        elif value is not None:
            raise NotFast
    for name in plan.bools:
        value = get(name)
        if type(value) is not bool and value is not None:
            raise NotFast
    twin_get = (twin_raw if twin_raw is not None and twin is not None else _NO_TWIN).get
    try:
        for name, exponent in plan.decimals:
            value = get(name)
            if type(value) is str:
                if twin_get(name) == value:  # (text equals text only)
                    out[name] = twin[name]  # type: ignore[index]
                    continue
                unscaled = int_from_bytes(from_base64(value, strict_mode=True), "big", signed=True)
                out[name] = Decimal(f"{unscaled}{exponent}")
            elif value is not None:
                raise NotFast
        for name, parse in plan.others:
            value = get(name)
            if value is not None:
                same = twin_get(name)
                # (an insert: no twin, one comparison with None)
                if same == value and ((kind := type(same)) is int or kind is str):
                    if type(value) is kind:
                        out[name] = twin[name]  # type: ignore[index]
                        continue
                out[name] = parse(value)
    except (ValueError, TypeError, OverflowError, ArithmeticError):
        raise NotFast from None
    return out


# an insert's image has no twin: a lookup in nothing (a C call, no Python function per value)
_NO_TWIN: Final[dict[str, Any]] = {}


@dataclass(frozen=True, slots=True)
class EnvelopePlan:
    """What the schema part of a message tells: the row plan and the schema's name."""

    row: RowPlan | None
    name: str | None


NO_SCHEMA: Final = EnvelopePlan(None, None)


class SchemaPlans(Format):
    """Debezium's value typing: a Kafka Connect schema becomes an :class:`EnvelopePlan`
    (the columns, their parsers and the fast path's row plans), kept per schema bytes."""

    _plans: Cache[bytes, EnvelopePlan]  # set by the decoder: its memo of plans

    def _plan_from_raw(self, raw: bytes) -> EnvelopePlan:
        if not raw or raw == b"null":
            return NO_SCHEMA
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
            return NO_SCHEMA
        if not isinstance(schema, dict):
            raise self.error("$.schema", f"expected object, got {type_name(schema)}")
        name = schema.get(SCHEMA_NAME)
        name = name if isinstance(name, str) else None
        fields = schema.get(SCHEMA_FIELDS)
        if fields is None:
            return EnvelopePlan(None, name)
        if not isinstance(fields, list):
            raise self.error("$.schema.fields", f"expected array, got {type_name(fields)}")
        row: RowPlan | None = None
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

    def _row_plan(self, struct: dict[str, Any], path: str) -> RowPlan:
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
            scale = int_param(params.get(PARAM_SCALE)) or 0
            precision = int_param(params.get(PARAM_PRECISION))
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
