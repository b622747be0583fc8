"""What fast paths share: :class:`NotFast` and the refusals, the sniffers' shared pass,
bounded caches (:class:`Cache`, :class:`PlanCache`) and the typed msgspec row readers
(:class:`FastRows`, :class:`TypedRows`)."""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import repeat
from operator import attrgetter, is_, itemgetter
from typing import Annotated, Any, ClassVar, Final, Literal, TypedDict, TypeVar

import msgspec

from anycdc.changelog import CanonicalImage, value_text
from anycdc.typemap import integer_range
from anycdc.values import (
    LogicalType,
)

_K = TypeVar("_K")
_V = TypeVar("_V")


# --------------------------------------------------------------------------- fast paths
# Fast paths decode the common message with msgspec into typed structures and
# must give exactly what the format's reference path gives. Whenever they cannot
# promise that (a value the fast conversions refuse, an unknown column, ...) they
# raise one of FAST_REFUSALS and the whole message goes through the reference
# decoder, which decides (invalid values, widened columns, errors); the format
# counts it in ``fast_fallbacks``. The Structs they decode a message's envelope into are
# ``gc=False``: built and freed once per message, never part of a reference cycle (they
# hold decoded values only), so the cycle collector need not track them.
NULL_RAW: Final = msgspec.Raw(b"null")
"""The default of a ``msgspec.Raw`` field the fast paths read (an absent image is null)."""


class SniffPass(threading.local):
    """The message one detection pass asks its candidate formats about, and what their
    sniffers compute from it alike: the four Canal-shaped sniffers each read DRS' evidence
    (:func:`anycdc.formats.canal.detect.drs_evidence`), the costliest sniff, which is read once per
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
    column (the ``t``/microsecond checks apply). ``canonical``: for text images.
    """

    convert: Callable[[str], Any] | None = None
    lax: Any = None
    iso: bool = False
    canonical: str | None = None
    """A regular expression of texts whose value (what ``convert`` gives) has a canonical
    text :class:`TextRows` can write without it: the text itself (e.g.
    :func:`~anycdc.values.canonical_int_pattern` of the column's bounds), or
    ``canonical_form`` of it. None: every text is typed (text columns need none: their text
    is their value)."""
    canonical_form: Callable[[str], str] | None = None
    """The canonical text of a text ``canonical`` matches (None: the text as it is; e.g.
    :func:`~anycdc.values.iso_datetime_text`)."""


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
        # the rows of a JSON array (or null), still text: msgspec's own method, no Python
        # call around it (once or twice a message)
        self.decode: Callable[[bytes | msgspec.Raw], list[dict[str, Any]] | None] = (
            msgspec.json.Decoder(list[row_type] | None).decode  # type: ignore[valid-type]
        )
        self.width = len(columns)  # a decoded row of this many keys holds every column
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

    def type_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """Type the non-text columns of a decoded row, in place; NotFast unless the row
        holds every column (a partial row is the reference path's: it marks it partial)."""
        if len(row) != self.width:
            raise NotFast
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


class _TextCheck:
    """One test of the texts of several columns: joined by a comma, fully matched by one
    expression of their patterns, in C. No pattern takes a comma, so the joined text
    matches exactly when every text matches its own column's pattern."""

    __slots__ = ("get", "match")

    def __init__(self, columns: Sequence[tuple[str, str]]) -> None:
        names = tuple(name for name, _ in columns)
        self.get: Callable[[Any], tuple[Any, ...]] = (
            itemgetter(*names) if len(names) > 1 else lambda row: (row[names[0]],)
        )
        joined = ",".join(f"(?:{pattern})" for _, pattern in columns)
        self.match: Callable[[str], Any] = re.compile(joined).fullmatch


