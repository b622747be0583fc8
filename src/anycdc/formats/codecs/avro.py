"""Schemaless Avro binary: a defensive, schema-compiled reader.

``dts-avro`` (one ``Record`` per message, no header), ``drs-avro`` (one
``Record`` of the DRS schema) and ``debezium-avro`` (Confluent framing, the
writer schema from a registry) all read the Avro binary encoding of one value
with no container. :class:`AvroReader` compiles a schema once into nested
readers and checks every length, block count, union index and enum index
against the message, so garbage never allocates or loops beyond its own size;
problems raise :class:`AvroDataError` naming the field path.

>>> schema = load_avro_schema('{"type": "record", "name": "R", "fields": [{"name": "n", "type": "int"}]}')
>>> AvroReader(schema).read(b"\\x54")
{'n': 42}
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import struct
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

import fastavro

from anycdc.values import EPOCH, EPOCH_DATE


class AvroDataError(Exception):
    """A schemaless Avro message does not fit its schema.

    ``segments`` is filled innermost first while the error travels outwards;
    :attr:`path` renders it as ``$.afterImages[2].value``.
    """

    def __init__(self, reason: str, segment: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.segments: list[str] = [] if segment is None else [segment]

    @property
    def path(self) -> str:
        return "$" + "".join(reversed(self.segments))


Reader = Callable[[bytes, int], tuple[Any, int]]
_ENDS_EARLY: Final = "message ends early"
_DOUBLE: Final = struct.Struct("<d")
_FLOAT: Final = struct.Struct("<f")


def _read_long(buf: bytes, pos: int) -> tuple[int, int]:
    """A zig-zag varint (Avro int and long)."""
    byte = buf[pos]
    pos += 1
    if byte < 0x80:
        return (byte >> 1) ^ -(byte & 1), pos
    value = byte & 0x7F
    shift = 7
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
        if shift > 63:
            raise AvroDataError("integer longer than 10 bytes")


def _read_null(buf: bytes, pos: int) -> tuple[None, int]:
    return None, pos


def _read_boolean(buf: bytes, pos: int) -> tuple[bool, int]:
    byte = buf[pos]
    if byte > 1:
        raise AvroDataError(f"boolean byte {byte} is neither 0 nor 1")
    return byte == 1, pos + 1


def _read_float(buf: bytes, pos: int) -> tuple[float, int]:
    return _FLOAT.unpack_from(buf, pos)[0], pos + 4


def _read_double(buf: bytes, pos: int) -> tuple[float, int]:
    return _DOUBLE.unpack_from(buf, pos)[0], pos + 8


# Lengths and union indexes inline the one-byte case of _read_long (every value under 64):
# most values are short, and a call per length was a quarter of the reading time.


def _read_bytes(buf: bytes, pos: int) -> tuple[bytes, int]:
    size = buf[pos]
    if size < 0x80:
        size, pos = (size >> 1) ^ -(size & 1), pos + 1
    else:
        size, pos = _read_long(buf, pos)
    end = pos + size
    if size < 0 or end > len(buf):
        raise AvroDataError(f"length {size} does not fit the {len(buf) - pos} bytes left")
    return buf[pos:end], end


def _read_string(buf: bytes, pos: int) -> tuple[str, int]:
    raw, pos = _read_bytes(buf, pos)
    try:
        return raw.decode("utf-8"), pos
    except UnicodeDecodeError:
        raise AvroDataError("string is not valid UTF-8") from None


_PRIMITIVES: Final[Mapping[str, Reader]] = {
    "null": _read_null,
    "boolean": _read_boolean,
    "int": _read_long,
    "long": _read_long,
    "float": _read_float,
    "double": _read_double,
    "bytes": _read_bytes,
    "string": _read_string,
}
_NAMED_KINDS: Final = frozenset({"record", "error", "enum", "fixed"})
_MAX_EMPTY_ITEMS: Final = 1_000_000  # items that take no bytes (null) cannot be bounded by size


class AvroReader:
    """Reads the schemaless Avro binary encoding of one schema, defensively.

    The schema is validated by ``fastavro.parse_schema`` and compiled once into
    nested readers. Every length, block count, union index and enum index is
    checked against the message, so garbage never allocates or loops beyond
    the message's own size; problems raise :class:`AvroDataError` with the
    field path. Union values of NAMED branches (records, enums, fixed) come back
    as ``(short_name, value)`` when ``tag_unions`` is set, so that branches of
    the same shape (DTS TextObject / TextGeometry) stay distinguishable. With
    ``logical_types`` set, decimal / date / time / timestamp logical types
    become ``Decimal`` / ``date`` / ``time`` / ``datetime``.

    >>> reader = AvroReader({"type": "record", "name": "R", "fields": [
    ...     {"name": "n", "type": "long"}, {"name": "s", "type": ["null", "string"]}]})
    >>> reader.read(b"\\x04\\x02\\x02a")
    {'n': 2, 's': 'a'}
    >>> try:
    ...     reader.read(b"\\x04\\x02\\x08a")
    ... except AvroDataError as exc:
    ...     print(exc.path, exc.reason)
    $.s length 4 does not fit the 1 bytes left
    """

    def __init__(
        self,
        schema: Any,
        name: str | None = None,
        *,
        tag_unions: bool = True,
        logical_types: bool = False,
    ) -> None:
        named: dict[str, Any] = {}
        parsed = fastavro.parse_schema(schema, named_schemas=named)
        if name is not None:
            if name not in named:
                raise ValueError(f"schema defines no type named {name!r}")
            root: Any = named[name]
        elif isinstance(parsed, list):
            records = [s for s in parsed if isinstance(s, dict) and s.get("type") == "record"]
            if not records:
                raise ValueError("schema list holds no record type")
            root = records[-1]
        else:
            root = parsed
        self.named_types: Mapping[str, Any] = named  # every named type, by full name
        self._named = named
        self._compiled: dict[str, Reader] = {}
        self._tag_unions = tag_unions
        self._logical = logical_types
        self.root_schema: Any = root
        self._root = self._compile(root)

    def read(self, data: bytes) -> Any:
        """Decode one message; every byte must belong to the value."""
        try:
            value, pos = self._root(data, 0)
        except (IndexError, struct.error):
            raise AvroDataError(_ENDS_EARLY) from None
        except RecursionError:
            raise AvroDataError("nested too deeply") from None
        if pos != len(data):
            raise AvroDataError(f"{len(data) - pos} bytes left after the value")
        return value

    # ---- compilation
    def _compile(self, node: Any) -> Reader:
        if isinstance(node, str):
            return self._by_name(node)
        if isinstance(node, list):
            return self._union(node)
        kind = node["type"]
        name = node.get("name")
        if isinstance(name, str) and name in self._compiled:
            return self._compiled[name]
        if kind in ("record", "error"):
            return self._record(node)
        if kind == "enum":
            return self._named_reader(node, self._enum(node))
        if kind == "fixed":
            return self._named_reader(node, self._logical_wrap(node, self._fixed(node)))
        if kind == "array":
            return self._array(node)
        if kind == "map":
            return self._map(node)
        return self._logical_wrap(node, self._compile(kind))

    def _by_name(self, name: str) -> Reader:
        if name in _PRIMITIVES:
            return _PRIMITIVES[name]
        if name not in self._compiled:
            self._compile(self._named[name])
        return self._compiled[name]

    def _named_reader(self, node: Mapping[str, Any], reader: Reader) -> Reader:
        self._compiled[node["name"]] = reader
        return reader

    def _record(self, node: Mapping[str, Any]) -> Reader:
        slot: list[Reader] = []

        def forward(buf: bytes, pos: int) -> tuple[Any, int]:  # a recursive reference
            return slot[0](buf, pos)

        self._compiled[node["name"]] = forward
        fields = tuple(
            (f["name"], "." + f["name"], self._compile(f["type"])) for f in node["fields"]
        )

        def read_record(buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
            out: dict[str, Any] = {}
            for name, segment, read in fields:
                try:
                    out[name], pos = read(buf, pos)
                except AvroDataError as exc:
                    exc.segments.append(segment)
                    raise
                except (IndexError, struct.error):
                    raise AvroDataError(_ENDS_EARLY, segment) from None
            return out, pos

        slot.append(read_record)
        self._compiled[node["name"]] = read_record
        return read_record

    def _enum(self, node: Mapping[str, Any]) -> Reader:
        symbols = tuple(node["symbols"])
        count = len(symbols)

        def read_enum(buf: bytes, pos: int) -> tuple[str, int]:
            index, pos = _read_long(buf, pos)
            if not 0 <= index < count:
                raise AvroDataError(f"enum index {index} out of range ({count} symbols)")
            return symbols[index], pos

        return read_enum

    def _fixed(self, node: Mapping[str, Any]) -> Reader:
        size = int(node["size"])

        def read_fixed(buf: bytes, pos: int) -> tuple[bytes, int]:
            end = pos + size
            if end > len(buf):
                raise AvroDataError(_ENDS_EARLY)
            return buf[pos:end], end

        return read_fixed

    def _union(self, branches: Sequence[Any]) -> Reader:
        readers = tuple(self._compile(b) for b in branches)
        tags = tuple(self._branch_tag(b) if self._tag_unions else None for b in branches)
        count = len(readers)

        def read_union(buf: bytes, pos: int) -> tuple[Any, int]:
            index = buf[pos]
            if index < 0x80:
                index, pos = (index >> 1) ^ -(index & 1), pos + 1
            else:
                index, pos = _read_long(buf, pos)
            if not 0 <= index < count:
                raise AvroDataError(f"union index {index} out of range ({count} branches)")
            value, pos = readers[index](buf, pos)
            tag = tags[index]
            return (value if tag is None else (tag, value)), pos

        return read_union

    def _branch_tag(self, branch: Any) -> str | None:
        name: Any = None
        if isinstance(branch, str) and branch in self._named:
            name = branch
        elif isinstance(branch, dict) and branch.get("type") in _NAMED_KINDS:
            name = branch.get("name")
        return name.rsplit(".", 1)[-1] if isinstance(name, str) else None

    def _block_limit(self, item: Any) -> Callable[[bytes, int], int]:
        if self._may_be_empty(item, set()):
            return lambda buf, pos: _MAX_EMPTY_ITEMS
        return lambda buf, pos: len(buf) - pos

    def _array(self, node: Mapping[str, Any]) -> Reader:
        item = self._compile(node["items"])
        limit = self._block_limit(node["items"])

        def read_array(buf: bytes, pos: int) -> tuple[list[Any], int]:
            out: list[Any] = []
            while True:
                count, pos = _read_long(buf, pos)
                if count == 0:
                    return out, pos
                if count < 0:
                    count = -count
                    _, pos = _read_long(buf, pos)  # the block's size in bytes
                if count > limit(buf, pos):
                    raise AvroDataError(f"array block of {count} items does not fit the message")
                for _ in range(count):
                    try:
                        value, pos = item(buf, pos)
                    except AvroDataError as exc:
                        exc.segments.append(f"[{len(out)}]")
                        raise
                    except (IndexError, struct.error):
                        raise AvroDataError(_ENDS_EARLY, f"[{len(out)}]") from None
                    out.append(value)

        return read_array

    def _map(self, node: Mapping[str, Any]) -> Reader:
        values = self._compile(node["values"])

        def read_map(buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
            out: dict[str, Any] = {}
            while True:
                count, pos = _read_long(buf, pos)
                if count == 0:
                    return out, pos
                if count < 0:
                    count = -count
                    _, pos = _read_long(buf, pos)
                if count > len(buf) - pos:  # a key takes at least one byte
                    raise AvroDataError(f"map block of {count} entries does not fit the message")
                for _ in range(count):
                    segment = f"[{len(out)}]"
                    try:
                        key, pos = _read_string(buf, pos)
                        segment = "." + key
                        out[key], pos = values(buf, pos)
                    except AvroDataError as exc:
                        exc.segments.append(segment)
                        raise
                    except (IndexError, struct.error):
                        raise AvroDataError(_ENDS_EARLY, segment) from None

        return read_map

    def _may_be_empty(self, node: Any, seen: set[str]) -> bool:
        """Whether a value of ``node`` can take zero bytes (bounds item counts)."""
        if isinstance(node, str):
            if node in _PRIMITIVES:
                return node == "null"
            if node in seen:
                return False
            seen.add(node)
            return self._may_be_empty(self._named[node], seen)
        if isinstance(node, list):
            return False  # the branch index takes a byte
        kind = node["type"]
        if kind in ("record", "error"):
            if node.get("name") in seen:
                return False
            seen.add(node["name"])
            return all(self._may_be_empty(f["type"], seen) for f in node["fields"])
        if kind == "fixed":
            return int(node["size"]) == 0
        if kind in ("array", "map", "enum"):
            return False
        return self._may_be_empty(kind, seen)

    def _logical_wrap(self, node: Mapping[str, Any], reader: Reader) -> Reader:
        if not self._logical:
            return reader
        convert = _LOGICAL.get(str(node.get("logicalType")))
        if convert is None:
            return reader
        conv = functools.partial(convert, node)

        def read_logical(buf: bytes, pos: int) -> tuple[Any, int]:
            raw, pos = reader(buf, pos)
            try:
                return conv(raw), pos
            except (ValueError, TypeError, OverflowError, ArithmeticError):
                return raw, pos  # not a valid value of the logical type: keep the raw value

        return read_logical


def _logical_decimal(node: Mapping[str, Any], raw: Any) -> Any:
    if not isinstance(raw, bytes):
        return raw
    unscaled = int.from_bytes(raw, "big", signed=True)
    return Decimal(unscaled).scaleb(-int(node.get("scale", 0)))


def _logical_epoch(unit: int, aware: bool) -> Callable[[Mapping[str, Any], Any], Any]:
    def convert(node: Mapping[str, Any], raw: Any) -> Any:
        value = EPOCH + dt.timedelta(microseconds=int(raw) * unit)
        return value if aware else value.replace(tzinfo=None)

    return convert


def _logical_date(node: Mapping[str, Any], raw: Any) -> Any:
    return EPOCH_DATE + dt.timedelta(days=int(raw))


def _logical_time(unit: int) -> Callable[[Mapping[str, Any], Any], Any]:
    def convert(node: Mapping[str, Any], raw: Any) -> Any:
        micros = int(raw) * unit
        if not 0 <= micros < 86_400_000_000:
            raise ValueError("time of day out of range")
        return (dt.datetime.min + dt.timedelta(microseconds=micros)).time()

    return convert


_LOGICAL: Final[Mapping[str, Callable[[Mapping[str, Any], Any], Any]]] = {
    "decimal": _logical_decimal,
    "timestamp-millis": _logical_epoch(1000, True),
    "timestamp-micros": _logical_epoch(1, True),
    "local-timestamp-millis": _logical_epoch(1000, False),
    "local-timestamp-micros": _logical_epoch(1, False),
    "date": _logical_date,
    "time-millis": _logical_time(1000),
    "time-micros": _logical_time(1),
}


def load_avro_schema(text: str) -> Any:
    """Parse ``.avsc`` text (a schema or a list of schemas) into JSON values."""
    return json.loads(text)


__all__ = ["AvroDataError", "AvroReader", "Reader", "load_avro_schema"]
