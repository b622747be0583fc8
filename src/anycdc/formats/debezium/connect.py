"""Kafka Connect types: how each Connect type and logical name is read (parse) and
written (render), and the schema of a column the encoder writes."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from types import MappingProxyType
from typing import Any, Final

from anycdc.errors import EncodeError, type_name
from anycdc.event import ChangeEvent, Column, dumps, value_to_json
from anycdc.formats.debezium.wire import (
    DAY_MICROS,
    EPOCH_ORDINAL,
    N_BITS,
    N_CONNECT_DATE,
    N_CONNECT_TIME,
    N_CONNECT_TIMESTAMP,
    N_DATE,
    N_DECIMAL,
    N_ENUM,
    N_ENUM_SET,
    N_INTERVAL,
    N_JSON,
    N_MICRO_DURATION,
    N_MICRO_TIME,
    N_MICRO_TIMESTAMP,
    N_NANO_TIME,
    N_NANO_TIMESTAMP,
    N_TIME,
    N_TIMESTAMP,
    N_UUID,
    N_VARIABLE_SCALE_DECIMAL,
    N_XML,
    N_YEAR,
    N_ZONED_TIME,
    N_ZONED_TIMESTAMP,
    PARAM_PRECISION,
    PARAM_SCALE,
    SCHEMA_FIELD,
    SCHEMA_FIELDS,
    SCHEMA_ITEMS,
    SCHEMA_NAME,
    SCHEMA_OPTIONAL,
    SCHEMA_PARAMETERS,
    SCHEMA_TYPE,
    SCHEMA_VERSION,
    T_ARRAY,
    T_BOOLEAN,
    T_BYTES,
    T_DOUBLE_ALIAS,
    T_FLOAT32,
    T_FLOAT64,
    T_FLOAT_ALIAS,
    T_INT8,
    T_INT16,
    T_INT32,
    T_INT64,
    T_MAP,
    T_STRING,
    T_STRUCT,
    VSD_SCALE,
    VSD_VALUE,
    ZONED_TIME_RE,
)
from anycdc.values import (
    BINARY,
    BOOLEAN,
    DATE,
    EPOCH,
    EPOCH_DATE,
    EPOCH_NAIVE,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    JSON,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    LogicalType,
    decimal_type,
    parse_base64,
    parse_bool,
    parse_datetime,
    parse_decimal,
    parse_float,
    parse_int,
)


# --------------------------------------------------------------------------- value parsers
# Module-level functions (no per-value closures); each takes the raw JSON value
# and returns the typed value or raises ValueError/TypeError (-> ``invalid``).
def _int_parser(low: int, high: int) -> Callable[[Any], int]:
    def parse(raw: Any) -> int:
        value = raw if type(raw) is int else parse_int(raw)
        if low <= value <= high:
            return value
        raise ValueError(f"{value} out of range")

    return parse


_P_INT8: Final = _int_parser(-(2**7), 2**7 - 1)
_P_INT16: Final = _int_parser(-(2**15), 2**15 - 1)
_P_INT32: Final = _int_parser(-(2**31), 2**31 - 1)
_P_INT64: Final = _int_parser(-(2**63), 2**63 - 1)
INT_BOUNDS: Final[Mapping[Callable[[Any], int], tuple[int, int]]] = MappingProxyType(
    {
        _P_INT8: (-(2**7), 2**7 - 1),
        _P_INT16: (-(2**15), 2**15 - 1),
        _P_INT32: (-(2**31), 2**31 - 1),
        _P_INT64: (-(2**63), 2**63 - 1),
    }
)


def parse_connect_bool(raw: Any) -> bool:
    """A Connect boolean: a JSON boolean, or the text/number forms ``parse_bool`` takes."""
    return raw if type(raw) is bool else parse_bool(raw)


def parse_connect_str(raw: Any) -> str:
    """A Connect string: exactly a JSON string (ValueError otherwise)."""
    if type(raw) is str:
        return raw
    raise ValueError(f"expected string, got {type_name(raw)}")


def _p_float(raw: Any) -> float:
    kind = type(raw)
    if kind is Decimal or kind is int:
        return float(raw)
    return parse_float(raw)


def _p_json(raw: Any) -> str:
    return raw if type(raw) is str else dumps(raw)


def _unscaled(raw: Any) -> int:
    """The unscaled value of a Connect decimal: base64 of big-endian two's complement bytes."""
    try:
        data = binascii.a2b_base64(raw, strict_mode=True)
    except (binascii.Error, TypeError, ValueError):
        data = parse_base64(raw)  # raises ValueError with the reason
    return int.from_bytes(data, "big", signed=True)


