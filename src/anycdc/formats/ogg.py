"""Oracle GoldenGate JSON, as the GoldenGate for Big Data JSON formatter writes it
(operation modeled; the shape Flink's ``ogg-json`` and Paimon's ``ogg`` read).

::

    {"table": "QASOURCE.TCUSTORD", "op_type": "U",
     "op_ts": "2015-11-05 18:45:39.000000", "current_ts": "2016-10-05T10:15:51.310002",
     "pos": "00000000000000004300", "primary_keys": ["CUST_CODE", "ORDER_ID"],
     "tokens": {"R": "AADPkvAAEAAEqL2AAA"},
     "before": {col: val}, "after": {col: val}}

How it maps onto the canonical event:

* ``op_type``: ``I`` insert, ``U`` update, ``D`` delete, ``T`` truncate (GoldenGate's
  ``insertOpKey``/``updateOpKey``/``deleteOpKey``/``truncateOpKey``; a producer that
  renames them is read with the option ``op_keys``). Anything else: ``unknown op_type``.
  An insert needs ``after``, a delete ``before``, an update ``after`` (``before`` only
  when Extract captured it: ``GETUPDATEBEFORES``); a truncate carries no image.
* ``table`` is the fully qualified name: ``SCHEMA.TABLE`` -> ``schema`` + ``table``
  (``database`` None, an Oracle owner is a schema as in Debezium's Oracle events);
  ``CATALOG.SCHEMA.TABLE`` (a pluggable database) -> ``database`` + ``schema`` +
  ``table``; no dot -> ``table`` alone.
* ``key``: ``primary_keys`` (``includePrimaryKeys``; ``[]`` or absent -> None); the
  ``primary_key`` option wins, as for every format.
* ``ts_ms``: ``op_ts``, the commit time of the operation from the source trail, which
  GoldenGate writes without a zone, in UTC (the trail keeps commit times in GMT). A
  producer configured to write local time is read with the ``timezone`` option naming
  that zone; a zone or offset in the text is kept. ``op_ts`` has microseconds: ``ts_ms``
  keeps milliseconds, as for every format.
* ``current_ts`` is when the replicat formatted the record, in ITS local time, zone-less:
  it orders nothing, so it is kept as sent in ``extra["current_ts"]`` (zone-less stays
  zone-less). ``tokens`` (user tokens of the trail record, a map) -> ``extra["tokens"]``.
* ``position``: ``pos`` is the trail file's sequence number concatenated with the
  record's RBA (offset in that file), zero-padded (20 digits in Oracle's samples: 10
  each). It is read as ONE integer:
  with both parts at a fixed width, the integer's order is the order of (sequence, RBA),
  and any width reads exactly (Flink's fixture has 23 digits). A JSON number is taken too.
* Values carry no types: ``columns`` is None and values keep their JSON types (numbers
  unquoted, exact: big integers as ``int``, fractions as ``Decimal``).
* Missing columns: a producer may write a boolean ``C_isMissing`` beside each column
  ``C`` (GoldenGate 12.2's samples do); those flags are metadata, never columns, and a
  column flagged missing is left out of its image, which is then ``partial``. Without flags,
  Extract's compressed updates (``COMPRESSUPDATES``, its default) hold the key and the
  changed columns only, and one message cannot always tell: an update image lacking
  columns that the other image has is partial; with ``compressed_updates=true`` every
  update image is partial (the pipeline overlays it on the stored row). Otherwise images
  are whole rows, as Flink and Paimon read them.

The encoder writes the fields in the order of Oracle's samples (``table``, ``op_type``,
``op_ts``, ``current_ts``, ``pos``, ``primary_keys``, ``tokens``, ``before``, ``after``),
only the images the op has, ``op_ts`` from ``ts_ms`` (six fraction digits, in UTC or
the ``timezone`` option's zone), ``pos`` from a one-part position (20 digits; any other
position is not written: the format has no place for it), ``current_ts`` and ``tokens``
from ``extra``, values by the untyped text rules of ``oms-json``/``shareplex-json``
(numbers unquoted and exact, BOOLEAN 1/0, binary base64, datetimes as text). Snapshot
rows are inserts; DDL, markers, heartbeats and lone halves of split updates cannot be
written.

>>> msg = ('{"table":"QASOURCE.TCUSTORD","op_type":"U","op_ts":"2015-11-05 18:45:39.000000",'
...        '"pos":"00000000000000004300","primary_keys":["ORDER_ID"],'
...        '"before":{"ORDER_ID":765,"PRODUCT_PRICE":15000.00,"TRANSACTION_ID":100},'
...        '"after":{"ORDER_ID":765,"PRODUCT_PRICE":14000.00}}')
>>> [e] = OggJson().decode(msg)
>>> e.op.value, e.schema, e.table, e.key, e.after["PRODUCT_PRICE"], e.partial
('update', 'QASOURCE', 'TCUSTORD', ('ORDER_ID',), Decimal('14000.00'), ('after',))
>>> e.ts_ms, e.position
(1446749139000, Position(parts=(4300,)))
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from anycdc.errors import EncodeError
from anycdc.event import ChangeEvent, Op, Position, dumps
from anycdc.formats.base import Capabilities, expect_list, expect_str, optional_str
from anycdc.formats.codecs.text import bounded_int, optional_image, render_value
from anycdc.formats.events import Header, OpRule
from anycdc.formats.flow import DELETE, INSERT, Images, RowFlow
from anycdc.formats.options import OptionSpec, flag, typed

# --------------------------------------------------------------------------- wire strings
F_TABLE: Final = "table"
F_OP_TYPE: Final = "op_type"
F_OP_TS: Final = "op_ts"
F_CURRENT_TS: Final = "current_ts"
F_POS: Final = "pos"
F_PRIMARY_KEYS: Final = "primary_keys"
F_TOKENS: Final = "tokens"
F_BEFORE: Final = "before"
F_AFTER: Final = "after"

OP_INSERT: Final = "I"
OP_UPDATE: Final = "U"
OP_DELETE: Final = "D"
OP_TRUNCATE: Final = "T"
DEFAULT_OP_KEYS: Final = (OP_INSERT, OP_UPDATE, OP_DELETE, OP_TRUNCATE)
OP_ORDER: Final = (Op.INSERT, Op.UPDATE, Op.DELETE, Op.TRUNCATE)  # of the op_keys option

MISSING_SUFFIX: Final = "_isMissing"  # a boolean C_isMissing beside column C
POS_DIGITS: Final = 20  # trail sequence number (10 digits) + RBA (10 digits)
MAX_POS: Final = 10**40 - 1

OPT_OP_KEYS: Final = "op_keys"
OPT_COMPRESSED: Final = "compressed_updates"


def parse_op_keys(raw: str) -> tuple[str, ...]:
    """The ``op_keys`` option: 4 distinct codes, in :data:`OP_ORDER`.

    >>> parse_op_keys("c, u, d, t")
    ('c', 'u', 'd', 't')
    """
    keys = tuple(k.strip() for k in raw.split(","))
    if len(keys) != len(OP_ORDER) or not all(keys) or len(set(keys)) != len(keys):
        raise ValueError(f"expected 4 distinct values (insert,update,delete,truncate), got {raw!r}")
    return keys


OP_KEYS_OPTION: Final = typed(
    OPT_OP_KEYS,
    "the op_type values of insert, update, delete and truncate, comma-separated "
    "(GoldenGate's insertOpKey, updateOpKey, deleteOpKey, truncateOpKey)",
    parse_op_keys,
    kind="4 codes",
    default=",".join(DEFAULT_OP_KEYS),
)
COMPRESSED_OPTION: Final = flag(
    OPT_COMPRESSED,
    "true when Extract writes compressed updates (COMPRESSUPDATES: the key and the "
    "changed columns only) and the messages carry no _isMissing flags: update "
    "images are then partial",
)

# keys of ChangeEvent.extra
X_CURRENT_TS: Final = F_CURRENT_TS
X_TOKENS: Final = F_TOKENS

_IMAGES: Final = (F_BEFORE, F_AFTER)
_OP_TS_PATH: Final = f"$.{F_OP_TS}"
_META_FIELDS: Final = (F_TABLE, F_OP_TS, F_POS, F_CURRENT_TS)


class OggJson(RowFlow):
    """Oracle GoldenGate for Big Data JSON formatter messages (operation modeled)."""

    id: ClassVar[str] = "ogg-json"
    vendor: ClassVar[str] = "Oracle GoldenGate"
    title: ClassVar[str] = "GoldenGate JSON formatter (op_type, op_ts, pos, before/after)"
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.VARIES,
        types=Capabilities.Types.NONE,
        key_names=True,
        ddl=False,
        tx_markers=False,
        heartbeats=False,
        snapshots=False,
        owner_as_schema=True,
        before_detail="full, or key + changed columns (compressed updates: `_isMissing` flags, "
        "or `compressed_updates=true`)",
        position="`pos` (trail sequence number + RBA)",
        key_detail="`primary_keys`",
        notes=(
            "untyped: every value is stored as the vendor's text",
            "no DDL, markers or heartbeats; snapshot rows are inserts",
        ),
    )
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = (OP_KEYS_OPTION, COMPRESSED_OPTION)
    op_field = F_OP_TYPE  # the codes are options: ``ops`` is set per instance

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        keys = self.option(OP_KEYS_OPTION)
        self.ops = {code: OpRule(op) for code, op in zip(keys, OP_ORDER, strict=True)}
        self._codes: dict[Op, str] = dict(zip(OP_ORDER, keys, strict=True))
        self._compressed = self.option(COMPRESSED_OPTION)
        self.time_zone = self.options.timezone or dt.UTC

    # ---- detection
    sniff_keys = frozenset({F_OP_TYPE})  # the default name (op_keys renames codes only)
    sniff_fields = frozenset({F_OP_TYPE})  # and keys, before's and after's types

    @classmethod
    def sniff(cls, message: Any) -> float:
        if not isinstance(message, dict):
            return 0.0
        op = message.get(F_OP_TYPE)
        if not isinstance(op, str):
            return 0.0
        meta = sum(1 for name in _META_FIELDS if name in message)
        body = isinstance(message.get(F_BEFORE), dict) or isinstance(message.get(F_AFTER), dict)
        if op in DEFAULT_OP_KEYS:
            return 0.95 if meta or body else 0.3
        # renamed op keys (option op_keys), or an unknown op of a GoldenGate message
        return 0.55 if meta >= 2 else 0.1

    # ---- decoding (the flow is RowFlow's; these are its hooks)
    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Header:
        fid = self.id
        database, schema, table = split_table(optional_str(fid, msg.get(F_TABLE), f"$.{F_TABLE}"))
        return Header(
            database=database,
            schema=schema,
            table=table,
            ts_ms=self.datetime_ms(msg.get(F_OP_TS), _OP_TS_PATH, "timestamp"),
            position=self._position(msg.get(F_POS)),
            extra=self._extra(msg),
        )

    def images(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Images:
        before, before_flags = self._image(msg, F_BEFORE)
        after, after_flags = self._image(msg, F_AFTER)
        op = rule.op
        if op is DELETE:
            if before is None:
                self.missing(F_BEFORE, code)
            return self.one_row(rule, before, (F_BEFORE,) if before_flags else ())
        if after is None:
            self.missing(F_AFTER, code)
        if op is INSERT:
            return self.one_row(rule, after, (F_AFTER,) if after_flags else ())
        lacking = (
            before is not None and self._lacks_columns(before, before_flags, after),
            self._lacks_columns(after, after_flags, before),
        )
        partial = tuple(name for name, lacks in zip(_IMAGES, lacking, strict=True) if lacks)
        return (before, after, partial)

    def key_names(
        self, msg: dict[str, Any], head: dict[str, Any], rule: OpRule, images: Images
    ) -> list[str] | None:
        raw = msg.get(F_PRIMARY_KEYS)
        if raw is None:
            return None
        path = f"$.{F_PRIMARY_KEYS}"
        names = expect_list(self.id, raw, path)
        return [expect_str(self.id, n, f"{path}[{i}]") for i, n in enumerate(names)] or None

    def _image(
        self, msg: Mapping[str, Any], name: str
    ) -> tuple[dict[str, Any] | None, bool | None]:
        """An image without its ``_isMissing`` flags, and whether a column was flagged
        missing (None: the image has no flags)."""
        image = self.image(msg, name)
        if image is None or MISSING_SUFFIX not in "\0".join(image):
            return image, None
        flags = {
            column: value
            for column, value in image.items()
            if column.endswith(MISSING_SUFFIX)
            and type(value) is bool
            and column[: -len(MISSING_SUFFIX)] in image
        }
        if not flags:
            return image, None
        missing = {column[: -len(MISSING_SUFFIX)] for column, value in flags.items() if value}
        kept = {c: v for c, v in image.items() if c not in flags and c not in missing}
        return kept, bool(missing)

    def _lacks_columns(
        self, image: Mapping[str, Any], flagged: bool | None, other: Mapping[str, Any] | None
    ) -> bool:
        """Whether an update image lacks columns of the row: its ``_isMissing`` flags say
        so when it has them; else compressed updates, or columns of the other image."""
        if flagged is not None:
            return flagged
        return self._compressed or not set(other or ()) <= set(image)

    def _position(self, raw: Any) -> Position | None:
        pos = bounded_int(self.id, raw, f"$.{F_POS}", MAX_POS)
        return None if pos is None else Position((pos,))

    def _extra(self, msg: Mapping[str, Any]) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        current = optional_str(self.id, msg.get(F_CURRENT_TS), f"$.{F_CURRENT_TS}")
        if current is not None:
            extra[X_CURRENT_TS] = current
        tokens = optional_image(self.id, msg.get(F_TOKENS), f"$.{F_TOKENS}")
        if tokens is not None:
            extra[X_TOKENS] = tokens
        return extra

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        op = Op.INSERT if event.op is Op.SNAPSHOT else event.op
        code = self._codes.get(op)
        if code is None:
            raise EncodeError(self.id, f"op {event.op.value!r} has no GoldenGate op_type")
        if event.split is not None:
            raise EncodeError(self.id, "a lone half of a split update (pair the halves first)")
        extra = event.extra
        parts = event.position.parts if event.position is not None else ()
        table = ".".join(p for p in (event.database, event.schema, event.table) if p)
        fields: dict[str, Any] = {
            F_TABLE: table or None,
            F_OP_TYPE: code,
            F_OP_TS: self._op_ts(event.ts_ms),
            F_CURRENT_TS: extra.get(X_CURRENT_TS),
            F_POS: f"{parts[0]:0{POS_DIGITS}d}" if len(parts) == 1 else None,
            F_PRIMARY_KEYS: list(event.key) if event.key is not None else None,
            F_TOKENS: extra.get(X_TOKENS),
        }
        message = {name: value for name, value in fields.items() if value is not None}
        if op is not Op.TRUNCATE:
            if op is not Op.INSERT and (op is Op.DELETE or event.before is not None):
                message[F_BEFORE] = self._rendered(event.before, F_BEFORE)
            if op is not Op.DELETE:
                message[F_AFTER] = self._rendered(event.after, F_AFTER)
        return [dumps(message).encode("utf-8")]

    def _rendered(self, image: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
        if image is None:
            raise EncodeError(self.id, f"the {name} image is missing")
        return {column: render_value(value) for column, value in image.items()}

    def _op_ts(self, ts_ms: int | None) -> str | None:
        t = self.encode_instant(ts_ms, self.time_zone)
        if t is None:
            return None
        # written by hand: strftime does not zero-pad years below 1000
        return (
            f"{t.year:04d}-{t.month:02d}-{t.day:02d} "
            f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond:06d}"
        )


def split_table(qualified: str | None) -> tuple[str | None, str | None, str | None]:
    """(database, schema, table) of a GoldenGate fully qualified name.

    >>> split_table("QASOURCE.TCUSTORD"), split_table("ORCLPDB1.HR.EMP")
    ((None, 'QASOURCE', 'TCUSTORD'), ('ORCLPDB1', 'HR', 'EMP'))
    """
    if not qualified:
        return None, None, None
    parts = qualified.split(".", 2)
    padded: list[str | None] = [None] * (3 - len(parts)) + list(parts)
    return padded[0], padded[1], padded[2]


__all__ = ["OggJson", "split_table"]
