"""MongoDB documents as text: the shell's SHELL JSON mode and Extended JSON.

Huawei DRS writes MongoDB documents in the text the Java driver's SHELL mode
prints (``ObjectId("...")``, ``ISODate("...")``, ``NumberLong("...")``, ...);
Debezium's MongoDB connector writes Extended JSON (v1 strict, v2 relaxed or
canonical). Both are read into the same parsed values (:class:`Bson` for the
types JSON lacks) and typed the same way, so ``drs-mongo-json`` and
``debezium-json`` give one document the same image and columns:

* :func:`parse_shell` reads shell text (a recursive-descent parser, never
  ``eval``, with a nesting limit of :data:`MAX_DEPTH`; the common document is
  first rewritten into JSON for msgspec, ~2.5x faster with the same result);
* :func:`from_ejson` reads Extended JSON; :func:`ejson_document` and
  :func:`ejson_field` type a document or a field given in it;
* :func:`document_image` types a parsed document; :func:`to_ejson` renders a
  value as relaxed Extended JSON (nested documents are ``json`` text);
* :func:`shell_text`, :func:`document_text` and :func:`ejson_fields` write back.

>>> doc = parse_shell('{"_id": ObjectId("64650cf67dc36a464e76e583"), "n": NumberLong("5")}')
>>> document_image(doc)[0]
{'_id': '64650cf67dc36a464e76e583', 'n': 5}
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import math
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

import msgspec

from anycdc.errors import DecodeError, type_name
from anycdc.event import Column, dumps
from anycdc.formats.base import FAST_REFUSALS, NotFast
from anycdc.formats.codecs.java import java_double, plain_decimal
from anycdc.formats.codecs.text import KIND_VALUE, ValueText, render_value
from anycdc.values import (
    BINARY,
    BOOLEAN,
    DECIMAL,
    FLOAT64,
    INT32,
    INT64,
    INTEGER,
    JSON,
    STRING,
    TIMESTAMPTZ,
    UNKNOWN,
    epoch_ms,
    parse_datetime,
    timestamp_from_epoch,
)

# MongoDB's update operators that a patch names
SET: Final = "$set"
UNSET: Final = "$unset"

#: most levels of nested documents/arrays accepted, the outer document included (as BSON)
MAX_DEPTH: Final = 100
_INT32: Final = (-(2**31), 2**31 - 1)
_INT64: Final = (-(2**63), 2**63 - 1)
# the Java driver writes ISODate(...) for years 100..9999 and new Date(ms) outside them
_ISO_MIN_MS: Final = -59014396800000
_ISO_MAX_MS: Final = 253402300799999


# --------------------------------------------------------------------------- parsed values
@dataclass(frozen=True, slots=True)
class Bson:
    """A BSON value the shell writes with a constructor; ``kind`` is its BSON type alias.

    ``objectId`` (hex str), ``long`` (int), ``decimal`` (Decimal), ``date``
    (aware UTC datetime), ``timestamp`` ((t, i)), ``binData`` ((sub_type, bytes)),
    ``uuid`` (str), ``regex`` ((pattern, options)), ``minKey``, ``maxKey``,
    ``undefined`` (value None). Plain JSON values stay Python values: str, bool,
    None, int (int32), float (double), dict, list.
    """

    kind: str
    value: Any = None


_WS: Final = re.compile(r"\s*")
_NUMBER: Final = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?")
_IDENT: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_DQ_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SQ_STRING: Final = re.compile(r"'(?:[^'\\]|\\.)*'", re.DOTALL)
_REGEX: Final = re.compile(r"/((?:[^/\\\n]|\\.)+)/([a-z]*)")
_HEX24: Final = re.compile(r"[0-9a-fA-F]{24}")
_DRIVER_DATE: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"
)
_STR_DECODER: Final = msgspec.json.Decoder(str)
_JSON_DECODER: Final = msgspec.json.Decoder()
_KEYWORDS: Final[dict[str, Any]] = {
    "true": True,
    "false": False,
    "null": None,
    "undefined": Bson("undefined"),
    "NaN": math.nan,
    "Infinity": math.inf,
    "MinKey": Bson("minKey"),
    "MaxKey": Bson("maxKey"),
}


class _ShellParser:
    """Recursive descent over MongoDB shell-style document text; never evaluates code."""

    def __init__(self, text: str, format_id: str, path: str) -> None:
        self.text = text
        self.pos = 0
        self.format_id = format_id
        self.path = path

    def fail(self, reason: str) -> DecodeError:
        return DecodeError(self.format_id, self.path, f"{reason} at offset {self.pos}")

    def document(self) -> dict[str, Any]:
        value = self.value(0)
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("unexpected text after the document")
        if not isinstance(value, dict):
            raise DecodeError(
                self.format_id, self.path, f"expected a document, got {_kind_name(value)}"
            )
        return value

    def skip(self) -> None:
        match = _WS.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = repr(self.text[self.pos]) if self.pos < len(self.text) else "end of text"
            raise self.fail(f"expected {char!r}, got {found}")
        self.pos += 1

    def value(self, depth: int) -> Any:
        char = self.peek()
        if depth >= MAX_DEPTH and char in ("{", "["):
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        if char == "{":
            return self.obj(depth)
        if char == "[":
            return self.array(depth)
        if char in ('"', "'"):
            return self.string()
        if char == "-" and self.text.startswith("-Infinity", self.pos):
            self.pos += len("-Infinity")
            return -math.inf
        if char == "-" or char.isdigit():
            return self.number()
        if char == "/":
            return self.regex()
        if char and (char.isalpha() or char in "_$"):
            return self.name(depth)
        raise self.fail("unexpected end of text" if not char else f"unexpected {char!r}")

    def obj(self, depth: int) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        if self.peek() == "}":
            self.pos += 1
            return out
        while True:
            char = self.peek()
            if char in ('"', "'"):
                key = self.string()
            else:
                match = _IDENT.match(self.text, self.pos)
                if not match:
                    raise self.fail("expected a field name" if char else "unexpected end of text")
                key = match.group()
                self.pos = match.end()
            self.expect(":")
            out[key] = self.value(depth + 1)
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("}")
            return out

    def array(self, depth: int) -> list[Any]:
        self.pos += 1
        return self.items("]", depth)

    def items(self, close: str, depth: int) -> list[Any]:
        out: list[Any] = []
        if self.peek() == close:
            self.pos += 1
            return out
        while True:
            out.append(self.value(depth + 1))
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect(close)
            return out

    def string(self) -> str:
        quote = self.text[self.pos]
        match = (_DQ_STRING if quote == '"' else _SQ_STRING).match(self.text, self.pos)
        if not match:
            raise self.fail("unterminated string")
        raw = match.group()
        if quote == "'":
            body = re.sub(r"\\(.)|\"", _requote, raw[1:-1], flags=re.DOTALL)
            raw = f'"{body}"'
        try:
            text = _STR_DECODER.decode(raw.encode("utf-8", "surrogatepass"))
        except msgspec.DecodeError:
            raise self.fail("invalid string") from None
        self.pos = match.end()
        return text

    def number(self) -> int | float:
        match = _NUMBER.match(self.text, self.pos)
        if not match:
            raise self.fail("invalid number")
        self.pos = match.end()
        text = match.group()
        try:
            return float(text) if match.group(1) or match.group(2) else int(text)
        except ValueError:
            raise self.fail("number too long") from None

    def regex(self) -> Bson:
        match = _REGEX.match(self.text, self.pos)
        if not match:
            raise self.fail("invalid regular expression")
        self.pos = match.end()
        return Bson("regex", (match.group(1), match.group(2)))

    def name(self, depth: int) -> Any:
        match = _IDENT.match(self.text, self.pos)
        if not match:
            raise self.fail("expected a name")
        name = match.group()
        start = self.pos
        self.pos = match.end()
        if name == "new":
            self.skip()
            match = _IDENT.match(self.text, self.pos)
            if not match:
                raise self.fail("expected a constructor after 'new'")
            name = match.group()
            self.pos = match.end()
        elif name in _KEYWORDS and self.peek() != "(":
            return _KEYWORDS[name]
        if self.peek() != "(":
            self.pos = start
            raise self.fail(f"unknown name {name!r}")
        build = _CONSTRUCTORS.get(name)
        if build is None:
            self.pos = start
            raise self.fail(f"unknown constructor {name!r}")
        if depth >= MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        self.pos += 1
        args = self.items(")", depth)
        try:
            return build(args)
        except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
            self.pos = start
            raise self.fail(f"invalid {name}(...): {exc}") from None


def _requote(match: re.Match[str]) -> str:
    """Single-quoted string body -> double-quoted JSON body."""
    if match.group(0) == '"':
        return '\\"'
    return "'" if match.group(1) == "'" else match.group(0)


def _kind_name(value: Any) -> str:
    return value.kind if isinstance(value, Bson) else type_name(value)


# ---- constructors (each validates its arguments; ValueError/TypeError become DecodeErrors)
def _one(args: list[Any], *types: type) -> Any:
    if len(args) != 1 or not isinstance(args[0], types) or isinstance(args[0], bool):
        raise ValueError(f"expected one {' or '.join(t.__name__ for t in types)} argument")
    return args[0]


def _object_id(args: list[Any]) -> Bson:
    text = _one(args, str)
    if not _HEX24.fullmatch(text):
        raise ValueError("expected 24 hex digits")
    return Bson("objectId", text.lower())


def _date(args: list[Any]) -> Bson:
    raw = _one(args, str, int, float)
    if isinstance(raw, str):
        text = raw.strip()
        try:
            # what the Java driver writes, read as parse_datetime reads it (its zone: dt.UTC)
            if _DRIVER_DATE.fullmatch(text):
                value = dt.datetime.fromisoformat(text)
            else:
                value = parse_datetime(text, dt.UTC)
        except ValueError:
            value = dt.datetime.combine(dt.date.fromisoformat(text), dt.time(), dt.UTC)
        # a BSON date holds milliseconds
        value = value.astimezone(dt.UTC)
        return Bson("date", value.replace(microsecond=value.microsecond // 1000 * 1000))
    return Bson("date", timestamp_from_epoch(int(raw), 3))


def _integer(raw: Any, bounds: tuple[int, int]) -> int:
    if isinstance(raw, str):
        raw = int(raw.strip())
    if not isinstance(raw, int) or isinstance(raw, bool):
        raise ValueError("expected an integer")
    if not bounds[0] <= raw <= bounds[1]:
        raise ValueError(f"{raw} out of range")
    return raw


def _long(args: list[Any]) -> Bson:
    return Bson("long", _integer(_one(args, int, str), _INT64))


def _int32(args: list[Any]) -> int:
    return _integer(_one(args, int, str), _INT32)


def _decimal(args: list[Any]) -> Bson:
    raw = _one(args, str, int, float)
    try:
        return Bson("decimal", Decimal(raw.strip() if isinstance(raw, str) else repr(raw)))
    except InvalidOperation:
        raise ValueError(f"not a decimal: {raw!r}") from None


def _timestamp(args: list[Any]) -> Bson:
    if len(args) == 1 and isinstance(args[0], dict):
        args = [args[0].get("t"), args[0].get("i")]
    if len(args) != 2:
        raise ValueError("expected (seconds, increment)")
    return Bson("timestamp", (_integer(args[0], (0, 2**32 - 1)), _integer(args[1], (0, 2**32 - 1))))


def _bin_data(args: list[Any]) -> Bson:
    if len(args) != 2 or not isinstance(args[1], str):
        raise ValueError("expected (subType, base64)")
    sub_type = _integer(args[0], (0, 255))
    try:
        data = base64.b64decode(args[1], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("invalid base64") from None
    return Bson("binData", (sub_type, data))


def _hex_data(args: list[Any]) -> Bson:
    if len(args) != 2 or not isinstance(args[1], str):
        raise ValueError("expected (subType, hex)")
    return Bson("binData", (_integer(args[0], (0, 255)), bytes.fromhex(args[1])))


def _uuid(args: list[Any]) -> Bson:
    return Bson("uuid", str(uuid.UUID(_one(args, str))))


def _no_args(kind: str) -> Callable[[list[Any]], Bson]:
    def build(args: list[Any]) -> Bson:
        if args:
            raise ValueError("expected no arguments")
        return Bson(kind)

    return build


_CONSTRUCTORS: Final[dict[str, Callable[[list[Any]], Any]]] = {
    "ObjectId": _object_id,
    "ISODate": _date,
    "Date": _date,
    "NumberLong": _long,
    "Long": _long,
    "NumberInt": _int32,
    "Int32": _int32,
    "NumberDecimal": _decimal,
    "Decimal128": _decimal,
    "Timestamp": _timestamp,
    "BinData": _bin_data,
    "HexData": _hex_data,
    "UUID": _uuid,
    "MinKey": _no_args("minKey"),
    "MaxKey": _no_args("maxKey"),
}


# --------------------------------------------------------------------------- fast reading
# The common document is JSON plus constructor calls with literal arguments
# (``ObjectId("...")``, ``NumberDecimal("1.5")``, ``Timestamp(1, 2)``) and bare keys.
# :func:`_read_fast` rewrites those into JSON in one regex pass (each call becomes a
# marker object holding an index into the values the constructors built) and lets
# msgspec parse the rest. Whatever it is not sure of raises NotFast and the recursive
# parser reads the text, so both give the same result (tests compare them on fuzzed
# documents) and every error comes from the recursive parser.
_LITERAL: Final = r'(?:"[^"\\\n]*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)'
_SHELL_TOKENS: Final = re.compile(
    # strings, numbers (an exponent's letter too), punctuation: JSON as it is
    r'(?P<json>(?:[^"A-Za-z_$0-9]+|[0-9]+(?:[eE][+-]?[0-9]+)?|"[^"\\]*(?:\\.[^"\\]*)*"|(?:true|false|null)(?![A-Za-z0-9_$]))+)'
    rf"|(?P<call>(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)[ ]*\([ ]*(?P<args>{_LITERAL}"
    rf"(?:[ ]*,[ ]*{_LITERAL})*)?[ ]*\))"
    r"|(?P<key>[A-Za-z_$][A-Za-z0-9_$]*)(?=[ ]*:)"
    r"|(?P<word>[A-Za-z_$][A-Za-z0-9_$]*)",
    re.DOTALL,
)
_MARK: Final = "\x00"  # the marker key: no document key can be it (see _read_fast)
_MARKER: Final = '{{"\\u0000":{}}}'  # a marker object in JSON
_JSON_WORDS: Final = frozenset({"true", "false", "null"})


def _read_fast(text: str) -> dict[str, Any]:
    """The document, read the fast way, or NotFast (see the comment above)."""
    # a key "\u0000" would read as a marker; deep nesting: the parser enforces MAX_DEPTH
    if "\\u0000" in text or text.count("{") + text.count("[") >= MAX_DEPTH - 2:
        raise NotFast
    values: list[Any] = []

    def rewrite(match: re.Match[str]) -> str:
        kind = match.lastgroup
        if kind == "json":
            return match.group()
        if kind == "key":
            return f'"{match.group()}"'
        if kind == "word":
            word = match.group()
            if word in _JSON_WORDS:
                return word
            if word not in _KEYWORDS:
                raise NotFast
            values.append(_KEYWORDS[word])
        else:
            build = _CONSTRUCTORS.get(match.group("name"))
            if build is None:
                raise NotFast
            args = match.group("args")
            values.append(build(_JSON_DECODER.decode(f"[{args or ''}]")))
        return _MARKER.format(len(values) - 1)

    doc = _JSON_DECODER.decode(_SHELL_TOKENS.sub(rewrite, text).encode("utf-8", "surrogatepass"))
    if values:
        doc = _resolve(doc, values)
    if type(doc) is not dict:
        raise NotFast
    return doc


def _resolve(node: Any, values: list[Any]) -> Any:
    """``node`` with every marker object replaced by the value it indexes."""
    if type(node) is dict:
        if _MARK in node:
            return values[node[_MARK]]
        for name, item in node.items():
            if type(item) is dict:
                node[name] = values[item[_MARK]] if _MARK in item else _resolve(item, values)
            elif type(item) is list:
                node[name] = _resolve(item, values)
    elif type(node) is list:
        for index, item in enumerate(node):
            if type(item) is dict or type(item) is list:
                node[index] = _resolve(item, values)
    return node


def parse_shell(text: str, format_id: str = "drs-mongo-json", path: str = "$") -> dict[str, Any]:
    """Parse one shell-style document; errors are DecodeErrors naming ``path`` and the offset.

    >>> parse_shell('{"a": NumberLong("7"), b: [1, 2.5, ISODate("2023-05-17T12:00:00Z")]}')["a"]
    Bson(kind='long', value=7)
    >>> parse_shell('{"a": eval("x")}')
    Traceback (most recent call last):
    ...
    anycdc.errors.DecodeError: drs-mongo-json: $: unknown constructor 'eval' at offset 6
    """
    try:
        return _read_fast(text)
    except FAST_REFUSALS:  # anything unusual: the parser decides, and names the error
        return _ShellParser(text, format_id, path).document()


# --------------------------------------------------------------------------- to canonical
def to_ejson(value: Any) -> Any:
    """A parsed value as MongoDB Extended JSON (relaxed form): JSON-compatible Python."""
    if isinstance(value, dict):
        return {k: to_ejson(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_ejson(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return {
            "$numberDouble": "NaN"
            if math.isnan(value)
            else ("Infinity" if value > 0 else "-Infinity")
        }
    if not isinstance(value, Bson):
        return value
    kind, raw = value.kind, value.value
    if kind == "objectId":
        return {"$oid": raw}
    if kind == "long":
        return raw
    if kind == "decimal":
        return {"$numberDecimal": str(raw)}
    if kind == "date":
        ms = epoch_ms(raw)
        if 0 <= ms <= _ISO_MAX_MS:
            return {"$date": _iso_ms(raw)}
        return {"$date": {"$numberLong": str(ms)}}
    if kind == "timestamp":
        return {"$timestamp": {"t": raw[0], "i": raw[1]}}
    if kind == "binData":
        return {
            "$binary": {"base64": base64.b64encode(raw[1]).decode(), "subType": f"{raw[0]:02x}"}
        }
    if kind == "uuid":
        data = uuid.UUID(raw).bytes
        return {"$binary": {"base64": base64.b64encode(data).decode(), "subType": "04"}}
    if kind == "regex":
        return {"$regularExpression": {"pattern": raw[0], "options": raw[1]}}
    if kind == "undefined":
        return {"$undefined": True}
    return {f"${kind}": 1}  # minKey / maxKey


def _iso_ms(value: dt.datetime) -> str:
    value = value.astimezone(dt.UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


_STRING_COLUMN: Final = Column(STRING, "string")
_INT32_COLUMN: Final = Column(INT32, "int")
# columns of the BSON values whose canonical value is the parsed value itself
_PLAIN_BSON_COLUMNS: Final[Mapping[str, Column]] = {
    "objectId": Column(STRING, "objectId"),
    "uuid": Column(STRING, "uuid"),
    "long": Column(INT64, "long"),
    "decimal": Column(DECIMAL, "decimal"),
    "date": Column(TIMESTAMPTZ, "date"),
}


def _field(value: Any) -> tuple[Any, Column]:
    """A top-level field's canonical value and column."""
    # the common values first, by exact type (a column is immutable: shared)
    kind = type(value)
    if kind is str:
        return value, _STRING_COLUMN
    if kind is Bson and value.kind in _PLAIN_BSON_COLUMNS:
        return value.value, _PLAIN_BSON_COLUMNS[value.kind]
    if kind is int and _INT32[0] <= value <= _INT32[1]:
        return value, _INT32_COLUMN
    if value is None:
        return None, Column(UNKNOWN, "null")
    if isinstance(value, bool):
        return value, Column(BOOLEAN, "bool")
    if isinstance(value, int):
        if _INT32[0] <= value <= _INT32[1]:
            return value, Column(INT32, "int")
        return value, Column(INT64 if _INT64[0] <= value <= _INT64[1] else INTEGER, "int")
    if isinstance(value, float):
        return value, Column(FLOAT64, "double")
    if isinstance(value, str):
        return value, Column(STRING, "string")
    if isinstance(value, dict):
        return dumps(to_ejson(value)), Column(JSON, "object")
    if isinstance(value, list):
        return dumps(to_ejson(value)), Column(JSON, "array")
    kind, raw = value.kind, value.value
    if kind == "objectId":
        return raw, Column(STRING, kind)
    if kind == "uuid":
        return raw, Column(STRING, kind)
    if kind == "long":
        return raw, Column(INT64, kind)
    if kind == "decimal":
        return raw, Column(DECIMAL, kind)
    if kind == "date":
        return raw, Column(TIMESTAMPTZ, kind)
    if kind == "binData":
        return raw[1], Column(BINARY, kind, raw[0])
    if kind == "undefined":
        return None, Column(UNKNOWN, kind)
    return dumps(to_ejson(value)), Column(JSON, kind)