def _scaled(unscaled: int, scale: int) -> Decimal:
    # string construction is exact whatever the decimal context's precision
    return Decimal(f"{unscaled}E{-scale}")


def parse_connect_decimal(scale: int, raw: Any) -> Decimal:
    """A Connect ``Decimal`` of ``scale``: base64 unscaled bytes, or a number (``decimal.format=NUMERIC``)."""
    if type(raw) is str:
        return _scaled(_unscaled(raw), scale)
    if isinstance(raw, bool):
        raise ValueError("expected decimal, got boolean")
    if isinstance(raw, (int, Decimal)):  # decimal.format=NUMERIC
        return Decimal(raw)
    raise ValueError(f"expected base64 decimal, got {type_name(raw)}")


def _p_variable_scale_decimal(raw: Any) -> Decimal:
    if isinstance(raw, dict):
        scale = raw.get(VSD_SCALE)
        if type(scale) is not int:
            raise ValueError(f"expected integer scale, got {type_name(scale)}")
        return _scaled(_unscaled(raw.get(VSD_VALUE)), scale)
    return parse_decimal(raw)


def _p_date_days(raw: Any) -> dt.date:
    return dt.date.fromordinal(EPOCH_ORDINAL + (raw if type(raw) is int else parse_int(raw)))


def _time_of_day(micros: int) -> dt.time:
    if not 0 <= micros < DAY_MICROS:
        raise ValueError(f"time of day out of range: {micros} µs")
    seconds, micro = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return dt.time(hour, minute, second, micro)


def _p_time_ms(raw: Any) -> dt.time:
    return _time_of_day(parse_int(raw) * 1000)


def _p_time_us(raw: Any) -> dt.time:
    return _time_of_day(parse_int(raw))


def _p_time_ns(raw: Any) -> dt.time:
    return _time_of_day(parse_int(raw) // 1000)


def _p_zoned_time(raw: Any) -> dt.time:
    if type(raw) is not str:
        raise ValueError(f"expected time text, got {type_name(raw)}")
    match = ZONED_TIME_RE.fullmatch(raw.strip())
    if not match:
        raise ValueError(f"invalid zoned time {raw!r}")
    hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3))
    micro = int(((match.group(4) or "") + "000000")[:6])
    return dt.time(hour, minute, second, micro, tzinfo=_offset(match.group(5)))


def _offset(text: str) -> dt.tzinfo:
    if text == "Z":
        return dt.UTC
    digits = text[1:].replace(":", "")
    delta = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4]))
    if not delta:
        return dt.UTC
    return dt.timezone(-delta if text[0] == "-" else delta)


_timedelta: Final = dt.timedelta  # called positionally: faster than microseconds=


def _p_timestamp_ms(raw: Any) -> dt.datetime:
    return EPOCH_NAIVE + _timedelta(0, 0, (raw if type(raw) is int else parse_int(raw)) * 1000)


def _p_timestamp_us(raw: Any) -> dt.datetime:
    return EPOCH_NAIVE + _timedelta(0, 0, raw if type(raw) is int else parse_int(raw))


