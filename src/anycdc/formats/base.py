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
import re
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from itertools import repeat
from operator import attrgetter, is_, itemgetter
from typing import Annotated, Any, ClassVar, Final, Literal, TypedDict, TypeVar

import msgspec

from anycdc.errors import DecodeError, EncodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, dumps, value_to_json
from anycdc.formats.options import COMMON_OPTIONS as COMMON_OPTIONS
from anycdc.formats.options import OptionSpec as OptionSpec
from anycdc.formats.options import build_options
from anycdc.values import (
    EPOCH,
    INTEGER_RANGES,
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
)

# JSON floats become Decimal so a DECIMAL never passes through a double;
# integers of any size stay exact (msgspec keeps them as Python ints).
JSON_DECODER: Final = msgspec.json.Decoder(float_hook=Decimal)
MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
NAMED_OPS: Final = frozenset({Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT, Op.TRUNCATE})
"""The ops whose events must name their table: row changes and truncates (the pipeline
could apply them to no table: :meth:`anycdc.decoding.MessageDecoder.decode` refuses them
without one, with :meth:`Format.unnamed_table`)."""
_K = TypeVar("_K")
_T = TypeVar("_T")
_V = TypeVar("_V")


def parse_json(format_id: str, data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON message, exactly; errors name the format and say why."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > MAX_MESSAGE_BYTES:
        raise DecodeError(format_id, "$", f"message of {len(data)} bytes exceeds the limit")
    try:
        return JSON_DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise DecodeError(format_id, "$", f"invalid JSON: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DecodeError(format_id, "$", f"invalid UTF-8 at byte {exc.start}") from None
    except RecursionError:
        raise DecodeError(format_id, "$", "invalid JSON: nested too deeply") from None


class BeforeImage(StrEnum):
    """What the before image of an update (or a delete) holds."""

    FULL = "full"  # every column's old value
    CHANGED = "changed columns"  # the old values of the changed columns, over the after image
    KEY_ONLY = "key only"  # the key columns (a document's _id)
    VARIES = "full or partial"  # by source setting or per message
    CONFIGURED = "as configured"  # whatever the user's schema maps


class TypeInfo(StrEnum):
    """How a format's messages type their columns."""

    LOGICAL = "logical types"  # anycdc's own logical types (canonical JSON)
    SCHEMA = "schema"  # a schema with (or beside) the message: Connect, Avro
    VENDOR = "vendor type names"  # per-column type names or codes of the source
    FEW = "a few types"  # a handful of coarse types (DataWorks' six)
    NONE = "none"  # untyped: every value is the vendor's text


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a format's messages carry: one typed declaration per format class.

    ``anycdc formats``, the README's formats table (:func:`formats_table`) and the
    simulator (:data:`anycdc.simulate.FORMAT_PROFILES`) all read it. The flags are
    facts about the messages; ``before_detail``, ``types_detail``, ``position``,
    ``key_detail`` and ``notes`` are prose for people.

    >>> caps = Capabilities(BeforeImage.CHANGED, TypeInfo.NONE, key_names=False,
    ...                     truncate=False, before_detail="`old`, merged over `data`")
    >>> caps.before_text, caps.carries
    ('changed columns: `old`, merged over `data`', ('DDL', 'BEGIN/COMMIT', 'heartbeats', 'snapshot'))
    """

    # the enums, reachable as ``Capabilities.Before.FULL`` where a module imports Capabilities only
    Before: ClassVar[type[BeforeImage]] = BeforeImage
    Types: ClassVar[type[TypeInfo]] = TypeInfo

    before_image: BeforeImage
    types: TypeInfo
    key_names: bool  # does the message name its primary-key columns?
    ddl: bool = True  # DDL statements (schema changes as SQL text)
    truncate: bool = True  # a TRUNCATE of its own (not deletes of every row)
    tx_markers: bool = True  # BEGIN/COMMIT events
    heartbeats: bool = True  # heartbeat events
    snapshots: bool = True  # a full-load (snapshot) op distinct from insert
    partial_updates: bool = False  # updates carry the changed columns only (SharePlex)
    value_typed: bool = False  # columns typed by their value: a NULL has no precision
    owner_as_schema: bool = False  # tables named OWNER.TABLE: the database is a schema
    documents: bool = False  # MongoDB documents, not rows
    before_detail: str = ""
    types_detail: str = ""
    position: str = ""  # which vendor fields order events
    key_detail: str = ""  # where key names come from
    notes: tuple[str, ...] = ()

    @property
    def before_text(self) -> str:
        """The before image for people: its kind, then its detail."""
        return _joined(self.before_image.value, self.before_detail)

    @property
    def types_text(self) -> str:
        """The column types for people: their kind, then their detail."""
        return _joined(self.types.value, self.types_detail)

    @property
    def key_text(self) -> str:
        """Key names for people: whether messages name them, and from where."""
        return _joined("yes" if self.key_names else "no", self.key_detail)

    @property
    def carries(self) -> tuple[str, ...]:
        """The flags that are set, as short names (``anycdc formats``'s "carries")."""
        flags = (
            (self.ddl, "DDL"),
            (self.truncate, "TRUNCATE"),
            (self.tx_markers, "BEGIN/COMMIT"),
            (self.heartbeats, "heartbeats"),
            (self.snapshots, "snapshot"),
            (self.partial_updates, "partial updates"),
            (self.value_typed, "value-typed"),
            (self.owner_as_schema, "OWNER.TABLE"),
            (self.documents, "documents"),
        )
        return tuple(name for on, name in flags if on)


def _joined(kind: str, detail: str) -> str:
    return f"{kind}: {detail}" if detail else kind


# --------------------------------------------------------------------------- the contract
class Format(ABC):
    """Base class of every format: decode (and encode) one vendor's messages."""

    id: ClassVar[str]
    vendor: ClassVar[str]
    title: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    binary: ClassVar[bool] = False  # messages are binary (Avro), not JSON
    detectable: ClassVar[bool] = True  # False where only configuration can tell (drs-avro)
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = ()
    can_encode: ClassVar[bool] = True

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options = build_options(self.id, self.option_specs(), options)
        self._configured_key = self.options.primary_key
        self.unnamed_key = self.primary_key(None)
        """The key of an event whose message names no key columns (kept for hot paths)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its options (Spark ships decoders to its workers): the memos are
        caches, often of closures; a clone builds its own."""
        return (type(self), (dict(self.options.values),))

    @classmethod
    def option_specs(cls) -> tuple[OptionSpec[Any], ...]:
        return COMMON_OPTIONS + cls.extra_options

    def option(self, spec: OptionSpec[_T]) -> _T:
        """The typed value of one of this format's options, parsed once when the format
        was built (:func:`~anycdc.formats.options.build_options`).

        >>> from anycdc.formats import get_format
        >>> from anycdc.formats.options import TIMEZONE
        >>> get_format("ogg-json", {"timezone": "UTC"}).option(TIMEZONE)
        zoneinfo.ZoneInfo(key='UTC')
        """
        return self.options.value(spec)

    # ---- detection
    sniff_keys: ClassVar[frozenset[str] | None] = None
    """Top-level keys of which a JSON object must hold at least one for :meth:`sniff` to
    score it above 0; None: any message may score. Detection asks only the formats whose
    keys a message holds (and those that declare none): a message of one format is
    never sniffed by the ten others (:func:`anycdc.formats.detect`). A key set that is
    too narrow loses a detection: the differential test against the full scan
    (:func:`anycdc.formats.detect_reference`) runs every golden case and corpus message."""

    @classmethod
    @abstractmethod
    def sniff(cls, message: Any) -> float:
        """Confidence in [0, 1] that ``message`` is this format.

        ``message`` is the parsed JSON value for JSON formats and the raw bytes
        for binary formats. Must never raise and must not mutate its input.
        """

    # ---- decoding
    fast_path: bool = False  # the class has a :meth:`decode_fast` (an instance may turn it off)
    fast_fallbacks: int = 0
    """Messages the fast path refused (:data:`FAST_REFUSALS`), decoded by :meth:`decode_slow`."""

    def decode(
        self, value: bytes | bytearray | memoryview | str | None, key: bytes | None = None
    ) -> list[ChangeEvent]:
        """Decode one Kafka message value (``None`` = tombstone) into events."""
        if self.fast_path and type(value) is bytes and len(value) <= MAX_MESSAGE_BYTES:
            try:
                return self.decode_fast(value)
            except FAST_REFUSALS:
                self.fast_fallbacks += 1
            except Exception as exc:  # a bug of the fast path: said, never hidden
                raise self.error("$", f"fast path failed: {type(exc).__name__}: {exc}") from exc
        return self.decode_slow(value, key)

    def decode_parsed(
        self, value: bytes | bytearray | memoryview | str, parsed: Any, key: bytes | None = None
    ) -> list[ChangeEvent]:
        """:meth:`decode` of a JSON message already parsed (``parsed``: what :func:`parse_json`
        gives for ``value``; auto detection parsed it): never parsed a second time by the
        generic parser. A format's fast path still reads the bytes: its typed read of the
        envelope is what makes it fast (2-4x :meth:`decode_object` of the parsed value);
        where it refuses, the parsed value is decoded.
        """
        # decode()'s fast branch, copied: inline there, as a call would cost its hot path
        if self.fast_path and type(value) is bytes and len(value) <= MAX_MESSAGE_BYTES:
            try:
                return self.decode_fast(value)
            except FAST_REFUSALS:
                self.fast_fallbacks += 1
            except Exception as exc:  # a bug of the fast path: said, never hidden
                raise self.error("$", f"fast path failed: {type(exc).__name__}: {exc}") from exc
        return self.decode_object(parsed, key)

    def decode_slow(
        self, value: bytes | bytearray | memoryview | str | None, key: bytes | None = None
    ) -> list[ChangeEvent]:
        """The reference decoder: :meth:`decode` without the format's fast path.

        :meth:`decode` uses it for every message the fast path cannot promise the
        same result for; tests compare the two on fuzzed input.
        """
        if value is None:
            return self.decode_tombstone(key)
        if self.binary:
            data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            return self.decode_bytes(data, key)
        return self.decode_object(parse_json(self.id, value), key)

    def decode_fast(self, value: bytes) -> list[ChangeEvent]:
        """The fast path for the common message (formats with one set ``fast_path``).

        It raises one of :data:`FAST_REFUSALS` when it cannot promise exactly what
        :meth:`decode_slow` gives: :class:`NotFast` for a shape it leaves to the
        reference decoder, a ``ValueError``/``ArithmeticError`` where a typed decode or
        a value conversion refused the input. Any other exception is a bug.
        """
        raise NotFast

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

    def encode_instant(self, ts_ms: int | None, zone: dt.tzinfo = dt.UTC) -> dt.datetime | None:
        """``ts_ms`` as the aware datetime an encoder writes, in ``zone`` (None: None); an
        EncodeError where no datetime holds it.

        >>> from anycdc.formats import get_format
        >>> get_format("ogg-json").encode_instant(1709251200250)
        datetime.datetime(2024, 3, 1, 0, 0, 0, 250000, tzinfo=datetime.timezone.utc)
        """
        if ts_ms is None:
            return None
        try:
            return (EPOCH + dt.timedelta(milliseconds=ts_ms)).astimezone(zone)
        except OverflowError:
            raise EncodeError(self.id, f"ts_ms {ts_ms} out of range") from None

    def encode_key(self, event: ChangeEvent) -> bytes | None:
        """The Kafka message key vendors use for partitioning: the primary-key values."""
        values = event.key_values()
        if values is None:
            return None
        return dumps([value_to_json(v) for v in values]).encode("utf-8")

    # ---- shared helpers
    def error(self, path: str, reason: str) -> DecodeError:
        return DecodeError(self.id, path, reason)

    table_field: ClassVar[str] = "$.table"
    """Where a message names its table (the path of :meth:`unnamed_table`'s error)."""

    def table_path(self, event: ChangeEvent) -> str:
        """The path of the field naming ``event``'s table (a format whose field moves
        with the message's shape overrides it)."""
        return self.table_field

    def unnamed_table(self, event: ChangeEvent) -> DecodeError:
        """The error of a row change without a table name: the pipeline could neither
        apply it nor tell which table it belongs to.

        >>> from anycdc.event import Op
        >>> from anycdc.formats import get_format
        >>> print(get_format("canal-json").unnamed_table(ChangeEvent(op=Op.INSERT, format="x")))
        canal-json: $.table: missing or empty table name: a row change (insert) must name its table
        """
        return self.error(
            self.table_path(event),
            f"missing or empty table name: a row change ({event.op.value}) must name its table",
        )

    def primary_key(self, from_message: Sequence[str] | None) -> tuple[str, ...] | None:
        """The key of an event: the configured key (option ``primary_key``) wins over the
        message's; ``None`` when neither has one. The one place of this rule."""
        return self._configured_key or (tuple(from_message) if from_message else None)

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


VALUE_ERRORS: Final = (ValueError, TypeError, OverflowError, ArithmeticError)
"""What a value parser raises for a value it refuses."""


def convert_values(
    raw: Mapping[str, Any],
    parsers: Mapping[str, Parser | None],
    invalid: list[str],
    out: dict[str, Any] | None = None,
    retry: Callable[[str, Any], Any] | None = None,
    keep: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """Type one image with per-column parsers chosen once per message (None = keep as
    sent), into ``out`` when given (an overlay on another image). Every format types
    its images with this loop.

    A value its parser refuses gets a second chance with ``retry(name, value)`` where
    given (a format's own rescue: a BIGINT above the int64 maximum proves the column
    unsigned); refused again, it is kept as the vendor sent it (``keep(value)`` where
    given) and its column is appended to ``invalid``: a decoder never crashes on a value.

    >>> invalid: list[str] = []
    >>> convert_values({"a": "1", "b": "x", "c": None}, {"a": int, "b": int}, invalid)
    {'a': 1, 'b': 'x', 'c': None}
    >>> invalid
    ['b']
    """
    if out is None:
        out = {}
    for name, value in raw.items():
        parser = parsers.get(name)
        if value is None or parser is None:
            out[name] = value
            continue
        try:
            out[name] = parser(value)
        except VALUE_ERRORS:
            out[name] = _refused(name, value, invalid, retry, keep)
    return out


def _refused(
    name: str,
    value: Any,
    invalid: list[str],
    retry: Callable[[str, Any], Any] | None,
    keep: Callable[[Any], Any] | None,
) -> Any:
    if retry is not None:
        try:
            return retry(name, value)
        except VALUE_ERRORS:
            pass
    if name not in invalid:
        invalid.append(name)
    return value if keep is None else keep(value)


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


# --------------------------------------------------------------------------- fast paths
# Fast paths decode the common message with msgspec into typed structures and
# must give exactly what the format's reference path gives. Whenever they cannot
# promise that (a value the fast conversions refuse, an unknown column, ...) they
# raise one of FAST_REFUSALS and the whole message goes through the reference
# decoder, which decides (invalid values, widened columns, errors); the format
# counts it in ``fast_fallbacks``.
NULL_RAW: Final = msgspec.Raw(b"null")
"""The default of a ``msgspec.Raw`` field the fast paths read (an absent image is null)."""


class SniffPass(threading.local):
    """The message one detection pass asks its candidate formats about, and what their
    sniffers compute from it alike: the four Canal-shaped sniffers each read DRS' evidence
    (:func:`anycdc.formats.drs.drs_evidence`), the costliest sniff, which is read once per
    pass. :func:`anycdc.formats.detect` opens and closes the pass; a sniffer called outside
    one computes afresh, so a message changed between two calls is never judged by its
    old self. Per thread.

    >>> calls = []
    >>> def evidence(message: Any) -> int:
    ...     calls.append(1)
    ...     return len(message)
    >>> msg = {"a": 1}
    >>> SNIFF_PASS.begin(msg)
    >>> SNIFF_PASS.shared(msg, evidence), SNIFF_PASS.shared(msg, evidence), len(calls)
    (1, 1, 1)
    >>> SNIFF_PASS.end()
    >>> SNIFF_PASS.shared(msg, evidence), len(calls)
    (1, 2)
    """

    def __init__(self) -> None:
        self.message: Any = _NOTHING
        self.values: dict[Callable[[Any], Any], Any] = {}

    def begin(self, message: Any) -> None:
        self.message = message
        self.values = {}

    def end(self) -> None:
        self.message = _NOTHING
        self.values = {}

    def shared(self, message: Any, compute: Callable[[Any], _V]) -> _V:
        """``compute(message)``, computed once per pass over ``message``."""
        if message is not self.message:
            return compute(message)
        values = self.values
        if compute in values:
            found: _V = values[compute]
            return found
        result = values[compute] = compute(message)
        return result


_NOTHING: Final = object()
SNIFF_PASS: Final = SniffPass()


class NotFast(Exception):
    """A fast path cannot promise the reference result for this message."""


FAST_REFUSALS: Final = (NotFast, ValueError, ArithmeticError)
"""What a fast path raises to leave a message to the reference decoder: NotFast, or what a
typed decode (msgspec's errors, invalid UTF-8) or a value conversion raises for input it
refuses. Anything else escaping a fast path is a bug, reported as a DecodeError."""


class Cache(OrderedDict[_K, _V]):
    """The formats' one memo (plans, types, shapes): at most ``size`` entries; when it
    is full, the oldest entry makes room (first in, first out).

    A lookup is a plain ``dict.get`` (the fast paths look up once per message or
    column), an eviction O(1); an entry evicted while still in use is built again at
    its next use.

    >>> cache: Cache[str, int] = Cache(2)
    >>> cache.put("a", 1), cache.put("b", 2), cache.get("a"), cache.put("c", 3)
    (1, 2, 1, 3)
    >>> cache.get("a") is None, list(cache)
    (True, ['b', 'c'])
    """

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: _K, value: _V) -> _V:
        """Keep ``value`` for ``key`` (the oldest entry goes when the cache is full)."""
        if len(self) >= self.size and key not in self:
            self.popitem(last=False)
        self[key] = value
        return value


class PlanCache(Cache[Any, Any]):
    """Fast-path plans by the raw bytes of a schema: a :class:`Cache` with a build budget.

    Building a plan (msgspec types and decoders for a table) costs as much as a few
    hundred messages, so when a topic's tables outnumber the cache and plans keep
    being rebuilt, builds stop until enough messages found their plan cached:
    each hit earns a credit, a build costs :attr:`BUILD_COST` of them (a miss
    without credits raises NotFast: the reference decoder takes the message).
    """

    __slots__ = ("_credits",)
    BUILD_COST: ClassVar[int] = 32
    CREDIT_CAP: ClassVar[int] = 128 * 32  # also the credits of a new cache: 128 builds

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self._credits = self.CREDIT_CAP

    def plan(self, key: Any, build: Callable[[], Any]) -> Any:
        """The plan of ``key``, built by ``build()`` on a miss (budget permitting)."""
        plan = self.get(key)
        if plan is not None:
            if self._credits < self.CREDIT_CAP:
                self._credits += 1
            return plan
        if self._credits < self.BUILD_COST:
            raise NotFast  # rebuilding plans all the time: the slow path is cheaper
        self._credits -= self.BUILD_COST
        return self.put(key, build())


# Rows are decoded as ``dict[Literal[<the schema's columns>], str | None]``: keys keep
# their JSON order (a repeated key keeps its first place and its last value, as in a
# plain dict), a key the schema lacks fails the decode (so does any value but text
# or null: the reference parsers take those their own ways). The texts of the
# non-text columns of a row are then typed in ONE msgspec call: they are joined
# into a JSON array of strings, decoded with ``strict=False`` into a tuple typed
# per column (ints, decimals, booleans, dates, datetimes parsed in C). Where
# msgspec's lax parsing differs from the reference parsers, it is closed:
# * a text holding ``"`` or ``\`` could change the array: refused;
# * "1.0", "1e3", "NaN" become floats for an ``int | float`` column (they would
#   not be refused by ``int`` alone: msgspec rounds them): ``NO_FLOAT`` refuses
#   every float, the reference parser decides (exact Decimal arithmetic);
# * msgspec reads the decimal "-0" as 0 (Decimal("-0") keeps the sign) and the
#   boolean "-0" as false (parse_bool refuses it): refused;
# * msgspec accepts a ``t`` separator and rounds digits past microseconds in a
#   datetime (the reference parser refuses ``t`` and truncates): refused;
# * the text "null" becomes None where None is allowed: no type allows it here.
# The rows with nulls in such columns use a tuple type of their non-null columns.
TEXT: Final[Any] = str | None
NO_FLOAT: Final[Any] = Annotated[float, msgspec.Meta(gt=0.0, lt=0.0)]
NAIVE_DATETIME: Final[Any] = Annotated[dt.datetime, msgspec.Meta(tz=False)]
_ROW_TYPE: Final[Any] = dict  # subscripted with a Literal of names: mypy wants literals
_TYPED_DICT: Final[Any] = TypedDict  # called with a dict of types (mypy wants literals)
_TUPLE_TYPE: Final[Any] = tuple
_ISO_MAX: Final = len("2024-01-31 23:59:58.123456")
_AS_DICT: Final = msgspec.structs.asdict


_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def lax_int(low: int | None = None, high: int | None = None) -> Any:
    """The msgspec type of an integer text (``strict=False``) in a range; None when
    msgspec cannot check the range (bounds beyond int64: ``uint64``)."""
    if low is None or high is None:
        return int | NO_FLOAT
    if low < _INT64_MIN or high > _INT64_MAX:
        return None
    return Annotated[int, msgspec.Meta(ge=low, le=high)] | NO_FLOAT


@dataclass(frozen=True, slots=True)
class FastColumn:
    """How :class:`FastRows` types the text of one column.

    ``convert`` gives what the reference parser gives for every text it accepts
    (and raises for the others); None: the text is the value. ``lax``: the msgspec
    type (``strict=False``) that gives the same from the text, for the batch
    typing; None: ``convert`` is applied in Python. ``iso``: a naive datetime
    column (the ``t``/microsecond checks apply).
    """

    convert: Callable[[str], Any] | None = None
    lax: Any = None
    iso: bool = False


def _plain_name(name: str) -> bool:
    """A column name usable as a Struct field (ASCII identifier, no dunder)."""
    return name.isascii() and name.isidentifier() and not name.startswith("__")


class _Batch:
    """The columns of a row typed in one msgspec call (those given as non-null).

    The texts are joined into ``["t1","t2",...]`` and decoded into an array-like
    Struct (its fields in C, turned into a dict by ``asdict``), or a tuple when a
    name cannot be a field. With no backslash in the joined text, the decode only
    succeeds when no text holds a quote: a JSON array of n strings and nothing else
    has exactly 2n quotes (so the texts decoded are exactly the texts given).
    """

    __slots__ = ("as_dict", "decode", "get", "iso", "minus_zero", "names")

    def __init__(self, columns: Sequence[tuple[str, FastColumn]]) -> None:
        names = tuple(name for name, _ in columns)
        self.names = names
        self.get: Callable[[Any], tuple[Any, ...]] = (
            itemgetter(*names) if len(names) > 1 else lambda row: (row[names[0]],)
        )
        fields = [(name, col.lax) for name, col in columns]
        if all(_plain_name(name) for name in names):
            struct = msgspec.defstruct("Batch", fields, array_like=True)
            self.decode: Callable[[str], Any] = msgspec.json.Decoder(struct, strict=False).decode
            self.as_dict = True
        else:
            types = _TUPLE_TYPE[tuple(col.lax for _, col in columns)]
            self.decode = msgspec.json.Decoder(types, strict=False).decode
            self.as_dict = False
        self.minus_zero = any(col.lax is Decimal or col.lax is bool for _, col in columns)
        self.iso = tuple(i for i, (_, col) in enumerate(columns) if col.iso)


class FastRows:
    """Decodes JSON arrays of text rows (objects) of one schema, and types rows.

    ``columns`` maps every column of the schema to its :class:`FastColumn`.
    Anything the exact conversions refuse raises one of :data:`FAST_REFUSALS`.
    """

    _MAX_NULL_PATTERNS: ClassVar[int] = 64

    def __init__(self, columns: Mapping[str, FastColumn]) -> None:
        if not columns:
            raise NotFast  # no columns: nothing to type (the slow path handles it)
        names = Literal[tuple(columns)]  # type: ignore[valid-type]
        row_type = _ROW_TYPE[names, TEXT]
        self._decode = msgspec.json.Decoder(list[row_type] | None).decode  # type: ignore[valid-type]
        self.convert_of = {n: col.convert for n, col in columns.items() if col.convert is not None}
        self._lax = [(n, col) for n, col in columns.items() if col.lax is not None]
        self._batch = _Batch(self._lax) if self._lax else None
        self._by_nulls: Cache[tuple[bool, ...], tuple[_Batch | None]] = Cache(
            self._MAX_NULL_PATTERNS
        )
        # applied in Python: the columns without a batch type
        self.conversions = tuple(
            (n, col.convert) for n, col in columns.items() if col.lax is None and col.convert
        )

    def decode(self, raw: bytes | msgspec.Raw) -> list[dict[str, Any]] | None:
        """The rows of a JSON array (or null), still text."""
        rows: list[dict[str, Any]] | None = self._decode(raw)
        return rows

    def type_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """Type the non-text columns of a decoded row (holding every column), in place."""
        batch = self._batch
        if batch is not None:
            texts = batch.get(row)
            if None in texts:
                batch = self._without_nulls(texts)
                texts = batch.get(row) if batch is not None else ()
            if batch is not None:
                text = '["' + '","'.join(texts) + '"]'
                if "\\" in text or (batch.minus_zero and '"-0"' in text):
                    raise NotFast
                for i in batch.iso:
                    if "t" in texts[i] or len(texts[i]) > _ISO_MAX:
                        raise NotFast
                if batch.as_dict:
                    row.update(_AS_DICT(batch.decode(text)))
                else:
                    row.update(zip(batch.names, batch.decode(text), strict=True))
        for name, convert in self.conversions:
            value = row[name]
            if value is not None:
                row[name] = convert(value)
        return row

    def type_into(self, row: Mapping[str, Any], out: dict[str, Any]) -> dict[str, Any]:
        """Write a decoded row (any subset of the columns) into ``out``, typed value by
        value with the exact conversions."""
        convert_of = self.convert_of
        for name, value in row.items():
            if value is not None and name in convert_of:
                value = convert_of[name](value)
            out[name] = value
        return out

    def _without_nulls(self, texts: tuple[Any, ...]) -> _Batch | None:
        nulls = tuple(map(is_, texts, repeat(None)))[: len(self._lax)]
        known = self._by_nulls.get(nulls)
        if known is not None:
            return known[0]
        columns = [col for col, null in zip(self._lax, nulls, strict=True) if not null]
        batch = _Batch(columns) if columns else None
        self._by_nulls.put(nulls, (batch,))
        return batch


# JSON-typed rows (numbers as numbers, as DataWorks and OMS write them) are decoded with
# strict msgspec types per column (a TypedDict per schema): a JSON integer for an
# integer column, a number or text for a decimal column (exact, as parse_decimal
# of what parse_json gives), text for a text column, true/false for a boolean,
# anything for an untyped one; other columns are converted in Python after. A
# TypedDict drops keys it does not know (and non-ASCII keys, in msgspec 0.22), so
# the row's quotes are counted: every key is two quote bytes, every string value
# two, and the bytes of any other value hold none or more. The row (and its wrapper)
# has at least ``2 x keys decoded + 2 x values known to be texts`` quotes (values of a
# text-only type, and strings in untyped columns); when the bytes hold exactly that
# many, no key was dropped or repeated and no other value held one.
_TEXT_TYPES: Final[tuple[Any, ...]] = (str | None, dt.date | None)  # only from JSON strings


class TypedRows:
    """Decodes one JSON-typed row object, or ``{wrapper: row}``, of one schema.

    ``columns`` maps every column to (its strict msgspec type, a Python conversion
    applied to its non-null value after, or None). ``raw_key``: a key that is not a
    column, whose value must be the bytes ``raw_value`` (it is dropped from the row).
    Raises when a key is not a column, a key repeats, a column is missing, or a value
    does not fit its type.
    """

    def __init__(
        self,
        columns: Mapping[str, tuple[Any, Callable[[Any], Any] | None]],
        wrapper: str | None,
        raw_key: str | None = None,
        raw_value: bytes = b"",
    ) -> None:
        fields = {name: typ for name, (typ, _) in columns.items()}
        if raw_key is not None:
            if raw_key in fields:
                raise NotFast
            fields[raw_key] = msgspec.Raw
        row = _TYPED_DICT("Row", fields, total=False)
        self._inner: Callable[[Any], dict[str, Any]] | None = None
        if wrapper is None:
            self._decode = msgspec.json.Decoder(row, float_hook=Decimal).decode
        else:
            image = msgspec.defstruct("Image", [(wrapper, row)], forbid_unknown_fields=True)
            self._decode = msgspec.json.Decoder(image, float_hook=Decimal).decode
            self._inner = attrgetter(wrapper)
        self.conversions = tuple((name, conv) for name, (_, conv) in columns.items() if conv)
        self.width = len(fields)
        self._raw_key = raw_key
        self._raw_value = msgspec.Raw(raw_value)
        texts = tuple(name for name, (typ, _) in columns.items() if typ in _TEXT_TYPES)
        self._texts: Callable[[dict[str, Any]], tuple[Any, ...]] | None = (
            None
            if not texts
            else itemgetter(*texts)
            if len(texts) > 1
            else lambda row: (row[texts[0]],)
        )
        self._untyped = tuple(name for name, (typ, _) in columns.items() if typ is Any)
        self._quotes = (
            2 * (len(fields) + len(texts)) + (2 if wrapper else 0) + raw_value.count(b'"')
        )

    def decode(self, raw: bytes | msgspec.Raw) -> dict[str, Any]:
        """The typed row of a whole image (every column present), or a fast-path refusal."""
        image = self._decode(raw)
        row: dict[str, Any] = image if self._inner is None else self._inner(image)
        if len(row) != self.width:
            raise NotFast  # a missing or unknown column
        quotes = self._quotes
        if self._texts is not None:
            quotes -= 2 * self._texts(row).count(None)
        for name in self._untyped:
            if type(row[name]) is str:
                quotes += 2
        if bytes(raw).count(b'"') != quotes:
            raise NotFast  # a dropped or repeated key (or a quote in a text)
        if self._raw_key is not None and row.pop(self._raw_key) != self._raw_value:
            raise NotFast
        for name, convert in self.conversions:
            value = row[name]
            if value is not None:
                row[name] = convert(value)
        return row


# The strict msgspec type of a JSON-typed value (numbers as JSON numbers, texts as
# strings) per logical type, with the conversion applied after it, for formats whose
# reference parsers follow :func:`generic_parser` for the values these types take:
# an integer column takes a JSON integer in range (not true/false: parse_int makes
# them 1/0); a boolean true/false or 1/0 (``bool``: what parse_bool gives); a decimal
# a number or text (msgspec builds ``Decimal`` from the number's text or the string:
# what parse_json + parse_decimal give); a text column a string; a date ISO
# ``YYYY-MM-DD`` text (msgspec takes a subset of what ``date.fromisoformat`` takes); a
# zone-less timestamp an ISO text with at most microseconds (see
# :func:`naive_datetime_text`). Any other type is taken as parse_json gives it and
# converted by the format's own parser. Whatever a type refuses: the slow path.
_NAIVE_TEXT: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?"
)
_FROM_ISO: Final = dt.datetime.fromisoformat
_JSON_BOOL: Final[Any] = bool | Literal[0, 1] | None


def naive_datetime_text(raw: str) -> dt.datetime:
    """What ``parse_datetime(raw)`` gives for ``YYYY-MM-DD[ T]HH:MM:SS[.ffffff]`` (ASCII
    digits; ``fromisoformat`` in C refuses invalid dates as it does); NotFast for any
    other text (zones, whitespace, nanoseconds, no seconds: the reference parser decides)."""
    if _NAIVE_TEXT.fullmatch(raw) is None:
        raise NotFast
    return _FROM_ISO(raw)


def _uint64(value: int) -> int:
    if 0 <= value <= 2**64 - 1:
        return value
    raise NotFast


def json_value_type(
    ltype: LogicalType, parser: Callable[[Any], Any] | None, tz: dt.tzinfo | None
) -> tuple[Any, Callable[[Any], Any] | None]:
    """(strict msgspec type, conversion or None) of a JSON-typed column of ``ltype``
    whose reference parser is ``parser`` (None: the value is kept as sent) and whose
    zone-less datetimes get the zone ``tz``."""
    name = ltype.name
    if parser is None:
        return Any, None
    if name == "uint64":
        return int | None, _uint64
    if name in INTEGER_RANGES:
        low, high = INTEGER_RANGES[name]
        return Annotated[int, msgspec.Meta(ge=low, le=high)] | None, None
    if name == "integer":
        return int | None, None
    if name == "boolean":
        return _JSON_BOOL, bool
    if name == "decimal":
        return Decimal | None, None
    if name in ("string", "json"):
        return str | None, None
    if name == "date":
        return dt.date | None, None
    if name == "timestamp" and tz is None:
        return str | None, naive_datetime_text
    return Any, parser
