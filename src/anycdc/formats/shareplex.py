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

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

import msgspec

from anycdc.errors import EncodeError, type_name
from anycdc.event import ChangeEvent, Op, Position, dumps
from anycdc.formats.base import Capabilities, NotFast, optional_str
from anycdc.formats.codecs.text import KEY_SEPARATOR, bounded_int, render_value
from anycdc.formats.events import Header, OpRule
from anycdc.formats.flow import DDL, UPDATE, Images, RowFlow
from anycdc.formats.options import flag

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
OPS: Final[Mapping[str, OpRule]] = {
    OP_INS: OpRule(Op.INSERT),
    OP_UPD: OpRule(Op.UPDATE),
    OP_DEL: OpRule(Op.DELETE),
    OP_INSERT: OpRule(Op.INSERT),
    OP_UPDATE: OpRule(Op.UPDATE),
    OP_DELETE: OpRule(Op.DELETE),
    OP_TRUNCATE: OpRule(Op.TRUNCATE),
    OP_DROP_COLUMN: OpRule(Op.DDL),
    OP_UPDATE_BEFORE: OpRule(Op.UPDATE, split=SPLIT_BEFORE),
    OP_UPDATE_AFTER: OpRule(Op.UPDATE, split=SPLIT_AFTER),
}
ROWID_SEPARATOR: Final = "-"  # OMS rowid: {db}.{table}-{pk values joined by U+0001}

# meta fields kept in ChangeEvent.extra under their own names, in meta order
EXTRA_FIELDS: Final = (M_USERID, M_SEQ, M_SIZE, M_IDX, M_POSTTIME)
_EXTRA_SET: Final = frozenset(EXTRA_FIELDS)
X_OP: Final = "op"  # extra: the vendor op of a DROP COLUMN event
X_DATA: Final = "data"  # extra: the data sent with a DROP COLUMN event

OPT_FULL_KEY: Final = "full_key_image"
FULL_KEY_OPTION: Final = flag(
    OPT_FULL_KEY,
    "true when the producer's update `key` holds every column of the row before "
    "the change (Alibaba DTS, OceanBase OMS): update images are then complete, not "
    "partial; SharePlex itself may send only the key columns",
)

_META_PATH: Final = f"$.{F_META}"
_TIME_PATH: Final = f"{_META_PATH}.{M_TIME}"
_SCN_PATH: Final = f"{_META_PATH}.{M_SCN}"
_SEQ_PATH: Final = f"{_META_PATH}.{M_SEQ}"
_INT64_MAX: Final = 2**63 - 1