def ejson_field(value: Any) -> tuple[Any, Column]:
    """A top-level field given in Extended JSON (a ``$set`` value) as canonical value and column.

    >>> ejson_field({"$numberDecimal": "99.2500"})
    (Decimal('99.2500'), Column(type=LogicalType(name='decimal', precision=None, scale=None), vendor_type='decimal', vendor_code=None))
    >>> ejson_field({"a": {"$oid": "64650cf67dc36a464e76e583"}})[0]
    '{"a":{"$oid":"64650cf67dc36a464e76e583"}}'
    """
    special = _from_ejson(value) if isinstance(value, Mapping) else None
    return _field(value if special is None else special)


def document_image(doc: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Column]]:
    """A parsed document (:func:`parse_shell`, :func:`from_ejson`) as an image and its columns.

    >>> image, columns = document_image(parse_shell('{"_id": NumberLong("7"), "n": 1}'))
    >>> image, columns["_id"].vendor_type, columns["n"].vendor_type
    ({'_id': 7, 'n': 1}, 'long', 'int')
    """
    image: dict[str, Any] = {}
    columns: dict[str, Column] = {}
    for name, raw in doc.items():
        image[name], columns[name] = _field(raw)
    return image, columns


# --------------------------------------------------------------------------- to shell text
def _json_str(text: str) -> str:
    return dumps(text)


