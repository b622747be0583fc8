"""SharePlex JSON, as Quest SharePlex, Alibaba DTS and OceanBase OMS write it (seeds 001, 003).

::

    {"meta": {"time": "2017-06-16T14:24:34", "userid": 84, "op": "ins", "scn": "14589063118712",
              "rowid": "AAATGpAAIAAItcIAAA", "trans": "7.0.411499", "seq": 1, "size": 11,
              "table": "CL_BIZ1.MIO_LOG", "idx": "1/11", "posttime": "2017-06-16T14:33:52"},
     "data": {col: val},
     "key":  {col: val}}

Decisions (the seeds leave them open):

* ``op``: ``ins``/``INSERT`` -> insert, ``upd``/``UPDATE`` -> update,
  ``del``/``DELETE`` -> delete, ``TRUNCATE`` -> truncate, ``UPDATE BEFORE`` /
  ``UPDATE AFTER`` -> a lone half of a split update (``split``), ``DROP
  COLUMN`` -> ddl WITHOUT statement text (``ddl`` is None; ``extra["op"]`` says
  what happened, ``extra["data"]`` keeps any ``data`` sent with it).
* insert / delete: ``data`` is the whole row. update: ``data`` holds only the
  changed columns (new values) and ``key`` the row before the change, so
  ``before = key`` and ``after = {**key, **data}``. DTS and OMS send every
  column in ``key`` but SharePlex itself may send only the key columns (Quest
  KB 4376090), and one message cannot tell which: both images are marked
  ``partial`` unless the option ``full_key_image=true`` says the producer
  sends whole rows. Split halves: the image is ``{**key, **data}``, partial
  likewise.
* No types in the message: ``columns`` is None and values keep their JSON
  types (OMS numbers are unquoted: exact ``int`` / ``Decimal``).
* ``table`` ``"OWNER.TABLE"`` -> ``schema`` + ``table`` (split at the first
  dot; OMS calls the first part a database, SharePlex an Oracle owner: the
  qualified name is the same).
* ``key`` names are never in the message: option ``primary_key``; else, from an
  OMS ``rowid`` (``{db}.{table}-{pk values joined by U+0001}``), which gives
  only the NUMBER of key values: when an update's ``key`` object has exactly
  that many columns it holds the key columns, and their names are the key.
  Otherwise None.
* ``position``: ``(scn, seq)`` (``(scn,)`` without ``seq``) as integers; the
  seq orders the operations of one transaction. Without ``scn`` there is no
  position: ``trans`` is an Oracle transaction id (``7.0.411499`` =
  undo segment.slot.sequence), which does not order transactions.
* ``ts_ms``: ``time`` (commit time, UTC, no zone suffix). ``tx``: ``trans``.
  ``row_id``: ``rowid``. ``extra``: ``userid``, ``seq``, ``size``, ``idx``,
  ``posttime`` when present.

The encoder writes DTS/OMS style: ``ins``/``upd``/``del``, update ``data`` =
the changed columns only and ``key`` = the whole before image, values by the
OceanBase rules (numbers unquoted, binary base64), ``time`` to the second.

>>> msg = ('{"meta":{"time":"2017-06-16T15:38:13","op":"upd","table":"CL_BIZ1.MIO_LOG",'
...        '"scn":"14589063118712","seq":2,"trans":"7.0.411499"},'
...        '"data":{"CNTR_NO":"1171201606"},"key":{"MIO_LOG_ID":"32537893","CNTR_NO":"old"}}')
>>> [e] = SharePlexJson().decode(msg)
>>> e.op.value, e.schema, e.table, e.partial
('update', 'CL_BIZ1', 'MIO_LOG', ('before', 'after'))
>>> dict(e.before), dict(e.after)
({'MIO_LOG_ID': '32537893', 'CNTR_NO': 'old'}, {'MIO_LOG_ID': '32537893', 'CNTR_NO': '1171201606'})
>>> e.ts_ms, str(e.position), e.tx
(1497627493000, '14589063118712:2', '7.0.411499')
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, ClassVar, Final

import msgspec

from anycdc.errors import EncodeError, OptionError, type_name
from anycdc.event import ChangeEvent, Op, Position, dumps
from anycdc.formats.base import (
    Cache,
    Capabilities,
    Format,
    NotFast,
    OptionSpec,
    expect_object,
    expect_str,
    optional_str,
    require,
)
from anycdc.formats.oms import KEY_SEPARATOR, bounded_int, optional_image, render_value
from anycdc.values import EPOCH, epoch_ms, parse_datetime

# --------------------------------------------------------------------------- wire strings
F_META: Final = "meta"
F_DATA: Final = "data"
F_KEY: Final = "key"

M_TIME: Final = "time"
M_USERID: Final = "userid"
M_OP: Final = "op"
M_SCN: Final = "scn"
M_ROWID: Final = "rowid"
M_TRANS: Final = "trans"
M_SEQ: Final = "seq"
M_SIZE: Final = "size"
M_TABLE: Final = "table"
M_IDX: Final = "idx"
M_POSTTIME: Final = "posttime"

OP_INS: Final = "ins"
OP_UPD: Final = "upd"
OP_DEL: Final = "del"
OP_INSERT: Final = "INSERT"
OP_UPDATE: Final = "UPDATE"
OP_DELETE: Final = "DELETE"
OP_TRUNCATE: Final = "TRUNCATE"
OP_DROP_COLUMN: Final = "DROP COLUMN"
OP_UPDATE_BEFORE: Final = "UPDATE BEFORE"
OP_UPDATE_AFTER: Final = "UPDATE AFTER"

SPLIT_BEFORE: Final = "before"
SPLIT_AFTER: Final = "after"
OPS: Final[Mapping[str, tuple[Op, str | None]]] = {
    OP_INS: (Op.INSERT, None),
    OP_UPD: (Op.UPDATE, None),
    OP_DEL: (Op.DELETE, None),
    OP_INSERT: (Op.INSERT, None),
    OP_UPDATE: (Op.UPDATE, None),
    OP_DELETE: (Op.DELETE, None),
    OP_TRUNCATE: (Op.TRUNCATE, None),
    OP_DROP_COLUMN: (Op.DDL, None),
    OP_UPDATE_BEFORE: (Op.UPDATE, SPLIT_BEFORE),
    OP_UPDATE_AFTER: (Op.UPDATE, SPLIT_AFTER),
}
ROWID_SEPARATOR: Final = "-"  # OMS rowid: {db}.{table}-{pk values joined by U+0001}

# meta fields kept in ChangeEvent.extra under their own names, in meta order
EXTRA_FIELDS: Final = (M_USERID, M_SEQ, M_SIZE, M_IDX, M_POSTTIME)
X_OP: Final = "op"  # extra: the vendor op of a DROP COLUMN event
X_DATA: Final = "data"  # extra: the data sent with a DROP COLUMN event

OPT_FULL_KEY: Final = "full_key_image"


# --------------------------------------------------------------------------- fast path
# The common row change, read without the generic field helpers: msgspec decodes
# the three top-level fields as plain JSON (what parse_json gives); anything the
# fast reading does not cover raises and :meth:`Format.decode_slow` decides.
class _FastMessage(msgspec.Struct, forbid_unknown_fields=True):
    """The top level of a message (field names are the wire names)."""

    meta: Any = None
    data: Any = None
    key: Any = None


_FAST_DECODER: Final = msgspec.json.Decoder(_FastMessage, float_hook=Decimal)
_ROW_OPS: Final[Mapping[str, tuple[Op, str | None]]] = {
    code: found for code, found in OPS.items() if found[0] in (Op.INSERT, Op.UPDATE, Op.DELETE)
}
_TIMES_CACHED: Final = 1024


def _fast_number(value: Any) -> int | None:
    """:func:`bounded_int` for the common renderings (else: slow path)."""
    if type(value) is int:
        if 0 <= value <= 2**63 - 1:
            return value
    elif value is None:
        return None
    elif type(value) is str and value.isascii() and value.isdigit() and len(value) <= 18:
        return int(value)
    raise NotFast


class SharePlexJson(Format):
    """SharePlex JSON (``meta`` / ``data`` / ``key``) from SharePlex, DTS and OMS."""

    id = "shareplex-json"
    vendor = "Quest SharePlex / Alibaba DTS / OceanBase OMS"
    title = "SharePlex JSON (meta + data + key; update data = changed columns only)"
    capabilities = Capabilities(
        before_image=Capabilities.Before.KEY_ONLY,
        types=Capabilities.Types.NONE,
        key_names=False,
        ddl=False,
        tx_markers=False,
        heartbeats=False,
        snapshots=False,
        partial_updates=True,
        owner_as_schema=True,
        before_detail="the `key` image (the whole row from DTS/OMS, maybe the key columns only); "
        "`data` = changed columns",
        position="`meta.scn`, then trans + `meta.seq`",
        key_detail="`primary_key=`",
        notes=("untyped; key names need the pipeline's primary_keys", "no DDL"),
    )
    extra_options = (
        OptionSpec(
            OPT_FULL_KEY,
            "true when the producer's update `key` holds every column of the row before "
            "the change (Alibaba DTS, OceanBase OMS): update images are then complete, not "
            "partial; SharePlex itself may send only the key columns",
            default="false",
        ),
    )

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        try:
            self._full_key = self.options.flag(OPT_FULL_KEY)
        except ValueError as exc:
            raise OptionError(f"{self.id}: option {OPT_FULL_KEY}: {exc}") from None
        # commit time text -> ts_ms (fast path)
        self._times: Cache[str, int | None] = Cache(self._TIMES)

    # ---- detection
    @classmethod
    def sniff(cls, message: Any) -> float:
        if not isinstance(message, dict):
            return 0.0
        meta = message.get(F_META)
        if not isinstance(meta, dict):
            return 0.0
        has_body = isinstance(message.get(F_DATA), dict) or isinstance(message.get(F_KEY), dict)
        op = meta.get(M_OP)
        if not isinstance(op, str):
            return 0.2 if has_body else 0.0
        known = OPS.get(op)
        if known is None:
            return 0.55 if has_body else 0.2
        return 0.95 if has_body or known[0] in (Op.TRUNCATE, Op.DDL) else 0.6

    # ---- decoding
    fast_path = True
    _TIMES: ClassVar[int] = _TIMES_CACHED

    def decode_fast(self, value: bytes) -> list[ChangeEvent]:
        """The common row change, or a fast-path refusal (then :meth:`decode_slow` decides)."""
        msg = _FAST_DECODER.decode(value)
        meta, data, key_image = msg.meta, msg.data, msg.key
        if type(meta) is not dict or type(data) is not dict:
            raise NotFast
        if key_image is not None and type(key_image) is not dict:
            raise NotFast
        try:
            op, split = _ROW_OPS[meta[M_OP]]
        except (KeyError, TypeError):
            raise NotFast from None  # no op, or another one: the slow path decides
        get = meta.get
        qualified, row_id, trans, time = get(M_TABLE), get(M_ROWID), get(M_TRANS), get(M_TIME)
        for text in (qualified, row_id, trans):
            if text is not None and type(text) is not str:
                raise NotFast
        schema, table = _split_table(qualified)
        extra: dict[str, Any] = {}
        for name in EXTRA_FIELDS:
            found = get(name)
            if found is not None:
                if not isinstance(found, (str, int, Decimal)):
                    raise NotFast
                extra[name] = found
        scn, seq = _fast_number(get(M_SCN)), _fast_number(get(M_SEQ))
        if time is None or time == "":
            ts_ms = None
        else:
            # a topic's messages share few commit seconds: parse each text once
            ts_ms = self._times.get(time) if type(time) is str else None
            if ts_ms is None:
                ts_ms = self._ts_ms(meta)  # DecodeError: the slow path reports it
                if type(time) is str:
                    self._times.put(time, ts_ms)
        position = None if scn is None else Position((scn,) if seq is None else (scn, seq))
        if op is not Op.UPDATE:
            return [
                ChangeEvent(
                    op=op, format=self.id, schema=schema, table=table,
                    key=self.unnamed_key, before=data if op is Op.DELETE else None,
                    after=None if op is Op.DELETE else data, ts_ms=ts_ms, position=position,
                    tx=trans, row_id=row_id, extra=extra,
                )
            ]  # fmt: skip
        names = self._key_names(qualified, row_id, key_image)
        common: dict[str, Any] = {
            "format": self.id,
            "schema": schema,
            "table": table,
            "key": self.primary_key(names),
            "ts_ms": ts_ms,
            "position": position,
            "tx": trans,
            "row_id": row_id,
        }
        return [self._update(data, key_image, split, extra, common)]

    def decode_object(self, obj: Any, key: bytes | None = None) -> list[ChangeEvent]:
        fid = self.id
        msg = expect_object(fid, obj, "$")
        meta = expect_object(fid, require(fid, msg, F_META, "$"), f"$.{F_META}")
        code = expect_str(fid, require(fid, meta, M_OP, f"$.{F_META}"), f"$.{F_META}.{M_OP}")
        found = OPS.get(code)
        if found is None:
            raise self.error(f"$.{F_META}.{M_OP}", f"unknown op {code!r}")
        op, split = found
        data = optional_image(fid, msg.get(F_DATA), f"$.{F_DATA}")
        key_image = optional_image(fid, msg.get(F_KEY), f"$.{F_KEY}")
        qualified = optional_str(fid, meta.get(M_TABLE), f"$.{F_META}.{M_TABLE}")
        schema, table = _split_table(qualified)
        row_id = optional_str(fid, meta.get(M_ROWID), f"$.{F_META}.{M_ROWID}")
        extra = self._extra(meta)
        names = self._key_names(qualified, row_id, key_image) if op is Op.UPDATE else None
        common: dict[str, Any] = {
            "format": fid,
            "schema": schema,
            "table": table,
            "key": self.primary_key(names),
            "ts_ms": self._ts_ms(meta),
            "position": self._position(meta),
            "tx": optional_str(fid, meta.get(M_TRANS), f"$.{F_META}.{M_TRANS}"),
            "row_id": row_id,
        }
        if op is Op.TRUNCATE:
            return [ChangeEvent(op=op, extra=extra, **common)]
        if op is Op.DDL:
            extra[X_OP] = code
            if data:
                extra[X_DATA] = data
            return [ChangeEvent(op=op, extra=extra, **common)]
        if data is None:
            raise self.error("$", f"missing {F_DATA!r} when {M_OP!r} is {code!r}")
        if op is Op.INSERT:
            return [ChangeEvent(op=op, after=data, extra=extra, **common)]
        if op is Op.DELETE:
            return [ChangeEvent(op=op, before=data, extra=extra, **common)]
        return [self._update(data, key_image, split, extra, common)]

    def _update(
        self,
        data: dict[str, Any],
        key_image: dict[str, Any] | None,
        split: str | None,
        extra: dict[str, Any],
        common: dict[str, Any],
    ) -> ChangeEvent:
        merged = {**(key_image or {}), **data}
        whole = self._full_key and key_image is not None
        partial: tuple[str, ...]
        if split is not None:
            partial = () if whole else (split,)
            return ChangeEvent(
                op=Op.UPDATE,
                before=merged if split == SPLIT_BEFORE else None,
                after=merged if split == SPLIT_AFTER else None,
                split=split,
                partial=partial,
                extra=extra,
                **common,
            )
        if key_image is None:
            partial = ("after",)
        else:
            partial = () if whole else ("before", "after")
        return ChangeEvent(
            op=Op.UPDATE, before=key_image, after=merged, partial=partial, extra=extra, **common
        )

    def _key_names(
        self, qualified: str | None, row_id: str | None, key_image: Mapping[str, Any] | None
    ) -> list[str] | None:
        """Key names from an update's ``key`` when the OMS rowid proves it holds only them."""
        if not key_image or not qualified or not row_id:
            return None
        prefix = qualified + ROWID_SEPARATOR
        if not row_id.startswith(prefix):
            return None  # an Oracle ROWID (DTS), not an OMS key rowid
        count = row_id[len(prefix) :].count(KEY_SEPARATOR) + 1
        return list(key_image) if len(key_image) == count else None

    def _ts_ms(self, meta: Mapping[str, Any]) -> int | None:
        raw = meta.get(M_TIME)
        if raw is None or raw == "":
            return None
        path = f"$.{F_META}.{M_TIME}"
        try:
            return epoch_ms(parse_datetime(expect_str(self.id, raw, path), dt.UTC))
        except ValueError:
            raise self.error(path, f"invalid time {raw!r}") from None

    def _position(self, meta: Mapping[str, Any]) -> Position | None:
        scn = bounded_int(self.id, meta.get(M_SCN), f"$.{F_META}.{M_SCN}")
        seq = bounded_int(self.id, meta.get(M_SEQ), f"$.{F_META}.{M_SEQ}")
        if scn is None:
            return None
        return Position((scn,) if seq is None else (scn, seq))

    def _extra(self, meta: Mapping[str, Any]) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        for name in EXTRA_FIELDS:
            value = meta.get(name)
            if value is None:
                continue
            if not isinstance(value, (str, int, Decimal)):
                raise self.error(
                    f"$.{F_META}.{name}", f"expected string or number, got {type_name(value)}"
                )
            extra[name] = value
        return extra

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        code, data, key_image = self._body(event)
        message: dict[str, Any] = {F_META: self._meta(event, code), F_DATA: data}
        if key_image is not None:
            message[F_KEY] = key_image
        return [dumps(message).encode("utf-8")]

    def _body(self, event: ChangeEvent) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
        """The op code, ``data`` and ``key`` of an event."""
        op = event.op
        if op in (Op.INSERT, Op.SNAPSHOT):
            return OP_INS, _rendered(self.id, event.after, "after"), None
        if op is Op.DELETE:
            return OP_DEL, _rendered(self.id, event.before, "before"), None
        if op is Op.TRUNCATE:
            return OP_TRUNCATE, None, None
        if op is Op.DDL:
            if event.extra.get(X_OP) != OP_DROP_COLUMN:
                raise EncodeError(self.id, "SharePlex JSON carries no DDL statements")
            data = event.extra.get(X_DATA)
            return OP_DROP_COLUMN, _rendered(self.id, data, "data") if data else None, None
        if op is not Op.UPDATE:
            raise EncodeError(self.id, f"op {op.value!r} has no SharePlex op code")
        if event.split == SPLIT_BEFORE:
            return OP_UPDATE_BEFORE, _rendered(self.id, event.before, "before"), None
        if event.split == SPLIT_AFTER:
            return OP_UPDATE_AFTER, _rendered(self.id, event.after, "after"), None
        after = _rendered(self.id, event.after, "after")
        if event.before is None:
            return OP_UPD, after, None
        before = _rendered(self.id, event.before, "before")
        changed = {
            name: value
            for name, value in after.items()
            if name not in before or dumps(before[name]) != dumps(value)
        }
        return OP_UPD, changed, before

    def _meta(self, event: ChangeEvent, code: str) -> dict[str, Any]:
        extra = event.extra
        parts = event.position.parts if event.position is not None else ()
        seq = extra.get(M_SEQ, parts[1] if len(parts) == 2 else None)
        qualifier = event.schema if event.schema is not None else event.database
        table = (
            f"{qualifier}.{event.table}" if qualifier is not None and event.table else event.table
        )
        fields: dict[str, Any] = {
            M_TIME: self._time(event.ts_ms),
            M_USERID: extra.get(M_USERID),
            M_OP: code,
            M_SCN: str(parts[0]) if parts else None,
            M_ROWID: event.row_id,
            M_TRANS: event.tx,
            M_SEQ: seq,
            M_SIZE: extra.get(M_SIZE),
            M_TABLE: table,
            M_IDX: extra.get(M_IDX),
            M_POSTTIME: extra.get(M_POSTTIME),
        }
        return {name: render_value(value) for name, value in fields.items() if value is not None}

    def _time(self, ts_ms: int | None) -> str | None:
        if ts_ms is None:
            return None
        try:
            t = EPOCH + dt.timedelta(milliseconds=ts_ms)
        except OverflowError:
            raise EncodeError(self.id, f"ts_ms {ts_ms} out of range") from None
        # written by hand: strftime does not zero-pad years below 1000
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"


def _split_table(qualified: str | None) -> tuple[str | None, str | None]:
    if qualified is None:
        return None, None
    if "." in qualified:
        owner, table = qualified.split(".", 1)
        return owner, table
    return None, qualified


def _rendered(format_id: str, image: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    if image is None:
        raise EncodeError(format_id, f"the {name} image is missing")
    return {column: render_value(value) for column, value in image.items()}


__all__ = ["SharePlexJson"]
