"""OceanBase OMS JSON: serialisation ``Default`` and ``DefaultExtendColumnType`` (seed 003).

Both carry full row images and metadata::

    {"allMetaData": {"checkpoint", "record_primary_key": "id\\u0001no",
                     "source_identity", "record_primary_value": "3\\u0001129",
                     "dbType": "OB_MYSQL", "table_name": "t", "db": "tenant.database",
                     "timestamp": "1609344671", "storeDataSequence": 160934467100001,
                     "uniqueId": "..."},
     "prevStruct": {col: val} | null, "recordType": "INSERT", "postStruct": {col: val} | null}

``DefaultExtendColumnType`` adds, inside each image, the metadata key
``"__light_type": {col: {"schemaType": "TINYINT"}}``, which gives the column
types; ``Default`` carries no types at all.

Decisions (the seed leaves them open):

* ``recordType``: INSERT, UPDATE, DELETE, ROW (full-load row -> ``snapshot``),
  HEARTBEAT, DDL (the image holds the single key ``"ddl"``: the statement).
* ``db``: for OceanBase ``dbType`` values (``OB_MYSQL``, ``OB_ORACLE``,
  ``OCEANBASE``, ``OB_IN_ORACLE_MODE``) it is ``{tenant}.{database}``: the
  event's ``database`` is the part after the first dot and the tenant goes to
  ``extra["tenant"]``; without a dot (the seed's DefaultExtendColumnType
  examples) or for other sources the whole value is the database.
* ``key``: ``record_primary_key`` split on U+0001 (empty -> no key).
* ``ts_ms``: ``timestamp`` (epoch SECONDS) x 1000. ``position``:
  ``storeDataSequence`` (an integer, compared numerically); ``tx``:
  ``uniqueId`` (else ``transId``). ``extra`` keeps ``tenant``, ``dbType``,
  ``checkpoint`` and ``ddlType`` when present.
* ``Default`` images keep their JSON types (``columns`` is None; JSON numbers
  stay exact: big integers as ``int``, fractions as ``Decimal``). A key
  ``__light_type`` is metadata in both formats, never a column.
* ``DefaultExtendColumnType``: ``schemaType`` names (OMS light types such as
  ``INT64``, MySQL-tenant and Oracle-tenant names) map to logical types and
  the values are parsed by the OceanBase text rules: numbers unquoted, BOOL
  1/0, binary and BIT base64, DATE ``YYYY-MM-DD``, TIME ``HH:mm:ss[.n]``,
  DATETIME ``YYYY-MM-DD HH:mm:ss[.n] [zoneId]`` (a column whose values carry a
  zone id is ``timestamptz``, else naive ``timestamp``), MySQL TIMESTAMP
  ``epoch-seconds[.n]`` (``timestamptz``, UTC). ``BIGINT`` is OMS's light type
  for integers beyond int64 (the seed's ``bigInt`` column holds
  10223372036854775806) and its sign is not stated, so it maps to the
  unbounded ``integer``. A value that is not valid for its type (``0000-00-00
  00:00:00``) is kept as sent and named in ``invalid``. Columns without a
  ``schemaType`` are ``unknown``; types of columns absent from the images are
  not kept.

Encoding writes the seed's field order (``allMetaData``, ``prevStruct``,
``recordType``, ``postStruct``), joins key names and key values with U+0001,
renders values by the rules above (FLOAT/DOUBLE with Python's shortest exact
repr rather than 7/16 digits, so no value changes), ``timestamp`` in whole
seconds, ``storeDataSequence`` from a one-part position, ``uniqueId`` from
``tx``, ``dbType`` from ``extra`` (null when unknown). The extended format
appends ``__light_type`` to each image: the column's vendor type when it reads
back as the same logical type, else the OMS name of the logical type
(``INT64``, ``BIGINT UNSIGNED``, ``DECIMAL(p,s)``, ``DATETIME``, ``TIMESTAMP``
...). Truncates, transaction markers, split halves and partial images cannot
be written (EncodeError).

Detection: the two formats differ only by ``__light_type`` inside the images.
A message with no row image (HEARTBEAT, and DDL whose image holds only
``ddl``) cannot tell them apart: ``oms-json`` scores higher and wins.

>>> msg = ('{"allMetaData":{"record_primary_key":"id","db":"t1.shop","dbType":"OB_MYSQL",'
...        '"table_name":"orders","timestamp":"1609344671","storeDataSequence":160934467100001},'
...        '"prevStruct":null,"recordType":"INSERT","postStruct":{"id":3,"total":12.50}}')
>>> [e] = OmsJson().decode(msg)
>>> e.op.value, e.database, e.table, e.key, e.after["total"], e.ts_ms, str(e.position)
('insert', 'shop', 'orders', ('id',), Decimal('12.50'), 1609344671000, '160934467100001')
>>> e.extra["tenant"]
't1'
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from functools import lru_cache
from typing import Annotated, Any, ClassVar, Final

import msgspec

from anycdc.errors import DecodeError, EncodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position, dumps
from anycdc.formats.base import (
    FAST_REFUSALS,
    JSON_DECODER,
    NULL_RAW,
    Cache,
    Capabilities,
    NotFast,
    PlanCache,
    TypedRows,
    expect_object,
    expect_str,
    json_value_type,
    optional_str,
    require,
)
from anycdc.formats.codecs.text import (
    KEY_SEPARATOR,
    KIND_DATETIME,
    KIND_EPOCH,
    KIND_VALUE,
    KIND_ZONED,
    bounded_int,
    optional_image,
    render_value,
    small_int,
)
from anycdc.formats.flow import DDL, DELETE, UPDATE, Header, Images, RowFlow, RowOp
from anycdc.typemap import sql_type
from anycdc.values import (
    BOOLEAN,
    DATE,
    DECIMAL,
    EPOCH_TEXT,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    INTEGER,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    UNKNOWN,
    LogicalType,
    check_integer_range,
    parse_datetime,
    parse_epoch_seconds,
)

# --------------------------------------------------------------------------- wire strings
F_META: Final = "allMetaData"
F_PREV: Final = "prevStruct"
F_RECORD_TYPE: Final = "recordType"
F_POST: Final = "postStruct"

M_CHECKPOINT: Final = "checkpoint"
M_PRIMARY_KEY: Final = "record_primary_key"
M_SOURCE_IDENTITY: Final = "source_identity"
M_PRIMARY_VALUE: Final = "record_primary_value"
M_DB_TYPE: Final = "dbType"
M_TABLE: Final = "table_name"
M_DB: Final = "db"
M_TIMESTAMP: Final = "timestamp"
M_SEQUENCE: Final = "storeDataSequence"
M_UNIQUE_ID: Final = "uniqueId"
M_TRANS_ID: Final = "transId"
M_DDL_TYPE: Final = "ddlType"

LIGHT_TYPE: Final = "__light_type"
SCHEMA_TYPE: Final = "schemaType"
DDL_KEY: Final = "ddl"

RT_INSERT: Final = "INSERT"
RT_UPDATE: Final = "UPDATE"
RT_DELETE: Final = "DELETE"
RT_ROW: Final = "ROW"
RT_HEARTBEAT: Final = "HEARTBEAT"
RT_DDL: Final = "DDL"
OPS: Final[Mapping[str, RowOp]] = {
    RT_INSERT: RowOp(Op.INSERT),
    RT_UPDATE: RowOp(Op.UPDATE),
    RT_DELETE: RowOp(Op.DELETE),
    RT_ROW: RowOp(Op.SNAPSHOT),
    RT_HEARTBEAT: RowOp(Op.HEARTBEAT),
    RT_DDL: RowOp(Op.DDL),
}
RECORD_TYPES: Final[Mapping[Op, str]] = {rule.op: code for code, rule in OPS.items()}
OP_NOUN: Final = "op"  # what the error of an unknown recordType calls it

OCEANBASE_DB_TYPES: Final = frozenset({"OCEANBASE", "OB_IN_ORACLE_MODE", "OB_MYSQL", "OB_ORACLE"})
ORACLE_DB_TYPES: Final = frozenset({"ORACLE", "OB_IN_ORACLE_MODE", "OB_ORACLE"})
DEFAULT_DB_TYPE: Final = "OB_MYSQL"

_P_META: Final = f"$.{F_META}"
_META_PATHS: Final[Mapping[str, str]] = {
    name: f"{_P_META}.{name}"
    for name in (M_PRIMARY_KEY, M_DB_TYPE, M_TABLE, M_DB, M_TIMESTAMP, M_SEQUENCE, M_UNIQUE_ID,
                 M_TRANS_ID, M_DDL_TYPE)
}  # fmt: skip

# keys of ChangeEvent.extra
X_TENANT: Final = "tenant"
X_DB_TYPE: Final = M_DB_TYPE
X_CHECKPOINT: Final = M_CHECKPOINT
X_DDL_TYPE: Final = M_DDL_TYPE

# --------------------------------------------------------------------------- OceanBase text rules
_DATETIME_ZONE_DEPENDENT: Final = (TIMESTAMP, KIND_DATETIME)
_MYSQL_LIGHT_TYPES: Final[dict[str, tuple[LogicalType, str]]] = {
    "TINYINT": (INT8, KIND_VALUE),
    "SMALLINT": (INT16, KIND_VALUE),
    "MEDIUMINT": (INT32, KIND_VALUE),
    "INT": (INT32, KIND_VALUE),
    "INTEGER": (INT32, KIND_VALUE),
    "INT64": (INT64, KIND_VALUE),
    "BIGINT": (INTEGER, KIND_VALUE),
    "YEAR": (INT16, KIND_VALUE),
    "BOOL": (BOOLEAN, KIND_VALUE),
    "BOOLEAN": (BOOLEAN, KIND_VALUE),
    "FLOAT": (FLOAT32, KIND_VALUE),
    "DOUBLE": (FLOAT64, KIND_VALUE),
    "DECIMAL": (DECIMAL, KIND_VALUE),
    "NUMERIC": (DECIMAL, KIND_VALUE),
    "DATE": (DATE, KIND_VALUE),
    "TIME": (TIME, KIND_VALUE),
    "DATETIME": _DATETIME_ZONE_DEPENDENT,
    "TIMESTAMP": (TIMESTAMPTZ, KIND_EPOCH),
    "ZONED_DATETIME": (TIMESTAMPTZ, KIND_ZONED),
}
# Oracle tenants: NUMBER/FLOAT are BigDecimal, DATE and every TIMESTAMP are DateTime text
_ORACLE_LIGHT_TYPES: Final[dict[str, tuple[LogicalType, str]]] = {
    **_MYSQL_LIGHT_TYPES,
    "INTEGER": (INT64, KIND_VALUE),
    "NUMBER": (DECIMAL, KIND_VALUE),
    "FLOAT": (DECIMAL, KIND_VALUE),
    "BINARY_FLOAT": (FLOAT32, KIND_VALUE),
    "BINARY_DOUBLE": (FLOAT64, KIND_VALUE),
    "DATE": _DATETIME_ZONE_DEPENDENT,
    "TIMESTAMP": _DATETIME_ZONE_DEPENDENT,
    "TIMESTAMP WITH LOCAL TIME ZONE": _DATETIME_ZONE_DEPENDENT,
    "TIMESTAMP WITH TIME ZONE": (TIMESTAMPTZ, KIND_ZONED),
}
# schemaType written for a logical type when the event's vendor type does not fit
_DERIVED_MYSQL: Final[dict[str, str]] = {
    "boolean": "BOOL", "int8": "TINYINT", "int16": "SMALLINT", "int32": "INT",
    "int64": "INT64", "uint64": "BIGINT UNSIGNED", "integer": "BIGINT", "decimal": "DECIMAL",
    "float32": "FLOAT", "float64": "DOUBLE", "string": "VARCHAR", "binary": "BLOB",
    "date": "DATE", "time": "TIME", "timestamp": "DATETIME", "timestamptz": "TIMESTAMP",
    "json": "JSON",
}  # fmt: skip
_DERIVED_ORACLE: Final[dict[str, str]] = {
    **_DERIVED_MYSQL,
    "float32": "BINARY_FLOAT",
    "float64": "BINARY_DOUBLE",
    "string": "VARCHAR2",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMP WITH TIME ZONE",
}
_PARENS: Final = re.compile(r"\([^)]*\)")


def tenant_database(db: str | None, db_type: str | None) -> tuple[str | None, str | None]:
    """``(database, tenant)`` of a ``db``: OceanBase sources write ``{tenant}.{database}``."""
    if db and "." in db and (db_type or "").upper() in OCEANBASE_DB_TYPES:
        tenant, database = db.split(".", 1)
        return database, tenant
    return db, None


def oracle_tenant(db_type: str | None) -> bool:
    """Does a ``dbType`` name an Oracle source (Oracle light types, values and names)?"""
    return (db_type or "").upper() in ORACLE_DB_TYPES


@lru_cache(maxsize=512)
def light_type(schema_type: str, oracle: bool = False) -> tuple[LogicalType, str]:
    """Logical type and value kind of an OMS ``schemaType`` (MySQL or Oracle tenant).

    ``DATETIME``-like types give ``(timestamp, "datetime")``: the caller makes
    them ``timestamptz`` when the values carry a zone id.

    >>> names = ("TINYINT", "INT64", "BIGINT", "DECIMAL(10,2)", "TIMESTAMP")
    >>> [str(light_type(n)[0]) for n in names]
    ['int8', 'int64', 'integer', 'decimal(10,2)', 'timestamptz']
    >>> str(light_type("DATE", oracle=True)[0]), str(light_type("BLOB")[0])
    ('timestamp', 'binary')
    """
    name = " ".join(_PARENS.sub(" ", schema_type).upper().split())
    table = _ORACLE_LIGHT_TYPES if oracle else _MYSQL_LIGHT_TYPES
    found = table.get(name)
    if found is not None:
        ltype, kind = found
        if ltype is DECIMAL:
            precise = sql_type(schema_type)  # DECIMAL(10,2) keeps its precision
            return (precise if precise.name == "decimal" else DECIMAL), kind
        return found
    if name.startswith("INTERVAL"):
        return STRING, KIND_VALUE
    return sql_type(schema_type), KIND_VALUE


def derived_schema_type(column: Column, oracle: bool = False) -> str | None:
    """The ``schemaType`` to write for a column: its vendor type when that decodes
    back to the same logical type, else the OMS name of the logical type."""
    ltype = column.type
    if column.vendor_type:
        found, kind = light_type(column.vendor_type, oracle)
        if found == ltype or (kind == KIND_DATETIME and ltype.name in ("timestamp", "timestamptz")):
            return column.vendor_type
    name = (_DERIVED_ORACLE if oracle else _DERIVED_MYSQL).get(ltype.name)
    if name == "DECIMAL" and ltype.precision is not None:
        return f"DECIMAL({ltype.precision},{ltype.scale or 0})"
    return name


# --------------------------------------------------------------------------- header and key text
def seconds_to_ms(format_id: str, value: Any, path: str) -> int | None:
    """Epoch seconds (number or text, optional fraction) -> epoch milliseconds."""
    if type(value) is str and value.isascii() and value.isdigit() and len(value) <= 12:
        return int(value) * 1000
    if value is None or value == "":
        return None
    if isinstance(value, (bool, dict, list)):
        raise DecodeError(format_id, path, f"expected epoch seconds, got {type_name(value)}")
    try:
        seconds = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except InvalidOperation:
        raise DecodeError(format_id, path, f"expected epoch seconds, got {value!r}") from None
    if not seconds.is_finite() or abs(seconds) >= 10**12:
        raise DecodeError(format_id, path, f"epoch seconds out of range: {value!r}")
    return int((seconds * 1000).to_integral_value(rounding=ROUND_FLOOR))


def key_text(value: Any) -> str:
    """A key value as OMS joins it into ``record_primary_value`` / ``rowid``."""
    rendered = render_value(value)
    if rendered is None:
        return ""
    return rendered if isinstance(rendered, str) else dumps(rendered)


# --------------------------------------------------------------------------- the formats
# --------------------------------------------------------------------------- fast path
# The common row change, read without the generic field helpers: msgspec decodes
# the four top-level fields as plain JSON (the values parse_json gives); any other
# top-level field, and anything in them that the fast reading does not cover,
# raises and :meth:`Format.decode_slow` decides.
_INT64_MAX: Final = 2**63 - 1


class _FastMeta(msgspec.Struct, forbid_unknown_fields=True, frozen=True, gc=False):
    """The ``allMetaData`` fields the decoders read, as the fast path takes them (text
    or null, a sequence number in range; any other value: slow path), and those they
    ignore (decoded all the same: msgspec would not check the text of a skipped field;
    any other field: slow path). Field names are the wire names."""

    source_identity: Any = None
    record_primary_value: Any = None
    checkpoint: Any = None
    record_primary_key: str | None = None
    dbType: str | None = None
    table_name: str | None = None
    db: str | None = None
    timestamp: str | None = None
    storeDataSequence: Annotated[int, msgspec.Meta(ge=0, le=_INT64_MAX)] | None = None
    uniqueId: str | None = None
    transId: str | None = None
    ddlType: str | None = None


_NO_META: Final = _FastMeta()


class _OmsMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The top level of an OMS message (field names are the wire names)."""

    allMetaData: _FastMeta | None = None
    prevStruct: Any = None
    recordType: Any = None
    postStruct: Any = None


