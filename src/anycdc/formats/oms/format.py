"""``oms-json`` and ``oms-extend-json``: the shared RowFlow hooks (``_OmsFormat``), then
each variant's detection and fast path."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, ClassVar, Final

import msgspec

from anycdc.errors import DecodeError, EncodeError
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
    column_parser,
    expect_object,
    expect_str,
    json_value_type,
    optional_str,
    require,
)
from anycdc.formats.codecs.text import (
    KEY_SEPARATOR,
    KIND_DATETIME,
    KIND_VALUE,
    bounded_int,
    optional_image,
    render_value,
)
from anycdc.formats.events import Header, OpRule
from anycdc.formats.flow import DDL, DELETE, UPDATE, Images, RowFlow
from anycdc.formats.oms.fast import (
    LIGHT_DECODER,
    NO_META,
    OMS_DECODER,
    OMS_RAW_DECODER,
    ROW_OPS,
    FastMeta,
    LightPlan,
)
from anycdc.formats.oms.types import (
    UNTYPED,
    IntParser,
    Typing,
    derived_schema_type,
    has_zone,
    key_text,
    light_type,
    oracle_tenant,
    seconds_to_ms,
    tenant_database,
    without_light_type,
)
from anycdc.formats.oms.wire import (
    DDL_KEY,
    DEFAULT_DB_TYPE,
    F_META,
    F_POST,
    F_PREV,
    F_RECORD_TYPE,
    LIGHT_TYPE,
    M_CHECKPOINT,
    M_DB,
    M_DB_TYPE,
    M_DDL_TYPE,
    M_PRIMARY_KEY,
    M_PRIMARY_VALUE,
    M_SEQUENCE,
    M_SOURCE_IDENTITY,
    M_TABLE,
    M_TIMESTAMP,
    M_TRANS_ID,
    M_UNIQUE_ID,
    META_PATHS,
    OP_NOUN,
    OPS,
    P_META,
    RECORD_TYPES,
    RT_DDL,
    SCHEMA_TYPE,
    X_CHECKPOINT,
    X_DB_TYPE,
    X_DDL_TYPE,
    X_TENANT,
)
from anycdc.values import (
    EPOCH_TEXT,
    TIMESTAMPTZ,
    LogicalType,
    parse_datetime,
    parse_epoch_seconds,
)


class _OmsFormat(RowFlow):
    """Decoding and encoding shared by Default and DefaultExtendColumnType."""

    typed: ClassVar[bool] = False
    table_field = f"$.{F_META}.{M_TABLE}"

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        # per-instance caches (never module state): parsers by type, typings by table shape
        self._parsers: dict[LogicalType, Callable[[Any], Any]] = {}
        self._plans: Cache[tuple[bool, tuple[tuple[str, str], ...]], dict[str, Typing]] = Cache(
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

    def decode_fast(self, value: bytes, key: bytes | None = None) -> list[ChangeEvent]:
        """The common row change: its envelope read by msgspec, then :meth:`RowFlow.flow`
        (or a fast-path refusal: then :meth:`decode_slow` decides)."""
        msg = OMS_DECODER.decode(value)
        code = msg.recordType
        try:
            rule = ROW_OPS[code]
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
        fast = {F_META: NO_META if meta is None else meta}
        return [self.flow(fast, fast, code, rule, (before, after, ()))]

    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Header:
        meta = msg.get(F_META)
        if type(meta) is not FastMeta:
            return self._header(msg, meta, rule)
        # the fast path's allMetaData: msgspec checked its fields' types and ranges
        return self._header_of(
            meta.dbType, meta.db, meta.table_name, self._ts_ms(meta.timestamp),
            meta.storeDataSequence, meta.uniqueId, meta.transId, meta.checkpoint,
            meta.ddlType, None,
        )  # fmt: skip

    def _header(self, msg: dict[str, Any], raw_meta: Any, rule: OpRule) -> Header:
        """The header of a parsed message (its ``allMetaData``: ``raw_meta``), each field
        checked in the metadata's order."""
        fid = self.id
        meta = {} if raw_meta is None else expect_object(fid, raw_meta, P_META)
        prev = optional_image(fid, msg.get(F_PREV), f"$.{F_PREV}")  # both, for every op
        post = optional_image(fid, msg.get(F_POST), f"$.{F_POST}")
        db_type = optional_str(fid, meta.get(M_DB_TYPE), META_PATHS[M_DB_TYPE])
        db = optional_str(fid, meta.get(M_DB), META_PATHS[M_DB])
        table = optional_str(fid, meta.get(M_TABLE), META_PATHS[M_TABLE])
        self._key_text(meta)  # split by key_names
        ts_ms = self._ts_ms(meta.get(M_TIMESTAMP))
        number = bounded_int(fid, meta.get(M_SEQUENCE), META_PATHS[M_SEQUENCE])
        unique_id = optional_str(fid, meta.get(M_UNIQUE_ID), META_PATHS[M_UNIQUE_ID])
        # transId is read only when uniqueId names no transaction
        trans_id = (
            None if unique_id else optional_str(fid, meta.get(M_TRANS_ID), META_PATHS[M_TRANS_ID])
        )
        ddl_type = optional_str(fid, meta.get(M_DDL_TYPE), META_PATHS[M_DDL_TYPE])
        return self._header_of(
            db_type, db, table, ts_ms, number, unique_id, trans_id, meta.get(M_CHECKPOINT),
            ddl_type, self._ddl(post, prev) if rule.op is DDL else None,
        )  # fmt: skip

    def _header_of(
        self,
        db_type: str | None,
        db: str | None,
        table: str | None,
        ts_ms: int | None,
        sequence: int | None,
        unique_id: str | None,
        trans_id: str | None,
        checkpoint: Any,
        ddl_type: str | None,
        ddl: str | None,
    ) -> Header:
        """The header rules, once for both paths: the tenant in ``db``, the position (the
        store sequence), the transaction (uniqueId, else transId) and ``extra``. The
        arguments are ``allMetaData``'s fields checked (by :meth:`_header`, or by msgspec
        for the fast path's :class:`FastMeta`)."""
        database, tenant = db, None
        if db and "." in db:  # (tenant_database keeps any other name as it is: no call)
            database, tenant = tenant_database(db, db_type)
        extra: dict[str, Any] = {}
        if tenant is not None:
            extra[X_TENANT] = tenant
        if db_type is not None:
            extra[X_DB_TYPE] = db_type
        if checkpoint is not None:
            extra[X_CHECKPOINT] = checkpoint
        if ddl_type:
            extra[X_DDL_TYPE] = ddl_type
        return Header(
            database=database,
            table=table,
            ts_ms=ts_ms,
            position=Position((sequence,)) if sequence is not None else None,
            tx=unique_id or trans_id or None,
            extra=extra,
            ddl=ddl,
        )

    def _ts_ms(self, seconds: Any) -> int | None:
        """``allMetaData.timestamp`` (epoch seconds) in ms; a text is read once."""
        if type(seconds) is not str:
            return seconds_to_ms(self.id, seconds, META_PATHS[M_TIMESTAMP])
        ts_ms = self._seconds.get(seconds)
        if ts_ms is None:
            ts_ms = seconds_to_ms(self.id, seconds, META_PATHS[M_TIMESTAMP])
            if ts_ms is not None:
                self._seconds.put(seconds, ts_ms)
        return ts_ms

    def images(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Images:
        op = rule.op  # (both images are objects or None: the header checked them)
        before = msg.get(F_PREV) if op is UPDATE or op is DELETE else None
        after = msg.get(F_POST) if op is not DELETE else None
        if op is DELETE:
            if before is None:
                self.missing(F_PREV, code)
        elif after is None:
            self.missing(F_POST, code)
        return (
            None if before is None else without_light_type(before),
            None if after is None else without_light_type(after),
            (),
        )

    def key_names(
        self, msg: dict[str, Any], head: dict[str, Any], rule: OpRule, images: Images
    ) -> tuple[str, ...] | None:
        """``record_primary_key`` split on U+0001 (empty: no key; split once per text)."""
        meta = msg.get(F_META)
        if type(meta) is FastMeta:
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
        return expect_str(self.id, raw, META_PATHS[M_PRIMARY_KEY])

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

    def _typing_plan(self, types: Mapping[str, str], oracle: bool) -> dict[str, Typing]:
        """How each typed column is typed and parsed; cached per table shape."""
        cache_key = (oracle, tuple(types.items()))
        plan = self._plans.get(cache_key)
        if plan is None:
            plan = self._plans.put(
                cache_key,
                {name: self._typing(schema_type, oracle) for name, schema_type in types.items()},
            )
        return plan

    def _typing(self, schema_type: str, oracle: bool) -> Typing:
        ltype, kind = light_type(schema_type, oracle)
        zoned = None
        if kind == KIND_DATETIME:
            zoned = Typing(Column(TIMESTAMPTZ, schema_type), self.value_parser(TIMESTAMPTZ))
        parser = None
        if ltype.name != "unknown":
            parser = column_parser(self.value_parser(ltype), ltype, schema_type)
        return Typing(Column(ltype, schema_type), parser, zoned)

    def _zoned(self, name: str, rows: tuple[dict[str, Any] | None, ...]) -> bool:
        """A DATETIME column is an instant when a zone applies to its values."""
        if self.options.timezone is not None:
            return True
        return any(has_zone(row.get(name)) for row in rows if row is not None)

    def value_parser(self, ltype: LogicalType) -> Callable[[Any], Any]:
        parser = self._parsers.get(ltype)
        if parser is None:
            if ltype.name == "timestamptz":
                parser = self._parse_instant
            elif ltype.name in ("int8", "int16", "int32", "int64", "uint64", "integer"):
                parser = IntParser(ltype)
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


_PLAN_CACHE_SIZE: Final = 256
_TEXTS_CACHED: Final = 1024


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
        self._last_light: tuple[str | None, LightPlan] | None = None

    def decode_fast(self, value: bytes, key: bytes | None = None) -> list[ChangeEvent]:
        """The common row change, its images typed by their ``__light_type`` as msgspec
        decodes them, then :meth:`RowFlow.flow` (else a refusal: then :meth:`decode_slow`
        decides)."""
        msg = OMS_RAW_DECODER.decode(value)
        code = msg.recordType
        try:
            rule = ROW_OPS[code]
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
            meta = NO_META
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
        db_type = optional_str(self.id, meta.get(M_DB_TYPE), META_PATHS[M_DB_TYPE])
        plan = self._typing_plan(types, oracle_tenant(db_type))
        rows = (before, after)
        columns: dict[str, Column] = {}
        for row in rows:
            for name in row or ():
                if name not in columns:
                    typing = plan.get(name, UNTYPED)
                    if typing.zoned is not None and self._zoned(name, rows):
                        typing = typing.zoned
                    columns[name] = typing.column
        return columns

    def _light_row(
        self, image: msgspec.Raw, db_type: str | None
    ) -> tuple[LightPlan, dict[str, Any]]:
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

    def _light_plan(self, image: msgspec.Raw, db_type: str | None) -> LightPlan:
        """The plan of an image's ``__light_type`` (it becomes the last plan)."""
        key = bytes(LIGHT_DECODER.decode(image).light)
        oracle = oracle_tenant(db_type)
        plan: LightPlan = self._light_plans.plan(
            (oracle, key), lambda: self._build_light_plan(key, oracle)
        )
        self._last_light = (db_type, plan)
        return plan

    def _build_light_plan(self, light: bytes, oracle: bool) -> LightPlan:
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
            column = typing.column
            types[name] = json_value_type(column.type, typing.parser, zone, column.vendor_type)
        rows = TypedRows(types, None, LIGHT_TYPE, light)
        return LightPlan(columns, tuple(columns), rows)

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