def shell_text(value: Any) -> str:
    """Shell-style text of a JSON-compatible (Extended JSON) value, as DRS writes it.

    >>> shell_text({"_id": {"$oid": "64650cf67dc36a464e76e583"}, "tags": ["a", 1.0, 2**40]})
    '{"_id": ObjectId("64650cf67dc36a464e76e583"), "tags": ["a", 1.0, NumberLong("1099511627776")]}'
    """
    if value is None:
        return "null"
    if isinstance(value, str):
        return _json_str(value)
    if isinstance(value, Bson):
        return _bson_text(value)
    if isinstance(value, Mapping):
        special = _from_ejson(value)
        if special is not None:
            return shell_text(special)
        return (
            "{" + ", ".join(f"{_json_str(str(k))}: {shell_text(v)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(shell_text(v) for v in value) + "]"
    text: str = render_value(value, KIND_VALUE, SHELL_TEXT)  # a scalar
    return text


def _number_long(value: int) -> str:
    # the Java driver quotes NumberLong values that an int32 cannot hold
    return f"NumberLong({value})" if _INT32[0] <= value <= _INT32[1] else f'NumberLong("{value}")'


def _bson_text(value: Bson) -> str:
    kind, raw = value.kind, value.value
    if kind == "objectId":
        return f'ObjectId("{raw}")'
    if kind == "long":
        return _number_long(raw)
    if kind == "decimal":
        return f'NumberDecimal("{raw}")'
    if kind == "date":
        ms = epoch_ms(raw)
        return (
            f'ISODate("{_iso_ms(raw)}")' if _ISO_MIN_MS <= ms <= _ISO_MAX_MS else f"new Date({ms})"
        )
    if kind == "timestamp":
        return f"Timestamp({raw[0]}, {raw[1]})"
    if kind == "binData":
        return f'new BinData({raw[0]}, "{base64.b64encode(raw[1]).decode()}")'
    if kind == "uuid":
        return f'UUID("{raw}")'
    if kind == "regex":
        return f"/{raw[0]}/{raw[1]}"
    return {"minKey": "MinKey", "maxKey": "MaxKey"}.get(kind, "undefined")


def _shell_int(value: int) -> str:
    return str(value) if _INT32[0] <= value <= _INT32[1] else _number_long(value)


def _shell_binary(data: bytes, kind: str) -> str:
    return _bson_text(Bson("binData", (0, data)))


def _shell_datetime(value: dt.datetime, kind: str) -> str:
    return _bson_text(Bson("date", value if value.tzinfo else value.replace(tzinfo=dt.UTC)))


def _shell_date(value: dt.date) -> str:
    return _bson_text(Bson("date", dt.datetime.combine(value, dt.time(), dt.UTC)))


def _shell_time(value: dt.time) -> str:
    return _json_str(value.isoformat())


def _no_shell_form(value: Any) -> str:
    raise TypeError(f"no shell form for {type(value).__name__}")


SHELL_TEXT: Final = ValueText(
    true="true",
    false="false",
    integer=_shell_int,
    decimal=plain_decimal,
    floating=java_double,
    binary=_shell_binary,
    datetime=_shell_datetime,
    date=_shell_date,
    time=_shell_time,
    other=_no_shell_form,
)
"""How the MongoDB shell writes a scalar (:func:`shell_text`): numbers as Java prints them,
a long beyond int32 as ``NumberLong``, bytes as ``BinData``, datetimes as ``ISODate``."""


def _from_ejson(value: Mapping[str, Any]) -> Bson | float | int | None:
    """The BSON value an Extended JSON wrapper stands for, or None for a plain document."""
    if len(value) == 2:
        return _from_ejson_v1(value)
    if len(value) != 1:
        return None
    [(key, raw)] = value.items()
    try:
        if key == "$oid" and isinstance(raw, str) and _HEX24.fullmatch(raw):
            return Bson("objectId", raw.lower())
        if key == "$date":
            if isinstance(raw, Mapping):
                return Bson("date", timestamp_from_epoch(int(raw["$numberLong"]), 3))
            if isinstance(raw, int) and not isinstance(raw, bool):
                return Bson("date", timestamp_from_epoch(raw, 3))
            return _date([raw])
        if key == "$numberDecimal" and isinstance(raw, str):
            return Bson("decimal", Decimal(raw))
        if key == "$numberLong" and isinstance(raw, str):
            return Bson("long", _integer(raw, _INT64))
        if key == "$numberInt" and isinstance(raw, str):
            return _integer(raw, _INT32)
        if key == "$numberDouble" and isinstance(raw, str):
            return float(raw)
        if key == "$timestamp" and isinstance(raw, Mapping):
            return _timestamp([raw["t"], raw["i"]])
        if key == "$binary" and isinstance(raw, Mapping):
            sub_type = int(str(raw["subType"]), 16)
            data = base64.b64decode(str(raw["base64"]), validate=True)
            if sub_type == 4 and len(data) == 16:
                return Bson("uuid", str(uuid.UUID(bytes=data)))
            return Bson("binData", (sub_type, data))
        if key == "$uuid" and isinstance(raw, str):
            return Bson("uuid", str(uuid.UUID(raw)))
        if key == "$regularExpression" and isinstance(raw, Mapping):
            return Bson("regex", (str(raw["pattern"]), str(raw["options"])))
        if key in ("$minKey", "$maxKey") and raw == 1:
            return Bson(key[1:])
        if key == "$undefined" and raw is True:
            return Bson("undefined")
    except (KeyError, ValueError, TypeError, ArithmeticError, binascii.Error):
        return None
    return None


def _from_ejson_v1(value: Mapping[str, Any]) -> Bson | None:
    """Extended JSON v1's two-key wrappers: ``{"$binary": b64, "$type": hex}`` and
    ``{"$regex": pattern, "$options": flags}``."""
    binary, sub_type = value.get("$binary"), value.get("$type")
    if isinstance(binary, str) and isinstance(sub_type, str):
        special = _from_ejson({"$binary": {"base64": binary, "subType": sub_type}})
        return special if isinstance(special, Bson) else None
    pattern, options = value.get("$regex"), value.get("$options")
    if isinstance(pattern, str) and isinstance(options, str):
        return Bson("regex", (pattern, options))
    return None


def from_ejson(value: Any) -> Any:
    """Extended JSON in any mode (v1 strict, v2 relaxed or canonical) as parsed values:
    every wrapper, at every depth, becomes the value :func:`parse_shell` gives for it.

    >>> from_ejson({"n": {"$numberLong": "5"}, "at": [{"$date": 0}], "d": {"x": 1}})["n"]
    Bson(kind='long', value=5)
    >>> from_ejson({"$date": "1970-01-01T00:00:00.001Z"}).value.isoformat()
    '1970-01-01T00:00:00.001000+00:00'
    """
    if type(value) is dict:
        if value and next(iter(value)).startswith("$"):
            special = _from_ejson(value)
            if special is not None:
                return special
        return {k: from_ejson(v) for k, v in value.items()}
    if type(value) is list:
        return [from_ejson(v) for v in value]
    return value


def ejson_document(doc: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Column]]:
    """A document given in Extended JSON (any mode) as an image and its columns, typed as
    this format types the same document (nested documents and arrays: relaxed JSON text).

    >>> image, columns = ejson_document({"_id": {"$numberLong": "1004"}, "at": {"$date": 0}})
    >>> image["_id"], columns["_id"].vendor_type, columns["at"].type.name
    (1004, 'long', 'timestamptz')
    """
    return document_image({k: from_ejson(v) for k, v in doc.items()})