_OMS_DECODER: Final = msgspec.json.Decoder(_OmsMessage, float_hook=Decimal)
_ROW_OPS: Final[Mapping[str, RowOp]] = {code: rule for code, rule in OPS.items() if rule.rows}


# DefaultExtendColumnType: the images stay raw bytes; their ``__light_type`` (the raw
# bytes of its value) is the cache key of a plan whose TypedDict decodes a whole image
# with a strict msgspec type per column (see ``json_value_type``) and the
# ``__light_type`` value again as raw bytes, which must be the plan's own (so a plan
# found for the previous message is checked by the decode itself), and
# :class:`~anycdc.formats.base.TypedRows` refuses unknown, repeated and missing keys.
# The slow path's rules that the fast one takes as given: the light types of both
# images are the same bytes, each image holds exactly its light type's columns
# (DATETIME columns are zone-less, unless the ``timezone`` option is set), and the
# image a record type does not use is null. Anything else: slow path.
class _OmsRawMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The top level of an OMS message with the images as raw bytes."""

    allMetaData: _FastMeta | None = None
    prevStruct: msgspec.Raw = NULL_RAW
    recordType: Any = None
    postStruct: msgspec.Raw = NULL_RAW


class _LightOnly(msgspec.Struct):
    """Only the ``__light_type`` value of an image (the other keys are skipped)."""

    light: msgspec.Raw = msgspec.field(name=LIGHT_TYPE, default=NULL_RAW)


_OMS_RAW_DECODER: Final = msgspec.json.Decoder(_OmsRawMessage, float_hook=Decimal)
_LIGHT_DECODER: Final = msgspec.json.Decoder(_LightOnly)


@dataclass(frozen=True, slots=True)
class _LightPlan:
    """How the fast path decodes and types the images of one ``__light_type``."""

    columns: dict[str, Column]
    names: tuple[str, ...]  # the columns in ``__light_type`` order
    rows: TypedRows


class _OmsFormat(RowFlow):
    """Decoding and encoding shared by Default and DefaultExtendColumnType."""

    typed: ClassVar[bool] = False
    table_field = f"$.{F_META}.{M_TABLE}"

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        # per-instance caches (never module state): parsers by type, typings by table shape
        self._parsers: dict[LogicalType, Callable[[Any], Any]] = {}
        self._plans: Cache[tuple[bool, tuple[tuple[str, str], ...]], dict[str, _Typing]] = Cache(
            _PLAN_CACHE_SIZE
        )
        # a topic's messages share few commit seconds and key texts: each is read once
        self._seconds: Cache[str, int] = Cache(_TEXTS_CACHED)
        self._key_names: Cache[str, tuple[str, ...]] = Cache(_TEXTS_CACHED)

    # ---- detection
    sniff_keys = frozenset({F_META})

    @classmethod
    def _shape_score(cls, message: Any) -> float:
        if not isinstance(message, dict) or not isinstance(message.get(F_META), dict):
            return 0.0
        record_type = message.get(F_RECORD_TYPE)
        if isinstance(record_type, str):
            return 0.95 if record_type in OPS else 0.7
        return 0.6 if F_PREV in message or F_POST in message else 0.0

    @staticmethod
    def _light_state(message: Mapping[str, Any]) -> bool | None:
        """True if an image has ``__light_type``, False if an image lacks it, None if no
        image has columns (heartbeats, DDL): then the two formats look the same."""
        seen_row = False
        for name in (F_PREV, F_POST):
            image = message.get(name)
            if isinstance(image, dict):
                if LIGHT_TYPE in image:
                    return True
                if image and not (len(image) == 1 and DDL_KEY in image):
                    seen_row = True
        return False if seen_row else None

    # ---- decoding (the flow is RowFlow's; these are its hooks)
    # The fast path hands the flow its paired images (fresh, without ``__light_type``;
    # typed in the extended format) and a message holding only its ``allMetaData``, as
    # the _FastMeta its decode checked: the hooks read that as it is.
    fast_path = True
    op_field = F_RECORD_TYPE
    op_noun = OP_NOUN
    ops = OPS

    def decode_fast(self, value: bytes) -> list[ChangeEvent]:
        """The common row change: its envelope read by msgspec, then :meth:`RowFlow.flow`
        (or a fast-path refusal: then :meth:`decode_slow` decides)."""
        msg = _OMS_DECODER.decode(value)
        code = msg.recordType
        try:
            rule = _ROW_OPS[code]
        except (KeyError, TypeError):
            raise NotFast from None  # heartbeat, DDL, anything else
        op, prev, post = rule.op, msg.prevStruct, msg.postStruct
        if not ((prev is None or type(prev) is dict) and (post is None or type(post) is dict)):
            raise NotFast  # the slow path checks both images whatever the record type
        before = prev if op is UPDATE or op is DELETE else None
        after = post if op is not DELETE else None
        if (op is DELETE and type(before) is not dict) or (
            op is not DELETE and type(after) is not dict
        ):
            raise NotFast  # a missing image: the slow path says which
        if (before is not None and LIGHT_TYPE in before) or LIGHT_TYPE in (after or ()):
            raise NotFast  # metadata inside the images: the slow path drops it
        meta = msg.allMetaData
        fast = {F_META: _NO_META if meta is None else meta}
        return [self.flow(fast, fast, code, rule, (before, after, ()))]

    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: RowOp) -> Header:
        meta = msg.get(F_META)
        if type(meta) is not _FastMeta:
            return self._header(msg, meta, rule)
        # the fast path's allMetaData, read as _header reads it, for the common values
        db_type, database, tenant = meta.dbType, meta.db, None
        if database and "." in database:  # (else tenant_database keeps it as it is)
            database, tenant = tenant_database(database, db_type)
        seconds = meta.timestamp
        if seconds is None:
            ts_ms = None
        elif (ts_ms := self._seconds.get(seconds)) is None:
            if not (seconds.isascii() and seconds.isdigit() and len(seconds) <= 12):
                raise NotFast
            ts_ms = self._seconds.put(seconds, int(seconds) * 1000)
        number = meta.storeDataSequence
        extra: dict[str, Any] = {}
        if tenant is not None:
            extra[X_TENANT] = tenant
        if db_type is not None:
            extra[X_DB_TYPE] = db_type
        if meta.checkpoint is not None:
            extra[X_CHECKPOINT] = meta.checkpoint
        if meta.ddlType:
            extra[X_DDL_TYPE] = meta.ddlType
        return Header(
            database=database,
            table=meta.table_name,
            ts_ms=ts_ms,
            position=Position((number,)) if number is not None else None,
            tx=meta.uniqueId or meta.transId or None,
            extra=extra,
        )

    def _header(self, msg: dict[str, Any], raw_meta: Any, rule: RowOp) -> Header:
        """The header of a parsed message (its ``allMetaData``: ``raw_meta``)."""
        fid = self.id
        meta = {} if raw_meta is None else expect_object(fid, raw_meta, _P_META)
        prev = optional_image(fid, msg.get(F_PREV), f"$.{F_PREV}")  # both, for every op
        post = optional_image(fid, msg.get(F_POST), f"$.{F_POST}")
        db_type = optional_str(fid, meta.get(M_DB_TYPE), _META_PATHS[M_DB_TYPE])
        db = optional_str(fid, meta.get(M_DB), _META_PATHS[M_DB])
        database, tenant = tenant_database(db, db_type)
        table = optional_str(fid, meta.get(M_TABLE), _META_PATHS[M_TABLE])
        self._key_text(meta)  # checked in the metadata's order; split by key_names
        return Header(
            database=database,
            table=table,
            ts_ms=seconds_to_ms(fid, meta.get(M_TIMESTAMP), _META_PATHS[M_TIMESTAMP]),
            position=self._position(meta),
            tx=self._tx(meta),
            extra=self._extra(meta, db_type, tenant),
            ddl=self._ddl(post, prev) if rule.op is DDL else None,
        )

    def images(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: RowOp) -> Images:
        op = rule.op  # (both images are objects or None: the header checked them)
        before = msg.get(F_PREV) if op is UPDATE or op is DELETE else None
        after = msg.get(F_POST) if op is not DELETE else None
        if op is DELETE:
            if before is None:
                self.missing(F_PREV, code)
        elif after is None:
            self.missing(F_POST, code)
        return (
            None if before is None else _without_light_type(before),
            None if after is None else _without_light_type(after),
            (),
        )

    def key_names(
        self, msg: dict[str, Any], head: dict[str, Any], rule: RowOp, images: Images
    ) -> tuple[str, ...] | None:
        """``record_primary_key`` split on U+0001 (empty: no key; split once per text)."""
        meta = msg.get(F_META)
        if type(meta) is _FastMeta:
            text = meta.record_primary_key
        else:
            text = None if meta is None else self._key_text(meta)
        if not text:
            return None
        names = self._key_names.get(text)
        if names is None:
            names = self._key_names.put(text, tuple(text.split(KEY_SEPARATOR)))
        return names

    def _key_text(self, meta: Mapping[str, Any]) -> str | None:
        raw = meta.get(M_PRIMARY_KEY)
        if raw is None or raw == "":
            return None
        return expect_str(self.id, raw, _META_PATHS[M_PRIMARY_KEY])

    def _position(self, meta: Mapping[str, Any]) -> Position | None:
        number = bounded_int(self.id, meta.get(M_SEQUENCE), _META_PATHS[M_SEQUENCE])
        return None if number is None else Position((number,))

    def _tx(self, meta: Mapping[str, Any]) -> str | None:
        for name in (M_UNIQUE_ID, M_TRANS_ID):
            value = optional_str(self.id, meta.get(name), _META_PATHS[name])
            if value:
                return value
        return None

    def _extra(
        self, meta: Mapping[str, Any], db_type: str | None, tenant: str | None
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if tenant is not None:
            extra[X_TENANT] = tenant
        if db_type is not None:
            extra[X_DB_TYPE] = db_type
        checkpoint = meta.get(M_CHECKPOINT)
        if checkpoint is not None:
            extra[X_CHECKPOINT] = checkpoint
        ddl_type = optional_str(self.id, meta.get(M_DDL_TYPE), _META_PATHS[M_DDL_TYPE])
        if ddl_type:
            extra[X_DDL_TYPE] = ddl_type
        return extra

    def _ddl(self, post: Mapping[str, Any] | None, prev: Mapping[str, Any] | None) -> str:
        for name, image in ((F_POST, post), (F_PREV, prev)):
            if image is not None and DDL_KEY in image:
                return expect_str(self.id, image[DDL_KEY], f"$.{name}.{DDL_KEY}")
        raise self.error(f"$.{F_POST}", f"missing {DDL_KEY!r} when {F_RECORD_TYPE!r} is {RT_DDL!r}")

    def _light_types(self, images: Mapping[str, dict[str, Any] | None]) -> dict[str, str] | None:
        """``{column: schemaType}`` from every image's ``__light_type`` (None if none has one)."""
        types: dict[str, str] | None = None
        seen: Any = None
        for name in (F_POST, F_PREV):
            image = images.get(name)
            if image is None or LIGHT_TYPE not in image:
                continue
            types = {} if types is None else types
            specs = image[LIGHT_TYPE]
            if seen is not None and specs == seen:
                continue  # both images usually carry the same types
            seen = specs
            if type(specs) is dict:
                for column, spec in specs.items():
                    schema_type = spec.get(SCHEMA_TYPE) if type(spec) is dict else None
                    if type(schema_type) is not str:
                        raise self._bad_light_type(name, column, spec)
                    types.setdefault(column, schema_type)
            else:
                expect_object(self.id, specs, f"$.{name}.{LIGHT_TYPE}")
        return types

    def _bad_light_type(self, image: str, column: str, spec: Any) -> DecodeError:
        """The DecodeError that says what is wrong with one ``__light_type`` entry."""
        path = f"$.{image}.{LIGHT_TYPE}.{column}"
        try:
            entry = expect_object(self.id, spec, path)
            expect_str(self.id, require(self.id, entry, SCHEMA_TYPE, path), f"{path}.{SCHEMA_TYPE}")
        except DecodeError as exc:
            return exc
        return self.error(path, "invalid schemaType")

    def _typing_plan(self, types: Mapping[str, str], oracle: bool) -> dict[str, _Typing]:
        """How each typed column is typed and parsed; cached per table shape."""
        cache_key = (oracle, tuple(types.items()))
        plan = self._plans.get(cache_key)
        if plan is None:
            plan = self._plans.put(
                cache_key,
                {name: self._typing(schema_type, oracle) for name, schema_type in types.items()},
            )
        return plan

    def _typing(self, schema_type: str, oracle: bool) -> _Typing:
        ltype, kind = light_type(schema_type, oracle)
        zoned = None
        if kind == KIND_DATETIME:
            zoned = _Typing(Column(TIMESTAMPTZ, schema_type), self.value_parser(TIMESTAMPTZ))
        parser = None if ltype.name == "unknown" else self.value_parser(ltype)
        return _Typing(Column(ltype, schema_type), parser, zoned)

    def _zoned(self, name: str, rows: tuple[dict[str, Any] | None, ...]) -> bool:
        """A DATETIME column is an instant when a zone applies to its values."""
        if self.options.timezone is not None:
            return True
        return any(_has_zone(row.get(name)) for row in rows if row is not None)

    def value_parser(self, ltype: LogicalType) -> Callable[[Any], Any]:
        parser = self._parsers.get(ltype)
        if parser is None:
            if ltype.name == "timestamptz":
                parser = self._parse_instant
            elif ltype.name in ("int8", "int16", "int32", "int64", "uint64", "integer"):
                parser = _IntParser(ltype)
            else:
                parser = super().value_parser(ltype)
            self._parsers[ltype] = parser
        return parser

    def _parse_instant(self, raw: Any) -> dt.datetime:
        """TIMESTAMP epoch seconds (``1606233662.012345``) or datetime text with a zone."""
        if isinstance(raw, (int, Decimal)) and not isinstance(raw, bool):
            return parse_epoch_seconds(raw)
        if isinstance(raw, str) and EPOCH_TEXT.fullmatch(raw.strip()):
            return parse_epoch_seconds(raw)
        value = parse_datetime(raw, self.options.timezone)
        if value.tzinfo is None:
            raise ValueError(f"datetime without a zone: {raw!r}")
        return value

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        record_type = RECORD_TYPES.get(event.op)
        if record_type is None:
            raise EncodeError(self.id, f"op {event.op.value!r} has no OMS record type")
        if event.split is not None:
            raise EncodeError(
                self.id, "a lone half of a split update: OMS updates carry both images"
            )
        if event.partial:
            raise EncodeError(
                self.id, f"partial {'/'.join(event.partial)} image: OMS images are full rows"
            )
        db_type = self._db_type(event)
        oracle = oracle_tenant(db_type)
        prev: dict[str, Any] | None = None
        post: dict[str, Any] | None = None
        if event.op is Op.DDL:
            if event.ddl is None:
                raise EncodeError(self.id, "a DDL event without its statement")
            post = {DDL_KEY: event.ddl}
        elif event.op is not Op.HEARTBEAT:
            if event.op is Op.DELETE and event.before is None:
                raise EncodeError(self.id, "a delete without its before image")
            if event.op is not Op.DELETE and event.after is None:
                raise EncodeError(self.id, f"{event.op.value} without its after image")
            plan = self._plan(event, oracle)
            if event.op in (Op.UPDATE, Op.DELETE) and event.before is not None:
                prev = self._render_image(event.before, plan)
            if event.op is not Op.DELETE and event.after is not None:
                post = self._render_image(event.after, plan)
        message = {
            F_META: self._render_meta(event, db_type),
            F_PREV: prev,
            F_RECORD_TYPE: record_type,
            F_POST: post,
        }
        return [dumps(message).encode("utf-8")]

    @staticmethod
    def _db_type(event: ChangeEvent) -> str | None:
        """The event's source ``dbType``; an OceanBase one when only a tenant is known."""
        db_type = event.extra.get(X_DB_TYPE)
        if isinstance(db_type, str):
            return db_type
        return DEFAULT_DB_TYPE if event.extra.get(X_TENANT) else None

    def _plan(self, event: ChangeEvent, oracle: bool) -> dict[str, tuple[str | None, str]]:
        """``{column: (schemaType, kind)}`` for the columns the event types."""
        if not self.typed:
            return {}
        plan: dict[str, tuple[str | None, str]] = {}
        for name, column in (event.columns or {}).items():
            schema_type = derived_schema_type(column, oracle)
            kind = light_type(schema_type, oracle)[1] if schema_type else KIND_VALUE
            plan[name] = (schema_type, kind)
        return plan

    def _render_image(
        self, image: Mapping[str, Any], plan: Mapping[str, tuple[str | None, str]]
    ) -> dict[str, Any]:
        out = {
            name: render_value(value, plan[name][1] if name in plan else KIND_VALUE)
            for name, value in image.items()
        }
        if self.typed:
            out[LIGHT_TYPE] = {
                name: {SCHEMA_TYPE: plan[name][0]}
                for name in image
                if name in plan and plan[name][0] is not None
            }
        return out

    def _render_meta(self, event: ChangeEvent, db_type: str | None) -> dict[str, Any]:
        extra = event.extra
        tenant = extra.get(X_TENANT)
        database = event.database if event.database is not None else event.schema
        db = f"{tenant}.{database}" if tenant and database is not None else database
        values = event.key_values() if event.key else None
        meta: dict[str, Any] = {
            M_CHECKPOINT: render_value(extra.get(X_CHECKPOINT)),
            M_PRIMARY_KEY: KEY_SEPARATOR.join(event.key) if event.key else None,
            M_SOURCE_IDENTITY: None,
            M_PRIMARY_VALUE: KEY_SEPARATOR.join(key_text(v) for v in values) if values else None,
            M_DB_TYPE: db_type,
            M_TABLE: event.table,
            M_DB: db,
            M_TIMESTAMP: str(event.ts_ms // 1000) if event.ts_ms is not None else None,
        }
        if event.position is not None and len(event.position.parts) == 1:
            meta[M_SEQUENCE] = event.position.parts[0]
        if event.tx is not None:
            meta[M_UNIQUE_ID] = event.tx
        if extra.get(X_DDL_TYPE):
            meta[M_DDL_TYPE] = extra[X_DDL_TYPE]
        return meta


class _IntParser:
    """An integer of a logical type, refusing huge literals before converting them."""

    __slots__ = ("ltype",)

    def __init__(self, ltype: LogicalType) -> None:
        self.ltype = ltype

    def __call__(self, raw: Any) -> int:
        return check_integer_range(raw if type(raw) is int else small_int(raw), self.ltype)


@dataclass(frozen=True, slots=True)
class _Typing:
    """A typed column: its Column, its value parser (None: keep as sent), and for
    DATETIME-like types the typing to use when the values carry a zone."""

    column: Column
    parser: Callable[[Any], Any] | None
    zoned: _Typing | None = None


_UNTYPED: Final = _Typing(Column(UNKNOWN), None)
_PLAN_CACHE_SIZE: Final = 256
_TEXTS_CACHED: Final = 1024


def _without_light_type(image: dict[str, Any]) -> dict[str, Any]:
    if LIGHT_TYPE not in image:
        return dict(image)
    return {name: value for name, value in image.items() if name != LIGHT_TYPE}


def _has_zone(value: Any) -> bool:
    """Does a DATETIME text end with a zone id, ``Z`` or an offset? (cheap: no full parse)"""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if len(text) < 11 or not text[:4].isdigit():
        return False
    if text[-1].isalpha() or text[-1] == "]":
        return True
    tail = text[10:]  # after the date: a sign can only start an offset
    return "+" in tail or "-" in tail


class OmsJson(_OmsFormat):
    """OceanBase OMS serialisation ``Default``: full images, no column types."""

    id = "oms-json"
    vendor = "OceanBase OMS"
    title = "OMS Default JSON (prevStruct / postStruct / allMetaData)"
    capabilities = Capabilities(
        before_image=Capabilities.Before.FULL,
        types=Capabilities.Types.NONE,
        key_names=True,
        truncate=False,
        tx_markers=False,
        position="`allMetaData.storeDataSequence`",
        key_detail="`record_primary_key`",
        notes=("untyped: every value is stored as the vendor's text",),
    )

    @classmethod
    def sniff(cls, message: Any) -> float:
        score = cls._shape_score(message)
        if score and cls._light_state(message) is True:
            return 0.3  # __light_type inside an image: the extended format
        return score


class OmsExtendJson(_OmsFormat):
    """OceanBase OMS serialisation ``DefaultExtendColumnType``: Default plus ``__light_type``."""

    id = "oms-extend-json"
    vendor = "OceanBase OMS"
    title = "OMS DefaultExtendColumnType JSON (Default + __light_type column types)"
    capabilities = Capabilities(
        before_image=Capabilities.Before.FULL,
        types=Capabilities.Types.VENDOR,
        key_names=True,
        truncate=False,
        tx_markers=False,
        types_detail="`__light_type` schemaType",
        position="`allMetaData.storeDataSequence`",
        key_detail="`record_primary_key`",
    )
    typed = True
    _LIGHT_PLANS: ClassVar[int] = 256

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        # fast path: plans by (oracle, raw __light_type), the last one (by dbType) tried first
        self._light_plans = PlanCache(self._LIGHT_PLANS)
        self._last_light: tuple[str | None, _LightPlan] | None = None

    def decode_fast(self, value: bytes) -> list[ChangeEvent]:
        """The common row change, its images typed by their ``__light_type`` as msgspec
        decodes them, then :meth:`RowFlow.flow` (else a refusal: then :meth:`decode_slow`
        decides)."""
        msg = _OMS_RAW_DECODER.decode(value)
        code = msg.recordType
        try:
            rule = _ROW_OPS[code]
        except (KeyError, TypeError):
            raise NotFast from None  # heartbeat, DDL, anything else
        op, prev, post = rule.op, msg.prevStruct, msg.postStruct
        null_prev, null_post = prev == NULL_RAW, post == NULL_RAW
        if op is DELETE:
            if null_prev or not null_post:
                raise NotFast
            first, second = prev, None
        elif op is UPDATE and not null_prev:
            if null_post:
                raise NotFast
            first, second = prev, post
        else:
            if null_post or (op is not UPDATE and not null_prev):
                raise NotFast  # (an unused prevStruct is checked by the slow path)
            first, second = post, None
        meta = msg.allMetaData
        if meta is None:
            meta = _NO_META
        plan, row = self._light_row(first, meta.dbType)
        other = None if second is None else plan.rows.decode(second)
        columns = plan.columns
        if tuple(row) != plan.names:
            columns = {name: columns[name] for name in row}  # the image's order
        images = (row, other, ()) if op is DELETE or other is not None else (None, row, ())
        fast = {F_META: meta}
        return [self.flow(fast, fast, code, rule, images, columns)]

    def columns_of(
        self, msg: dict[str, Any], head: dict[str, Any], images: Images
    ) -> dict[str, Column] | None:
        """The columns of the images the op uses, by their ``__light_type`` (None: no
        image has one; columns absent from the images are not kept)."""
        before, after, _ = images
        raw = {
            F_PREV: msg.get(F_PREV) if before is not None else None,
            F_POST: msg.get(F_POST) if after is not None else None,
        }
        types = self._light_types(raw)
        if types is None:
            return None
        meta = msg.get(F_META) or {}  # (an object: the header checked it)
        db_type = optional_str(self.id, meta.get(M_DB_TYPE), _META_PATHS[M_DB_TYPE])
        plan = self._typing_plan(types, oracle_tenant(db_type))
        rows = (before, after)
        columns: dict[str, Column] = {}
        for row in rows:
            for name in row or ():
                if name not in columns:
                    typing = plan.get(name, _UNTYPED)
                    if typing.zoned is not None and self._zoned(name, rows):
                        typing = typing.zoned
                    columns[name] = typing.column
        return columns

    def _light_row(
        self, image: msgspec.Raw, db_type: str | None
    ) -> tuple[_LightPlan, dict[str, Any]]:
        """The plan of an image (of a source's ``dbType``) and its typed row: the previous
        message's plan when the image decodes with it (its decode checks the
        ``__light_type`` bytes), else the plan of the image's own ``__light_type``."""
        last = self._last_light
        if last is not None and last[0] == db_type:
            try:
                return last[1], last[1].rows.decode(image)
            except FAST_REFUSALS:
                pass  # another table (or a value refused: again below)
        plan = self._light_plan(image, db_type)
        return plan, plan.rows.decode(image)

    def _light_plan(self, image: msgspec.Raw, db_type: str | None) -> _LightPlan:
        """The plan of an image's ``__light_type`` (it becomes the last plan)."""
        key = bytes(_LIGHT_DECODER.decode(image).light)
        oracle = oracle_tenant(db_type)
        plan: _LightPlan = self._light_plans.plan(
            (oracle, key), lambda: self._build_light_plan(key, oracle)
        )
        self._last_light = (db_type, plan)
        return plan

    def _build_light_plan(self, light: bytes, oracle: bool) -> _LightPlan:
        specs = JSON_DECODER.decode(light)
        if type(specs) is not dict or not specs:
            raise NotFast  # no light types: the slow path decides
        zone = self.options.timezone
        columns: dict[str, Column] = {}
        types: dict[str, tuple[Any, Callable[[Any], Any] | None]] = {}
        for name, spec in specs.items():
            schema_type = spec.get(SCHEMA_TYPE) if type(spec) is dict else None
            if type(schema_type) is not str:
                raise NotFast  # the slow path reports it
            typing = self._typing(schema_type, oracle)
            if typing.zoned is not None and zone is not None:
                typing = typing.zoned  # with a zone option, DATETIME values are instants
            columns[name] = typing.column
            types[name] = json_value_type(typing.column.type, typing.parser, zone)
        rows = TypedRows(types, None, LIGHT_TYPE, light)
        return _LightPlan(columns, tuple(columns), rows)

    @classmethod
    def sniff(cls, message: Any) -> float:
        score = cls._shape_score(message)
        if not score:
            return 0.0
        state = cls._light_state(message)
        if state is True:
            return 0.97
        # no image with columns: looks like Default too, which must win the tie
        return 0.4 if state is None else 0.1


__all__ = [
    "LIGHT_TYPE",
    "OmsExtendJson",
    "OmsJson",
    "derived_schema_type",
    "key_text",
    "light_type",
    "seconds_to_ms",
]
