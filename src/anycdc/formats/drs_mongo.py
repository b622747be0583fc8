"""Huawei Cloud DRS JSON for MongoDB / DDS sources (seed 002, the ``coll``/``value`` table).

One message per oplog entry::

    {"id": 256, "op": "INSERT", "dbType": "MongoDB", "db": "ljx", "coll": "ljx",
     "value": "{\\"_id\\": ObjectId(\\"64650cf6...\\"), \\"c1\\": \\"baz\\"}",
     "where": null, "recordType": "insert", "extra": "insert",
     "es": 1684315111439, "ts": ..., "clusterTime": "1684344064:1"}

``value`` and ``where`` are **text** in MongoDB shell syntax (what the Java
driver writes in its SHELL JSON mode): ``ObjectId("...")``, ``ISODate("...")``,
``NumberLong(5)``, ``NumberDecimal("1.5")``, ``Timestamp(1, 2)``,
``new BinData(0, "...")``, ``UUID("...")``, ``/re/i``, ``MinKey`` ... They are
read by a small recursive-descent parser (:func:`~anycdc.formats.codecs.mongo.parse_shell`; never ``eval``)
with a nesting limit of :data:`~anycdc.formats.codecs.mongo.MAX_DEPTH`; the common document (JSON plus
constructor calls with literal arguments) is first rewritten into JSON for
msgspec, which reads it ~2.5x faster with the same result.

Canonical mapping: ``database`` = ``db``, ``table`` = ``coll``, ``key`` =
``("_id",)``, ``position`` = ``clusterTime`` ``seconds:increment`` as
``(seconds, increment)``, ``ts_ms`` = ``es``.

=====================  ==========================================================
``recordType``         canonical event
=====================  ==========================================================
``insert``             insert; ``after`` = the document
``replace``            update; ``after`` = the new document, ``before`` = ``where``
                       (``{_id}`` only, so ``partial=("before",)``)
``update``             update; ``before`` = ``where`` (partial), ``after`` = None,
                       ``patch`` = ``{"$set": {field: value}, "$unset": [field, ...]}``
                       (other operators are kept as sent, in message order)
``doc`` (op DELETE)    delete; ``before`` = ``value`` (``{_id}``, partial)
op ``DDL``             ddl; ``ddl`` = the ``value`` text as sent
=====================  ==========================================================

Top-level fields are typed by their BSON type (``Column.vendor_type`` is the
BSON alias): ``objectId`` -> the hex ``string``, ``string``, ``bool``,
``int`` (int32), ``long`` (int64), ``double`` (float64), ``decimal``,
``date`` (aware UTC ``timestamptz``), ``binData`` (``binary``, sub-type in
``vendor_code``), ``uuid`` (its text); documents, arrays and the other BSON
types become ``json`` text in MongoDB Extended JSON **relaxed** form
(``{"$oid": ...}``, ``{"$date": "...Z"}``, ``{"$numberDecimal": "..."}``,
``{"$timestamp": {"t", "i"}}``, ``{"$binary": {"base64", "subType"}}``,
``{"$regularExpression": ...}``); patch values use the same form. Relaxed
form writes nested int64 values as plain numbers, so re-encoding writes them
as int32 when they fit (documented loss; top-level fields keep their type).
Documents given in Extended JSON (any mode: v1 strict, v2 relaxed or canonical) are typed
the same way by :func:`~anycdc.formats.codecs.mongo.ejson_document`, which debezium-json's MongoDB events use too.

The flow (op, header, images, key, the event) is :class:`~anycdc.formats.flow.RowFlow`'s:
this format fills its hooks, reading each document's images and columns in one pass
(:meth:`DrsMongoJson.typed_images`: parsing shell text types it) with an update's
operators as the event's ``patch``.

>>> from anycdc.formats import get_format
>>> fmt = get_format("drs-mongo-json")
>>> text = '{"_id": ObjectId("64650cf67dc36a464e76e583"), "n": NumberLong(5)}'
>>> msg = {"id": 1, "op": "INSERT", "dbType": "MongoDB", "db": "d", "coll": "c", "value": text,
...        "where": None, "recordType": "insert", "es": 2, "ts": 3, "clusterTime": "1684344064:1"}
>>> [e] = fmt.decode_object(msg)
>>> e.op.value, e.table, dict(e.after), e.columns["_id"].vendor_type
('insert', 'c', {'_id': '64650cf67dc36a464e76e583', 'n': 5}, 'objectId')
>>> e.position
Position(parts=(1684344064, 1))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from anycdc.errors import EncodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position, dumps
from anycdc.formats.base import Capabilities, optional_str
from anycdc.formats.codecs.java import gson_json
from anycdc.formats.codecs.mongo import (
    UNSET,
    document_image,
    document_text,
    parse_shell,
    shell_text,
    update_patch,
)
from anycdc.formats.codecs.text import int_field
from anycdc.formats.events import Header, OpRule
from anycdc.formats.flow import DDL, DELETE, INSERT, Images, RowFlow

# --------------------------------------------------------------------------- wire names
F_ID: Final = "id"
F_OP: Final = "op"
F_DB_TYPE: Final = "dbType"
F_DB: Final = "db"
F_COLL: Final = "coll"
F_VALUE: Final = "value"
F_WHERE: Final = "where"
F_RECORD_TYPE: Final = "recordType"
F_EXTRA: Final = "extra"
F_ES: Final = "es"
F_TS: Final = "ts"
F_CLUSTER_TIME: Final = "clusterTime"

OP_INSERT: Final = "INSERT"
OP_UPDATE: Final = "UPDATE"
OP_DELETE: Final = "DELETE"
OP_DDL: Final = "DDL"
RT_INSERT: Final = "insert"
RT_UPDATE: Final = "update"
RT_REPLACE: Final = "replace"
RT_DOC: Final = "doc"
DB_TYPE_MONGO: Final = "MongoDB"
ID_FIELD: Final = "_id"
OPS: Final[Mapping[str, OpRule]] = {
    OP_INSERT: OpRule(Op.INSERT), OP_UPDATE: OpRule(Op.UPDATE), OP_DELETE: OpRule(Op.DELETE),
    OP_DDL: OpRule(Op.DDL),
}  # fmt: skip
# the recordType each op implies (any other is kept in extra)
_IMPLIED_RECORD_TYPES: Final[dict[str, frozenset[str]]] = {
    OP_INSERT: frozenset({RT_INSERT}),
    OP_UPDATE: frozenset({RT_UPDATE, RT_REPLACE}),
    OP_DELETE: frozenset({RT_DOC}),
    OP_DDL: frozenset(),
}
_ID_KEY: Final = (ID_FIELD,)
_PARTIAL_BEFORE: Final = ("before",)  # a delete's and an update's before image: {_id}
P_RECORD_TYPE: Final = f"$.{F_RECORD_TYPE}"
P_EXTRA: Final = f"$.{F_EXTRA}"
P_DB: Final = f"$.{F_DB}"
P_COLL: Final = f"$.{F_COLL}"
P_ES: Final = f"$.{F_ES}"
P_VALUE: Final = f"$.{F_VALUE}"
P_CLUSTER_TIME: Final = f"$.{F_CLUSTER_TIME}"


# --------------------------------------------------------------------------- the format
class DrsMongoJson(RowFlow):
    """Huawei Cloud DRS JSON for MongoDB (DDS) sources: shell-style documents as text.

    The flow is :class:`~anycdc.formats.flow.RowFlow`'s; this class holds its hooks:
    :meth:`header` (names, ``es``, ``clusterTime``, the DDL text), :meth:`typed_images`
    (the documents read and typed in one pass, an update's operators as its patch) and
    :meth:`key_names` (``_id``).
    """

    id: ClassVar[str] = "drs-mongo-json"
    table_field = P_COLL
    vendor: ClassVar[str] = "Huawei Cloud DRS"
    title: ClassVar[str] = "Huawei DRS JSON for MongoDB/DDS (shell-style document text)"
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.KEY_ONLY,
        types=Capabilities.Types.VENDOR,
        key_names=True,
        truncate=False,
        tx_markers=False,
        heartbeats=False,
        snapshots=False,
        documents=True,
        before_detail="`_id`; updates are `$set`/`$unset` patches or replacements",
        types_detail="BSON types read from shell-style text",
        position="`clusterTime` (seconds:increment)",
        key_detail="`_id`",
        notes=("a MongoDB collection; updates as $set/$unset patches or replacements",),
    )
    op_field = F_OP
    ops = OPS
    rowless_key = False  # a DDL event carries no key
    null_missing = True  # DRS writes null for the fields a message lacks

    sniff_fields = frozenset({F_OP, F_DB_TYPE})  # and keys: the shape decides

    @classmethod
    def sniff(cls, message: Any) -> float:
        """``coll`` + ``value`` text + a string ``op``; sure with dbType/clusterTime/recordType."""
        if not isinstance(message, dict) or F_COLL not in message or F_VALUE not in message:
            return 0.0
        if not isinstance(message.get(F_OP), str):
            return 0.0
        sure = (
            message.get(F_DB_TYPE) == DB_TYPE_MONGO
            or F_CLUSTER_TIME in message
            or F_RECORD_TYPE in message
        )
        return 0.97 if sure else 0.6

    # ---- decoding (the flow is RowFlow's; these are its hooks)
    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Header:
        fid = self.id
        record_type = optional_str(fid, msg.get(F_RECORD_TYPE), P_RECORD_TYPE)
        extra: dict[str, Any] = {}
        if record_type is not None and record_type not in _IMPLIED_RECORD_TYPES[code]:
            extra[F_RECORD_TYPE] = record_type
        vendor_extra = msg.get(F_EXTRA)
        if vendor_extra is not None and vendor_extra != record_type:
            extra[F_EXTRA] = optional_str(fid, vendor_extra, P_EXTRA)
        return Header(
            database=optional_str(fid, msg.get(F_DB), P_DB) or None,
            table=optional_str(fid, msg.get(F_COLL), P_COLL) or None,
            ts_ms=int_field(fid, msg.get(F_ES), P_ES),
            position=self._position(msg.get(F_CLUSTER_TIME)),
            extra=extra,
            ddl=optional_str(fid, msg.get(F_VALUE), P_VALUE) if rule.op is DDL else None,
        )

    def typed_images(
        self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule
    ) -> tuple[Images, dict[str, Column], dict[str, Any] | None]:
        """An insert's document, a delete's ``{_id}`` (partial), and an update's
        ``where`` (``{_id}``, partial) with the new document or its operators (the patch)."""
        value = self._document(msg, F_VALUE)
        op = rule.op
        if op is INSERT:
            after, columns = document_image(value)
            return (None, after, ()), columns, None
        if op is DELETE:
            before, columns = document_image(value)
            return (before, None, _PARTIAL_BEFORE), columns, None
        before, before_columns = document_image(self._document(msg, F_WHERE))
        operators = [k for k in value if k.startswith("$")]
        if not operators or msg.get(F_RECORD_TYPE) == RT_REPLACE:
            if operators:
                raise self.error(P_VALUE, "a replacement document cannot hold operators")
            after, columns = document_image(value)
            return (before, after, _PARTIAL_BEFORE), {**before_columns, **columns}, None
        if len(operators) != len(value):
            raise self.error(P_VALUE, "an update mixes operators and fields")
        patch = update_patch(value, self.id, P_VALUE)
        return (before, None, _PARTIAL_BEFORE), before_columns, patch

    def key_names(
        self, msg: dict[str, Any], head: dict[str, Any], rule: OpRule, images: Images
    ) -> tuple[str, ...]:
        return _ID_KEY

    def _document(self, msg: Mapping[str, Any], field: str) -> dict[str, Any]:
        """The shell-text document ``msg[field]``, parsed (a null one is missing)."""
        text = msg.get(field)
        if type(text) is not str:
            if text is None:
                raise self.error("$", f"missing required field {field!r}")
            raise self.error(f"$.{field}", f"expected string, got {type_name(text)}")
        return parse_shell(text, self.id, f"$.{field}")

    def _position(self, raw: Any) -> Position | None:
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise self.error(P_CLUSTER_TIME, f"expected string, got {type_name(raw)}")
        seconds, sep, increment = raw.partition(":")
        if not sep or not seconds.isdigit() or not increment.isdigit() or len(raw) > 40:
            raise self.error(P_CLUSTER_TIME, f"expected 'seconds:increment', got {raw[:40]!r}")
        return Position((int(seconds), int(increment)))

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        if event.op in (Op.BEGIN, Op.COMMIT, Op.HEARTBEAT):
            return []  # DRS writes no message for transaction markers or heartbeats
        if event.op is Op.TRUNCATE:
            raise EncodeError(self.id, "DRS MongoDB JSON has no TRUNCATE message")
        where: str | None = None
        if event.op is Op.DDL:
            op_code, record_type, value = OP_DDL, None, event.ddl or ""
        elif event.op in (Op.INSERT, Op.SNAPSHOT):
            op_code, record_type = OP_INSERT, RT_INSERT
            value = document_text(self._image(event, event.after), event.columns)
        elif event.op is Op.DELETE:
            op_code, record_type = OP_DELETE, RT_DOC
            value = document_text(self._id_image(event), event.columns)
        elif event.patch is not None:
            op_code, record_type = OP_UPDATE, RT_UPDATE
            value = self._patch_text(event.patch)
            where = document_text(self._id_image(event), event.columns)
        else:
            op_code, record_type = OP_UPDATE, RT_REPLACE
            value = document_text(self._image(event, event.after), event.columns)
            where = document_text(self._id_image(event), event.columns)
        record_type = event.extra.get(F_RECORD_TYPE, record_type)
        position = event.position.parts if event.position is not None else ()
        msg: dict[str, Any] = {
            F_ID: (position[0] << 32 | position[1])
            if len(position) == 2
            else (position or (0,))[0],
            F_OP: op_code,
            F_DB_TYPE: DB_TYPE_MONGO,
            F_DB: event.database,
            F_COLL: event.table,
            F_VALUE: value,
            F_WHERE: where,
            F_RECORD_TYPE: record_type,
            F_EXTRA: event.extra.get(F_EXTRA, record_type),
            F_ES: event.ts_ms,
            F_TS: event.ts_ms,
            F_CLUSTER_TIME: f"{position[0]}:{position[1]}" if len(position) == 2 else None,
        }
        return [gson_json(msg)]

    def _image(self, event: ChangeEvent, image: Mapping[str, Any] | None) -> Mapping[str, Any]:
        if image is None:
            raise EncodeError(self.id, f"{event.op.value} event without an after image")
        return image

    def _id_image(self, event: ChangeEvent) -> dict[str, Any]:
        for image in (event.before, event.after):
            if image is not None and ID_FIELD in image:
                return {ID_FIELD: image[ID_FIELD]}
        raise EncodeError(self.id, f"{event.op.value} event without {ID_FIELD}")

    @staticmethod
    def _patch_text(patch: Mapping[str, Any]) -> str:
        parts = []
        for op, arg in patch.items():
            if op == UNSET and isinstance(arg, (list, tuple)):
                arg = {str(name): True for name in arg}
            parts.append(f"{dumps(op)}: {shell_text(arg)}")
        return "{" + ", ".join(parts) + "}"


__all__ = ["DrsMongoJson"]
