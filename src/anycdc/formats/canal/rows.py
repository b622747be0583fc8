"""Field access and image building shared by the family's decoders: checked reads of
header fields and row arrays, and the finished images of one row pair."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from anycdc.errors import DecodeError, type_name
from anycdc.event import Column, Op
from anycdc.formats.canal.types import RowTyping
from anycdc.formats.canal.wire import F_PK_NAMES
from anycdc.formats.events import Header
from anycdc.values import (
    TIMESTAMPTZ,
    UINT64,
    UNKNOWN,
    LogicalType,
    parse_bool,
)


@dataclass(slots=True)
class Envelope:
    """A message's op and header (with a DDL/TRUNCATE event's statement) as a vendor reads
    them (:meth:`CanalFamily.envelope`)."""

    op: Op
    head: Header


# how the encoder renders one row of typed values as the vendor writes them
RowRender = Callable[[Mapping[str, Any]], dict[str, Any]]

# rows of ``data``/``old`` a vendor pairs (:meth:`CanalFamily.pair_rows`): the rows typed
# first, the rows giving the other image (None: there is none) and whether the first are
# the rows after the change
Pairing = tuple[list[Any] | None, list[Any] | None, bool]


# --------------------------------------------------------------------------- field helpers
def flag_field(fid: str, msg: Mapping[str, Any], field: str) -> bool:
    value = msg.get(field)
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        try:
            return parse_bool(value)
        except ValueError:
            pass
    raise DecodeError(fid, f"$.{field}", f"expected boolean, got {type_name(value)}")


def row_array(fid: str, msg: Mapping[str, Any], field: str) -> list[dict[str, Any]] | None:
    rows = msg.get(field)
    if rows is None:
        return None
    if not isinstance(rows, list):
        raise DecodeError(fid, f"$.{field}", f"expected array, got {type_name(rows)}")
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise DecodeError(fid, f"$.{field}[{index}]", f"expected object, got {type_name(row)}")
    return rows


def pk_names_field(fid: str, msg: Mapping[str, Any]) -> list[str] | None:
    names = msg.get(F_PK_NAMES)
    if names is None:
        return None
    if not isinstance(names, list):
        raise DecodeError(fid, "$.pkNames", f"expected array, got {type_name(names)}")
    for index, name in enumerate(names):
        if not isinstance(name, str):
            raise DecodeError(fid, f"$.pkNames[{index}]", f"expected string, got {type_name(name)}")
    return names


def finish_columns(
    typing: RowTyping | None,
    images: Sequence[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]],
) -> tuple[dict[str, Column] | None, tuple[str, ...]]:
    """The message's columns, widened where its values proved it, and the invalid ones.

    A ``bigint`` value above the int64 maximum makes the column ``uint64``; an
    aware value (epoch seconds, an offset or a zone id) in a zone-less timestamp
    column makes it ``timestamptz``.
    """
    if typing is None:
        return None, ()
    wider: dict[str, LogicalType] = dict.fromkeys(typing.unsigned, UINT64)
    for name in typing.schema.timestamps:
        for pair in images:
            if _aware(pair[0], name) or _aware(pair[1], name):
                wider[name] = TIMESTAMPTZ
                break
    if not wider and not typing.untyped:
        return typing.schema.columns, tuple(typing.invalid)
    return _with_types(typing.schema.columns, wider, typing.untyped), tuple(typing.invalid)


def _aware(image: Mapping[str, Any] | None, name: str) -> bool:
    value = image.get(name) if image is not None else None
    return isinstance(value, dt.datetime) and value.tzinfo is not None


def _with_types(
    columns: dict[str, Column], wider: Mapping[str, LogicalType], untyped: Mapping[str, None]
) -> dict[str, Column]:
    if not wider and not untyped:
        return columns
    out = {
        name: (Column(wider[name], col.vendor_type, col.vendor_code) if name in wider else col)
        for name, col in columns.items()
    }
    for name in untyped:
        out[name] = Column(UNKNOWN)
    return out


def partial_images(
    typing: RowTyping | None, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
) -> tuple[str, ...]:
    """Images that lack columns the message's ``mysqlType`` lists."""
    if typing is None:
        return ()
    columns = typing.schema.columns.keys()
    out = []
    if before is not None and not columns <= before.keys():
        out.append("before")
    if after is not None and not columns <= after.keys():
        out.append("after")
    return tuple(out)
