"""AWS Database Migration Service JSON, as DMS writes it to Kafka and Kinesis Data Streams.

::

    {"data": {"id": 100000161, "fname": "val61s"},
     "before-image": {"id": 100000161},
     "metadata": {"timestamp": "2019-10-31T22:53:59.721201Z", "record-type": "data",
                  "operation": "insert", "partition-key-type": "primary-key",
                  "schema-name": "sbtest", "table-name": "sbtest_x",
                  "transaction-id": 9324410911751, "transaction-record-id": 1,
                  "commit-timestamp": "2019-10-31T22:53:55.000000Z",
                  "stream-position": "mysql-bin-changelog.002171:36912271:0:..."}}

Decisions (the DMS user guide, "Message format for Apache Kafka" and "Using a before image"):

* ``metadata.operation``: ``load`` (a full-load row) is a ``snapshot``; ``insert``/
  ``update``/``delete`` are row changes; the control records' ``create-table``,
  ``rename-table``, ``drop-table``, ``change-columns``, ``add-column``, ``drop-column``,
  ``rename-column`` and ``column-type-change`` are ``ddl`` WITHOUT statement text
  (``ddl`` is None, as SharePlex's ``DROP COLUMN``): ``extra["operation"]`` says what
  happened, ``extra["control"]`` keeps the ``control`` object (``table-def``: columns,
  types, primary key). A ``record-type`` that contradicts the operation is an error.
* images: ``data`` is the whole row (a delete's deleted row is its ``before``); a column
  DMS leaves out (``IncludeNullAndEmpty`` false, its default) is NULL, so ``data`` is
  never partial. An update's before image is the ``before-image`` object
  (``BeforeImageSettings``; option ``before_image_field`` for another ``FieldName``),
  partial when it lacks columns of ``data`` (``ColumnFilter`` ``pk-only``, its default;
  Oracle sends the changed columns only); an empty or absent one: no before image. With
  the ``add-before-image-columns`` rule instead, option ``before_image_prefix`` (its
  ``column-prefix``, ``BI_``) moves the prefixed columns of ``data`` into the before image.
* No types in data records: ``columns`` is None and values keep their JSON types
  (numbers exact: big integers as ``int``, fractions as ``Decimal``), like ``ogg-json``.
* ``schema-name`` -> ``schema`` (an empty one: None), ``table-name`` -> ``table``.
* key: data records name none (``partition-key-value`` is values, not names): option
  ``primary_key``. Control records carry no key (``table-def`` keeps DMS's own).
* ``ts_ms``: ``commit-timestamp`` (``IncludeTransactionDetails``), else None: the
  ``timestamp`` is when DMS built the message, kept as sent in ``extra["timestamp"]``.
  ``tx``: ``transaction-id``.
* position: none. DMS writes no log position but ``stream-position``
  (``IncludeTransactionDetails``), whose text is the source engine's own (a MySQL binlog
  file:offset chain, PostgreSQL LSNs) and is kept as sent in ``extra``. So events are
  ordered by arrival, as ``ogg-json`` without ``pos``: DMS publishes in commit order and
  its partition keys (``schema-table``, ``primary-key``) keep a row's changes in one
  partition. ``extra`` also keeps ``partition-key-type``, ``partition-key-value``,
  ``transaction-record-id``, ``prev-transaction-id``, ``prev-transaction-record-id``.

The encoder writes ``data``, the before image (field ``before-image``) of an update
that has one, then ``metadata`` in the docs' order, from the event and its ``extra``;
values by the untyped text rules of ``ogg-json`` (numbers unquoted and exact, binary
base64, datetimes as text). Truncates, heartbeats, transaction markers, DDL other than
control records, split halves, patches and partial ``data`` cannot be written.

>>> msg = ('{"data":{"id":7,"price":12.50},"before-image":{"id":7},"metadata":{'
...        '"record-type":"data","operation":"update","schema-name":"shop","table-name":"t",'
...        '"commit-timestamp":"2024-07-29T00:58:44.886717Z","transaction-id":1140}}')
>>> [e] = AwsDmsJson({"primary_key": "id"}).decode(msg)
>>> e.op.value, e.schema, e.key, e.after, e.partial
('update', 'shop', ('id',), {'id': 7, 'price': Decimal('12.50')}, ('before',))
>>> e.ts_ms, e.tx, e.position
(1722214724886, '1140', None)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from anycdc.errors import EncodeError, type_name
from anycdc.event import ChangeEvent, Op, dumps
from anycdc.formats.base import Capabilities, optional_str
from anycdc.formats.codecs.text import optional_image, render_value
from anycdc.formats.events import Header, OpRule
from anycdc.formats.flow import DELETE, UPDATE, Images, RowFlow
from anycdc.formats.options import OptionSpec, optional_text, text

# --------------------------------------------------------------------------- wire strings
F_DATA: Final = "data"
F_METADATA: Final = "metadata"
F_CONTROL: Final = "control"
M_RECORD_TYPE: Final = "record-type"
M_OPERATION: Final = "operation"
M_SCHEMA: Final = "schema-name"
M_TABLE: Final = "table-name"
M_TIMESTAMP: Final = "timestamp"
M_COMMIT_TS: Final = "commit-timestamp"
M_TX: Final = "transaction-id"
# kept in ChangeEvent.extra under their own names, written back in this (the docs') order
EXTRA_FIELDS: Final = (
    "partition-key-type", "partition-key-value", "transaction-record-id", "prev-transaction-id",
    "prev-transaction-record-id", "stream-position",
)  # fmt: skip
_KEPT: Final = (M_TIMESTAMP, *EXTRA_FIELDS)
X_OPERATION: Final = M_OPERATION  # extra: a control record's operation
X_CONTROL: Final = F_CONTROL  # extra: a control record's ``control`` object

RT_DATA: Final = "data"
RT_CONTROL: Final = "control"
DATA_OPS: Final[Mapping[str, Op]] = {
    "load": Op.SNAPSHOT, "insert": Op.INSERT, "update": Op.UPDATE, "delete": Op.DELETE,
}  # fmt: skip
CONTROL_OPS: Final = (
    "create-table", "rename-table", "drop-table", "change-columns", "add-column", "drop-column",
    "rename-column", "column-type-change",
)  # fmt: skip
OPS: Final[Mapping[str, OpRule]] = {
    **{code: OpRule(op) for code, op in DATA_OPS.items()},
    **dict.fromkeys(CONTROL_OPS, OpRule(Op.DDL)),
}
_ENCODE_OPS: Final[Mapping[Op, str]] = {op: code for code, op in DATA_OPS.items()}

OPT_BEFORE_FIELD: Final = "before_image_field"
OPT_BEFORE_PREFIX: Final = "before_image_prefix"
DEFAULT_BEFORE_FIELD: Final = "before-image"
BEFORE_FIELD_OPTION: Final = text(
    OPT_BEFORE_FIELD,
    "the before image's field (BeforeImageSettings' FieldName)",
    DEFAULT_BEFORE_FIELD,
)
BEFORE_PREFIX_OPTION: Final = optional_text(
    OPT_BEFORE_PREFIX,
    "the column-prefix of an add-before-image-columns rule (e.g. BI_): those columns "
    "of data are the update's before image",
)


class AwsDmsJson(RowFlow):
    """AWS DMS JSON: one row (``data`` record) or table event (``control`` record) per message."""

    id: ClassVar[str] = "aws-dms-json"
    vendor: ClassVar[str] = "AWS Database Migration Service"
    title: ClassVar[str] = "AWS DMS JSON for Kafka/Kinesis (data, before-image, metadata)"
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.VARIES,
        types=Capabilities.Types.NONE,
        key_names=False,
        ddl=False,
        truncate=False,
        tx_markers=False,
        heartbeats=False,
        owner_as_schema=True,
        before_detail="`before-image` (BeforeImageSettings: key columns by default, Oracle "
        "changed columns) or `BI_` columns (`before_image_prefix=`); none without them",
        position="none: arrival order (`stream-position` is the engine's own text, kept)",
        key_detail="`primary_key=`",
        notes=(
            "untyped: every value is stored as the vendor's text",
            "control records (create-table, add-column, ...) are ddl events without a "
            "statement; no TRUNCATE, BEGIN/COMMIT markers or heartbeats",
        ),
    )
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = (
        BEFORE_FIELD_OPTION,
        BEFORE_PREFIX_OPTION,
    )
    header_field = F_METADATA
    op_field = M_OPERATION
    ops = OPS
    rowless_key = False  # control records carry no key
    table_field = f"$.{F_METADATA}.{M_TABLE}"

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self._before_field = self.option(BEFORE_FIELD_OPTION)
        self._prefix = self.option(BEFORE_PREFIX_OPTION)

    # ---- detection
    sniff_keys = frozenset({F_METADATA})

    @classmethod
    def sniff(cls, message: Any) -> float:
        if not isinstance(message, dict):
            return 0.0
        meta = message.get(F_METADATA)
        if not isinstance(meta, dict) or meta.get(M_RECORD_TYPE) not in (RT_DATA, RT_CONTROL):
            return 0.0
        op = meta.get(M_OPERATION)
        if not isinstance(op, str):
            return 0.0
        return 0.95 if op in OPS else 0.55  # an unknown operation of a DMS-shaped message

    # ---- decoding (the flow is RowFlow's; these are its hooks)
    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Header:
        kind = head.get(M_RECORD_TYPE)
        control = rule.op is Op.DDL
        if kind is not None and kind != (RT_CONTROL if control else RT_DATA):
            raise self.error(
                f"{self.header_path}.{M_RECORD_TYPE}",
                f"a {kind!r} record with operation {code!r}",
            )
        extra: dict[str, Any] = {}
        for name in _KEPT:
            value = self._scalar(head, name)
            if value is not None:
                extra[name] = value
        if control:
            extra[X_OPERATION] = code
            found = optional_image(self.id, msg.get(F_CONTROL), f"$.{F_CONTROL}")
            if found is not None:
                extra[X_CONTROL] = found
        tx = self._scalar(head, M_TX)
        return Header(
            schema=optional_str(self.id, head.get(M_SCHEMA), f"{self.header_path}.{M_SCHEMA}")
            or None,
            table=optional_str(self.id, head.get(M_TABLE), self.table_field) or None,
            ts_ms=self.datetime_ms(
                head.get(M_COMMIT_TS), f"{self.header_path}.{M_COMMIT_TS}", "timestamp"
            ),
            tx=None if tx is None else str(tx),
            extra=extra,
        )

    def images(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Images:
        data = self.required_image(msg, F_DATA, code)
        before = None
        if self._prefix is not None:
            cut = len(self._prefix)
            before = {c[cut:]: v for c, v in data.items() if c.startswith(self._prefix)}
            data = {c: v for c, v in data.items() if not c.startswith(self._prefix)}
        if rule.op is not UPDATE:
            return self.one_row(rule, data)
        if not before:
            before = self.image(msg, self._before_field) or None
        lacking = before is not None and not set(data) <= set(before)
        return (before, data, ("before",) if lacking else ())

    def _scalar(self, head: Mapping[str, Any], name: str) -> str | int | None:
        """A metadata field DMS writes as text or an integer (None when absent)."""
        value = head.get(name)
        if value is None or type(value) in (str, int):
            return value
        raise self.error(
            f"{self.header_path}.{name}", f"expected string or integer, got {type_name(value)}"
        )

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One message per event, laid out as DMS writes it."""
        op, extra = event.op, event.extra
        if op is Op.DDL and extra.get(X_OPERATION) in CONTROL_OPS:
            code, kind = str(extra[X_OPERATION]), RT_CONTROL
        elif op in _ENCODE_OPS:
            code, kind = _ENCODE_OPS[op], RT_DATA
        else:
            raise EncodeError(self.id, f"op {op.value!r} has no DMS operation")
        if event.split is not None or event.patch is not None or "after" in event.partial:
            raise EncodeError(self.id, "DMS data is the whole row (no split, patch or partial)")
        if event.database is not None and event.schema is not None:
            raise EncodeError(self.id, "DMS names a schema only, not a database and a schema")
        message: dict[str, Any] = {}
        if kind == RT_CONTROL:
            if X_CONTROL in extra:
                message[F_CONTROL] = extra[X_CONTROL]
        else:
            image = event.before if op is DELETE else event.after
            if image is None:
                raise EncodeError(self.id, "the row image is missing")
            message[F_DATA] = _rendered(image)
            if op is UPDATE and event.before:
                message[self._before_field] = _rendered(event.before)
        meta: dict[str, Any] = {
            M_TIMESTAMP: extra.get(M_TIMESTAMP),
            M_RECORD_TYPE: kind,
            M_OPERATION: code,
            M_SCHEMA: event.schema if event.schema is not None else event.database,
            M_TABLE: event.table,
            M_TX: _tx_value(event.tx),
            **{name: extra.get(name) for name in EXTRA_FIELDS},
            M_COMMIT_TS: self._commit_ts(event.ts_ms),
        }
        message[F_METADATA] = {name: value for name, value in meta.items() if value is not None}
        return [dumps(message).encode("utf-8")]

    def _commit_ts(self, ts_ms: int | None) -> str | None:
        t = self.encode_instant(ts_ms)
        return None if t is None else t.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _tx_value(tx: str | None) -> str | int | None:
    """``transaction-id`` as DMS writes it: a number, unless the text is no plain one."""
    if tx and len(tx) <= 19 and tx.isascii() and tx.isdigit() and str(int(tx)) == tx:
        return int(tx)
    return tx


def _rendered(image: Mapping[str, Any]) -> dict[str, Any]:
    return {name: render_value(value) for name, value in image.items()}


__all__ = ["AwsDmsJson"]
