"""The Canal flat-message flow, :class:`CanalFamily`: decoding (general and fast path)
and encoding, with the hooks each Canal-shaped vendor fills."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal
from functools import partial
from typing import Any, ClassVar

import msgspec
from msgspec import UNSET

from anycdc.errors import DecodeError, EncodeError, type_name
from anycdc.event import ROW_OPS, ChangeEvent, Column, Op, Position, dumps
from anycdc.formats.base import (
    JSON_DECODER,
    NAIVE_DATETIME,
    NULL_RAW,
    SNIFF_PASS,
    Cache,
    FastColumn,
    FastRows,
    Format,
    NotFast,
    PlanCache,
    TextRows,
    convert_values,
    expect_object,
    lax_int,
    optional_int,
    optional_str,
)
from anycdc.formats.canal.detect import is_canal_shaped
from anycdc.formats.canal.fast import (
    FLAT_DECODER,
    FlatMessage,
    FlatPlan,
    bool_text,
    cache_items,
    checked_int,
    fast_header,
    naive_iso,
)
from anycdc.formats.canal.rows import (
    Envelope,
    Pairing,
    RowRender,
    finish_columns,
    flag_field,
    partial_images,
    pk_names_field,
    row_array,
)
from anycdc.formats.canal.types import (
    BINARY_PARSERS,
    DEFAULT_VENDOR,
    SIMPLE_PARSERS,
    FlatSchema,
    RowTyping,
    column_type,
    ddl_type_of,
    int_parser,
    parse_json_text,
    parse_text,
    render_value,
    timestamp_parser,
    unsigned_bigint,
)
from anycdc.formats.canal.wire import (
    BINARY_AUTO,
    BINARY_BASE64,
    BINARY_LATIN1,
    BINARY_OPTION,
    DDL_OP,
    DELETE_OP,
    ENCODE_OPS,
    EXTRA_ROLLBACK,
    F_DATA,
    F_DATABASE,
    F_ES,
    F_GTID,
    F_ID,
    F_IS_DDL,
    F_IS_HEARTBEAT,
    F_MYSQL_TYPE,
    F_OLD,
    F_PK_NAMES,
    F_SQL,
    F_SQL_TYPE,
    F_TABLE,
    F_TIDB,
    F_TS,
    F_TYPE,
    HEARTBEAT_OP,
    OP_XAROLLBACK,
    OPS,
    ROW_TYPES,
    TIDB_CLAIM_CHECK,
    TIDB_COMMIT_TS,
    TIDB_ONLY_HANDLE_KEY,
    TIDB_WATERMARK_TS,
    TRUNCATE_OP,
    UPDATE_OP,
)
from anycdc.formats.events import Header, build_event
from anycdc.formats.options import OptionSpec
from anycdc.typemap import integer_range, jdbc_type
from anycdc.values import (
    BINARY,
    CANONICAL_BOOLEAN,
    CANONICAL_DATE,
    CANONICAL_DECIMAL,
    CANONICAL_NAIVE_DATETIME,
    CANONICAL_TIME,
    INTEGER_RANGES,
    TIMESTAMP,
    UNKNOWN,
    LogicalType,
    canonical_int_pattern,
    iso_datetime_text,
)


def _ddl_op(op: Op) -> Op:
    """The op of a message flagged ``isDdl``: a DDL, TRUNCATE excepted."""
    return op if op is TRUNCATE_OP else DDL_OP


class CanalFamily(Format):
    """The Canal flat-message flow, once, for every Canal-shaped vendor.

    The flow: the header (:meth:`envelope`), the row arrays (:meth:`row_arrays`),
    their pairing into images (:meth:`pair_rows`), the type maps (:meth:`schema`),
    typing every image and building the events with the key (the configured key wins:
    :meth:`Format.primary_key`), in :meth:`_events`, whichever path: the slow one types
    rows value by value (:meth:`_row_events`), the fast one by the plan of the type maps,
    a compiled reading cached per shape (:meth:`_fast_events`). Both read the header
    with one rule per vendor (Canal's: :meth:`canal_header`). For the changelog stage
    (:meth:`Format.keep_canonical_text`) the fast path's plans read rows with
    :class:`~anycdc.formats.fastpath.TextRows` (:meth:`fast_rows`): images of canonical
    text, the texts the columns' ``canonical`` patterns prove kept as sent. Vendors give hooks:

    * decoding: :meth:`envelope` (header field names, op names, position, extra),
      :meth:`row_arrays`, :meth:`pair_rows` (swapped layouts: :meth:`swaps_full_messages`),
      :meth:`schema` (type-name source, timestamps), :meth:`code_type`,
      :meth:`build_fast_plan` and :meth:`decode_fast` (the vendor's envelope struct,
      then :meth:`_fast_events`); flags ``old_is_overlay``, ``widen_by_values``,
      ``invalid_per_row`` and ``schema_first``;
    * detection: :meth:`sniff` (Canal's: :func:`is_canal_shaped`, then :meth:`shape_score`);
    * encoding: :meth:`encode_header` (the vendor's fields and their order),
      :meth:`encode_types` (type maps and row rendering), :meth:`encode_rows` (which
      image goes to ``data``/``old``), :meth:`serialize`, :meth:`encode_es`,
      :meth:`default_vendor`, ``omit_nulls`` and ``ddl_type``.
    """

    omit_nulls: ClassVar[bool] = False  # DTS examples leave null fields out
    ddl_type: ClassVar[str | None] = None  # fixed ``type`` of DDL messages (DTS: "DDL")
    #: ``old`` holds changed columns laid over the other image (Canal); False: whole rows (DRS)
    old_is_overlay: ClassVar[bool] = True
    #: values widen columns: a BIGINT above int64 is uint64, an aware value makes a
    #: timestamp column timestamptz, a column the type maps lack is ``unknown`` (not DRS)
    widen_by_values: ClassVar[bool] = True
    #: invalid columns per event (DRS), not per message
    invalid_per_row: ClassVar[bool] = False
    #: the type maps and key are read before the rows (DRS: a bad map fails a rowless message)
    schema_first: ClassVar[bool] = False
    fast_path = True
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = (BINARY_OPTION,)
    _SCHEMA_CACHE_SIZE: ClassVar[int] = 1024

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self.binary_mode = self.option(BINARY_OPTION)
        self._schemas: Cache[Any, FlatSchema] = Cache(self._SCHEMA_CACHE_SIZE)
        # (type, binary mode, integer range) -> parser
        self._parsers: dict[
            tuple[LogicalType, str, tuple[int, int] | None], Callable[[Any], Any] | None
        ] = {}
        # fast path: plans by the raw bytes of the type maps (and a vendor tag; a PlanCache)
        self._plans = PlanCache(self._SCHEMA_CACHE_SIZE)
        self._swapped = self.swaps_full_messages()
        self._last_plan: tuple[tuple[msgspec.Raw, msgspec.Raw, Any] | None, Any] = (None, None)
        self._last_key: tuple[list[str] | None, tuple[str, ...] | None] = (
            None, self.primary_key(None)
        )  # fmt: skip
        # the flags :meth:`_events` reads per message, bound once (a class attribute read
        # through the instance is a slow lookup)
        self._row_rules = (self.old_is_overlay, self.invalid_per_row, self.widen_by_values)

    # ------------------------------------------------------------------ hooks
    def code_type(self, code: int) -> LogicalType:
        """The logical type a ``sqlType`` code stands for (``java.sql.Types``)."""
        return jdbc_type(code)

    def swaps_full_messages(self) -> bool:
        """True when a message with rows in both ``data`` and ``old`` has them swapped:
        ``old`` holds the rows after the change and ``data`` those before.

        Canal never swaps. A DML message with rows only in ``old`` is swapped whatever
        this says: that layout is certain (DTS tasks created before 2022-03-20).
        """
        return False

    def pair_rows(self, op: Op, data: list[Any] | None, old: list[Any] | None) -> Pairing:
        """Which rows are typed first, which give the other image, and whether the first
        are the rows after the change (rows only in ``old``: swapped; rows in both:
        :meth:`swaps_full_messages`)."""
        # rows in only one array decide; with both, :meth:`swaps_full_messages` (bound once)
        legacy = self._swapped and bool(old) if data else bool(old)
        if op is not UPDATE_OP:
            return ((old or data) if legacy else (data or old)), None, op is not DELETE_OP
        if legacy and not data:
            return old, None, True  # rows after the change only: no before image
        return data, (old or []), not legacy or not data

    def row_arrays(self, msg: dict[str, Any]) -> tuple[list[Any] | None, list[Any] | None]:
        """``data`` and ``old``, checked (Canal: arrays of objects)."""
        fid = self.id
        return row_array(fid, msg, F_DATA), row_array(fid, msg, F_OLD)

    @classmethod
    def shape_score(cls, msg: dict[str, Any]) -> float:
        """Detection score of a message already known to be Canal-shaped."""
        raise NotImplementedError

    # ------------------------------------------------------------------ detection
    sniff_keys = frozenset({F_TYPE})  # every Canal-shaped message has a string ``type``
    # is_canal_shaped and is_dts_certain read keys, data/old's types, type's and isDdl's
    # values; the rest is DRS' evidence (content: read per message)
    sniff_fields = frozenset({F_TYPE, F_IS_DDL})
    sniff_evidence = ("anycdc.formats.canal.detect:read_drs_evidence",)

    @classmethod
    def sniff(cls, message: Any) -> float:
        try:
            # read once per detection pass: four Canal-shaped formats ask
            if not SNIFF_PASS.shared(message, is_canal_shaped):
                return 0.0
            return cls.shape_score(message)
        except Exception:  # a sniffer never raises
            return 0.0

    # ------------------------------------------------------------------ the family's flow
    def decode_object(self, obj: Any, key: bytes | None = None) -> list[ChangeEvent]:
        msg = expect_object(self.id, obj, "$")
        env = self.envelope(msg)
        if env.op not in ROW_OPS:
            return [build_event(self.id, env.op, env.head)]
        return self._row_events(msg, env)

    def _row_events(self, msg: dict[str, Any], env: Envelope) -> list[ChangeEvent]:
        """The events of a row change, the slow way: checked arrays, rows typed by
        :meth:`_typed` (what the values prove is kept in a :class:`RowTyping`)."""
        fid = self.id
        schema: FlatSchema | None = None
        pk: list[str] | None = None
        if self.schema_first:
            schema, pk = self.schema(msg, env), pk_names_field(fid, msg)
        data, old = self.row_arrays(msg)
        main, overlay, main_is_after = self.pair_rows(env.op, data, old)
        if not main:
            return []
        if not self.schema_first:
            schema, pk = self.schema(msg, env), pk_names_field(fid, msg)
        if schema is None:
            typing, columns = None, None
        else:
            typing, columns = RowTyping(schema, [], set(), {}), schema.columns
        typed = partial(self._typed, typing)
        return self._events(
            env.op, env.head, pk, main, overlay, main_is_after, typed, typed, typing, columns
        )

    def _events(
        self,
        op: Op,
        head: Header,
        pk: list[str] | None,
        main: list[Any],
        overlay: list[Any] | None,
        main_is_after: bool,
        type_row: Callable[[Any], dict[str, Any]],
        type_into: Callable[[Any, dict[str, Any]], dict[str, Any]],
        typing: RowTyping | None,
        columns: dict[str, Column] | None,
    ) -> list[ChangeEvent]:
        """The events of a row change, whichever path typed it: the rows :meth:`pair_rows`
        gave, ``main`` typed once by ``type_row``, the other image from ``overlay``: laid
        over ``main`` by ``type_into`` (Canal's ``old`` holds changed columns only) or whole
        (DRS); the key (the configured key wins: :meth:`Format.primary_key`).

        ``typing`` holds what the values proved (wider columns, invalid values, partial
        images; per row for DRS); None where nothing can be proved: rows without type
        maps, or the fast path's plan, whose rows are whole and valid (a zoned plan passes
        one: its aware timestamps widen ``columns``)."""
        overlaid, per_row, widen = self._row_rules
        row_invalid = typing.invalid if per_row and typing is not None else None
        # the configured key wins (:meth:`Format.primary_key`), asked again only when the
        # message's key names differ from the previous message's (a call costs more)
        last_key = self._last_key
        if pk == last_key[0]:
            key_names = last_key[1]
        else:
            key_names = self.primary_key(pk)
            self._last_key = (None if pk is None else list(pk), key_names)
        fid = self.id
        events: list[ChangeEvent] = []
        invalid: tuple[str, ...] = ()
        before: dict[str, Any] | None
        after: dict[str, Any] | None
        for index, raw in enumerate(main):
            other: dict[str, Any] | None = None
            if overlay is None:
                image = type_row(raw)
            elif overlaid:
                image = type_row(raw)
                if not overlay:
                    other = image  # nothing changed: Canal drops empty ``old`` maps
                elif len(overlay) == len(main):  # rows paired one to one
                    other = type_into(overlay[index], dict(image))
            else:  # a whole other image (its rows were paired by ``pair_rows``)
                other = type_row(overlay[index])
                image = type_row(raw)
            if main_is_after:
                before, after = other, image
            else:
                before, after = image, other
            if row_invalid is not None:
                invalid = tuple(row_invalid)
                row_invalid.clear()
            events.append(
                build_event(
                    fid, op, head, key_names, before, after, columns,
                    partial_images(typing, before, after) if typing is not None else (), invalid,
                )
            )  # fmt: skip
        if typing is not None and widen:
            # what the values proved holds for every event of the message (rarely anything)
            images = [(event.before, event.after) for event in events]
            wider, invalid = finish_columns(typing, images)
            if wider is not columns or invalid:
                replace = msgspec.structs.replace
                # a loop, not a comprehension: one would make its names cells for the
                # whole method, paid by every message
                for index, event in enumerate(events):
                    events[index] = replace(event, columns=wider, invalid=invalid)
        return events

    def _fast_plan(self, names: msgspec.Raw, codes: msgspec.Raw, tag: Any) -> FlatPlan:
        """The plan of a schema, by the raw bytes of its type maps (and a vendor ``tag``)."""
        cache_key = (bytes(names), bytes(codes), tag)
        plan: FlatPlan = self._plans.plan(
            cache_key,
            lambda: self.build_fast_plan(
                JSON_DECODER.decode(cache_key[0]), JSON_DECODER.decode(cache_key[1]), tag
            ),
        )
        self._last_plan = ((names.copy(), codes.copy(), tag), plan)  # copies: not the message
        return plan

    def _fast_events(
        self,
        op: Op,
        names: msgspec.Raw,
        codes: msgspec.Raw,
        tag: Any,
        data_raw: msgspec.Raw,
        old_raw: msgspec.Raw,
        pk: list[str] | None,
        head: Header,
    ) -> list[ChangeEvent]:
        """The events of a row change, the fast way: its rows decoded and typed by the
        plan of the type maps ``names``/``codes`` (and a vendor ``tag``)."""
        shape = (names, codes, tag)
        last = self._last_plan
        # consecutive messages of a topic mostly share their table: compare, no hashing
        plan = last[1] if shape == last[0] else self._fast_plan(names, codes, tag)
        rows = plan.rows
        data = rows.decode(data_raw)
        old = None if old_raw == NULL_RAW else rows.decode(old_raw)
        main, overlay, main_is_after = self.pair_rows(op, data, old)
        if not main:
            return []
        # rows typed by ``type_row`` are whole (it refuses others: a partial row is the
        # slow path's, which marks it partial); ``type_into`` lays any subset over them
        schema = plan.schema
        typing = RowTyping(schema, [], set(), {}) if plan.zoned else None
        return self._events(
            op, head, pk, main, overlay, main_is_after, plan.type_row, plan.type_into, typing,
            schema.columns,
        )  # fmt: skip

    # ------------------------------------------------------------------ canal's hooks
    def decode_fast(self, value: bytes, key: bytes | None = None) -> list[ChangeEvent]:
        """The common row change, or a fast-path refusal (then :meth:`decode_slow` decides)."""
        flat = FLAT_DECODER.decode(value)
        kind = flat.type
        # the common shape in one test; the rest one by one
        if not (
            type(kind) is str and kind in ROW_TYPES and flat.isDdl is False
            and flat.isHeartbeat is not True and flat.id is not UNSET and flat.tidb is None
        ):  # fmt: skip
            fast_header(flat)
        op, head = self.canal_header(flat)  # a row change: the checks above
        return self._fast_events(
            op, flat.mysqlType, flat.sqlType, None, flat.data, flat.old, flat.pkNames, head
        )

    def build_fast_plan(self, names: Any, codes: Any, tag: Any) -> FlatPlan:
        """How the fast path types the rows of one schema (its type maps, decoded)."""
        if names is None and codes is None:
            raise NotFast  # untyped rows: rare, the slow path copies them as sent
        mode = self.binary_mode if self.binary_mode != BINARY_AUTO else BINARY_LATIN1
        schema = self._build_schema(names, codes, mode)  # DecodeError: the slow path reports it
        zone = self.options.timezone
        columns = {name: self._fast_column(col, mode, zone) for name, col in schema.columns.items()}
        zoned = zone is not None and bool(schema.timestamps)
        return FlatPlan(schema, self.fast_rows(columns, zoned), zoned)

    def fast_rows(self, columns: Mapping[str, FastColumn], zoned: bool) -> FastRows:
        """The fast path's row reader: :class:`FastRows`, or for canonical text
        (:meth:`Format.keep_canonical_text`) :class:`TextRows`, but in a ``zoned`` plan
        (its typed timestamps widen the columns: :meth:`_events`)."""
        if self.canonical_text and not zoned:
            return TextRows(columns)
        return FastRows(columns)

    def reset_plans(self) -> None:
        self._plans.clear()
        self._last_plan = (None, None)

    def _fast_column(self, col: Column, mode: str, zone: dt.tzinfo | None) -> FastColumn:
        """How the fast path types a column's text: as the slow parser (:meth:`_parser`)
        does for every text the fast way accepts (see :class:`FastRows`)."""
        ltype = col.type
        name = ltype.name
        bounds = integer_range(ltype, col.vendor_type)
        if bounds is not None:
            # ``int(text)`` is the slow parser's first try; out of range: slow path (a
            # BIGINT above the int64 maximum makes the column unsigned there; an
            # unsigned column's negative value is invalid there)
            low, high = bounds
            return FastColumn(
                checked_int(low, high), lax_int(low, high), canonical=canonical_int_pattern(*bounds)
            )
        if name == "integer":
            return FastColumn(int, lax_int(), canonical=canonical_int_pattern(None, None))
        if name == "boolean":
            # msgspec takes "true"/"false"/"1"/"0" in any case: as parse_bool
            return FastColumn(bool_text, bool, canonical=CANONICAL_BOOLEAN)
        if name == "decimal":
            # Decimal strips whitespace as str.strip()
            return FastColumn(Decimal, Decimal, canonical=CANONICAL_DECIMAL)
        if name in ("float32", "float64"):
            return FastColumn(float)
        if name == "date":
            # both refuse whitespace
            return FastColumn(dt.date.fromisoformat, dt.date, canonical=CANONICAL_DATE)
        if name == "timestamp" and zone is None:
            return FastColumn(
                naive_iso, NAIVE_DATETIME, iso=True, canonical=CANONICAL_NAIVE_DATETIME,
                canonical_form=iso_datetime_text,
            )  # fmt: skip
        parser = self._parser(ltype, mode, None)
        if parser is None or parser is parse_text or parser is parse_json_text:
            return FastColumn()  # text columns keep the text (untyped ones too)
        if name == "time":
            return FastColumn(parser, canonical=CANONICAL_TIME)  # parse_time
        return FastColumn(parser)  # the slow parser itself (binary, time, zoned timestamps)

    def envelope(self, msg: dict[str, Any]) -> Envelope:
        """The header: Canal's fields checked, then read by :meth:`canal_header`."""
        fid = self.id
        tidb = msg.get(F_TIDB)
        if isinstance(tidb, dict) and TIDB_CLAIM_CHECK in tidb:
            raise DecodeError(
                fid,
                "$._tidb.claimCheckLocation",
                f"a TiCDC claim-check message: the change is stored at "
                f"{str(tidb[TIDB_CLAIM_CHECK])[:200]!r}, not in the message",
            )
        kind = msg.get(F_TYPE)
        if not isinstance(kind, str):
            if F_TYPE not in msg:
                raise DecodeError(fid, "$", f"missing required field {F_TYPE!r}")
            raise DecodeError(fid, "$.type", f"expected string, got {type_name(kind)}")
        if kind not in OPS:
            raise DecodeError(fid, "$.type", f"unknown op {kind!r}")
        is_ddl = msg.get(F_IS_DDL)
        if is_ddl is not True and is_ddl is not False:
            is_ddl = flag_field(fid, msg, F_IS_DDL)
        op, head = self.canal_header(
            FlatMessage(
                type=kind, isDdl=is_ddl, isHeartbeat=msg.get(F_IS_HEARTBEAT),
                database=msg.get(F_DATABASE), table=msg.get(F_TABLE), es=msg.get(F_ES),
                id=msg.get(F_ID, UNSET), tidb=tidb, ts=msg.get(F_TS), gtid=msg.get(F_GTID),
            )
        )  # fmt: skip
        if op in ROW_OPS:
            return Envelope(op, head)
        sql = optional_str(fid, msg.get(F_SQL), "$.sql")
        if op is DDL_OP or op is TRUNCATE_OP:
            head.ddl = sql
        return Envelope(op, head)

    def canal_header(self, header: FlatMessage) -> tuple[Op, Header]:
        """Canal's header rule, for both paths (:meth:`envelope` after checking ``type`` and
        ``isDdl``, :meth:`decode_fast` after its own checks): the op of ``type`` (a DDL when
        ``isDdl``, TRUNCATE excepted; a heartbeat when ``isHeartbeat`` is true), the names
        (text or numbers; "" is no name), ``es``, the position and ``extra`` (``gtid``, an XA
        rollback)."""
        fid = self.id
        kind = header.type
        op = OPS[kind].op
        if header.isDdl or header.isHeartbeat is True:
            op = HEARTBEAT_OP if header.isHeartbeat is True else _ddl_op(op)
        database, table, ts_ms = header.database, header.table, header.es
        if type(database) is not str:
            database = optional_str(fid, database, "$.database")
        if type(table) is not str:
            table = optional_str(fid, table, "$.table")
        if type(ts_ms) is not int:
            ts_ms = optional_int(fid, ts_ms, "$.es")
        serial = header.id
        if type(serial) is int and serial >= 0 and header.tidb is None:
            position: Position | None = Position((serial,))  # the common case
        else:
            position = self._position(header, ts_ms)
        gtid = header.gtid
        extra: dict[str, Any] = {F_GTID: gtid} if gtid and isinstance(gtid, str) else {}
        if kind == OP_XAROLLBACK:
            extra[EXTRA_ROLLBACK] = True  # an XA transaction rolled back: a boundary, no rows
        # positional: msgspec matches no keywords (database, schema, table, ts_ms, position,
        # tx, row_id, extra)
        return op, Header(database or None, None, table or None, ts_ms, position, None, None, extra)

    def _position(self, header: FlatMessage, es: int | None) -> Position | None:
        """The position of a header (:meth:`canal_header` builds ``(id,)`` itself): TiCDC's
        TSO where there is ``_tidb``, OMS' times (``es``, then ``ts``) where there is no
        ``id`` field, else ``(id,)`` of an ``id`` sent as text, or none for a null ``id``."""
        if header.tidb is not None:
            return self._tidb_position(header.tidb)
        serial = header.id
        if serial is UNSET:  # no ``id`` field (OMS)
            return self._time_position(es, header.ts)
        serial = optional_int(self.id, serial, "$.id")
        if serial is None:
            return None
        if serial < 0:
            raise DecodeError(self.id, "$.id", f"expected non-negative integer, got {serial}")
        return Position((serial,))

    def _time_position(self, es: int | None, ts: Any) -> Position | None:
        """OMS' position (it writes no serial number): commit time, then the time the
        message was written."""
        times = (es, optional_int(self.id, ts, "$.ts"))
        parts = tuple(time for time in times if time is not None and time >= 0)
        return Position(parts) if parts else None

    def _tidb_position(self, tidb: Any) -> Position | None:
        """TiCDC's extension: the transaction's ``commitTs`` (a watermark's ``watermarkTs``)."""
        fid = self.id
        if not isinstance(tidb, dict):
            raise DecodeError(fid, "$._tidb", f"expected object, got {type_name(tidb)}")
        if tidb.get(TIDB_ONLY_HANDLE_KEY) is True:
            raise DecodeError(
                fid,
                "$._tidb.onlyHandleKey",
                "TiCDC sent only the handle key columns (the message was too large; "
                "large-message-handle-option=handle-key-only): the row must be read from "
                "TiDB, it is not in the message",
            )
        for field in (TIDB_COMMIT_TS, TIDB_WATERMARK_TS):
            if field in tidb:
                ts = optional_int(fid, tidb[field], f"$._tidb.{field}")
                if ts is not None and ts < 0:
                    raise DecodeError(fid, f"$._tidb.{field}", f"expected a TSO, got {ts}")
                return Position((ts,)) if ts is not None else None
        return None

    def _binary_mode(self, msg: Mapping[str, Any]) -> str:
        if self.binary_mode != BINARY_AUTO:
            return self.binary_mode
        return BINARY_LATIN1 if F_ID in msg else BINARY_BASE64

    def schema(self, msg: dict[str, Any], env: Envelope) -> FlatSchema | None:
        """The columns and parsers the type maps give (Canal: ``mysqlType``/``sqlType``)."""
        names = msg.get(F_MYSQL_TYPE)
        codes = msg.get(F_SQL_TYPE)
        if names is None and codes is None:
            return None
        mode = self._binary_mode(msg)
        try:
            cache_key: Any = (cache_items(names), cache_items(codes), mode)
            cached = self._schemas.get(cache_key)
        except TypeError:  # unhashable junk inside: build (and fail) without the cache
            cache_key, cached = None, None
        if cached is None:
            cached = self._build_schema(names, codes, mode)
            if cache_key is not None:
                self._schemas.put(cache_key, cached)
        return cached

    def _build_schema(self, names: Any, codes: Any, mode: str) -> FlatSchema:
        fid = self.id
        if names is not None and not isinstance(names, dict):
            raise DecodeError(fid, "$.mysqlType", f"expected object, got {type_name(names)}")
        if codes is not None and not isinstance(codes, dict):
            raise DecodeError(fid, "$.sqlType", f"expected object, got {type_name(codes)}")
        code_of: dict[str, int | None] = {}
        for col, code in (codes or {}).items():
            if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
                reason = f"expected integer, got {type_name(code)}"
                raise DecodeError(fid, f"$.sqlType.{col}", reason)
            code_of[col] = code
        # columns in ``mysqlType`` order; ``sqlType`` alone when there are no names
        vendor_names: dict[str, str | None] = dict.fromkeys(code_of)
        if names is not None:
            vendor_names = {}
            for col, name in names.items():
                if name is not None and not isinstance(name, str):
                    reason = f"expected string, got {type_name(name)}"
                    raise DecodeError(fid, f"$.mysqlType.{col}", reason)
                vendor_names[col] = name
        columns: dict[str, Column] = {}
        parsers: dict[str, Callable[[Any], Any]] = {}
        timestamps = []
        for col, name in vendor_names.items():
            code = code_of.get(col)
            coded = self.code_type(code) if code is not None else UNKNOWN
            ltype = column_type(name, coded, mode == BINARY_BASE64)
            columns[col] = Column(ltype, name, code)
            parser = self._parser(ltype, mode, integer_range(ltype, name))
            if parser is not None:
                parsers[col] = parser
            if ltype is TIMESTAMP:
                timestamps.append(col)
        return FlatSchema(columns, parsers, tuple(timestamps))

    def _parser(
        self, ltype: LogicalType, mode: str, bounds: tuple[int, int] | None
    ) -> Callable[[Any], Any] | None:
        """The slow parser of a column of ``ltype`` (an integer one held to ``bounds``:
        :func:`~anycdc.typemap.integer_range` of its vendor type)."""
        cache_key = (ltype, mode, bounds)
        if cache_key in self._parsers:
            return self._parsers[cache_key]
        name = ltype.name
        parser: Callable[[Any], Any] | None
        if name in INTEGER_RANGES or name == "integer":
            parser = int_parser(ltype, bounds)
        elif name == "binary":
            parser = BINARY_PARSERS[mode]
        elif name in ("timestamp", "timestamptz"):
            parser = timestamp_parser(self.options.timezone)
        else:
            parser = SIMPLE_PARSERS.get(name)
        self._parsers[cache_key] = parser
        return parser

    def _typed(
        self, typing: RowTyping | None, raw: dict[str, Any], out: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Type one raw row (into ``out`` when given: an overlay on another image)."""
        if typing is None:
            if out is None:
                return dict(raw)
            out.update(raw)
            return out
        if not self.widen_by_values:
            return convert_values(raw, typing.schema.parsers, typing.invalid, out)
        out = convert_values(
            raw, typing.schema.parsers, typing.invalid, out, partial(unsigned_bigint, typing)
        )
        columns = typing.schema.columns
        if not raw.keys() <= columns.keys():
            for name in raw:
                if name not in columns:
                    typing.untyped[name] = None
        return out

    # ------------------------------------------------------------------ encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One flat message per event, as the vendor writes it: the header in the vendor's
        field order (:meth:`encode_header`), then for a row change the type maps
        (:meth:`encode_types`) and the rows they render (:meth:`encode_rows`), written by
        :meth:`serialize`."""
        msg = self.encode_header(event)
        if msg is None:
            return []
        if event.op in ROW_OPS:
            self.encode_rows(event, msg, self.encode_types(event, msg))
        return [self.serialize(msg)]

    def encode_header(self, event: ChangeEvent) -> dict[str, Any] | None:
        """The message without type maps and rows (their fields ``None`` where the vendor
        places them), or ``None`` when the vendor writes no message for the event."""
        if event.patch is not None or event.split is not None:
            raise EncodeError(self.id, "Canal messages carry whole rows only (no split/patch)")
        position = event.position
        msg: dict[str, Any] = {F_DATA: None, F_DATABASE: event.database}
        msg[F_ES] = self.encode_es(event.ts_ms)
        gtid = event.extra.get(F_GTID)
        if gtid is not None:
            msg[F_GTID] = gtid
        if position is None:
            msg[F_ID] = None
        elif len(position.parts) == 1:
            msg[F_ID] = position.parts[0]
        elif len(position.parts) == 2 and event.ts_ms == position.parts[0]:
            # OMS: no serial number (so binary in base64, as OMS writes it); ordered by (es, ts)
            msg[F_ES] = position.parts[0]
        else:
            raise EncodeError(self.id, f"position {position} has no Canal form")
        op = event.op
        msg[F_IS_DDL] = op in (Op.DDL, Op.TRUNCATE)
        msg[F_MYSQL_TYPE] = None
        msg[F_OLD] = None
        msg[F_PK_NAMES] = list(event.key) if event.key else None
        msg[F_SQL] = event.ddl if event.ddl is not None else ("" if op in ROW_OPS else None)
        msg[F_SQL_TYPE] = None
        msg[F_TABLE] = event.table
        msg[F_TS] = (
            position.parts[1] if position is not None and len(position.parts) == 2 else event.ts_ms
        )
        msg[F_TYPE] = self._encode_type(event)
        return msg

    def encode_types(self, event: ChangeEvent, msg: dict[str, Any]) -> RowRender:
        """Fill the type maps of a row change from its columns (Canal: ``mysqlType``/
        ``sqlType``) and return how a row is rendered (binary as the header implies)."""
        columns = event.columns
        if columns is not None:
            msg[F_MYSQL_TYPE], msg[F_SQL_TYPE] = self._encode_types(columns)
        mode = self._binary_mode(msg)
        return lambda row: self._render_row(row, event, mode)

    def serialize(self, msg: dict[str, Any]) -> bytes:
        """The message's bytes (DTS leaves null fields out)."""
        if self.omit_nulls:
            msg = {k: v for k, v in msg.items() if v is not None}
        return dumps(msg).encode("utf-8")

    def encode_es(self, ts_ms: int | None) -> int | None:
        """``es`` from the event time (Canal: milliseconds as they are)."""
        return ts_ms

    def encode_rows(self, event: ChangeEvent, msg: dict[str, Any], render: RowRender) -> None:
        """Fill ``data``/``old``: Canal puts the row in ``data`` and, for updates, the
        previous values of the changed columns in ``old``."""
        if event.op is Op.UPDATE:
            after = render(event.after or {})
            msg[F_DATA] = [after]
            if event.before is not None:
                before = render(event.before)
                changed = {k: v for k, v in before.items() if k not in after or after[k] != v}
                msg[F_OLD] = [changed] if changed else None
        else:
            row = event.before if event.op is Op.DELETE else event.after
            msg[F_DATA] = [render(row or {})]

    def _encode_type(self, event: ChangeEvent) -> str:
        op = event.op
        if op is Op.DDL:
            return self.ddl_type or ddl_type_of(event.ddl)
        if op is Op.COMMIT and event.extra.get(EXTRA_ROLLBACK):
            return OP_XAROLLBACK
        return ENCODE_OPS[op]

    def _encode_types(
        self, columns: Mapping[str, Column]
    ) -> tuple[dict[str, str] | None, dict[str, int] | None]:
        """``mysqlType``/``sqlType`` maps: what the columns carry, defaults where they carry
        nothing at all (so a decoded message encodes back to the same maps)."""
        names: dict[str, str] = {}
        codes: dict[str, int] = {}
        for col, spec in columns.items():
            name, code = spec.vendor_type, spec.vendor_code
            if name is None and code is None:
                name, code = self.default_vendor(spec.type) or (None, None)
            if name is not None:
                names[col] = name
            if code is not None:
                codes[col] = code
        return names or None, codes or None

    def default_vendor(self, ltype: LogicalType) -> tuple[str, int] | None:
        """``mysqlType`` name and ``sqlType`` code written for a column that has none."""
        default = DEFAULT_VENDOR.get(ltype.name)
        if default is not None and ltype.name == "decimal" and ltype.precision is not None:
            return (f"decimal({ltype.precision},{ltype.scale or 0})", default[1])
        return default

    def _render_row(self, row: Mapping[str, Any], event: ChangeEvent, mode: str) -> dict[str, Any]:
        columns = event.columns or {}
        invalid = event.invalid
        out: dict[str, Any] = {}
        for name, value in row.items():
            col = columns.get(name)
            if value is None or col is None or name in invalid or col.type is UNKNOWN:
                out[name] = (
                    value if not isinstance(value, bytes) else render_value(value, BINARY, mode)
                )
            else:
                out[name] = render_value(value, col.type, mode)
        return out
