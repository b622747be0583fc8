"""The contract every format implements, and the helpers they share.

A format is one class with an ``id``, a ``sniff`` (how sure it is that a
parsed message is its own), ``decode`` (message -> events) and, for all but
``drs-avro``, ``encode`` (event -> messages). Decoders are pure: no I/O, no
Spark, no module state; all configuration arrives as options at construction.

The helpers live by role and stay importable from here: options in
:mod:`~anycdc.formats.options`, value parsing and field access in
:mod:`~anycdc.formats.parsing`, what fast paths share (caches, typed row readers) in
:mod:`~anycdc.formats.fastpath`.

>>> from anycdc.formats import get_format
>>> fmt = get_format("canal-json", {"primary_key": "id"})
>>> fmt.options.primary_key
('id',)
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any, ClassVar, Final, TypeVar

import msgspec

from anycdc.errors import DecodeError, EncodeError
from anycdc.event import ROW_OPS, ChangeEvent, Column, Op, dumps, value_to_json

# re-exported: what formats imported from base before it was split (issue #28)
from anycdc.formats.fastpath import (
    FAST_REFUSALS,
    NAIVE_DATETIME,
    NO_FLOAT,
    NULL_RAW,
    SNIFF_PASS,
    TEXT,
    Cache,
    FastColumn,
    FastRows,
    NotFast,
    PlanCache,
    SniffPass,
    TextRows,
    TypedRows,
    json_value_type,
    lax_int,
    naive_datetime_text,
)
from anycdc.formats.options import COMMON_OPTIONS as COMMON_OPTIONS
from anycdc.formats.options import OptionSpec as OptionSpec
from anycdc.formats.options import build_options
from anycdc.formats.parsing import (
    VALUE_ERRORS,
    Parser,
    column_parser,
    convert_values,
    expect_list,
    expect_object,
    expect_str,
    generic_parser,
    optional_int,
    optional_str,
    require,
)
from anycdc.values import (
    EPOCH,
    LogicalType,
)

# JSON floats become Decimal so a DECIMAL never passes through a double;
# integers of any size stay exact (msgspec keeps them as Python ints).
JSON_DECODER: Final = msgspec.json.Decoder(float_hook=Decimal)
MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
NAMED_OPS: Final = ROW_OPS | {Op.TRUNCATE}
"""The ops whose events must name their table: row changes and truncates (the pipeline
could apply them to no table: :meth:`anycdc.decoding.MessageDecoder.decode` refuses them
without one, with :meth:`Format.unnamed_table`)."""
_T = TypeVar("_T")


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
        caches, often of closures; a clone builds its own (and keeps canonical text when
        the original did: :meth:`keep_canonical_text`)."""
        if self.canonical_text:
            return (type(self), (dict(self.options.values),), {"canonical_text": True})
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
    sniff_fields: ClassVar[frozenset[str] | None] = None
    """None (the default, always sound): :meth:`sniff` reads the message's content, and is
    asked about every message. A set is a promise that the score is a function of the
    envelope shape alone: the top-level keys in order, each top-level value's type, the
    values of these top-level fields when they are ``str``/``int``/``bool``/None (of any
    other value, its type only), and the results of :attr:`sniff_evidence`. Detection then
    keeps the score per shape (:func:`anycdc.formats.detect_parsed`); the differential test
    against :func:`anycdc.formats.detect_parsed_reference` checks the promise."""
    sniff_evidence: ClassVar[tuple[str, ...]] = ()
    """With :attr:`sniff_fields`: the per-message evidence (``"module:function"`` of the
    message, hashable result, imported on first use) the score also depends on, such as
    DRS' evidence that tells DRS from Canal in one envelope."""

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

    canonical_text: bool = False
    """Set by :meth:`keep_canonical_text`: the events' images may hold canonical text."""

    def keep_canonical_text(self) -> None:
        """Let the events' images hold, in place of typed values, their canonical text.

        For the changelog stage only (:class:`anycdc.spark.decode.ChangelogRows`), which
        renders every value of an image by :func:`anycdc.changelog.value_text` anyway: a
        format may then give an image as a :class:`~anycdc.changelog.CanonicalImage`, whose
        values are the text the stage would render, without typing a text it can prove to
        be canonical already (the Canal family's fast path: see
        :class:`~anycdc.formats.fastpath.TextRows`). Other formats ignore it; the events'
        other fields are the same either way. Call it before decoding: formats whose plans
        depend on it drop those built (:meth:`reset_plans`).
        """
        self.canonical_text = True
        self.reset_plans()

    def reset_plans(self) -> None:  # noqa: B027 (a hook: without plans, nothing to drop)
        """Forget the fast path's cached plans (a format that caches them overrides it)."""

    def decode(
        self, value: bytes | bytearray | memoryview | str | None, key: bytes | None = None
    ) -> list[ChangeEvent]:
        """Decode one Kafka message value (``None`` = tombstone) into events."""
        if self.fast_path and type(value) is bytes and len(value) <= MAX_MESSAGE_BYTES:
            try:
                return self.decode_fast(value, key)
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
                return self.decode_fast(value, key)
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

    def decode_fast(self, value: bytes, key: bytes | None = None) -> list[ChangeEvent]:
        """The fast path for the common message (formats with one set ``fast_path``);
        ``key``: the message's Kafka key (a format whose events read it: Debezium's key
        columns).

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
            name: None
            if col.type.name == "unknown"
            else column_parser(self.value_parser(col.type), col.type, col.vendor_type)
            for name, col in columns.items()
        }
        return convert_values(raw, parsers, invalid)


__all__ = [
    "FAST_REFUSALS",
    "JSON_DECODER",
    "MAX_MESSAGE_BYTES",
    "NAIVE_DATETIME",
    "NAMED_OPS",
    "NO_FLOAT",
    "NULL_RAW",
    "SNIFF_PASS",
    "TEXT",
    "VALUE_ERRORS",
    "BeforeImage",
    "Cache",
    "Capabilities",
    "FastColumn",
    "FastRows",
    "Format",
    "NotFast",
    "Parser",
    "PlanCache",
    "SniffPass",
    "TextRows",
    "TypeInfo",
    "TypedRows",
    "column_parser",
    "convert_values",
    "expect_list",
    "expect_object",
    "expect_str",
    "generic_parser",
    "json_value_type",
    "lax_int",
    "naive_datetime_text",
    "optional_int",
    "optional_str",
    "parse_json",
    "require",
]
