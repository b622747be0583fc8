"""Maxwell's daemon JSON (Zendesk Maxwell: MySQL binlog -> one JSON object per row).

::

    {"database": "test", "table": "e", "type": "update", "ts": 1477053234, "xid": 23396,
     "xoffset": 0, "position": "master.000006:800911", "primary_key_columns": ["id"],
     "data": {"id": 1, "m": 5.444}, "old": {"m": 4.2341}}

Decisions (Maxwell's docs ``dataformat.md``/``bootstrapping.md`` and its ``RowMap``):

* ``type``: ``insert``/``update``/``delete`` are row changes; ``bootstrap-insert``
  (a row of a table bootstrap, Maxwell's full load) is a ``snapshot``;
  ``bootstrap-start``/``bootstrap-complete`` are ``heartbeat`` markers of the
  bootstrapped table (``extra["type"]`` says which); ``table-create``/``-alter``/
  ``-drop`` and ``database-create``/``-alter``/``-drop`` (``--output_ddl``) are
  ``ddl`` with ``sql`` as the statement (``extra["type"]`` keeps the kind; the
  table definitions ``def``/``old`` are not kept). Any other type is an error.
* images: insert/snapshot ``after = data``, delete ``before = data``; update
  ``after = data`` (the whole row) and ``before = {**data, **old}``: ``old`` holds
  the previous values of the CHANGED columns only (an explicit null in ``old``
  wins; no ``old`` means no column changed, as Maxwell drops an empty one).
  ``data`` is the whole row: with ``output_nulls=false`` a missing column is NULL.
* No types in the message: ``columns`` is None and values keep their JSON types
  (numbers exact: big integers as ``int``, fractions as ``Decimal``; SET columns
  are arrays, JSON columns objects, ``bit(1)`` true/false), like ``oms-json``.
* key: ``primary_key_columns`` (``--output_primary_key_columns``); the option
  ``primary_key`` overrides it and names the key where the message has none.
* ``ts``: seconds for rows and bootstrap markers (``ts_ms = ts * 1000``),
  MILLISECONDS for DDL (Maxwell writes the binlog event time as it is there).
  ``tx``: ``xid`` (InnoDB's transaction id) as text.
* position, always five integers, compared part by part: ``[1, binlog file
  number, offset, commit, xoffset]`` when ``position`` (``--output_binlog_position``,
  ``"master.000006:800911"``) is present, else ``[0, ts seconds, xid, commit,
  xoffset]`` (absent xid/xoffset count 0; none without ``ts``). ``commit`` is 1 on
  the row flagged ``"commit": true``: Maxwell writes no ``xoffset`` on the last row
  of a transaction, which must still sort after the others. The leading kind
  keeps the two kinds apart: every binlog position sorts after every ts/xid one,
  so turning ``output_binlog_position`` ON for a live topic keeps the order;
  turning it OFF would make the later events look older: do not. The ts/xid order
  is approximate across transactions (``ts`` is the statement's start second,
  ``xid`` orders within it); the binlog position is exact. Bootstrap rows and
  markers have no position (Maxwell sends none: the rows are read by a SELECT
  while the binlog goes on), so a bootstrap row never loses to an older change.
  The binlog file is ``<log_bin base name>.<number>``; the base name is a server
  setting (any text, dots and paths included): only the number after its last dot
  orders (:func:`binlog_position`). A ``position`` whose file has no number (or
  that is no ``<file>:<offset>`` text) cannot order by binlog: the row is kept,
  ordered as without ``output_binlog_position`` (``[0, ts, xid, commit, xoffset]``),
  with the text in ``extra["position"]`` (the encoder writes it back). It never
  sorts after a numbered position, so a topic whose server names its binlog
  files without numbers orders by ``ts``/``xid`` throughout (Maxwell itself then
  compares file names as text, which anycdc's integer positions cannot hold).
* Rows Maxwell could not publish are errors, never events (:meth:`MaxwellJson.unreadable`):
  the skeleton row of ``dead_letter_topic`` (``reason`` = ``"too big"`` in Maxwell's
  tests, the producer's exception name such as ``RecordTooLargeException`` in
  production; ``data`` holds the key columns only, ``type`` is absent before
  Maxwell 1.22.4) and ``encrypt=data`` / ``encrypt=all`` messages (``encrypted``:
  ``{"iv", "bytes"}``). Maxwell's own heartbeats (``type`` ``heartbeat``) are never
  published.
* ``extra``: ``gtid``, ``server_id``, ``thread_id``, ``schema_id``, ``query``
  (``--output_row_query``) and ``comment`` when present (a null ``gtid``, written
  by ``output_gtid_position`` without GTIDs, is left out). ``primary_key`` (the key
  values) and ``push_ts`` are not kept. Field names are Maxwell's defaults
  (``output_naming_strategy`` ``underscore_to_camelcase`` is not read).

The encoder writes what Maxwell writes: ``ts`` in seconds (DDL: milliseconds),
``xid`` from a numeric ``tx`` (another ``tx`` is not written), ``xoffset``/
``commit``/``position`` from a position of the two kinds above (``mysql-bin`` as the
binlog file name; any other position is not written: the decoded one then comes
from ``ts``/``xid``), ``primary_key_columns`` from the key, update ``old`` = the
before image's columns whose values differ. Values: JSON numbers, exact decimals,
booleans as true/false, binary as base64, zone-less datetimes ``YYYY-MM-DD
HH:mm:ss[.f]``, instants as such text in UTC (MySQL TIMESTAMP), dates, times.
Bootstrap rows and markers carry no position. Truncates, transaction markers,
heartbeats other than the bootstrap markers, split halves, patches and partial
images cannot be written (EncodeError).

>>> msg = ('{"database":"test","table":"product","type":"update","ts":1596684893,'
...        '"xid":7152,"commit":true,"data":{"id":106,"weight":1.0,"note":"18oz"},'
...        '"old":{"note":"16oz"},"primary_key_columns":["id"]}')
>>> [e] = MaxwellJson().decode(msg)
>>> e.op.value, e.key, dict(e.before), e.ts_ms, e.tx
('update', ('id',), {'id': 106, 'weight': Decimal('1.0'), 'note': '16oz'}, 1596684893000, '7152')
>>> e.position  # no binlog position: [0, ts, xid, commit, xoffset]
Position(parts=(0, 1596684893, 7152, 1, 0))
>>> MaxwellJson().decode(MaxwellJson().encode(e)[0]) == [e]
True
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Final

from anycdc.errors import EncodeError, type_name
from anycdc.event import ChangeEvent, Op, Position, dumps
from anycdc.formats.base import Capabilities, expect_str, optional_str
from anycdc.formats.codecs.text import bounded_int
from anycdc.formats.codecs.text import render_value as render_text_value
from anycdc.formats.events import Header, OpRule, op_rules
from anycdc.formats.flow import DDL, UPDATE, Images, RowFlow

# --------------------------------------------------------------------------- wire strings
F_DATABASE: Final = "database"
F_TABLE: Final = "table"
F_QUERY: Final = "query"
F_TYPE: Final = "type"
F_TS: Final = "ts"
F_XID: Final = "xid"
F_XOFFSET: Final = "xoffset"
F_COMMIT: Final = "commit"
F_POSITION: Final = "position"
F_GTID: Final = "gtid"
F_SERVER_ID: Final = "server_id"
F_THREAD_ID: Final = "thread_id"
F_SCHEMA_ID: Final = "schema_id"
F_COMMENT: Final = "comment"
F_PK_COLUMNS: Final = "primary_key_columns"
F_DATA: Final = "data"
F_OLD: Final = "old"
F_SQL: Final = "sql"
F_REASON: Final = "reason"  # dead_letter_topic's skeleton row: why the row was not published
F_ENCRYPTED: Final = "encrypted"  # encrypt=data / encrypt=all: {"iv": ..., "bytes": ...}
E_IV: Final = "iv"
E_BYTES: Final = "bytes"
_UNREADABLE: Final = frozenset({F_REASON, F_ENCRYPTED})

T_INSERT: Final = "insert"
T_UPDATE: Final = "update"
T_DELETE: Final = "delete"
T_BOOTSTRAP_INSERT: Final = "bootstrap-insert"
T_BOOTSTRAP_START: Final = "bootstrap-start"
T_BOOTSTRAP_COMPLETE: Final = "bootstrap-complete"
T_DATABASE_CREATE: Final = "database-create"
T_DATABASE_ALTER: Final = "database-alter"
T_DATABASE_DROP: Final = "database-drop"
T_TABLE_CREATE: Final = "table-create"
T_TABLE_ALTER: Final = "table-alter"
T_TABLE_DROP: Final = "table-drop"

DDL_TYPES: Final = frozenset(
    {T_DATABASE_CREATE, T_DATABASE_ALTER, T_DATABASE_DROP, T_TABLE_CREATE, T_TABLE_ALTER,
     T_TABLE_DROP}
)  # fmt: skip
MARKER_TYPES: Final = frozenset({T_BOOTSTRAP_START, T_BOOTSTRAP_COMPLETE})
BOOTSTRAP_TYPES: Final = MARKER_TYPES | {T_BOOTSTRAP_INSERT}
OPS: Final[Mapping[str, OpRule]] = op_rules({
    T_INSERT: Op.INSERT, T_UPDATE: Op.UPDATE, T_DELETE: Op.DELETE,
    T_BOOTSTRAP_INSERT: Op.SNAPSHOT, T_BOOTSTRAP_START: Op.HEARTBEAT,
    T_BOOTSTRAP_COMPLETE: Op.HEARTBEAT, **dict.fromkeys(DDL_TYPES, Op.DDL),
})  # fmt: skip
_ENCODE_TYPES: Final[Mapping[Op, str]] = {
    Op.INSERT: T_INSERT, Op.UPDATE: T_UPDATE, Op.DELETE: T_DELETE, Op.SNAPSHOT: T_BOOTSTRAP_INSERT,
}  # fmt: skip
# the statement's leading words -> Maxwell's DDL type (anything else alters a table)
_DDL_KEYWORDS: Final = (
    ("CREATE TABLE", T_TABLE_CREATE), ("ALTER TABLE", T_TABLE_ALTER), ("DROP TABLE", T_TABLE_DROP),
    ("CREATE DATABASE", T_DATABASE_CREATE), ("CREATE SCHEMA", T_DATABASE_CREATE),
    ("ALTER DATABASE", T_DATABASE_ALTER), ("ALTER SCHEMA", T_DATABASE_ALTER),
    ("DROP DATABASE", T_DATABASE_DROP), ("DROP SCHEMA", T_DATABASE_DROP),
)  # fmt: skip

# fields kept in ChangeEvent.extra under their own names (``query`` too), in Maxwell's order
EXTRA_FIELDS: Final = (F_GTID, F_SERVER_ID, F_THREAD_ID, F_SCHEMA_ID, F_COMMENT)
_EXTRA_ORDER: Final = (F_QUERY, *EXTRA_FIELDS)
_EXTRA_SET: Final = frozenset(_EXTRA_ORDER)
_SPECIAL_FIELDS: Final = _EXTRA_SET | _UNREADABLE  # what a plain row message has none of
X_TYPE: Final = F_TYPE  # extra: Maxwell's type of a DDL or bootstrap marker event
X_POSITION: Final = F_POSITION  # extra: a ``position`` text that gives no binlog order

# the first part of a position: which fields it comes from
POSITION_TIME: Final = 0  # ts seconds, xid
POSITION_BINLOG: Final = 1  # binlog file number, offset
BINLOG_FILE: Final = "mysql-bin"  # the binlog file name the encoder writes
_FILE_DIGITS: Final = 10  # at most, in a binlog file number (MySQL writes 6)
_OFFSET_DIGITS: Final = 19  # at most, in a binlog offset (a BIGINT)
_INT64_MAX: Final = 2**63 - 1
_MAX_TS: Final = _INT64_MAX // 1000  # seconds whose milliseconds fit a BIGINT
_TS_PATH: Final = f"$.{F_TS}"
_XID_PATH: Final = f"$.{F_XID}"
_XOFFSET_PATH: Final = f"$.{F_XOFFSET}"


class MaxwellJson(RowFlow):
    """Maxwell's daemon JSON: one row change (or DDL, or bootstrap marker) per message."""

    id = "maxwell-json"
    vendor = "Zendesk Maxwell"
    title = "Maxwell's daemon JSON (data + old = changed columns only)"
    capabilities = Capabilities(
        before_image=Capabilities.Before.CHANGED,
        types=Capabilities.Types.NONE,
        key_names=True,
        truncate=False,
        tx_markers=False,
        heartbeats=False,
        before_detail="`old`, merged over `data`",
        position="`position` (binlog file:offset), else `ts`, `xid`; then commit, `xoffset`",
        key_detail="`primary_key_columns` or `primary_key=`",
        notes=(
            "untyped: every value is stored as the vendor's text (OceanBase's text rules, as "
            "oms-json)",
            "no TRUNCATE, BEGIN/COMMIT markers (commit flags a transaction's last row) or "
            "heartbeats; the snapshot as bootstrap-insert rows",
        ),
    )
    op_field = F_TYPE
    ops = OPS
    rowless_key = False  # DDL and bootstrap markers carry no key

    # ---- detection
    sniff_keys = frozenset({F_TYPE, *_UNREADABLE})  # a row's type, or a row-less shape
    # type's value, data's and ts's types, keys; _unreadable reads inside ``encrypted``
    sniff_fields = frozenset({F_TYPE})
    sniff_evidence = ("anycdc.formats.maxwell:_unreadable",)

    @classmethod
    def sniff(cls, message: Any) -> float:
        if not isinstance(message, dict):
            return 0.0
        if (F_REASON in message or F_ENCRYPTED in message) and _unreadable(message) is not None:
            return 0.95  # Maxwell's own shapes, read to say why they give no event
        kind = message.get(F_TYPE)
        if not isinstance(kind, str):
            return 0.0
        data = message.get(F_DATA)
        timed = type(message.get(F_TS)) is int
        named = F_DATABASE in message or F_TABLE in message
        rule = OPS.get(kind)
        if rule is None:
            # an unknown type in an otherwise Maxwell-shaped row message
            maxwell_only = any(f in message for f in (F_XID, F_XOFFSET, F_COMMIT, F_PK_COLUMNS))
            return 0.55 if isinstance(data, dict) and timed and named and maxwell_only else 0.0
        if rule.op is Op.DDL:
            return 0.9 if named else 0.3  # these type names are Maxwell's own
        if isinstance(data, dict):
            return 0.95 if named or timed else 0.8
        return 0.6 if timed and named else 0.2

    # ---- decoding (the flow is RowFlow's; these are its hooks)
    def unreadable(self, msg: dict[str, Any]) -> None:
        """Refuse a message that carries no row although it may look like one: a dead-letter
        skeleton (``reason``: the row was not published, ``data`` holds the key columns
        only: as an insert it would overwrite the row with NULLs) and an encrypted row
        (``encrypt=data``/``encrypt=all``: anycdc holds no key). A ``reason`` or
        ``encrypted`` of another shape (a row's extra attribute: a skeleton has no ``ts``)
        is no such message: the flow reads it as usual. Called by the flow for a message
        without a (known) ``type`` and by :meth:`header` for the others (first thing: no
        field of a refused message is read), not by an override of ``decode_object``: one
        more call per message cost maxwell-json ~6% of its decode rate.

        >>> MaxwellJson().decode('{"database":"d","table":"t","type":"insert",'
        ...                      '"reason":"too big","data":{"id":111}}')
        Traceback (most recent call last):
        anycdc.errors.DecodeError: maxwell-json: $.reason: a skeleton row of Maxwell's dead_letter_topic (reason 'too big'): it holds the key columns only, not the row (re-read the row from the source)
        """
        kind = _unreadable(msg)
        if kind == F_REASON:
            raise self.error(
                f"$.{F_REASON}",
                f"a skeleton row of Maxwell's dead_letter_topic (reason {msg[F_REASON][:80]!r}): "
                "it holds the key columns only, not the row (re-read the row from the source)",
            )
        if kind == F_ENCRYPTED:
            scope = "all" if msg.keys() == {F_ENCRYPTED} else "data"
            raise self.error(
                f"$.{F_ENCRYPTED}",
                f"encrypted by Maxwell (encrypt={scope}): decrypt it before anycdc reads it",
            )

    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Header:
        # one walk of the message's keys finds both the extra fields and the row-less
        # shapes (frozenset.isdisjoint walks them all): the common message, neither
        special = not _SPECIAL_FIELDS.isdisjoint(msg)
        if special and (F_REASON in msg or F_ENCRYPTED in msg):
            self.unreadable(msg)
        fid = self.id
        ts = bounded_int(fid, msg.get(F_TS), _TS_PATH, _MAX_TS)
        ddl = rule.op is DDL
        xid = bounded_int(fid, msg.get(F_XID), _XID_PATH)
        extra = self._extra(msg) if special else {}
        if ddl or code in MARKER_TYPES:
            extra[X_TYPE] = code
        seconds = ts // 1000 if ddl and ts is not None else ts
        return Header(
            database=self._name(msg, F_DATABASE),
            table=self._name(msg, F_TABLE),
            ts_ms=ts if ddl or ts is None else ts * 1000,
            position=None if code in BOOTSTRAP_TYPES else self._position(msg, seconds, xid, extra),
            tx=None if xid is None else str(xid),
            ddl=optional_str(fid, msg.get(F_SQL), f"$.{F_SQL}") if ddl else None,
            extra=extra,
        )

    def images(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Images:
        data = self.required_image(msg, F_DATA, code)
        if rule.op is not UPDATE:
            return self.one_row(rule, data)
        old = self.image(msg, F_OLD)
        return ({**data, **old} if old else dict(data), data, ())

    def _name(self, msg: Mapping[str, Any], field: str) -> str | None:
        value = msg.get(field)
        if type(value) is str:
            return value or None
        return optional_str(self.id, value, f"$.{field}") or None

    def key_names(
        self, msg: dict[str, Any], head: dict[str, Any], rule: OpRule, images: Images
    ) -> list[str] | None:
        names = msg.get(F_PK_COLUMNS)
        if names is None or (type(names) is list and all(type(n) is str for n in names)):
            return names
        path = f"$.{F_PK_COLUMNS}"
        if not isinstance(names, list):
            raise self.error(path, f"expected array, got {type_name(names)}")
        for index, name in enumerate(names):
            expect_str(self.id, name, f"{path}[{index}]")
        return names

    def _extra(self, msg: Mapping[str, Any]) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        for name in _EXTRA_ORDER:
            value = msg.get(name)
            if value is None:
                continue
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise self.error(f"$.{name}", f"expected string or integer, got {type_name(value)}")
            extra[name] = value
        return extra

    def _position(
        self, msg: Mapping[str, Any], seconds: int | None, xid: int | None, extra: dict[str, Any]
    ) -> Position | None:
        fid = self.id
        commit = msg.get(F_COMMIT)
        if commit is not None and not isinstance(commit, bool):
            raise self.error(f"$.{F_COMMIT}", f"expected boolean, got {type_name(commit)}")
        flag = 1 if commit else 0
        xoffset = bounded_int(fid, msg.get(F_XOFFSET), _XOFFSET_PATH) or 0
        raw = msg.get(F_POSITION)
        if raw is not None:
            text = expect_str(fid, raw, f"$.{F_POSITION}")
            binlog = binlog_position(text)
            if binlog is not None:
                return Position((POSITION_BINLOG, *binlog, flag, xoffset))
            extra[X_POSITION] = text  # no binlog order: kept, and ordered by ts/xid
        if seconds is None:
            return None
        return Position((POSITION_TIME, seconds, xid or 0, flag, xoffset))

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One message per event, laid out as Maxwell writes it."""
        if event.patch is not None or event.split is not None or event.partial:
            raise EncodeError(
                self.id, "Maxwell messages carry whole rows (no split, patch or partial)"
            )
        kind = self._type(event)
        ddl = event.op is Op.DDL
        ts = self._ts(event.ts_ms, ddl)
        msg: dict[str, Any] = {F_TYPE: kind} if ddl else {}
        msg[F_DATABASE] = event.database
        msg[F_TABLE] = event.table
        if not ddl:
            query = event.extra.get(F_QUERY)
            if query is not None:
                msg[F_QUERY] = query
            msg[F_TYPE] = kind
        if ts is not None:
            msg[F_TS] = ts
        if ddl:
            msg[F_SQL] = event.ddl
        self._write_position(event, kind, ts // 1000 if ddl and ts is not None else ts, msg)
        for name in EXTRA_FIELDS:
            value = event.extra.get(name)
            if value is not None:
                msg[name] = value
        if event.op in _ENCODE_TYPES:
            if event.key:
                msg[F_PK_COLUMNS] = list(event.key)
            self._write_rows(event, msg)
        elif not ddl:
            msg[F_DATA] = {}  # bootstrap markers carry an empty row
        return [dumps(msg).encode("utf-8")]

    def _type(self, event: ChangeEvent) -> str:
        op = event.op
        marker = event.extra.get(X_TYPE)
        if op in _ENCODE_TYPES:
            return _ENCODE_TYPES[op]
        if op is Op.DDL:
            return marker if marker in DDL_TYPES else _ddl_type(event.ddl)
        if op is Op.HEARTBEAT and marker in MARKER_TYPES:
            return str(marker)
        raise EncodeError(
            self.id, f"op {op.value!r} has no Maxwell type (heartbeats: bootstrap markers only)"
        )

    def _ts(self, ts_ms: int | None, ddl: bool) -> int | None:
        if ts_ms is None:
            return None
        if not 0 <= ts_ms <= _INT64_MAX:
            raise EncodeError(self.id, f"ts_ms {ts_ms} out of range")
        return ts_ms if ddl else ts_ms // 1000

    def _write_position(
        self, event: ChangeEvent, kind: str, seconds: int | None, msg: dict[str, Any]
    ) -> None:
        """``xid``, ``xoffset``, ``commit`` and ``position``: from ``tx`` and a position of
        either kind (see the module docstring); bootstrap messages carry no position."""
        tx = event.tx
        xid = int(tx) if tx and tx.isascii() and tx.isdigit() and int(tx) <= _INT64_MAX else None
        parts = event.position.parts if event.position is not None else ()
        flag = xoffset = 0
        binlog = None
        if (
            len(parts) == 5
            and parts[0] in (POSITION_TIME, POSITION_BINLOG)
            and kind not in BOOTSTRAP_TYPES
        ):
            flag, xoffset = parts[3], parts[4]
            if flag not in (0, 1):
                raise EncodeError(self.id, f"position {event.position}: commit must be 0 or 1")
            if parts[0] == POSITION_BINLOG:
                binlog = f"{BINLOG_FILE}.{parts[1]:06d}:{parts[2]}"
            elif (parts[1], parts[2]) != (seconds, xid or 0):
                raise EncodeError(
                    self.id,
                    f"position {event.position} disagrees with ts {seconds} and xid {xid}: "
                    "without a binlog position, Maxwell's order is ts, xid",
                )
        if xid is not None:
            msg[F_XID] = xid
        if flag:
            msg[F_COMMIT] = True  # the last row of a transaction: Maxwell writes no xoffset
        elif xoffset or (xid is not None and kind not in BOOTSTRAP_TYPES):
            msg[F_XOFFSET] = xoffset
        if binlog is None and parts[:1] == (POSITION_TIME,):
            binlog = event.extra.get(X_POSITION)  # a position text that gave no order
        if binlog is not None:
            msg[F_POSITION] = binlog

    def _write_rows(self, event: ChangeEvent, msg: dict[str, Any]) -> None:
        op = event.op
        image = event.before if op is Op.DELETE else event.after
        if image is None:
            raise EncodeError(
                self.id, f"the {'before' if op is Op.DELETE else 'after'} image is missing"
            )
        data = _rendered(image)
        msg[F_DATA] = data
        if op is Op.UPDATE and event.before is not None:
            before = _rendered(event.before)
            old = {
                name: value
                for name, value in before.items()
                if name not in data or dumps(data[name]) != dumps(value)
            }
            if old:
                msg[F_OLD] = old


def render_value(value: Any) -> Any:
    """A value as Maxwell writes it (JSON-ready; decimals stay exact numbers).

    >>> render_value(dt.datetime(2016, 10, 21, 7, 33, 37, 523000, tzinfo=dt.timezone(dt.timedelta(hours=2))))
    '2016-10-21 05:33:37.523'
    >>> render_value({"tags": [True, b"hi"]}), render_value(dt.date(2024, 5, 1))
    ({'tags': [True, 'aGk=']}, '2024-05-01')
    """
    if value is None or isinstance(value, (str, int)):
        return value  # booleans included: Maxwell writes BIT(1) as true/false
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        # MySQL TIMESTAMP: Maxwell writes the instant as UTC wall time, without a zone
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    if isinstance(value, Mapping):
        return {str(name): render_value(item) for name, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [render_value(item) for item in value]
    return render_text_value(value)


def binlog_position(text: str) -> tuple[int, int] | None:
    """(binlog file number, offset) of Maxwell's ``position`` text, ``<file>:<offset>``,
    where the file is the server's binlog base name (``log_bin``: any text) then
    ``.<number>``; None when the file has no number (or the text is no position):
    the event is then ordered by ``ts``/``xid``, as without ``output_binlog_position``.

    >>> binlog_position("master.000006:800911"), binlog_position("/var/lib/my.bin.log.000012:4")
    ((6, 800911), (12, 4))
    >>> binlog_position("binlog:1234"), binlog_position("mysql-bin.000001:"), binlog_position("x.1:-4")
    (None, None, None)
    """
    name, _, offset = text.rpartition(":")
    number = name.rpartition(".")[2]
    if (
        0 < len(offset) <= _OFFSET_DIGITS
        and 0 < len(number) <= _FILE_DIGITS
        and offset.isdigit()
        and number.isdigit()
        and offset.isascii()
        and number.isascii()
        and number != name
    ):
        return int(number), int(offset)
    return None


def _unreadable(msg: Mapping[str, Any]) -> str | None:
    """Which of Maxwell's row-less shapes ``msg`` is: ``reason`` (a dead_letter_topic
    skeleton: ``reason`` text, ``data`` object, no ``ts``), ``encrypted`` (``{"iv": ...,
    "bytes": ...}`` in place of ``data``/``old``, or of the whole message), else None."""
    if type(msg.get(F_REASON)) is str and type(msg.get(F_DATA)) is dict and F_TS not in msg:
        return F_REASON
    sealed = msg.get(F_ENCRYPTED)
    if type(sealed) is dict and type(sealed.get(E_IV)) is str and type(sealed.get(E_BYTES)) is str:
        return F_ENCRYPTED
    return None


def _rendered(image: Mapping[str, Any]) -> dict[str, Any]:
    return {name: render_value(value) for name, value in image.items()}


def _ddl_type(sql: str | None) -> str:
    text = " ".join((sql or "").upper().split())
    for prefix, kind in _DDL_KEYWORDS:
        if text.startswith(prefix):
            return kind
    return T_TABLE_ALTER


__all__ = ["MaxwellJson", "render_value"]
