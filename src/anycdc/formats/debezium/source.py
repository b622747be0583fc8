"""Debezium's ``source`` block and event metadata, connector by connector
(:class:`SourceReader`: an event's :class:`~anycdc.formats.events.Header`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Final

import msgspec

from anycdc.errors import type_name
from anycdc.event import Position
from anycdc.formats.base import (
    Format,
)
from anycdc.formats.debezium.wire import (
    EXACT_JSON,
    LSN_RE,
    OP_READ,
    ORD_SNAPSHOT,
    SNAPSHOT_FALSE,
    SNAPSHOT_TRUE,
    SOURCE_PATHS,
    SRC_CHANGE_LSN,
    SRC_COLLECTION,
    SRC_COMMIT_LSN,
    SRC_COMMIT_SCN,
    SRC_CONNECTOR,
    SRC_DB,
    SRC_EVENT_SERIAL_NO,
    SRC_FILE,
    SRC_GTID,
    SRC_KEYSPACE,
    SRC_LSN,
    SRC_NAME,
    SRC_ORD,
    SRC_POS,
    SRC_QUERY,
    SRC_ROW,
    SRC_ROW_ID,
    SRC_RS,
    SRC_SCHEMA,
    SRC_SCN,
    SRC_SEC,
    SRC_SEQUENCE,
    SRC_SERVER_ID,
    SRC_SHARD,
    SRC_SNAPSHOT,
    SRC_TABLE,
    SRC_THREAD,
    SRC_TS_MS,
    SRC_TS_NS,
    SRC_TS_SEC,
    SRC_TS_US,
    SRC_TS_USEC,
    SRC_TX_ID,
    SRC_VERSION,
    SRC_VGTID,
    SRC_WALL_TIME,
    SRC_XMIN,
    TRANSACTION,
    TX_DATA_COLLECTION_ORDER,
    TX_ID,
    TX_TOTAL_ORDER,
    X_COMMIT_SCN,
    X_CONNECTOR,
    X_DATA_COLLECTION_ORDER,
    X_GTID,
    X_SNAPSHOT,
    X_TOTAL_ORDER,
)
from anycdc.formats.events import Header
from anycdc.values import (
    parse_int,
)


class SourceReader(Format):
    """Debezium's ``source`` block, connector by connector: names, the event's position
    (SQL Server LSNs, MySQL binlog file/pos, Postgres LSN, Oracle SCN, ...), the
    transaction and the checked reads of its fields."""

    def _meta(
        self, payload: dict[str, Any], source: dict[str, Any], op_code: str | None, path: str
    ) -> Header:
        get = source.get
        where = SOURCE_PATHS.get(path) or f"{path}.source"
        extra = source_extras(get, op_code)
        if SRC_SCN in source:
            commit_scn = self._text(get(SRC_COMMIT_SCN), where, SRC_COMMIT_SCN)
            if commit_scn is not None:
                extra[X_COMMIT_SCN] = commit_scn
        tx = None
        transaction = payload.get(TRANSACTION)
        if transaction is not None:
            tx = self._transaction(transaction, extra, path)
        if tx is None:
            tx = get(SRC_TX_ID)
            if tx is not None and type(tx) is not str:
                tx = self._text(tx, where, SRC_TX_ID)
        # the usual types are checked inline; the readers handle the rest (and errors)
        database, schema, table = get(SRC_DB), get(SRC_SCHEMA), get(SRC_TABLE)
        database_field = SRC_DB
        if not database and SRC_KEYSPACE in source:
            database, database_field = get(SRC_KEYSPACE), SRC_KEYSPACE
        if table is None:
            table = get(SRC_COLLECTION)
        if database is not None and (type(database) is not str or not database):
            database = self._name(database, where, database_field)
        if schema is not None and (type(schema) is not str or not schema):
            schema = self._name(schema, where, SRC_SCHEMA)
        if table is not None and (type(table) is not str or not table):
            table = self._name(table, where, SRC_TABLE)
        ts_ms = get(SRC_TS_MS)
        if type(ts_ms) is not int:
            ts_ms = self._int(ts_ms, where, SRC_TS_MS)
            if ts_ms is None:
                ts_ms = self._legacy_ts_ms(get, where)
        row_id = get(SRC_ROW_ID)
        if row_id is not None and type(row_id) is not str:
            row_id = self._text(row_id, where, SRC_ROW_ID)
        position = self._position(source, ts_ms, where)
        return Header(database, schema, table, ts_ms, position, tx, row_id, extra)

    def _legacy_ts_ms(self, get: Callable[[str], Any], where: str) -> int | None:
        """The change time of a connector older than 0.10, which had no ``source.ts_ms``:
        MySQL's ``ts_sec`` or PostgreSQL's ``ts_usec``, in the event's milliseconds."""
        for field, scale in LEGACY_TIMES:
            value = self._int(get(field), where, field)
            if value is not None:
                # floor, as Debezium derives ts_ms from ts_us: a time before 1970 stays in
                # the millisecond it falls in
                return value * 1000 // scale
        return None

    def _transaction(self, transaction: Any, extra: dict[str, Any], path: str) -> str | None:
        """The ``transaction`` block: its id, and its order counters into ``extra``."""
        where = f"{path}.transaction"
        if not isinstance(transaction, dict):
            raise self.error(where, f"expected object, got {type_name(transaction)}")
        for field, name in (
            (TX_TOTAL_ORDER, X_TOTAL_ORDER),
            (TX_DATA_COLLECTION_ORDER, X_DATA_COLLECTION_ORDER),
        ):
            number = self._int(transaction.get(field), where, field)
            if number is not None:
                extra[name] = number
        return self._text(transaction.get(TX_ID), where, TX_ID)

    # Field readers: a fast path for the expected JSON type; the error path is built
    # from ``where`` + ``field`` only when the value is wrong.
    def _text(self, value: Any, where: str, field: str) -> str | None:
        if value is None or type(value) is str:
            return value
        if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            return str(value)
        raise self.error(f"{where}.{field}", f"expected string, got {type_name(value)}")

    def _name(self, value: Any, where: str, field: str) -> str | None:
        if type(value) is str:
            return value or None  # Postgres messages (op m) send "" for no schema/table
        return self._text(value, where, field) or None

    def _int(self, value: Any, where: str, field: str) -> int | None:
        """An integer sent as a number or a digit string (None when null or empty)."""
        if type(value) is int or value is None:
            return value
        if value == "":
            return None
        try:
            return parse_int(value)
        except (ValueError, ArithmeticError):
            raise self.error(f"{where}.{field}", f"expected integer, got {value!r}") from None

    def _count(self, value: Any, where: str, field: str) -> int | None:
        number = self._int(value, where, field)
        if number is not None and number < 0:
            raise self.error(f"{where}.{field}", f"expected a non-negative integer, got {number}")
        return number

    def _position(self, source: dict[str, Any], ts_ms: int | None, where: str) -> Position | None:
        get = source.get
        if SRC_FILE in source and SRC_POS in source:  # MySQL, MariaDB
            binlog = get(SRC_FILE)
            if binlog is not None and type(binlog) is not str:
                raise self.error(f"{where}.file", f"expected string, got {type_name(binlog)}")
            pos, row = get(SRC_POS), get(SRC_ROW)
            if type(pos) is not int or pos < 0:
                pos = self._count(pos, where, SRC_POS)
            if type(row) is not int or row < 0:
                row = self._count(row, where, SRC_ROW) or 0
            number = binlog.rpartition(".")[2] if binlog else ""
            if pos is None or not (number.isdigit() and number.isascii()):
                return None
            return Position((int(number), pos, row))
        if SRC_LSN in source:  # PostgreSQL
            lsn = get(SRC_LSN)
            if type(lsn) is not int:
                lsn = self._int(lsn, where, SRC_LSN)
            return Position((lsn,)) if lsn is not None and lsn >= 0 else None
        if SRC_COMMIT_LSN in source or SRC_CHANGE_LSN in source:  # SQL Server, Db2
            commit = self._lsn(get(SRC_COMMIT_LSN), where, SRC_COMMIT_LSN)
            if commit is None:
                return None
            change = self._lsn(get(SRC_CHANGE_LSN), where, SRC_CHANGE_LSN) or (0, 0, 0)
            serial = self._count(get(SRC_EVENT_SERIAL_NO), where, SRC_EVENT_SERIAL_NO)
            return Position((*commit, *change, serial or 0))
        if SRC_SCN in source:  # Oracle
            scn = self._count(get(SRC_SCN), where, SRC_SCN)
            return Position((scn,)) if scn is not None else None
        if SRC_ORD in source:  # MongoDB
            order = get(SRC_ORD)  # -1: a snapshot read, at the start of its second
            order = 0 if order == ORD_SNAPSHOT else self._count(order, where, SRC_ORD)
            seconds = self._count(get(SRC_SEC), where, SRC_SEC)
            if seconds is None and ts_ms is not None and ts_ms >= 0:
                seconds = ts_ms // 1000
            if seconds is None or order is None:
                return None
            return Position((seconds, order))
        return _sequence_position(get(SRC_SEQUENCE))

    def _lsn(self, value: Any, where: str, field: str) -> tuple[int, int, int] | None:
        """``"00000027:00000758:0005"`` -> (0x27, 0x758, 5); None when absent or not 3 groups."""
        if value is None:
            return None
        if type(value) is not str:
            raise self.error(f"{where}.{field}", f"expected string, got {type_name(value)}")
        match = LSN_RE.fullmatch(value)
        if match is None:
            return None
        return int(match.group(1), 16), int(match.group(2), 16), int(match.group(3), 16)