def _p_timestamp_ns(raw: Any) -> dt.datetime:
    return EPOCH_NAIVE + _timedelta(0, 0, (raw if type(raw) is int else parse_int(raw)) // 1000)


def _p_zoned_timestamp(raw: Any) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(raw)  # the usual rendering, e.g. 2024-12-16T21:02:09.799Z
    except (TypeError, ValueError):
        value = parse_datetime(raw)
    if value.tzinfo is None:
        raise ValueError(f"zoned timestamp without offset {raw!r}")
    return value


def in_zone(parse: Callable[[Any], dt.datetime], zone: dt.tzinfo, raw: Any) -> dt.datetime:
    """The naive datetime ``parse`` reads from ``raw``, placed in ``zone`` (the column's time zone)."""
    return parse(raw).replace(tzinfo=zone)


def schema_field(
    ctype: str, field: str, *, optional: bool = True, name: str | None = None
) -> dict[str, Any]:
    """A Connect schema field of primitive type ``ctype`` (named and versioned when ``name`` is given)."""
    out: dict[str, Any] = {SCHEMA_TYPE: ctype, SCHEMA_OPTIONAL: optional}
    if name is not None:
        out[SCHEMA_NAME] = name
        out[SCHEMA_VERSION] = 1
    out[SCHEMA_FIELD] = field
    return out


def schema_array(items: dict[str, Any], field: str, *, optional: bool = True) -> dict[str, Any]:
    """A Connect ``array`` schema field of ``items``."""
    return {
        SCHEMA_TYPE: T_ARRAY,
        SCHEMA_ITEMS: items,
        SCHEMA_OPTIONAL: optional,
        SCHEMA_FIELD: field,
    }


STRING_ITEMS: Final = {SCHEMA_TYPE: T_STRING, SCHEMA_OPTIONAL: False}


def as_schema_field(schema: dict[str, Any], field: str, *, optional: bool = True) -> dict[str, Any]:
    """A copy of ``schema`` used as the field ``field`` of a struct."""
    return {**schema, SCHEMA_OPTIONAL: optional, SCHEMA_FIELD: field}


def schema_struct(fields: list[dict[str, Any]], name: str | None) -> dict[str, Any]:
    """A Connect ``struct`` schema of ``fields`` (named when ``name`` is given)."""
    out: dict[str, Any] = {SCHEMA_TYPE: T_STRUCT, SCHEMA_FIELDS: fields, SCHEMA_OPTIONAL: False}
    if name is not None:
        out[SCHEMA_NAME] = name
    return out


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """How one column is written: its Connect schema and its value rendering."""

    ctype: str
    name: str | None
    parameters: dict[str, str] | None
    render: Callable[[Any], Any]
    nested: dict[str, Any] | None = None  # fields / items of struct, array, map schemas

    def schema(self, field: str, *, optional: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {SCHEMA_TYPE: self.ctype}
        if self.nested:
            out.update(self.nested)
        out[SCHEMA_OPTIONAL] = optional
        if self.name is not None:
            out[SCHEMA_NAME] = self.name
            out[SCHEMA_VERSION] = 1
        if self.parameters:
            out[SCHEMA_PARAMETERS] = self.parameters
        out[SCHEMA_FIELD] = field
        return out


def render_image(
    image: Mapping[str, Any] | None, specs: Mapping[str, FieldSpec]
) -> dict[str, Any] | None:
    """A row image with each value rendered by its column's :class:`FieldSpec` (None stays None)."""
    if image is None:
        return None
    return {name: None if v is None else specs[name].render(v) for name, v in image.items()}


def _unscaled_of(value: Decimal, scale: int) -> int:
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise EncodeError("debezium-json", f"decimal {value} is not finite")
    unscaled = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    factor: int = 10 ** abs(shift)
    if shift >= 0:
        unscaled *= factor
    else:
        unscaled, rest = divmod(unscaled, factor)
        if rest:
            raise EncodeError(
                "debezium-json", f"decimal {value} has more than {scale} fraction digits"
            )
    return -unscaled if sign == 1 else unscaled


def _unscaled_base64(unscaled: int) -> str:
    length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode("ascii")


def _r_connect_decimal(scale: int, value: Any) -> str:
    return _unscaled_base64(_unscaled_of(Decimal(value), scale))


def _r_variable_scale_decimal(value: Any) -> dict[str, Any]:
    number = Decimal(value)
    exponent = number.as_tuple().exponent
    if not isinstance(exponent, int):
        raise EncodeError("debezium-json", f"decimal {value} is not finite")
    return {VSD_SCALE: -exponent, VSD_VALUE: _unscaled_base64(_unscaled_of(number, -exponent))}


def _r_same(value: Any) -> Any:
    return value


def _r_float(value: Any) -> Any:
    return value_to_json(float(value))


def _r_bytes(value: Any) -> str:
    return base64.b64encode(bytes(value)).decode("ascii")


def _r_date_days(value: dt.date) -> int:
    return (value - EPOCH_DATE).days


def _micros_of_day(value: dt.time) -> int:
    if value.tzinfo is not None:
        raise EncodeError("debezium-json", f"time {value} has an offset: needs {N_ZONED_TIME}")
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond


def _r_time_ms(value: dt.time) -> int:
    return _micros_of_day(value) // 1000


def _r_time_us(value: dt.time) -> int:
    return _micros_of_day(value)


def _r_time_ns(value: dt.time) -> int:
    return _micros_of_day(value) * 1000


def _r_zoned_time(value: dt.time) -> str:
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _wall_micros(value: dt.datetime) -> int:
    # a zone-less source value is written as if it were UTC (Debezium's convention)
    delta = value.replace(tzinfo=None) - EPOCH_NAIVE
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _r_timestamp_ms(value: dt.datetime) -> int:
    return _wall_micros(value) // 1000


def _r_timestamp_us(value: dt.datetime) -> int:
    return _wall_micros(value)


def _r_timestamp_ns(value: dt.datetime) -> int:
    return _wall_micros(value) * 1000


def _r_zoned_timestamp(value: dt.datetime) -> str:
    """ISO-8601 with offset, ``Z`` for UTC, fraction without trailing zeros (as Java prints it)."""
    if value.tzinfo is None:
        raise EncodeError("debezium-json", f"timestamp {value} has no zone")
    offset = value.utcoffset()
    text = value.replace(tzinfo=None).isoformat()
    if "." in text:
        text = text.rstrip("0")
    if not offset:
        return text + "Z"
    return text + value.isoformat()[-6:]


def _r_epoch_instant_us(value: dt.datetime) -> int:
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


# --------------------------------------------------------------------------- the table
@dataclass(frozen=True, slots=True)
class ConnectType:
    """One Connect type or logical name: the Connect type its values ride on, the logical
    type they hold, how a JSON value is read (``parse``) and a typed value written
    (``render``; None: written its own way, see :func:`field_spec`)."""

    ctype: str
    ltype: LogicalType
    parse: Callable[[Any], Any] | None
    render: Callable[[Any], Any] | None


_T: Final = ConnectType
# Every logical name (schema ``name``) read and written: the one place of their codecs.
# Connect ``Decimal`` is not here: its ``scale`` parameter makes each column's codec.
LOGICAL_NAMES: Final[Mapping[str, ConnectType]] = MappingProxyType({
    N_VARIABLE_SCALE_DECIMAL: _T(T_STRUCT, decimal_type(None, None), _p_variable_scale_decimal, None),
    N_DATE: _T(T_INT32, DATE, _p_date_days, _r_date_days),
    N_CONNECT_DATE: _T(T_INT32, DATE, _p_date_days, _r_date_days),
    N_TIME: _T(T_INT32, TIME, _p_time_ms, _r_time_ms),
    N_CONNECT_TIME: _T(T_INT32, TIME, _p_time_ms, _r_time_ms),
    N_MICRO_TIME: _T(T_INT64, TIME, _p_time_us, _r_time_us),
    N_NANO_TIME: _T(T_INT64, TIME, _p_time_ns, _r_time_ns),
    N_TIMESTAMP: _T(T_INT64, TIMESTAMP, _p_timestamp_ms, _r_timestamp_ms),
    N_CONNECT_TIMESTAMP: _T(T_INT64, TIMESTAMP, _p_timestamp_ms, _r_timestamp_ms),
    N_MICRO_TIMESTAMP: _T(T_INT64, TIMESTAMP, _p_timestamp_us, _r_timestamp_us),
    N_NANO_TIMESTAMP: _T(T_INT64, TIMESTAMP, _p_timestamp_ns, _r_timestamp_ns),
    N_ZONED_TIMESTAMP: _T(T_STRING, TIMESTAMPTZ, _p_zoned_timestamp, _r_zoned_timestamp),
    N_ZONED_TIME: _T(T_STRING, TIME, _p_zoned_time, _r_zoned_time),
    N_YEAR: _T(T_INT32, INT32, _P_INT32, _r_same),
    N_MICRO_DURATION: _T(T_INT64, INT64, _P_INT64, _r_same),
    N_INTERVAL: _T(T_STRING, STRING, parse_connect_str, _r_same),
    N_JSON: _T(T_STRING, JSON, _p_json, _p_json),
    N_ENUM: _T(T_STRING, STRING, parse_connect_str, _r_same),
    N_ENUM_SET: _T(T_STRING, STRING, parse_connect_str, _r_same),
    N_UUID: _T(T_STRING, STRING, parse_connect_str, _r_same),
    N_XML: _T(T_STRING, STRING, parse_connect_str, _r_same),
    N_BITS: _T(T_BYTES, BINARY, parse_base64, _r_bytes),
})  # fmt: skip
# The plain Connect types (schema ``type`` without a name).
PRIMITIVES: Final[Mapping[str, ConnectType]] = MappingProxyType({
    T_INT8: _T(T_INT8, INT8, _P_INT8, _r_same),
    T_INT16: _T(T_INT16, INT16, _P_INT16, _r_same),
    T_INT32: _T(T_INT32, INT32, _P_INT32, _r_same),
    T_INT64: _T(T_INT64, INT64, _P_INT64, _r_same),
    T_FLOAT32: _T(T_FLOAT32, FLOAT32, _p_float, _r_float),
    T_FLOAT_ALIAS: _T(T_FLOAT_ALIAS, FLOAT32, _p_float, _r_float),
    T_FLOAT64: _T(T_FLOAT64, FLOAT64, _p_float, _r_float),
    T_DOUBLE_ALIAS: _T(T_DOUBLE_ALIAS, FLOAT64, _p_float, _r_float),
    T_BOOLEAN: _T(T_BOOLEAN, BOOLEAN, parse_connect_bool, _r_same),
    T_STRING: _T(T_STRING, STRING, parse_connect_str, _r_same),
    T_BYTES: _T(T_BYTES, BINARY, parse_base64, _r_bytes),
})  # fmt: skip
# What the encoder writes for a logical type when the vendor type says nothing: a plain
# Connect type, or a logical name (decimals and integers beyond int64: Connect Decimal).
DEFAULT_TYPES: Final[Mapping[str, str]] = MappingProxyType({
    "boolean": T_BOOLEAN, "int8": T_INT8, "int16": T_INT16, "int32": T_INT32,
    "int64": T_INT64, "float32": T_FLOAT32, "float64": T_FLOAT64, "string": T_STRING,
    "binary": T_BYTES, "json": N_JSON, "date": N_DATE, "time": N_MICRO_TIME,
    "timestamp": N_MICRO_TIMESTAMP, "timestamptz": N_ZONED_TIMESTAMP,
})  # fmt: skip


def _common_scale(event: ChangeEvent, name: str) -> int:
    """The largest number of fraction digits among the column's values (0 at least)."""
    scale = 0
    for image in (event.before, event.after):
        value = image.get(name) if image else None
        if isinstance(value, Decimal):
            exponent = value.as_tuple().exponent
            if isinstance(exponent, int):
                scale = max(scale, -exponent)
    return scale


def field_spec(column: Column, event: ChangeEvent, name: str) -> FieldSpec:
    """How the column ``name`` of ``event`` is written: its Connect schema and value rendering."""
    ltype, vendor = column.type, column.vendor_type
    if ltype.name == "decimal":
        if ltype.precision is not None:
            scale = ltype.scale or 0
            params = {PARAM_SCALE: str(scale), PARAM_PRECISION: str(ltype.precision)}
            return FieldSpec(T_BYTES, N_DECIMAL, params, partial(_r_connect_decimal, scale))
        if vendor == N_DECIMAL:  # a Connect Decimal without precision: the values' scale
            scale = _common_scale(event, name)
            return FieldSpec(
                T_BYTES, N_DECIMAL, {PARAM_SCALE: str(scale)}, partial(_r_connect_decimal, scale)
            )
        nested = {
            SCHEMA_FIELDS: [
                schema_field(T_INT32, VSD_SCALE, optional=False),
                schema_field(T_BYTES, VSD_VALUE, optional=False),
            ]
        }
        return FieldSpec(
            T_STRUCT, N_VARIABLE_SCALE_DECIMAL, None, _r_variable_scale_decimal, nested
        )
    if ltype.name in ("uint64", "integer"):  # Debezium's "precise" handling: Decimal, scale 0
        params = {PARAM_SCALE: "0"}
        if ltype.name == "uint64":
            params[PARAM_PRECISION] = "20"
        return FieldSpec(T_BYTES, N_DECIMAL, params, partial(_r_connect_decimal, 0))
    if ltype.name == "unknown":
        sample = next(
            (img[name] for img in (event.after, event.before) if img and img.get(name) is not None),
            None,
        )
        return unknown_spec(vendor, sample)
    named = LOGICAL_NAMES.get(vendor) if vendor is not None else None
    if named is not None and named.ltype == ltype and named.render is not None:
        return FieldSpec(named.ctype, vendor, None, named.render)
    plain = PRIMITIVES.get(vendor) if vendor is not None else None
    if plain is not None and plain.ltype == ltype and plain.render is not None:
        return FieldSpec(plain.ctype, None, None, plain.render)
    default = DEFAULT_TYPES[ltype.name]
    named = LOGICAL_NAMES.get(default)
    if named is not None and named.render is not None:
        return FieldSpec(named.ctype, default, None, named.render)
    plain = PRIMITIVES[default]
    assert plain.render is not None  # every plain type is written
    return FieldSpec(plain.ctype, None, None, plain.render)


def unknown_spec(vendor: str | None, sample: Any) -> FieldSpec:
    """A column of unknown type: keep its vendor schema type/name, infer the rest from a value."""
    inferred = _infer_schema(sample)
    ctype = inferred.pop(SCHEMA_TYPE)
    inferred.pop(SCHEMA_OPTIONAL, None)
    name = None
    if vendor is not None and vendor not in PRIMITIVES and vendor not in (T_STRUCT, T_ARRAY, T_MAP):
        name = vendor
    return FieldSpec(ctype, name, None, _render_json_value, inferred or None)


def _render_json_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _render_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_render_json_value(v) for v in value]
    if isinstance(value, Decimal):
        return value  # written as a bare exact number
    return value_to_json(value)


def _infer_schema(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {SCHEMA_TYPE: T_BOOLEAN, SCHEMA_OPTIONAL: True}
    if isinstance(value, int):
        return {SCHEMA_TYPE: T_INT64, SCHEMA_OPTIONAL: True}
    if isinstance(value, (float, Decimal)):
        return {SCHEMA_TYPE: T_FLOAT64, SCHEMA_OPTIONAL: True}
    if isinstance(value, Mapping):
        fields = [{**_infer_schema(v), SCHEMA_FIELD: str(k)} for k, v in value.items()]
        return {SCHEMA_TYPE: T_STRUCT, SCHEMA_FIELDS: fields, SCHEMA_OPTIONAL: True}
    if isinstance(value, (list, tuple)):
        items = _infer_schema(value[0]) if value else {SCHEMA_TYPE: T_STRING, SCHEMA_OPTIONAL: True}
        return {SCHEMA_TYPE: T_ARRAY, SCHEMA_ITEMS: items, SCHEMA_OPTIONAL: True}
    return {SCHEMA_TYPE: T_STRING, SCHEMA_OPTIONAL: True}