# --------------------------------------------------------------------------- fast path
# The common row change's envelope, read by msgspec without a dict of the whole message
# (the three top-level fields, no other); the flow after it is RowFlow's, as for any
# message. Anything else raises a fast-path refusal and decode_slow decides.
class _FastMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The top level of a message (field names are the wire names)."""

    meta: Any = None
    data: Any = None
    key: Any = None


_FAST_DECODER: Final = msgspec.json.Decoder(_FastMessage, float_hook=Decimal)
_ROW_OPS: Final[Mapping[str, OpRule]] = {code: rule for code, rule in OPS.items() if rule.rows}


class SharePlexJson(RowFlow):
    """SharePlex JSON (``meta`` / ``data`` / ``key``) from SharePlex, DTS and OMS."""

    id = "shareplex-json"
    table_field = f"$.{F_META}.{M_TABLE}"
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
    extra_options = (FULL_KEY_OPTION,)
    header_field = F_META
    op_field = M_OP
    ops = OPS

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self._full_key = self.option(FULL_KEY_OPTION)

    # ---- detection
    sniff_keys = frozenset({F_META})

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
        return 0.95 if has_body or known.op in (Op.TRUNCATE, Op.DDL) else 0.6

    # ---- decoding (the flow is RowFlow's; these are its hooks)
    fast_path = True

    def decode_fast(self, value: bytes, key: bytes | None = None) -> list[ChangeEvent]:
        """The common row change: its envelope read by msgspec, then :meth:`RowFlow.flow`."""
        msg = _FAST_DECODER.decode(value)
        meta, data, key_image = msg.meta, msg.data, msg.key
        if type(meta) is not dict or type(data) is not dict:
            raise NotFast
        if key_image is not None and type(key_image) is not dict:
            raise NotFast
        code = meta.get(M_OP)
        if not isinstance(code, str) or (rule := _ROW_OPS.get(code)) is None:
            raise NotFast  # no op, or another one: the slow path decides
        return [self.flow({F_DATA: data, F_KEY: key_image}, meta, code, rule)]

    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Header:
        data = msg.get(F_DATA)
        if type(data) is not dict:
            data = self.image(msg, F_DATA)
        if type(msg.get(F_KEY)) is not dict:
            self.image(msg, F_KEY)  # checked for every op, as data
        get = head.get
        qualified, row_id = get(M_TABLE), get(M_ROWID)
        if qualified is not None and type(qualified) is not str:
            qualified = self._text(head, M_TABLE)
        if row_id is not None and type(row_id) is not str:
            row_id = self._text(head, M_ROWID)
        schema: str | None = None
        table = qualified
        if qualified and "." in qualified:
            schema, table = qualified.split(".", 1)  # OWNER.TABLE
        extra = {} if _EXTRA_SET.isdisjoint(head) else self._extra(head)
        if rule.op is DDL:
            extra[X_OP] = code
            if data:
                extra[X_DATA] = data
        time = get(M_TIME)
        ts_ms = self.times.get(time) if type(time) is str else None
        if ts_ms is None:
            ts_ms = self.datetime_ms(time, _TIME_PATH, "time")
        trans = get(M_TRANS)
        return Header(
            schema=schema,
            table=table,
            ts_ms=ts_ms,
            position=self._position(get(M_SCN), get(M_SEQ)),
            tx=trans if trans is None or type(trans) is str else self._text(head, M_TRANS),
            row_id=row_id,
            extra=extra,
        )

    def images(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Images:
        data = self.required_image(msg, F_DATA, code)
        if rule.op is not UPDATE:
            return self.one_row(rule, data)
        key_image = msg.get(F_KEY)
        if key_image is not None and type(key_image) is not dict:
            key_image = self.image(msg, F_KEY)
        merged = {**(key_image or {}), **data}
        whole = self._full_key and key_image is not None
        split = rule.split
        if split is not None:
            partial = () if whole else (split,)
            if split == SPLIT_BEFORE:
                return (merged, None, partial)
            return (None, merged, partial)
        if key_image is None:
            return (None, merged, ("after",))
        return (key_image, merged, () if whole else ("before", "after"))

    def key_names(
        self, msg: dict[str, Any], head: dict[str, Any], rule: OpRule, images: Images
    ) -> list[str] | None:
        """Key names from an update's ``key`` when the OMS rowid proves it holds only them."""
        key_image = msg.get(F_KEY)
        if rule.op is not UPDATE or not key_image or type(key_image) is not dict:
            return None  # (a key that is not an object failed the header)
        qualified, row_id = head.get(M_TABLE), head.get(M_ROWID)
        if type(qualified) is not str or type(row_id) is not str:
            qualified, row_id = self._text(head, M_TABLE), self._text(head, M_ROWID)
        if not qualified or not row_id:
            return None
        prefix = qualified + ROWID_SEPARATOR
        if not row_id.startswith(prefix):
            return None  # an Oracle ROWID (DTS), not an OMS key rowid
        count = row_id[len(prefix) :].count(KEY_SEPARATOR) + 1
        return list(key_image) if len(key_image) == count else None

    def _text(self, meta: Mapping[str, Any], name: str) -> str | None:
        value = meta.get(name)
        if value is None or type(value) is str:
            return value
        return optional_str(self.id, value, f"{_META_PATH}.{name}")

    def _position(self, raw_scn: Any, raw_seq: Any) -> Position | None:
        # bounded_int's common cases first, without its call: digit text, an int, None
        if type(raw_scn) is str and len(raw_scn) <= 18 and raw_scn.isdigit() and raw_scn.isascii():
            scn: int | None = int(raw_scn)
        else:
            scn = bounded_int(self.id, raw_scn, _SCN_PATH)
        seq = raw_seq
        if seq is not None and (type(seq) is not int or not 0 <= seq <= _INT64_MAX):
            seq = bounded_int(self.id, raw_seq, _SEQ_PATH)
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
                    f"{_META_PATH}.{name}", f"expected string or number, got {type_name(value)}"
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
        t = self.encode_instant(ts_ms)
        if t is None:
            return None
        # written by hand: strftime does not zero-pad years below 1000
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"


def _rendered(format_id: str, image: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    if image is None:
        raise EncodeError(format_id, f"the {name} image is missing")
    return {column: render_value(value) for column, value in image.items()}


__all__ = ["SharePlexJson"]