LEGACY_TIMES: Final[tuple[tuple[str, int], ...]] = ((SRC_TS_SEC, 1), (SRC_TS_USEC, 1_000_000))
"""The ``source`` time fields of connectors before 0.10, with their units per second."""


def squashed_name(name: str) -> str:
    """An attribute name as the CloudEvents converter writes it: letters and digits only."""
    return "".join(c for c in name if c.isascii() and c.isalnum())


# source and transaction field names read here, by their CloudEvents attribute suffix
CE_SOURCE_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        squashed_name(name): name
        for name in (
            SRC_VERSION, SRC_CONNECTOR, SRC_NAME, SRC_TS_MS, SRC_TS_SEC, SRC_TS_USEC, SRC_SNAPSHOT,
            SRC_DB, SRC_SCHEMA, SRC_TABLE, SRC_COLLECTION, SRC_SEQUENCE, SRC_FILE, SRC_POS, SRC_ROW,
            SRC_GTID, SRC_SERVER_ID, SRC_THREAD, SRC_QUERY, SRC_LSN, SRC_TX_ID, SRC_XMIN,
            SRC_CHANGE_LSN, SRC_COMMIT_LSN, SRC_EVENT_SERIAL_NO, SRC_SCN, SRC_COMMIT_SCN,
            SRC_ROW_ID, SRC_ORD, SRC_SEC, SRC_RS, SRC_KEYSPACE, SRC_TS_US, SRC_TS_NS, SRC_SHARD,
            SRC_VGTID, SRC_WALL_TIME,
        )
    }
)  # fmt: skip
CE_TRANSACTION_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {squashed_name(name): name for name in (TX_ID, TX_TOTAL_ORDER, TX_DATA_COLLECTION_ORDER)}
)


