"""The contract every format implements, and the helpers they share.

A format is one class with an ``id``, a ``sniff`` (how sure it is that a
parsed message is its own), ``decode`` (message -> events) and, for all but
``drs-avro``, ``encode`` (event -> messages). Decoders are pure: no I/O, no
Spark, no module state; all configuration arrives as options at construction.

>>> from anycdc.formats import get_format
>>> fmt = get_format("canal-json", {"primary_key": "id"})
>>> fmt.options.primary_key
('id',)
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, Final

import msgspec

from anycdc.errors import DecodeError, EncodeError, OptionError, type_name
from anycdc.event import ChangeEvent, Column, dumps, value_to_json
from anycdc.values import (
    LogicalType,
    check_integer_range,
    parse_base64,
    parse_bool,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_float,
    parse_int,
    parse_time,
    zone_info,
)

# JSON floats become Decimal so a DECIMAL never passes through a double;
# integers of any size stay exact (msgspec keeps them as Python ints).
_JSON: Final = msgspec.json.Decoder(float_hook=Decimal)
MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024


def parse_json(format_id: str, data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON message, exactly; errors name the format and say why."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > MAX_MESSAGE_BYTES:
        raise DecodeError(format_id, "$", f"message of {len(data)} bytes exceeds the limit")
    try:
        return _JSON.decode(data)
    except msgspec.DecodeError as exc:
        raise DecodeError(format_id, "$", f"invalid JSON: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DecodeError(format_id, "$", f"invalid UTF-8 at byte {exc.start}") from None
    except RecursionError:
        raise DecodeError(format_id, "$", "invalid JSON: nested too deeply") from None


# --------------------------------------------------------------------------- options
@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One ``--option K=V`` a format accepts, with its documentation."""

    name: str
    help: str
    default: str | None = None


COMMON_OPTIONS: Final = (
    OptionSpec(
        "primary_key",
        "primary-key column names, comma-separated; used where the message names none "
        "(or to override it)",
    ),
    OptionSpec(
        "timezone",
        "zone id (e.g. Asia/Shanghai) for datetimes the source sends without a zone; "
        "default: keep them zone-less",
    ),
)


@dataclass(frozen=True, slots=True)
class FormatOptions:
    """Validated options of one format instance."""

    primary_key: tuple[str, ...] | None = None
    timezone: dt.tzinfo | None = None
    values: Mapping[str, str] = field(default_factory=dict)

    def flag(self, name: str) -> bool:
        """A boolean option (``true``/``false``/``1``/``0``)."""
        return parse_bool(self.values.get(name, "false"))

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.values.get(name, default)


def build_options(
    format_id: str, specs: Sequence[OptionSpec], raw: Mapping[str, str] | None
) -> FormatOptions:
    """Validate raw ``K=V`` options against ``specs``; unknown names are an error."""
    given = dict(raw or {})
    known = {spec.name: spec for spec in specs}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise OptionError(
            f"{format_id}: unknown option(s) {', '.join(unknown)}; "
            f"valid options: {', '.join(sorted(known))}"
        )
    values = {spec.name: spec.default for spec in specs if spec.default is not None}
    values.update({k: str(v) for k, v in given.items()})
    pk = values.get("primary_key")
    primary_key = tuple(p.strip() for p in pk.split(",") if p.strip()) if pk else None
    tz_name = values.get("timezone")
    try:
        timezone = zone_info(tz_name) if tz_name else None
    except ValueError as exc:
        raise OptionError(f"{format_id}: option timezone: {exc}") from None
    for name in ("legacy",):
        if name in values:
            try:
                parse_bool(values[name])
            except ValueError as exc:
                raise OptionError(f"{format_id}: option {name}: {exc}") from None
    return FormatOptions(primary_key, timezone, values)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a format's messages carry, for ``anycdc formats`` and the pipeline."""

    before_image: str  # "full", "changed columns", "key only", "none", ...
    types: str  # "vendor type names", "JDBC codes + names", "schema", "none", ...
    position: str  # which vendor fields order events
    key_names: bool  # does the message name its primary-key columns?
    ddl: bool = True