def _bson_of(value: Any, col: Column | None) -> Any:
    """The parsed value a top-level canonical value stands for, by its column's BSON type
    (the inverse of :func:`_field`)."""
    vendor = col.vendor_type if col is not None else None
    if value is None:
        return Bson("undefined") if vendor == "undefined" else None
    if vendor == "objectId" and isinstance(value, str) and _HEX24.fullmatch(value):
        return Bson("objectId", value)
    if vendor == "uuid" and isinstance(value, str):
        return Bson("uuid", value)
    if vendor == "long" and isinstance(value, int) and not isinstance(value, bool):
        return Bson("long", value)
    if col is not None and col.type.name == "json" and isinstance(value, str):
        try:
            return from_ejson(_JSON_DECODER.decode(value))
        except msgspec.DecodeError:
            return value
    if isinstance(value, Decimal):
        return Bson("decimal", value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        sub_type = col.vendor_code if col is not None and col.vendor_code is not None else 0
        return Bson("binData", (sub_type, bytes(value)))
    if isinstance(value, dt.datetime):
        return Bson("date", value if value.tzinfo else value.replace(tzinfo=dt.UTC))
    return value


def _field_text(value: Any, col: Column | None) -> str:
    """Shell text of one top-level canonical value, using its column's BSON type."""
    return shell_text(_bson_of(value, col))


def document_text(image: Mapping[str, Any], columns: Mapping[str, Column] | None) -> str:
    """An image as a shell-text document, each top-level field written as its column's BSON type.

    >>> from anycdc.values import INT64
    >>> document_text({"_id": 7, "s": "a"}, {"_id": Column(INT64, "long")})
    '{"_id": NumberLong(7), "s": "a"}'
    """
    cols = columns or {}
    parts = (f"{_json_str(k)}: {_field_text(v, cols.get(k))}" for k, v in image.items())
    return "{" + ", ".join(parts) + "}"


def ejson_fields(image: Mapping[str, Any], columns: Mapping[str, Column] | None) -> dict[str, Any]:
    """An image as a document in canonical Extended JSON at its top level (the inverse of
    :func:`ejson_document`: int64 and double fields keep their BSON type).

    >>> from anycdc.values import INT64
    >>> ejson_fields({"n": 5, "x": 1.0}, {"n": Column(INT64, "long")})
    {'n': {'$numberLong': '5'}, 'x': {'$numberDouble': '1.0'}}
    """
    cols = columns or {}
    return {k: _canonical(_bson_of(v, cols.get(k))) for k, v in image.items()}


def _canonical(value: Any) -> Any:
    if isinstance(value, float):
        text = "NaN" if math.isnan(value) else repr(value).replace("inf", "Infinity")
        return {"$numberDouble": text}
    if isinstance(value, Bson) and value.kind == "long":
        return {"$numberLong": str(value.value)}
    if isinstance(value, Bson) and value.kind == "date":
        return {"$date": {"$numberLong": str(epoch_ms(value.value))}}
    return to_ejson(value)


def update_patch(operators: Mapping[str, Any], format_id: str, path: str) -> dict[str, Any]:
    """Update operators (parsed values) in canonical form: ``$set`` (and any other
    operator's argument) as relaxed Extended JSON, ``$unset`` as a list of field names."""
    patch: dict[str, Any] = {}
    for op, arg in operators.items():
        if op in (SET, UNSET) and not isinstance(arg, dict):
            raise DecodeError(format_id, path, f"expected {op} document, got {_kind_name(arg)}")
        patch[op] = list(arg) if op == UNSET else to_ejson(arg)
    return patch


__all__ = [
    "MAX_DEPTH",
    "SET",
    "UNSET",
    "Bson",
    "document_image",
    "document_text",
    "ejson_document",
    "ejson_field",
    "ejson_fields",
    "from_ejson",
    "parse_shell",
    "shell_text",
    "to_ejson",
    "update_patch",
]