def int_param(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def source_extras(get: Callable[[str], Any], op_code: str | None) -> dict[str, Any]:
    """The ``source`` block's connector, snapshot marker (when it says more than the op)
    and GTID, as the event's ``extra`` (one rule for the fast and the general decode)."""
    connector = get(SRC_CONNECTOR)
    extra: dict[str, Any] = {X_CONNECTOR: connector} if type(connector) is str else {}
    snapshot = get(SRC_SNAPSHOT)
    if snapshot is not None:
        if type(snapshot) is not str:
            snapshot = _snapshot_text(snapshot)
        if snapshot is not None and snapshot != (
            SNAPSHOT_TRUE if op_code == OP_READ else SNAPSHOT_FALSE
        ):
            extra[X_SNAPSHOT] = snapshot
    gtid = get(SRC_GTID)
    if gtid and type(gtid) is str:
        extra[X_GTID] = gtid
    return extra


def _snapshot_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return SNAPSHOT_TRUE if value else SNAPSHOT_FALSE
    return value if isinstance(value, str) else None


def _sequence_position(value: Any) -> Position | None:
    """``source.sequence``: a JSON array (as text) of counters: ``'["24023119","24023128"]'``."""
    if not isinstance(value, str):
        return None
    if value[:2] == '["' and value[-2:] == '"]':  # the usual one counter: '["24023128"]'
        inner = value[2:-2]
        if inner.isdigit() and inner.isascii():
            return Position((int(inner),))
    try:
        items = EXACT_JSON.decode(value)
    except (msgspec.DecodeError, RecursionError, UnicodeError):
        return None
    if not isinstance(items, list) or not items:
        return None
    parts: list[int] = []
    for item in items:
        if isinstance(item, str) and item.isdigit():
            parts.append(int(item))
        elif type(item) is int and item >= 0:
            parts.append(item)
        else:
            return None
    return Position(tuple(parts))