# --------------------------------------------------------------------------- the contract
class Format(ABC):
    """Base class of every format: decode (and encode) one vendor's messages."""

    id: ClassVar[str]
    vendor: ClassVar[str]
    title: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    binary: ClassVar[bool] = False  # messages are binary (Avro), not JSON
    detectable: ClassVar[bool] = True  # False where only configuration can tell (drs-avro)
    extra_options: ClassVar[tuple[OptionSpec, ...]] = ()
    can_encode: ClassVar[bool] = True

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options = build_options(self.id, self.option_specs(), options)

    @classmethod
    def option_specs(cls) -> tuple[OptionSpec, ...]:
        return COMMON_OPTIONS + cls.extra_options

    # ---- detection
    @classmethod
    @abstractmethod
    def sniff(cls, message: Any) -> float:
        """Confidence in [0, 1] that ``message`` is this format.

        ``message`` is the parsed JSON value for JSON formats and the raw bytes
        for binary formats. Must never raise and must not mutate its input.
        """

    # ---- decoding
    def decode(
        self, value: bytes | bytearray | memoryview | str | None, key: bytes | None = None
    ) -> list[ChangeEvent]:
        """Decode one Kafka message value (``None`` = tombstone) into events."""
        if value is None:
            return self.decode_tombstone(key)
        if self.binary:
            data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            return self.decode_bytes(data, key)
        return self.decode_object(parse_json(self.id, value), key)

    def decode_tombstone(self, key: bytes | None) -> list[ChangeEvent]:
        """A null message value carries no change by default."""
        return []

    def decode_bytes(self, value: bytes, key: bytes | None) -> list[ChangeEvent]:
        raise NotImplementedError(f"{self.id} is not a binary format")

    def decode_object(self, obj: Any, key: bytes | None = None) -> list[ChangeEvent]:
        """Decode an already-parsed JSON message (JSON formats override this)."""
        raise NotImplementedError(f"{self.id} is not a JSON format")

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """Encode one event as the vendor would write it (one or more message values)."""
        raise EncodeError(self.id, "this format has no encoder")

    def encode_key(self, event: ChangeEvent) -> bytes | None:
        """The Kafka message key vendors use for partitioning: the primary-key values."""
        values = event.key_values()
        if values is None:
            return None
        return dumps([value_to_json(v) for v in values]).encode("utf-8")

    # ---- shared helpers
    def error(self, path: str, reason: str) -> DecodeError:
        return DecodeError(self.id, path, reason)

    def primary_key(self, from_message: Sequence[str] | None) -> tuple[str, ...] | None:
        """The configured key wins over the message's; ``None`` when neither has one."""
        if self.options.primary_key:
            return self.options.primary_key
        return tuple(from_message) if from_message else None

    def value_parser(self, ltype: LogicalType) -> Callable[[Any], Any]:
        """How this format's raw JSON value of ``ltype`` becomes a typed value.

        The default understands common text renderings; formats override it
        for their quirks (epoch ms dates, byte lists, ...).
        """
        return generic_parser(ltype, self.options.timezone)

    def convert_image(
        self,
        raw: Mapping[str, Any],
        columns: Mapping[str, Column],
        path: str,
        invalid: list[str],
    ) -> dict[str, Any]:
        """Type every value of a raw image; values that do not parse are kept as sent
        and their column is appended to ``invalid`` (never a crash)."""
        parsers = {
            name: None if col.type.name == "unknown" else self.value_parser(col.type)
            for name, col in columns.items()
        }
        return convert_values(raw, parsers, invalid)


# --------------------------------------------------------------------------- value parsing
Parser = Callable[[Any], Any]


def convert_values(
    raw: Mapping[str, Any], parsers: Mapping[str, Parser | None], invalid: list[str]
) -> dict[str, Any]:
    """Type one image with per-column parsers chosen once per message (None = keep as sent).

    A value that does not parse is kept as the vendor sent it and its column is
    appended to ``invalid``: a decoder never crashes on a value.
    """
    out: dict[str, Any] = {}
    for name, value in raw.items():
        parser = parsers.get(name)
        if value is None or parser is None:
            out[name] = value
            continue
        try:
            out[name] = parser(value)
        except (ValueError, TypeError, OverflowError, ArithmeticError):
            out[name] = value
            if name not in invalid:
                invalid.append(name)
    return out


def _parse_string(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, (dict, list)):
        raise ValueError(f"expected string, got {type_name(raw)}")
    return str(raw).lower() if isinstance(raw, bool) else str(raw)


def _parse_json_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else dumps(raw)


def _int_parser(ltype: LogicalType) -> Callable[[Any], int]:
    def parse(raw: Any) -> int:
        return check_integer_range(parse_int(raw), ltype)

    return parse


def generic_parser(ltype: LogicalType, tz: dt.tzinfo | None = None) -> Callable[[Any], Any]:
    """The default parser of a logical type (text renderings as most vendors write them)."""
    name = ltype.name
    if name in ("int8", "int16", "int32", "int64", "uint64", "integer"):
        return _int_parser(ltype)
    simple: dict[str, Callable[[Any], Any]] = {
        "boolean": parse_bool,
        "decimal": parse_decimal,
        "float32": parse_float,
        "float64": parse_float,
        "string": _parse_string,
        "binary": parse_base64,
        "date": parse_date,
        "time": parse_time,
        "json": _parse_json_text,
    }
    if name in simple:
        return simple[name]
    if name == "timestamp":
        return lambda raw: parse_datetime(raw, tz)
    if name == "timestamptz":
        return parse_datetime
    return lambda raw: raw


# --------------------------------------------------------------------------- field access
def expect_object(format_id: str, value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DecodeError(format_id, path, f"expected object, got {type_name(value)}")
    return value


def expect_list(format_id: str, value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise DecodeError(format_id, path, f"expected array, got {type_name(value)}")
    return value


def expect_str(format_id: str, value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise DecodeError(format_id, path, f"expected string, got {type_name(value)}")
    return value


def require(format_id: str, obj: Mapping[str, Any], name: str, path: str) -> Any:
    """``obj[name]``, or a DecodeError naming the missing field."""
    try:
        return obj[name]
    except KeyError:
        raise DecodeError(format_id, path, f"missing required field {name!r}") from None


def optional_int(format_id: str, value: Any, path: str) -> int | None:
    """An integer field that vendors send as a number or a digit string."""
    if value is None or value == "":
        return None
    try:
        return parse_int(value)
    except ValueError:
        raise DecodeError(format_id, path, f"expected integer, got {value!r}") from None


def optional_str(format_id: str, value: Any, path: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return str(value)
    return expect_str(format_id, value, path)