class TextRows(FastRows):
    """:class:`FastRows` for images of canonical text (:class:`~anycdc.changelog.CanonicalImage`:
    :meth:`~anycdc.formats.base.Format.keep_canonical_text`).

    A plan of the same typing: a row's texts in columns with a ``canonical`` pattern are
    tested at once (:class:`_TextCheck`) and, all matching, kept as sent (or written in
    their ``canonical_form``: a datetime's ``T``); the other typed
    columns are typed as :class:`FastRows` types them (the same conversions, in the same
    batch) and rendered by :func:`~anycdc.changelog.value_text`. A row whose texts do not all
    match is typed whole, then rendered. Whatever the typing refuses, it refuses here
    too (the reference path decides), so a row is the typed row rendered, value for value:
    the pattern is the proof that a kept text is its value's rendering (tests:
    tests/unit/test_text_images.py).
    """

    def __init__(self, columns: Mapping[str, FastColumn]) -> None:
        super().__init__(columns)  # decodes rows; types a row the patterns do not take
        kept = [(n, col.canonical) for n, col in columns.items() if col.canonical is not None]
        rest = {n: FastColumn() if col.canonical is not None else col for n, col in columns.items()}
        self._rest = FastRows(rest) if any(col.convert for col in rest.values()) else None
        self._kept = tuple(kept)
        self._check = _TextCheck(kept) if kept else None
        self._checks: Cache[tuple[bool, ...], tuple[_TextCheck | None]] = Cache(
            self._MAX_NULL_PATTERNS
        )
        self._rendered = tuple(n for n, col in rest.items() if col.convert is not None)
        self._typed = tuple(n for n, col in columns.items() if col.convert is not None)
        self._pattern_of = {n: re.compile(pattern).fullmatch for n, pattern in kept}
        self._form_of = {
            n: col.canonical_form for n, col in columns.items() if col.canonical_form is not None
        }
        self._forms = tuple(self._form_of.items())

    def type_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """The row's canonical texts, as a :class:`~anycdc.changelog.CanonicalImage`;
        NotFast unless the row holds every column (as :meth:`FastRows.type_row`)."""
        return CanonicalImage(self._text_row(row))

    def type_into(self, row: Mapping[str, Any], out: dict[str, Any]) -> dict[str, Any]:
        """Write a decoded row (any subset of the columns) into ``out`` (an image's texts),
        as canonical text; a :class:`~anycdc.changelog.CanonicalImage`."""
        if len(row) == self.width and type(row) is dict:
            out.update(self._text_row(row))  # a whole row (DTS' ``old``): as type_row
            return CanonicalImage(out)
        convert_of, pattern_of = self.convert_of, self._pattern_of
        for name, value in row.items():
            if value is not None and name in convert_of:
                kept = pattern_of.get(name)
                if kept is None or kept(value) is None:
                    value = value_text(convert_of[name](value))
                elif name in self._form_of:
                    value = self._form_of[name](value)
            out[name] = value
        return CanonicalImage(out)

    def _text_row(self, row: dict[str, Any]) -> dict[str, Any]:
        if len(row) != self.width:
            raise NotFast
        check = self._check
        if check is not None:
            texts = check.get(row)
            if None in texts:
                check = self._without_null_texts(texts)
                texts = check.get(row) if check is not None else ()
            if check is not None and check.match(",".join(texts)) is None:
                return self._rendered_row(FastRows.type_row(self, row), self._typed)
        for name, form in self._forms:
            value = row[name]
            if value is not None:
                row[name] = form(value)
        if self._rest is not None:
            self._rest.type_row(row)
            return self._rendered_row(row, self._rendered)
        return row

    @staticmethod
    def _rendered_row(row: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
        for name in names:
            value = row[name]
            if value is not None:
                row[name] = value_text(value)
        return row

    def _without_null_texts(self, texts: tuple[Any, ...]) -> _TextCheck | None:
        nulls = tuple(map(is_, texts, repeat(None)))
        known = self._checks.get(nulls)
        if known is not None:
            return known[0]
        kept = [col for col, null in zip(self._kept, nulls, strict=True) if not null]
        check = _TextCheck(kept) if kept else None
        self._checks.put(nulls, (check,))
        return check


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
    ltype: LogicalType,
    parser: Callable[[Any], Any] | None,
    tz: dt.tzinfo | None,
    vendor_type: str | None = None,
) -> tuple[Any, Callable[[Any], Any] | None]:
    """(strict msgspec type, conversion or None) of a JSON-typed column of ``ltype``
    and vendor type name ``vendor_type`` whose reference parser is ``parser`` (None: the
    value is kept as sent) and whose zone-less datetimes get the zone ``tz``. An integer
    is held to the column's :func:`~anycdc.typemap.integer_range` (as the reference
    parser, :func:`~anycdc.formats.parsing.column_parser`, holds it)."""
    name = ltype.name
    if parser is None:
        return Any, None
    bounds = integer_range(ltype, vendor_type)
    if bounds is not None:
        low, high = bounds
        if high > _INT64_MAX:  # msgspec checks bounds within int64 only
            return int | None, _uint64
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
